package github

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/githost/internal/hostkit/hosttest"
)

// newHost returns a Host on the fake, configured as a GitHub Enterprise
// Server whose base URL is the fake's.
func newHost(t *testing.T, f *fakeGitHub, edits ...func(*Config)) *Host {
	return hosttest.MustNew(t, New, f.config(hosttest.Options{Token: sentinelToken}), edits...)
}

func listCall(base string) hosttest.Call {
	return hosttest.Call{Method: "GET", Path: "/api/v3/repos/octo-org/docs/pulls", Query: url.Values{
		"state": {"open"}, "head": {"octo-org:docsapi/job_123"}, "base": {base},
	}}
}

var createCall = hosttest.Call{Method: "POST", Path: "/api/v3/repos/octo-org/docs/pulls"}

func TestEnsureOpensPullRequest(t *testing.T) {
	for _, draft := range []bool{false, true} {
		t.Run(fmt.Sprintf("draft=%t", draft), func(t *testing.T) {
			f := newFakeGitHub(t)
			spec := f.Spec()
			reqs := f.Expect(t, newHost(t, f, func(c *Config) { c.Draft = draft }), spec, f.webURL("octo-org", "docs", 101), listCall("main"), createCall)
			wantBody := map[string]any{"title": spec.Title, "head": spec.Branch, "base": "main", "body": spec.Body}
			if draft {
				wantBody["draft"] = true
			}
			if diff := cmp.Diff(wantBody, reqs[1].Body); diff != "" {
				t.Errorf("create body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnsureReusesOpenPullRequest(t *testing.T) {
	f := newFakeGitHub(t)
	// Look-alikes that must not be taken: closed, another base, another
	// branch.
	f.addPull(fakePull{Owner: "octo-org", Repo: "docs", Head: "docsapi/job_123", Base: "main", Title: "old", State: "closed"})
	f.addPull(fakePull{Owner: "octo-org", Repo: "docs", Head: "docsapi/job_123", Base: "release-1.x", Title: "other base"})
	f.addPull(fakePull{Owner: "octo-org", Repo: "docs", Head: "docsapi/job_999", Base: "main", Title: "other job"})
	open := f.addPull(fakePull{Owner: "octo-org", Repo: "docs", Head: "docsapi/job_123", Base: "main", Title: "Docs: first run"})
	f.Expect(t, newHost(t, f), f.Spec(), f.webURL("octo-org", "docs", open.Number), listCall("main"))
}

func TestEnsureIgnoresUnfilteredList(t *testing.T) {
	// GitHub ignores a head filter it cannot read and lists every open
	// pull request; Ensure must still pick only its own branch's.
	f := newFakeGitHub(t)
	f.addPull(fakePull{Owner: "octo-org", Repo: "docs", Head: "feature/other", Base: "main", Title: "someone else's"})
	f.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != "GET" || !strings.HasSuffix(r.URL.Path, "/pulls") {
			return false
		}
		var all []any
		for _, p := range f.openPulls() {
			all = append(all, f.pullJSON(p))
		}
		writeJSON(w, http.StatusOK, all)
		return true
	})
	f.Expect(t, newHost(t, f), f.Spec(), f.webURL("octo-org", "docs", 102), listCall("main"), createCall)
}

func TestEnsureDefaultBranch(t *testing.T) {
	f := newFakeGitHub(t)
	f.repos["octo-org/docs"] = "trunk"
	spec := f.Spec()
	spec.Base = ""
	reqs := f.Expect(t, newHost(t, f), spec, f.webURL("octo-org", "docs", 101),
		hosttest.Call{Method: "GET", Path: "/api/v3/repos/octo-org/docs"}, listCall("trunk"), createCall)
	if b := reqs[2].Body["base"]; b != "trunk" {
		t.Errorf("created with base %v, want the default branch trunk", b)
	}
}

func TestEnterpriseBaseURLForms(t *testing.T) {
	f := newFakeGitHub(t)
	hosttest.BaseURLForms(t, f.URL, "/api/v3/", f.Spec(), func(t *testing.T, base string) (engine.PullRequests, string) {
		h := newHost(t, f, func(c *Config) { c.BaseURL = base })
		return h, h.api
	})
}

func TestRepositoryURLs(t *testing.T) {
	read := func(cfg Config) func(string) (repoName, error) {
		return hosttest.MustNew(t, New, cfg).ensure.API.Repository
	}
	hosttest.CheckURLs(t, sentinelToken, read(Config{Token: sentinelToken}), map[string]repoName{
		"https://github.com/octo-org/docs":                                          {"octo-org", "docs"},
		"https://github.com/octo-org/docs.git":                                      {"octo-org", "docs"},
		"https://github.com/octo-org/docs/":                                         {"octo-org", "docs"},
		"https://GitHub.com/Octo-Org/Docs.git":                                      {"Octo-Org", "Docs"},
		"https://x-access-token:" + sentinelToken + "@github.com/octo-org/docs.git": {"octo-org", "docs"},
		"git@github.com:octo-org/docs.git":                                          {"octo-org", "docs"},
		"github.com:octo-org/docs":                                                  {"octo-org", "docs"},
		"ssh://git@github.com/octo-org/docs.git":                                    {"octo-org", "docs"},
		"ssh://git@ssh.github.com:443/octo-org/docs.git":                            {"octo-org", "docs"},
		"https://github.com/octo-org/docs.js.git":                                   {"octo-org", "docs.js"},

		"":                                     {},
		"octo-org/docs":                        {},
		"/srv/git/docs.git":                    {},
		"file:///srv/git/docs.git":             {},
		"ftp://github.com/octo-org/docs":       {},
		"https://gitlab.com/octo-org/docs.git": {},
		"https://github.com/octo-org":          {},
		"https://github.com/octo-org/docs/tree/main":  {},
		"https://github.com/octo-org/docs?tab=readme": {},
		"https://github.com/octo-org//docs":           {},
		"https://github.com/octo-org/../docs":         {},
		"https://ghe.example.com/octo-org/docs.git":   {},
	})
	hosttest.CheckURLs(t, sentinelToken, read(Config{Token: sentinelToken, BaseURL: "https://ghe.example.com/api/v3/", RepositoryHosts: []string{"ghe-ssh.example.com"}}), map[string]repoName{
		"https://ghe.example.com/octo-org/docs.git":            {"octo-org", "docs"},
		"git@ghe.example.com:octo-org/docs.git":                {"octo-org", "docs"},
		"ssh://git@ghe-ssh.example.com:2222/octo-org/docs.git": {"octo-org", "docs"},

		"https://github.com/octo-org/docs.git": {},
	})
	hosttest.CheckURLs(t, sentinelToken, read(Config{Token: sentinelToken, BaseURL: "https://api.octocorp.ghe.com/"}), map[string]repoName{
		"https://octocorp.ghe.com/octo-org/docs": {"octo-org", "docs"},
	})
}
