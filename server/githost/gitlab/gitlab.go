// Package gitlab opens the job engine's merge requests on GitLab.com and on
// self-managed GitLab, through GitLab's client-go. It implements
// engine.PullRequests: Ensure finds the open merge request from a job's
// branch and opens one only when there is none, so a retried, resumed or
// followed-up job keeps a single merge request.
//
// It lives in its own package so that only servers that talk to GitLab
// compile client-go.
package gitlab

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/githost/internal/hostkit"
)

// DefaultBaseURL is the REST API of GitLab.com, used when Config.BaseURL is
// empty.
const DefaultBaseURL = "https://gitlab.com/api/v4/"

// Config configures a Host. A token is required; everything else has a
// default. The library never reads environment variables: the caller decides
// where the token comes from.
type Config struct {
	// Token is a personal, group or project access token with the "api"
	// scope, sent as PRIVATE-TOKEN.
	Token string
	// TokenFunc, instead of Token, is called before every request and
	// returns the token to send, for tokens that are rotated while the
	// server runs. Its error is returned by Ensure; mark it with
	// engine.Permanent when no retry can help.
	TokenFunc func(ctx context.Context) (string, error)
	// BaseURL is a self-managed instance's API, for example
	// "https://gitlab.example.com/api/v4" ("/api/v4" is added when missing;
	// an instance under a relative URL root, such as
	// "https://example.com/gitlab", works too). Empty means GitLab.com.
	BaseURL string
	// RepositoryHosts lists further host names that the repositories'
	// clone URLs may use, for example a separate SSH host. By default a
	// repository must be on the API's host.
	RepositoryHosts []string
	// Draft opens new merge requests as drafts, by GitLab's convention of
	// a "Draft: " title prefix.
	Draft bool
	// HTTPClient sends the requests. It is copied, never modified. The
	// default is a pooled client with a 60 s timeout.
	HTTPClient *http.Client
	// Logger receives the merge requests found and opened (info), and
	// every request's method, path, status and duration (debug). Tokens are
	// never logged. The default discards everything.
	Logger *slog.Logger
}

// String describes c without its token, so that printing a configuration
// cannot leak it.
func (c Config) String() string {
	base := c.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	tok := "none"
	switch {
	case c.TokenFunc != nil:
		tok = "func"
	case c.Token != "":
		tok = "[REDACTED]"
	}
	return fmt.Sprintf("gitlab.Config{BaseURL: %q, Token: %s, Draft: %t}", hostkit.Redact(base), tok, c.Draft)
}

// GoString is String, for the %#v verb.
func (c Config) GoString() string { return c.String() }

// LogValue is the redacted form of c for slog.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

// Host opens merge requests on one GitLab instance. It is safe for
// concurrent use and holds no state between calls: everything Ensure needs to
// know is asked of GitLab, so several engines (or processes) may share a
// project.
type Host struct {
	client *gl.Client
	api    string
	hosts  []string
	// root is the instance's relative URL root ("" or, say, "gitlab"),
	// which its HTTP clone URLs carry before the project's path.
	root  string
	draft bool
	log   *slog.Logger
}

var _ engine.PullRequests = (*Host)(nil)

// tokenAuth is client-go's extension point for credentials: the library
// asks it for the header before every request, which lets TokenFunc renew
// tokens.
type tokenAuth struct {
	token func(context.Context) (string, error)
}

func (tokenAuth) Init(context.Context, *gl.Client) error { return nil }

func (a tokenAuth) Header(ctx context.Context) (string, string, error) {
	tok, err := a.token(ctx)
	if err != nil {
		return "", "", err
	}
	return gl.AccessTokenHeaderName, tok, nil
}

