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
	"net/http"
	"strings"

	gh "github.com/google/go-github/v89/github"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/githost"
	"github.com/docsapi/docsapi-go/server/githost/internal/hostkit"
)

// DefaultBaseURL is the REST API of GitHub.com, used when Config.BaseURL is
// empty.
const DefaultBaseURL = "https://api.github.com/"

// Config configures a Host; its fields are documented on githost.Config,
// which both hosts share. On GitHub the token is sent as a bearer token, and
// BaseURL names a GitHub Enterprise Server's API, for example
// "https://ghe.example.com/api/v3/" ("/api/v3/" is added when missing). By
// default a repository must be on github.com (or ssh.github.com), or, with
// BaseURL, on the API's host (without a leading "api.").
type Config = githost.Config

// Host opens pull requests on one GitHub instance. It is safe for concurrent
// use and holds no state between calls: everything Ensure needs to know is
// asked of GitHub, so several engines (or processes) may share a repository.
type Host struct {
	ensure *hostkit.Ensurer[repoName]
	api    string
}

var _ engine.PullRequests = (*Host)(nil)

// New checks cfg and returns a Host. It sends no request.
func New(cfg Config) (*Host, error) {
	s, err := hostkit.NewSetup(cfg.Token, cfg.TokenFunc, cfg.BaseURL, DefaultBaseURL, cfg.Logger)
	if err != nil {
		return nil, fmt.Errorf("github: %w", err)
	}
	transport := &hostkit.Transport{
		API: s.API,
		Auth: func(ctx context.Context, h http.Header) error {
			tok, err := s.Token(ctx)
			if err != nil {
				return err
			}
			h.Set("Authorization", "Bearer "+tok)
			return nil
		},
		Logger: s.Log,
	}
	opts := []gh.ClientOptionsFunc{gh.WithHTTPClient(hostkit.HTTPClient(cfg.HTTPClient, transport))}
	hosts := []string{"github.com", "ssh.github.com"}
	if cfg.BaseURL != "" {
		// GitHub Enterprise Server serves the API under /api/v3/ and its
		// uploads under /api/uploads/ on the same host; uploads are never
		// used here, but the option needs both.
		root := *s.API
		root.Path = strings.TrimSuffix(strings.TrimSuffix(root.Path, "/"), "/api/v3") + "/"
		opts = append(opts, gh.WithEnterpriseURLs(s.Base, root.String()+"api/uploads/"))
		hosts = []string{s.API.Hostname()}
		if web, ok := strings.CutPrefix(strings.ToLower(s.API.Hostname()), "api."); ok {
			// GHE.com serves the API on api.<name>.ghe.com and the
			// repositories on <name>.ghe.com.
			hosts = append(hosts, web)
		}
	}
	hosts = append(hosts, cfg.RepositoryHosts...)
	gc, err := gh.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("github: %w", err)
	}
	c := &client{gh: gc, hosts: hosts, draft: cfg.Draft}
	return &Host{ensure: &hostkit.Ensurer[repoName]{
		Names: hostkit.Names{Package: "github", Service: "GitHub", Kind: "pull request", Repository: "repository"},
		API:   c,
		Log:   s.Log,
	}, api: gc.BaseURL()}, nil
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
	return h.ensure.Ensure(ctx, spec)
}

// repoName is a repository as GitHub's API names it.
type repoName struct{ owner, name string }

func (r repoName) String() string { return r.owner + "/" + r.name }

// client is GitHub's side of hostkit.Ensurer: the requests, and how to read
// GitHub's answers.
type client struct {
	gh    *gh.Client
	hosts []string
	draft bool
}

// Repository reads owner and name from a clone URL on this GitHub.
func (c *client) Repository(raw string) (repoName, error) {
	r, err := hostkit.RemoteOn(raw, "GitHub", c.hosts)
	if err != nil {
		return repoName{}, err
	}
	owner, repo, ok := strings.Cut(r.Path, "/")
	if !ok || strings.Contains(repo, "/") {
		return repoName{}, fmt.Errorf("the repository URL %q does not name owner/repository", hostkit.Redact(raw))
	}
	return repoName{owner, repo}, nil
}

// Lookup asks GitHub only for the default branch: the other calls name the
// repository by owner and name.
func (c *client) Lookup(ctx context.Context, repo repoName, needDefault bool) (repoName, string, error) {
	if !needDefault {
		return repo, "", nil
	}
	r, _, err := c.gh.Repositories.Get(ctx, repo.owner, repo.name)
	if err != nil {
		return repo, "", err
	}
	return repo, r.GetDefaultBranch(), nil
}

// ListOpen lists the open pull requests from owner:head into base.
func (c *client) ListOpen(ctx context.Context, repo repoName, head, base string) ([]hostkit.Listed, error) {
	prs, _, err := c.gh.PullRequests.List(ctx, repo.owner, repo.name, &gh.PullRequestListOptions{
		State: "open",
		Head:  repo.owner + ":" + head,
		Base:  base,
	})
	if err != nil {
		return nil, err
	}
	out := make([]hostkit.Listed, len(prs))
	for i, pr := range prs {
		out[i] = hostkit.Listed{Open: pr.GetState() == "open", Head: pr.GetHead().GetRef(), Base: pr.GetBase().GetRef(), URL: pr.GetHTMLURL()}
	}
	return out, nil
}

// Create opens the pull request, as a draft when so configured.
func (c *client) Create(ctx context.Context, repo repoName, spec hostkit.NewPR) (string, error) {
	newPR := &gh.NewPullRequest{
		Title: gh.Ptr(spec.Title),
		Head:  gh.Ptr(spec.Head),
		Base:  gh.Ptr(spec.Base),
		Body:  gh.Ptr(spec.Body),
	}
	if c.draft {
		newPR.Draft = gh.Ptr(true)
	}
	pr, _, err := c.gh.PullRequests.Create(ctx, repo.owner, repo.name, newPR)
	if err != nil {
		return "", err
	}
	return pr.GetHTMLURL(), nil
}

// AlreadyExists reports GitHub's answer to creating a pull request that is
// already open: 422 with "A pull request already exists for owner:branch."
func (*client) AlreadyExists(err error) bool {
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

// Permanent reports whether GitHub refused the request itself (401, 403,
// 404, 422, …; see hostkit.PermanentStatus). Rate limits, which GitHub
// answers with 403 too, pass.
func (*client) Permanent(err error) bool {
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
