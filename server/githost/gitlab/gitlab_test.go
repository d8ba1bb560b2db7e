package gitlab

import (
	"context"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/githost/internal/hostkit/hosttest"
)

const projectPath = "docs-team/guides/handbook"

// newHost returns a Host on the fake, configured as a self-managed instance
// whose base URL is the fake's.
func newHost(t *testing.T, f *fakeGitLab, edits ...func(*Config)) *Host {
	return hosttest.MustNew(t, New, f.config(hosttest.Options{Token: sentinelToken}), edits...)
}

func getCall(f *fakeGitLab) hosttest.Call {
	return hosttest.Call{Method: "GET", Path: f.root + "/api/v4/projects/docs-team%2Fguides%2Fhandbook"}
}

func listCall(f *fakeGitLab, target string) hosttest.Call {
	return hosttest.Call{Method: "GET", Path: f.root + "/api/v4/projects/4711/merge_requests", Query: url.Values{
		"state": {"opened"}, "source_branch": {"docsapi/job_123"}, "target_branch": {target},
	}}
}

func createCall(f *fakeGitLab) hosttest.Call {
	return hosttest.Call{Method: "POST", Path: f.root + "/api/v4/projects/4711/merge_requests"}
}

// checkNoAuthorization checks that reqs carry the token in PRIVATE-TOKEN
// alone: GitLab needs no Authorization header, and every copy of the token
// is one more place for it to leak from.
func checkNoAuthorization(t *testing.T, reqs []hosttest.Request) {
	t.Helper()
	for _, r := range reqs {
		if a := r.Header.Get("Authorization"); a != "" {
			t.Errorf("%s %s: an Authorization header %q was sent too", r.Method, r.Path, a)
		}
	}
}

