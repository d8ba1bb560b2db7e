// Package github opens the job engine's pull requests on GitHub.com and on
// GitHub Enterprise Server, through go-github. It implements
// engine.PullRequests: Ensure finds the open pull request from a job's branch
// and opens one only when there is none, so a retried, resumed or followed-up
// job keeps a single pull request.
//
// It lives in its own package so that only servers that talk to GitHub
// compile go-github.
package github

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	gh "github.com/google/go-github/v89/github"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/githost/internal/hostkit"
)

// DefaultBaseURL is the REST API of GitHub.com, used when Config.BaseURL is
// empty.
const DefaultBaseURL = "https://api.github.com/"

// Config configures a Host. A token is required; everything else has a
// default. The library never reads environment variables: the caller decides
// where the token comes from.
type Config struct {
	// Token is a personal access token, or any token GitHub accepts as a
	// bearer token, allowed to read the repository and write pull requests.
	Token string
	// TokenFunc, instead of Token, is called before every request and
	// returns the token to send. It suits short-lived tokens, such as a
	// GitHub App's installation tokens, that must be renewed while the
	// server runs. Its error is returned by Ensure; mark it with
	// engine.Permanent when no retry can help.
	TokenFunc func(ctx context.Context) (string, error)
	// BaseURL is the REST API's base URL of a GitHub Enterprise Server, for
	// example "https://ghe.example.com/api/v3/" ("/api/v3/" is added when
	// missing). Empty means GitHub.com.
	BaseURL string
	// RepositoryHosts lists further host names that the repositories'
	// clone URLs may use, for example an SSH alias. By default a repository
	// must be on github.com (or ssh.github.com), or, with BaseURL, on the
	// API's host (without a leading "api.").
	RepositoryHosts []string
	// Draft opens new pull requests as drafts. Repositories whose plan does
	// not offer drafts refuse them, and Ensure then fails permanently.
	Draft bool
	// HTTPClient sends the requests. It is copied, never modified. The
	// default is a pooled client with a 60 s timeout.
	HTTPClient *http.Client
	// Logger receives the pull requests found and opened (info), and every
	// request's method, path, status and duration (debug). Tokens are never
	// logged. The default discards everything.
	Logger *slog.Logger
}

// String describes c without its token, so that printing a configuration
// cannot leak it.
func (c Config) String() string {
	base := c.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	return fmt.Sprintf("github.Config{BaseURL: %q, Token: %s, Draft: %t}", hostkit.Redact(base), redacted(c.Token, c.TokenFunc), c.Draft)
}

// GoString is String, for the %#v verb.
func (c Config) GoString() string { return c.String() }

// LogValue is the redacted form of c for slog.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

func redacted(token string, fn func(context.Context) (string, error)) string {
	switch {
	case fn != nil:
		return "func"
	case token != "":
		return "[REDACTED]"
	}
	return "none"
}

// Host opens pull requests on one GitHub instance. It is safe for concurrent
// use and holds no state between calls: everything Ensure needs to know is
// asked of GitHub, so several engines (or processes) may share a repository.
type Host struct {
	client *gh.Client
	api    string
	hosts  []string
	draft  bool
	log    *slog.Logger
}

var _ engine.PullRequests = (*Host)(nil)

// New checks cfg and returns a Host. It sends no request.
func New(cfg Config) (*Host, error) {
	token, err := hostkit.TokenSource(cfg.Token, cfg.TokenFunc)
	if err != nil {
		return nil, fmt.Errorf("github: %w", err)
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
		return nil, fmt.Errorf("github: %w", err)
	}
	transport := &hostkit.Transport{
		API: api,
		Auth: func(ctx context.Context, h http.Header) error {
			tok, err := token(ctx)
			if err != nil {
				return err
			}
			h.Set("Authorization", "Bearer "+tok)
			return nil
		},
		Logger: log,
	}
	opts := []gh.ClientOptionsFunc{gh.WithHTTPClient(hostkit.HTTPClient(cfg.HTTPClient, transport))}
	hosts := []string{"github.com", "ssh.github.com"}
	if cfg.BaseURL != "" {
		// GitHub Enterprise Server serves the API under /api/v3/ and its
		// uploads under /api/uploads/ on the same host; uploads are never
		// used here, but the option needs both.
		root := *api
		root.Path = strings.TrimSuffix(strings.TrimSuffix(root.Path, "/"), "/api/v3") + "/"
		opts = append(opts, gh.WithEnterpriseURLs(base, root.String()+"api/uploads/"))
		hosts = []string{api.Hostname()}
		if web, ok := strings.CutPrefix(strings.ToLower(api.Hostname()), "api."); ok {
			// GHE.com serves the API on api.<name>.ghe.com and the
			// repositories on <name>.ghe.com.
			hosts = append(hosts, web)
		}
	}
	hosts = append(hosts, cfg.RepositoryHosts...)
	client, err := gh.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("github: %w", err)
	}
	return &Host{client: client, api: client.BaseURL(), hosts: hosts, draft: cfg.Draft, log: log}, nil
}

// String names the host by its API, for logs.
func (h *Host) String() string { return "github.Host(" + h.api + ")" }

