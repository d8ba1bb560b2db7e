package gitlab

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/githost/internal/hostkit/hosttest"
)

// newHost returns a Host on the fake, configured as a self-managed instance
// whose base URL is the fake's.
func newHost(t *testing.T, f *fakeGitLab, edit func(*Config)) *Host {
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

const projectPath = "docs-team/guides/handbook"

func jobSpec(f *fakeGitLab) engine.PullRequestSpec {
	return engine.PullRequestSpec{
		Repository: f.repoURL(projectPath),
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

func getCall(f *fakeGitLab) call {
	return call{Method: "GET", Path: f.root + "/api/v4/projects/docs-team%2Fguides%2Fhandbook"}
}

func listCall(f *fakeGitLab, target string) call {
	return call{Method: "GET", Path: f.root + "/api/v4/projects/4711/merge_requests", Query: url.Values{
		"state": {"opened"}, "source_branch": {"docsapi/job_123"}, "target_branch": {target},
	}}
}

func createCall(f *fakeGitLab) call {
	return call{Method: "POST", Path: f.root + "/api/v4/projects/4711/merge_requests"}
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
			h := newHost(t, f, func(c *Config) { c.Draft = tt.draft })
			spec := jobSpec(f)
			spec.Title = tt.title

			got, err := h.Ensure(context.Background(), spec)
			if err != nil {
				t.Fatalf("Ensure: %v", err)
			}
			if want := f.webURL(projectPath, 1); got != want {
				t.Errorf("URL = %q, want %q", got, want)
			}
			reqs := f.log()
			if diff := cmp.Diff([]call{getCall(f), listCall(f, "main"), createCall(f)}, calls(reqs)); diff != "" {
				t.Fatalf("requests (-want +got):\n%s", diff)
			}
			for _, r := range reqs {
				if r.Token != sentinelToken {
					t.Errorf("%s %s: PRIVATE-TOKEN = %q, want the token", r.Method, r.Path, r.Token)
				}
				if r.Authorization != "" {
					t.Errorf("%s %s: an Authorization header %q was sent too", r.Method, r.Path, r.Authorization)
				}
			}
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
	h := newHost(t, f, nil)

	got, err := h.Ensure(context.Background(), jobSpec(f))
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if want := f.webURL(projectPath, open.IID); got != want {
		t.Errorf("URL = %q, want the open merge request's %q", got, want)
	}
	if n := f.createCount(); n != 0 {
		t.Errorf("%d creates, want none", n)
	}
	if diff := cmp.Diff([]call{getCall(f), listCall(f, "main")}, calls(f.log())); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestEnsureSkipsForkMergeRequest(t *testing.T) {
	f := newFakeGitLab(t, "")
	f.addMR(fakeMR{Source: "docsapi/job_123", Target: "main", Title: "from a fork", SourceProjectID: 9999})
	h := newHost(t, f, nil)
	got, err := h.Ensure(context.Background(), jobSpec(f))
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if want := f.webURL(projectPath, 2); got != want {
		t.Errorf("URL = %q, want a new merge request %q", got, want)
	}
	if n := f.createCount(); n != 1 {
		t.Errorf("%d creates, want 1", n)
	}
}

func TestEnsureDefaultBranch(t *testing.T) {
	f := newFakeGitLab(t, "")
	f.projects[projectPath].DefaultBranch = "trunk"
	h := newHost(t, f, nil)
	spec := jobSpec(f)
	spec.Base = ""

	got, err := h.Ensure(context.Background(), spec)
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if want := f.webURL(projectPath, 1); got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
	reqs := f.log()
	if diff := cmp.Diff([]call{getCall(f), listCall(f, "trunk"), createCall(f)}, calls(reqs)); diff != "" {
		t.Fatalf("requests (-want +got):\n%s", diff)
	}
	if b := reqs[2].Body["target_branch"]; b != "trunk" {
		t.Errorf("created with target %v, want the default branch trunk", b)
	}
}

func TestRelativeURLRoot(t *testing.T) {
	f := newFakeGitLab(t, "/gitlab")
	for _, base := range []string{f.srv.URL + "/gitlab", f.srv.URL + "/gitlab/api/v4", f.srv.URL + "/gitlab/api/v4/"} {
		for _, repo := range []string{f.repoURL(projectPath), "git@127.0.0.1:" + projectPath + ".git"} {
			t.Run(base+" "+repo, func(t *testing.T) {
				h := newHost(t, f, func(c *Config) { c.BaseURL = base })
				spec := jobSpec(f)
				spec.Repository = repo
				got, err := h.Ensure(context.Background(), spec)
				if err != nil {
					t.Fatalf("Ensure: %v", err)
				}
				if want := f.webURL(projectPath, 1); got != want {
					t.Errorf("URL = %q, want %q", got, want)
				}
			})
		}
	}
	if n := f.createCount(); n != 1 {
		t.Errorf("%d creates over all the forms, want 1", n)
	}
}

func TestEnsureServerErrorIsNotRetriedInside(t *testing.T) {
	// One request per failed step: the engine owns retries, and client-go's
	// own would multiply them (and sleep).
	s := newSuiteFake(t)
	s.Fail(hosttest.Answer{Op: hosttest.List, Status: 503})
	f := s.fakeGitLab
	h := newHost(t, f, nil)
	if _, err := h.Ensure(context.Background(), jobSpec(f)); err == nil {
		t.Fatal("Ensure succeeded against a failing server")
	}
	if diff := cmp.Diff([]call{getCall(f), listCall(f, "main")}, calls(f.log())); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestSelfManagedBaseURLForms(t *testing.T) {
	f := newFakeGitLab(t, "")
	for _, base := range []string{f.srv.URL, f.srv.URL + "/", f.srv.URL + "/api/v4", f.srv.URL + "/api/v4/"} {
		t.Run(base, func(t *testing.T) {
			h := newHost(t, f, func(c *Config) { c.BaseURL = base })
			if want := f.srv.URL + "/api/v4/"; h.api != want {
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
	managed, err := New(Config{Token: sentinelToken, BaseURL: "https://gitlab.example.com/api/v4", RepositoryHosts: []string{"ssh.gitlab.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	rooted, err := New(Config{Token: sentinelToken, BaseURL: "https://example.com/gitlab"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host *Host
		raw  string
		want string // "" for an error
	}{
		{public, "https://gitlab.com/group/repo", "group/repo"},
		{public, "https://gitlab.com/group/repo.git", "group/repo"},
		{public, "https://gitlab.com/group/sub/deeper/repo.git", "group/sub/deeper/repo"},
		{public, "https://gitlab.com/group/repo/", "group/repo"},
		{public, "https://oauth2:" + sentinelToken + "@gitlab.com/group/repo.git", "group/repo"},
		{public, "git@gitlab.com:group/sub/repo.git", "group/sub/repo"},
		{public, "ssh://git@gitlab.com:2222/group/sub/repo.git", "group/sub/repo"},
		{public, "https://gitlab.com/group/docs.site.git", "group/docs.site"},
		{managed, "https://gitlab.example.com/group/sub/repo.git", "group/sub/repo"},
		{managed, "git@gitlab.example.com:group/sub/repo.git", "group/sub/repo"},
		{managed, "git@ssh.gitlab.example.com:group/sub/repo.git", "group/sub/repo"},
		{rooted, "https://example.com/gitlab/group/repo.git", "group/repo"},
		{rooted, "git@example.com:group/repo.git", "group/repo"},

		{public, "", ""},
		{public, "group/repo", ""},
		{public, "/srv/git/repo.git", ""},
		{public, "file:///srv/git/repo.git", ""},
		{public, "https://gitlab.com/repo", ""},
		{public, "https://gitlab.com/group/repo/-/tree/main", ""},
		{public, "https://gitlab.com/group/repo/-/merge_requests/1", ""},
		{public, "https://gitlab.com/group/repo?ref=main", ""},
		{public, "https://github.com/group/repo.git", ""},
		{public, "https://gitlab.com/group/../repo", ""},
		{managed, "https://gitlab.com/group/repo.git", ""},
		{rooted, "https://example.com/group/repo.git", ""},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			p, err := tt.host.client.Repository(tt.raw)
			got := p.path
			if tt.want == "" {
				if err == nil {
					t.Fatalf("accepted as %s", got)
				}
				if strings.Contains(err.Error(), sentinelToken) {
					t.Errorf("the error shows the token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}
