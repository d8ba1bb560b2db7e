package github

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docsapi/docsapi-go/server/engine"
)

// newHost returns a Host on the fake, configured as a GitHub Enterprise
// Server whose base URL is the fake's.
func newHost(t *testing.T, f *fakeGitHub, edit func(*Config)) *Host {
	t.Helper()
	cfg := Config{Token: sentinelToken, BaseURL: f.baseURL()}
	if edit != nil {
		edit(&cfg)
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return h
}

func jobSpec(f *fakeGitHub) engine.PullRequestSpec {
	return engine.PullRequestSpec{
		Repository: f.repoURL("octo-org/docs"),
		Base:       "main",
		Branch:     "docsapi/job_123",
		Title:      "Docs: document the export command",
		Body:       "Opened by docsapi for job job_123.\n\n> document the export command",
	}
}

// call is a request as the tests compare it.
type call struct {
	Method, Path string
	Query        url.Values
}

func calls(reqs []fakeRequest) []call {
	out := make([]call, len(reqs))
	for i, r := range reqs {
		q, _ := url.ParseQuery(r.Query)
		if len(q) == 0 {
			q = nil
		}
		out[i] = call{Method: r.Method, Path: r.Path, Query: q}
	}
	return out
}

func listCall(base string) call {
	return call{Method: "GET", Path: "/api/v3/repos/octo-org/docs/pulls", Query: url.Values{
		"state": {"open"}, "head": {"octo-org:docsapi/job_123"}, "base": {base},
	}}
}

var createCall = call{Method: "POST", Path: "/api/v3/repos/octo-org/docs/pulls"}

func TestEnsureOpensPullRequest(t *testing.T) {
	for _, draft := range []bool{false, true} {
		t.Run(fmt.Sprintf("draft=%t", draft), func(t *testing.T) {
			f := newFakeGitHub(t)
			h := newHost(t, f, func(c *Config) { c.Draft = draft })
			spec := jobSpec(f)

			got, err := h.Ensure(context.Background(), spec)
			if err != nil {
				t.Fatalf("Ensure: %v", err)
			}
			if want := f.webURL("octo-org", "docs", 101); got != want {
				t.Errorf("URL = %q, want %q", got, want)
			}
			reqs := f.log()
			if diff := cmp.Diff([]call{listCall("main"), createCall}, calls(reqs)); diff != "" {
				t.Fatalf("requests (-want +got):\n%s", diff)
			}
			for _, r := range reqs {
				if r.Auth != "Bearer "+sentinelToken {
					t.Errorf("%s %s: Authorization = %q, want the bearer token", r.Method, r.Path, r.Auth)
				}
			}
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
	h := newHost(t, f, nil)

	got, err := h.Ensure(context.Background(), jobSpec(f))
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if want := f.webURL("octo-org", "docs", open.Number); got != want {
		t.Errorf("URL = %q, want the open pull request's %q", got, want)
	}
	if n := f.createCount(); n != 0 {
		t.Errorf("%d creates, want none", n)
	}
	if diff := cmp.Diff([]call{listCall("main")}, calls(f.log())); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestEnsureIgnoresUnfilteredList(t *testing.T) {
	// GitHub ignores a head filter it cannot read and lists every open
	// pull request; Ensure must still pick only its own branch's.
	f := newFakeGitHub(t)
	f.addPull(fakePull{Owner: "octo-org", Repo: "docs", Head: "feature/other", Base: "main", Title: "someone else's"})
	f.intercept = func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != "GET" || !strings.HasSuffix(r.URL.Path, "/pulls") {
			return false
		}
		var all []any
		for _, p := range f.openPulls() {
			all = append(all, f.pullJSON(p))
		}
		writeJSON(w, http.StatusOK, all)
		return true
	}
	h := newHost(t, f, nil)
	got, err := h.Ensure(context.Background(), jobSpec(f))
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if want := f.webURL("octo-org", "docs", 102); got != want {
		t.Errorf("URL = %q, want a new pull request %q", got, want)
	}
	if n := f.createCount(); n != 1 {
		t.Errorf("%d creates, want 1", n)
	}
}

func TestEnsureDefaultBranch(t *testing.T) {
	f := newFakeGitHub(t)
	f.repos["octo-org/docs"] = "trunk"
	h := newHost(t, f, nil)
	spec := jobSpec(f)
	spec.Base = ""

	got, err := h.Ensure(context.Background(), spec)
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if want := f.webURL("octo-org", "docs", 101); got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
	reqs := f.log()
	want := []call{{Method: "GET", Path: "/api/v3/repos/octo-org/docs"}, listCall("trunk"), createCall}
	if diff := cmp.Diff(want, calls(reqs)); diff != "" {
		t.Fatalf("requests (-want +got):\n%s", diff)
	}
	if b := reqs[2].Body["base"]; b != "trunk" {
		t.Errorf("created with base %v, want the default branch trunk", b)
	}
}

func TestEnterpriseBaseURLForms(t *testing.T) {
	f := newFakeGitHub(t)
	for _, base := range []string{f.srv.URL, f.srv.URL + "/", f.srv.URL + "/api/v3", f.srv.URL + "/api/v3/"} {
		t.Run(base, func(t *testing.T) {
			h := newHost(t, f, func(c *Config) { c.BaseURL = base })
			if want := f.srv.URL + "/api/v3/"; h.api != want {
				t.Errorf("API base %q, want %q", h.api, want)
			}
			if _, err := h.Ensure(context.Background(), jobSpec(f)); err != nil {
				t.Errorf("Ensure: %v", err)
			}
		})
	}
}

func TestRepositoryURLs(t *testing.T) {
	public, err := New(Config{Token: sentinelToken})
	if err != nil {
		t.Fatal(err)
	}
	ghes, err := New(Config{Token: sentinelToken, BaseURL: "https://ghe.example.com/api/v3/", RepositoryHosts: []string{"ghe-ssh.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	gheCom, err := New(Config{Token: sentinelToken, BaseURL: "https://api.octocorp.ghe.com/"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host        *Host
		raw         string
		owner, repo string // "" for an error
	}{
		{public, "https://github.com/octo-org/docs", "octo-org", "docs"},
		{public, "https://github.com/octo-org/docs.git", "octo-org", "docs"},
		{public, "https://github.com/octo-org/docs/", "octo-org", "docs"},
		{public, "https://GitHub.com/Octo-Org/Docs.git", "Octo-Org", "Docs"},
		{public, "https://x-access-token:" + sentinelToken + "@github.com/octo-org/docs.git", "octo-org", "docs"},
		{public, "git@github.com:octo-org/docs.git", "octo-org", "docs"},
		{public, "github.com:octo-org/docs", "octo-org", "docs"},
		{public, "ssh://git@github.com/octo-org/docs.git", "octo-org", "docs"},
		{public, "ssh://git@ssh.github.com:443/octo-org/docs.git", "octo-org", "docs"},
		{public, "https://github.com/octo-org/docs.js.git", "octo-org", "docs.js"},
		{ghes, "https://ghe.example.com/octo-org/docs.git", "octo-org", "docs"},
		{ghes, "git@ghe.example.com:octo-org/docs.git", "octo-org", "docs"},
		{ghes, "ssh://git@ghe-ssh.example.com:2222/octo-org/docs.git", "octo-org", "docs"},
		{gheCom, "https://octocorp.ghe.com/octo-org/docs", "octo-org", "docs"},

		{public, "", "", ""},
		{public, "octo-org/docs", "", ""},
		{public, "/srv/git/docs.git", "", ""},
		{public, "file:///srv/git/docs.git", "", ""},
		{public, "ftp://github.com/octo-org/docs", "", ""},
		{public, "https://gitlab.com/octo-org/docs.git", "", ""},
		{public, "https://github.com/octo-org", "", ""},
		{public, "https://github.com/octo-org/docs/tree/main", "", ""},
		{public, "https://github.com/octo-org/docs?tab=readme", "", ""},
		{public, "https://github.com/octo-org//docs", "", ""},
		{public, "https://github.com/octo-org/../docs", "", ""},
		{public, "https://ghe.example.com/octo-org/docs.git", "", ""},
		{ghes, "https://github.com/octo-org/docs.git", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			r, err := tt.host.client.Repository(tt.raw)
			owner, repo := r.owner, r.name
			if tt.owner == "" {
				if err == nil {
					t.Fatalf("accepted as %s/%s", owner, repo)
				}
				if strings.Contains(err.Error(), sentinelToken) {
					t.Errorf("the error shows the token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if owner != tt.owner || repo != tt.repo {
				t.Errorf("got %s/%s, want %s/%s", owner, repo, tt.owner, tt.repo)
			}
		})
	}
}