// New checks cfg and returns a Host. It sends no request.
func New(cfg Config) (*Host, error) {
	token, err := hostkit.TokenSource(cfg.Token, cfg.TokenFunc)
	if err != nil {
		return nil, fmt.Errorf("gitlab: %w", err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	api, err := hostkit.ParseBaseURL(base)
	if err != nil {
		return nil, fmt.Errorf("gitlab: %w", err)
	}
	// client-go sets the token header; the transport only makes sure it
	// never follows a redirect to another host, which Go's client would
	// allow for PRIVATE-TOKEN.
	transport := &hostkit.Transport{API: api, Logger: log}
	client, err := gl.NewAuthSourceClient(tokenAuth{token: token},
		gl.WithBaseURL(base),
		gl.WithHTTPClient(hostkit.HTTPClient(cfg.HTTPClient, transport)),
		// The engine retries a failed run as a whole, and Ensure is
		// idempotent; retries here would only spend the run's time, and
		// retrying the create could not be told from a second create.
		gl.WithoutRetries(),
		gl.WithURLWarningLogger(log),
	)
	if err != nil {
		return nil, fmt.Errorf("gitlab: %w", err)
	}
	root := strings.Trim(api.Path, "/")
	root = strings.Trim(strings.TrimSuffix(root, "api/v4"), "/")
	hosts := append([]string{api.Hostname()}, cfg.RepositoryHosts...)
	return &Host{client: client, api: client.BaseURL().String(), hosts: hosts, root: root, draft: cfg.Draft, log: log}, nil
}

// String names the host by its API, for logs.
func (h *Host) String() string { return "gitlab.Host(" + h.api + ")" }

// Ensure returns the web URL of the open merge request from spec.Branch into
// spec.Base (the project's default branch when empty) in spec.Repository,
// opening it with spec.Title and spec.Body only when none is open. A run
// that loses the race to open it (GitLab answers that another open merge
// request exists) returns the one the other run opened.
//
// Errors that no retry can mend (a malformed spec or repository URL, bad
// credentials, no access, no such project, a refused merge request) are
// marked with engine.Permanent; server errors, rate limits and network
// failures are not.
func (h *Host) Ensure(ctx context.Context, spec engine.PullRequestSpec) (string, error) {
	if spec.Branch == "" || spec.Title == "" {
		return "", engine.Permanent(errors.New("gitlab: a merge request needs a branch and a title"))
	}
	path, err := h.projectPath(spec.Repository)
	if err != nil {
		return "", engine.Permanent(err)
	}
	// The project is read even when the base is known: its numeric id
	// names it in the other calls, and a missing project fails here with
	// a clear message.
	project, _, err := h.client.Projects.GetProject(path, nil, gl.WithContext(ctx))
	if err != nil {
		return "", classify(err, "gitlab: reading the project %s", path)
	}
	base := hostkit.Branch(spec.Base)
	if base == "" {
		if base = project.DefaultBranch; base == "" {
			return "", engine.Permanent(fmt.Errorf("gitlab: the project %s has no default branch", path))
		}
	}
	log := h.log.With(slog.String("repository", path), slog.String("branch", spec.Branch), slog.String("base", base))

	if url, err := h.find(ctx, project, spec.Branch, base); err != nil || url != "" {
		if url != "" {
			log.Info("githost: merge request already open", slog.String("url", url))
		}
		return url, err
	}
	title := spec.Title
	if h.draft && !isDraft(title) {
		title = "Draft: " + title
	}
	mr, _, err := h.client.MergeRequests.CreateMergeRequest(project.ID, &gl.CreateMergeRequestOptions{
		Title:        gl.Ptr(title),
		Description:  gl.Ptr(spec.Body),
		SourceBranch: gl.Ptr(spec.Branch),
		TargetBranch: gl.Ptr(base),
	}, gl.WithContext(ctx))
	switch {
	case err == nil:
		if mr.WebURL == "" {
			return "", fmt.Errorf("gitlab: the merge request !%d opened in %s has no web_url", mr.IID, path)
		}
		log.Info("githost: merge request opened", slog.String("url", mr.WebURL))
		return mr.WebURL, nil
	case alreadyExists(err):
		// Another run opened it between our list and our create.
		url, ferr := h.find(ctx, project, spec.Branch, base)
		if ferr != nil || url != "" {
			if url != "" {
				log.Info("githost: merge request opened meanwhile by another run", slog.String("url", url))
			}
			return url, ferr
		}
		// Not listed yet, or closed again meanwhile: a retry will tell.
		return "", fmt.Errorf("gitlab: GitLab reports another open merge request from %s in %s, but none into %s is listed", spec.Branch, path, base)
	default:
		return "", classify(err, "gitlab: opening a merge request from %s into %s in %s", spec.Branch, base, path)
	}
}

// find returns the web URL of the open merge request from branch into base
// within project, or "" when there is none.
func (h *Host) find(ctx context.Context, project *gl.Project, branch, base string) (string, error) {
	mrs, _, err := h.client.MergeRequests.ListProjectMergeRequests(project.ID, &gl.ListProjectMergeRequestsOptions{
		State:        gl.Ptr("opened"),
		SourceBranch: gl.Ptr(branch),
		TargetBranch: gl.Ptr(base),
	}, gl.WithContext(ctx))
	if err != nil {
		return "", classify(err, "gitlab: listing the open merge requests of %s", project.PathWithNamespace)
	}
	for _, mr := range mrs {
		// A fork's merge request into this project can have the same
		// source branch name; only this project's own branch is the job's.
		if mr.State == "opened" && mr.SourceBranch == branch && mr.TargetBranch == base &&
			mr.SourceProjectID == project.ID && mr.WebURL != "" {
			return mr.WebURL, nil
		}
	}
	return "", nil
}

// projectPath reads the project's full path ("group/sub/repo") from a clone
// URL on this GitLab.
func (h *Host) projectPath(raw string) (string, error) {
	r, err := hostkit.ParseRemote(raw)
	if err != nil {
		return "", fmt.Errorf("gitlab: %w", err)
	}
	if !hostkit.HostMatches(r.Host, h.hosts) {
		return "", fmt.Errorf("gitlab: the repository %q is on %s, not on this GitLab (%s)", hostkit.Redact(raw), r.Host, strings.Join(h.hosts, ", "))
	}
	path := r.Path
	if h.root != "" && (r.Scheme == "https" || r.Scheme == "http") {
		// HTTP clone URLs of an instance under a relative root carry it;
		// SSH ones do not.
		p, ok := strings.CutPrefix(path, h.root+"/")
		if !ok {
			return "", fmt.Errorf("gitlab: the repository URL %q is not under this GitLab's root /%s", hostkit.Redact(raw), h.root)
		}
		path = p
	}
	segs := strings.Split(path, "/")
	if len(segs) < 2 {
		return "", fmt.Errorf("gitlab: the repository URL %q does not name namespace/project", hostkit.Redact(raw))
	}
	for _, s := range segs {
		if s == "-" {
			return "", fmt.Errorf("gitlab: the repository URL %q is a page of the web interface; give the clone URL", hostkit.Redact(raw))
		}
	}
	return path, nil
}

// isDraft reports whether title already carries one of the prefixes GitLab
// reads as "draft", so that Draft does not add a second one.
func isDraft(title string) bool {
	t := strings.ToLower(strings.TrimSpace(title))
	for _, p := range []string{"draft:", "[draft]", "(draft)"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// alreadyExists reports GitLab's answer to creating a merge request while
// one is open from the same branch: 409 (422 on older versions) with
// "Another open merge request already exists for this source branch: !N".
func alreadyExists(err error) bool {
	var er *gl.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil {
		return false
	}
	if c := er.Response.StatusCode; c != http.StatusConflict && c != http.StatusUnprocessableEntity {
		return false
	}
	msg := strings.ToLower(er.Message + " " + string(er.Body))
	return strings.Contains(msg, "merge request already exists")
}

// classify wraps err with a description and marks it permanent when a retry
// cannot help: GitLab refused the request itself (401, 403, 404, 422, …),
// except for conflicts and rate limits, which pass.
func classify(err error, format string, args ...any) error {
	wrapped := fmt.Errorf(format+": %w", append(args, err)...)
	if permanent(err) {
		return engine.Permanent(wrapped)
	}
	return wrapped
}

func permanent(err error) bool {
	if errors.Is(err, hostkit.ErrEmptyToken) || errors.Is(err, gl.ErrNotFound) {
		return true
	}
	var er *gl.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return hostkit.PermanentStatus(er.Response.StatusCode)
	}
	return false
}