func TestEnsureOpensMergeRequest(t *testing.T) {
	for _, tt := range []struct {
		name      string
		draft     bool
		title     string
		wantTitle string
	}{
		{"ready", false, "Docs: export", "Docs: export"},
		{"draft", true, "Docs: export", "Draft: Docs: export"},
		{"draft already marked", true, "Draft: Docs: export", "Draft: Docs: export"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeGitLab(t, "")
			spec := f.Spec()
			spec.Title = tt.title
			reqs := f.Expect(t, newHost(t, f, func(c *Config) { c.Draft = tt.draft }), spec, f.webURL(projectPath, 1), getCall(f), listCall(f, "main"), createCall(f))
			checkNoAuthorization(t, reqs)
			wantBody := map[string]any{"title": tt.wantTitle, "description": spec.Body, "source_branch": spec.Branch, "target_branch": "main"}
			if diff := cmp.Diff(wantBody, reqs[2].Body); diff != "" {
				t.Errorf("create body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnsureReusesOpenMergeRequest(t *testing.T) {
	f := newFakeGitLab(t, "")
	// Look-alikes that must not be taken: closed, merged, another target,
	// and a fork's merge request from a branch of the same name.
	f.addMR(fakeMR{Source: "docsapi/job_123", Target: "main", Title: "old", State: "closed"})
	f.addMR(fakeMR{Source: "docsapi/job_123", Target: "main", Title: "older", State: "merged"})
	f.addMR(fakeMR{Source: "docsapi/job_123", Target: "release-1.x", Title: "other target"})
	f.addMR(fakeMR{Source: "docsapi/job_123", Target: "main", Title: "from a fork", SourceProjectID: 9999})
	open := f.addMR(fakeMR{Source: "docsapi/job_123", Target: "main", Title: "Docs: first run"})
	f.Expect(t, newHost(t, f), f.Spec(), f.webURL(projectPath, open.IID), getCall(f), listCall(f, "main"))
}

func TestEnsureSkipsForkMergeRequest(t *testing.T) {
	f := newFakeGitLab(t, "")
	f.addMR(fakeMR{Source: "docsapi/job_123", Target: "main", Title: "from a fork", SourceProjectID: 9999})
	f.Expect(t, newHost(t, f), f.Spec(), f.webURL(projectPath, 2), getCall(f), listCall(f, "main"), createCall(f))
}

func TestEnsureDefaultBranch(t *testing.T) {
	f := newFakeGitLab(t, "")
	f.projects[projectPath].DefaultBranch = "trunk"
	spec := f.Spec()
	spec.Base = ""
	reqs := f.Expect(t, newHost(t, f), spec, f.webURL(projectPath, 1), getCall(f), listCall(f, "trunk"), createCall(f))
	if b := reqs[2].Body["target_branch"]; b != "trunk" {
		t.Errorf("created with target %v, want the default branch trunk", b)
	}
}

func TestSelfManagedBaseURLForms(t *testing.T) {
	f := newFakeGitLab(t, "")
	hosttest.BaseURLForms(t, f.URL, "/api/v4/", f.Spec(), func(t *testing.T, base string) (engine.PullRequests, string) {
		h := newHost(t, f, func(c *Config) { c.BaseURL = base })
		return h, h.api
	})
}

func TestRelativeURLRoot(t *testing.T) {
	f := newFakeGitLab(t, "/gitlab")
	for _, base := range []string{f.URL + "/gitlab", f.URL + "/gitlab/api/v4", f.URL + "/gitlab/api/v4/"} {
		for _, repo := range []string{f.repoURL(projectPath), "git@127.0.0.1:" + projectPath + ".git"} {
			t.Run(base+" "+repo, func(t *testing.T) {
				spec := f.Spec()
				spec.Repository = repo
				if got, want := hosttest.MustEnsure(t, newHost(t, f, func(c *Config) { c.BaseURL = base }), spec), f.webURL(projectPath, 1); got != want {
					t.Errorf("URL = %q, want %q", got, want)
				}
			})
		}
	}
	if n := f.Creates(); n != 1 {
		t.Errorf("%d creates over all the forms, want 1", n)
	}
}

func TestEnsureServerErrorIsNotRetriedInside(t *testing.T) {
	// One request per failed step: the engine owns retries, and client-go's
	// own would multiply them (and sleep).
	f := newFakeGitLab(t, "")
	f.Fail(hosttest.Answer{Op: hosttest.List, Status: 503})
	if _, err := newHost(t, f).Ensure(context.Background(), f.Spec()); err == nil {
		t.Fatal("Ensure succeeded against a failing server")
	}
	if diff := cmp.Diff([]hosttest.Call{getCall(f), listCall(f, "main")}, hosttest.Calls(f.Log())); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestRepositoryURLs(t *testing.T) {
	// The full path is all a clone URL gives; the id comes from Lookup.
	path := func(cfg Config) func(string) (string, error) {
		c := hosttest.MustNew(t, New, cfg).ensure.API
		return func(raw string) (string, error) {
			p, err := c.Repository(raw)
			return p.path, err
		}
	}
	hosttest.CheckURLs(t, sentinelToken, path(Config{Token: sentinelToken}), map[string]string{
		"https://gitlab.com/group/repo":                                  "group/repo",
		"https://gitlab.com/group/repo.git":                              "group/repo",
		"https://gitlab.com/group/sub/deeper/repo.git":                   "group/sub/deeper/repo",
		"https://gitlab.com/group/repo/":                                 "group/repo",
		"https://oauth2:" + sentinelToken + "@gitlab.com/group/repo.git": "group/repo",
		"git@gitlab.com:group/sub/repo.git":                              "group/sub/repo",
		"ssh://git@gitlab.com:2222/group/sub/repo.git":                   "group/sub/repo",
		"https://gitlab.com/group/docs.site.git":                         "group/docs.site",

		"":                         "",
		"group/repo":               "",
		"/srv/git/repo.git":        "",
		"file:///srv/git/repo.git": "",
		"https://gitlab.com/repo":  "",
		"https://gitlab.com/group/repo/-/tree/main":        "",
		"https://gitlab.com/group/repo/-/merge_requests/1": "",
		"https://gitlab.com/group/repo?ref=main":           "",
		"https://github.com/group/repo.git":                "",
		"https://gitlab.com/group/../repo":                 "",
	})
	hosttest.CheckURLs(t, sentinelToken, path(Config{Token: sentinelToken, BaseURL: "https://gitlab.example.com/api/v4", RepositoryHosts: []string{"ssh.gitlab.example.com"}}), map[string]string{
		"https://gitlab.example.com/group/sub/repo.git": "group/sub/repo",
		"git@gitlab.example.com:group/sub/repo.git":     "group/sub/repo",
		"git@ssh.gitlab.example.com:group/sub/repo.git": "group/sub/repo",

		"https://gitlab.com/group/repo.git": "",
	})
	hosttest.CheckURLs(t, sentinelToken, path(Config{Token: sentinelToken, BaseURL: "https://example.com/gitlab"}), map[string]string{
		"https://example.com/gitlab/group/repo.git": "group/repo",
		"git@example.com:group/repo.git":            "group/repo",

		"https://example.com/group/repo.git": "",
	})
}
