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
	"net/http"
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/githost"
	"github.com/docsapi/docsapi-go/server/githost/internal/hostkit"
)

// DefaultBaseURL is the REST API of GitLab.com, used when Config.BaseURL is
// empty.
const DefaultBaseURL = "https://gitlab.com/api/v4/"

// Config configures a Host; its fields are documented on githost.Config,
// which both hosts share. On GitLab the token is sent as PRIVATE-TOKEN, and
// BaseURL names a self-managed instance's API, for example
// "https://gitlab.example.com/api/v4" ("/api/v4" is added when missing; an
// instance under a relative URL root, such as "https://example.com/gitlab",
// works too). By default a repository must be on the API's host.
type Config = githost.Config

// Host opens merge requests on one GitLab instance. It is safe for
// concurrent use and holds no state between calls: everything Ensure needs to
// know is asked of GitLab, so several engines (or processes) may share a
// project.
type Host struct {
	ensure *hostkit.Ensurer[project]
	api    string
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
	s, err := hostkit.NewSetup(cfg.Token, cfg.TokenFunc, cfg.BaseURL, DefaultBaseURL, cfg.Logger)
	if err != nil {
		return nil, fmt.Errorf("gitlab: %w", err)
	}
	// client-go sets the token header; the transport only makes sure it
	// never follows a redirect to another host, which Go's client would
	// allow for PRIVATE-TOKEN.
	transport := &hostkit.Transport{API: s.API, Logger: s.Log}
	gc, err := gl.NewAuthSourceClient(tokenAuth{token: s.Token},
		gl.WithBaseURL(s.Base),
		gl.WithHTTPClient(hostkit.HTTPClient(cfg.HTTPClient, transport)),
		// The engine retries a failed run as a whole, and Ensure is
		// idempotent; retries here would only spend the run's time, and
		// retrying the create could not be told from a second create.
		gl.WithoutRetries(),
		gl.WithURLWarningLogger(s.Log),
	)
	if err != nil {
		return nil, fmt.Errorf("gitlab: %w", err)
	}
	root := strings.Trim(s.API.Path, "/")
	root = strings.Trim(strings.TrimSuffix(root, "api/v4"), "/")
	hosts := append([]string{s.API.Hostname()}, cfg.RepositoryHosts...)
	c := &client{gl: gc, hosts: hosts, root: root, draft: cfg.Draft}
	return &Host{ensure: &hostkit.Ensurer[project]{
		Names: hostkit.Names{Package: "gitlab", Service: "GitLab", Kind: "merge request", Repository: "project"},
		API:   c,
		Log:   s.Log,
	}, api: gc.BaseURL().String()}, nil
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
	return h.ensure.Ensure(ctx, spec)
}

// project is a project as GitLab's API names it: by its full path until
// Lookup has read its numeric id, which names it in the other calls.
type project struct {
	path string
	id   int64
}

func (p project) String() string { return p.path }

// client is GitLab's side of hostkit.Ensurer: the requests, and how to read
// GitLab's answers.
type client struct {
	gl    *gl.Client
	hosts []string
	// root is the instance's relative URL root ("" or, say, "gitlab"),
	// which its HTTP clone URLs carry before the project's path.
	root  string
	draft bool
}

// Repository reads the project's full path ("group/sub/repo") from a clone
// URL on this GitLab.
func (c *client) Repository(raw string) (project, error) {
	r, err := hostkit.RemoteOn(raw, "GitLab", c.hosts)
	if err != nil {
		return project{}, err
	}
	path := r.Path
	if c.root != "" && (r.Scheme == "https" || r.Scheme == "http") {
		// HTTP clone URLs of an instance under a relative root carry it;
		// SSH ones do not.
		p, ok := strings.CutPrefix(path, c.root+"/")
		if !ok {
			return project{}, fmt.Errorf("the repository URL %q is not under this GitLab's root /%s", hostkit.Redact(raw), c.root)
		}
		path = p
	}
	segs := strings.Split(path, "/")
	if len(segs) < 2 {
		return project{}, fmt.Errorf("the repository URL %q does not name namespace/project", hostkit.Redact(raw))
	}
	for _, s := range segs {
		if s == "-" {
			return project{}, fmt.Errorf("the repository URL %q is a page of the web interface; give the clone URL", hostkit.Redact(raw))
		}
	}
	return project{path: path}, nil
}

// Lookup reads the project even when the base is known: its numeric id
// names it in the other calls, and a missing project fails here with a
// clear message.
func (c *client) Lookup(ctx context.Context, p project, _ bool) (project, string, error) {
	got, _, err := c.gl.Projects.GetProject(p.path, nil, gl.WithContext(ctx))
	if err != nil {
		return p, "", err
	}
	p.id = got.ID
	return p, got.DefaultBranch, nil
}

// ListOpen lists the open merge requests from head into base.
func (c *client) ListOpen(ctx context.Context, p project, head, base string) ([]hostkit.Listed, error) {
	mrs, _, err := c.gl.MergeRequests.ListProjectMergeRequests(p.id, &gl.ListProjectMergeRequestsOptions{
		State:        gl.Ptr("opened"),
		SourceBranch: gl.Ptr(head),
		TargetBranch: gl.Ptr(base),
	}, gl.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	out := make([]hostkit.Listed, len(mrs))
	for i, mr := range mrs {
		out[i] = hostkit.Listed{Open: mr.State == "opened", Head: mr.SourceBranch, Base: mr.TargetBranch, Foreign: mr.SourceProjectID != p.id, URL: mr.WebURL}
	}
	return out, nil
}

// Create opens the merge request, as a draft by its title when so
// configured.
func (c *client) Create(ctx context.Context, p project, spec hostkit.NewPR) (string, error) {
	title := spec.Title
	if c.draft && !isDraft(title) {
		title = "Draft: " + title
	}
	mr, _, err := c.gl.MergeRequests.CreateMergeRequest(p.id, &gl.CreateMergeRequestOptions{
		Title:        gl.Ptr(title),
		Description:  gl.Ptr(spec.Body),
		SourceBranch: gl.Ptr(spec.Head),
		TargetBranch: gl.Ptr(spec.Base),
	}, gl.WithContext(ctx))
	if err != nil {
		return "", err
	}
	return mr.WebURL, nil
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

// AlreadyExists reports GitLab's answer to creating a merge request while
// one is open from the same branch: 409 (422 on older versions) with
// "Another open merge request already exists for this source branch: !N".
func (*client) AlreadyExists(err error) bool {
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

// Permanent reports whether GitLab refused the request itself (401, 403,
// 404, 422, …; see hostkit.PermanentStatus). Conflicts and rate limits pass.
func (*client) Permanent(err error) bool {
	if errors.Is(err, gl.ErrNotFound) {
		return true
	}
	var er *gl.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return hostkit.PermanentStatus(er.Response.StatusCode)
	}
	return false
}