// Ensure returns the web URL of the open pull request from spec.Branch into
// spec.Base (the repository's default branch when empty) in
// spec.Repository, opening it with spec.Title and spec.Body only when none is
// open. A run that loses the race to open it (GitHub answers that the pull
// request already exists) returns the one the other run opened.
//
// Errors that no retry can mend (a malformed spec or repository URL, bad
// credentials, no access, no such repository, a refused pull request) are
// marked with engine.Permanent; server errors, rate limits and network
// failures are not.
func (h *Host) Ensure(ctx context.Context, spec engine.PullRequestSpec) (string, error) {
	if spec.Branch == "" || spec.Title == "" {
		return "", engine.Permanent(errors.New("github: a pull request needs a branch and a title"))
	}
	owner, repo, err := h.repository(spec.Repository)
	if err != nil {
		return "", engine.Permanent(err)
	}
	base := hostkit.Branch(spec.Base)
	if base == "" {
		r, _, err := h.client.Repositories.Get(ctx, owner, repo)
		if err != nil {
			return "", classify(err, "github: reading the repository %s/%s", owner, repo)
		}
		if base = r.GetDefaultBranch(); base == "" {
			return "", engine.Permanent(fmt.Errorf("github: the repository %s/%s has no default branch", owner, repo))
		}
	}
	log := h.log.With(slog.String("repository", owner+"/"+repo), slog.String("branch", spec.Branch), slog.String("base", base))

	if url, err := h.find(ctx, owner, repo, spec.Branch, base); err != nil || url != "" {
		if url != "" {
			log.Info("githost: pull request already open", slog.String("url", url))
		}
		return url, err
	}
	newPR := &gh.NewPullRequest{
		Title: gh.Ptr(spec.Title),
		Head:  gh.Ptr(spec.Branch),
		Base:  gh.Ptr(base),
		Body:  gh.Ptr(spec.Body),
	}
	if h.draft {
		newPR.Draft = gh.Ptr(true)
	}
	pr, _, err := h.client.PullRequests.Create(ctx, owner, repo, newPR)
	switch {
	case err == nil:
		url := pr.GetHTMLURL()
		if url == "" {
			return "", fmt.Errorf("github: the pull request #%d opened in %s/%s has no html_url", pr.GetNumber(), owner, repo)
		}
		log.Info("githost: pull request opened", slog.String("url", url))
		return url, nil
	case alreadyExists(err):
		// Another run opened it between our list and our create.
		url, ferr := h.find(ctx, owner, repo, spec.Branch, base)
		if ferr != nil || url != "" {
			if url != "" {
				log.Info("githost: pull request opened meanwhile by another run", slog.String("url", url))
			}
			return url, ferr
		}
		// Not listed yet: GitHub's lists can lag behind its writes. A
		// retry will find it.
		return "", fmt.Errorf("github: GitHub reports an open pull request from %s:%s into %s that its list does not show yet", owner, spec.Branch, base)
	default:
		return "", classify(err, "github: opening a pull request from %s into %s in %s/%s", spec.Branch, base, owner, repo)
	}
}

// find returns the web URL of the open pull request from owner:branch into
// base, or "" when there is none.
func (h *Host) find(ctx context.Context, owner, repo, branch, base string) (string, error) {
	prs, _, err := h.client.PullRequests.List(ctx, owner, repo, &gh.PullRequestListOptions{
		State: "open",
		Head:  owner + ":" + branch,
		Base:  base,
	})
	if err != nil {
		return "", classify(err, "github: listing the open pull requests of %s/%s", owner, repo)
	}
	for _, pr := range prs {
		// GitHub ignores a head filter it cannot read and lists every pull
		// request; checking each one keeps that from picking a stranger's.
		if pr.GetState() == "open" && pr.GetHead().GetRef() == branch && pr.GetBase().GetRef() == base && pr.GetHTMLURL() != "" {
			return pr.GetHTMLURL(), nil
		}
	}
	return "", nil
}

// repository reads owner and name from a clone URL on this GitHub.
func (h *Host) repository(raw string) (owner, repo string, err error) {
	r, err := hostkit.ParseRemote(raw)
	if err != nil {
		return "", "", fmt.Errorf("github: %w", err)
	}
	if !hostkit.HostMatches(r.Host, h.hosts) {
		return "", "", fmt.Errorf("github: the repository %q is on %s, not on this GitHub (%s)", hostkit.Redact(raw), r.Host, strings.Join(h.hosts, ", "))
	}
	owner, repo, ok := strings.Cut(r.Path, "/")
	if !ok || strings.Contains(repo, "/") {
		return "", "", fmt.Errorf("github: the repository URL %q does not name owner/repository", hostkit.Redact(raw))
	}
	return owner, repo, nil
}

// alreadyExists reports GitHub's answer to creating a pull request that is
// already open: 422 with "A pull request already exists for owner:branch."
func alreadyExists(err error) bool {
	var er *gh.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil || er.Response.StatusCode != http.StatusUnprocessableEntity {
		return false
	}
	for _, e := range er.Errors {
		if e.Code == "already_exists" || strings.Contains(strings.ToLower(e.Message), "pull request already exists") {
			return true
		}
	}
	return strings.Contains(strings.ToLower(er.Message), "pull request already exists")
}

// classify wraps err with a description and marks it permanent when a retry
// cannot help: GitHub refused the request itself (401, 403, 404, 422, …),
// except for rate limits, which pass.
func classify(err error, format string, args ...any) error {
	wrapped := fmt.Errorf(format+": %w", append(args, err)...)
	if permanent(err) {
		return engine.Permanent(wrapped)
	}
	return wrapped
}

func permanent(err error) bool {
	if errors.Is(err, hostkit.ErrEmptyToken) {
		return true
	}
	var rate *gh.RateLimitError
	var abuse *gh.AbuseRateLimitError
	if errors.As(err, &rate) || errors.As(err, &abuse) {
		return false
	}
	var otp *gh.TwoFactorAuthError
	if errors.As(err, &otp) {
		return true
	}
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return hostkit.PermanentStatus(er.Response.StatusCode)
	}
	return false
}
