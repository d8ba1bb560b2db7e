package gitlab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docsapi/docsapi-go/server/engine"
)

// logBuffer collects a Host's log output; the Host may log from several
// goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newHost returns a Host on the fake, configured as a self-managed instance
// whose base URL is the fake's, logging everything into logs.
func newHost(t *testing.T, f *fakeGitLab, logs *logBuffer, edit func(*Config)) *Host {
	t.Helper()
	cfg := Config{Token: sentinelToken, BaseURL: f.baseURL()}
	if logs != nil {
		cfg.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
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
			h := newHost(t, f, nil, func(c *Config) { c.Draft = tt.draft })
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
	h := newHost(t, f, nil, nil)

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
	h := newHost(t, f, nil, nil)
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

func TestEnsureTwiceOpensOnce(t *testing.T) {
	f := newFakeGitLab(t, "")
	h := newHost(t, f, nil, nil)
	first, err := h.Ensure(context.Background(), jobSpec(f))
	if err != nil {
		t.Fatalf("first Ensure: %v", err)
	}
	spec := jobSpec(f)
	spec.Title = "Docs: a follow-up"
	second, err := h.Ensure(context.Background(), spec)
	if err != nil {
		t.Fatalf("second Ensure: %v", err)
	}
	if first != second {
		t.Errorf("second URL %q, want the first one %q", second, first)
	}
	if n := f.createCount(); n != 1 {
		t.Errorf("%d creates, want 1", n)
	}
}

func TestEnsureConcurrentOpensOne(t *testing.T) {
	f := newFakeGitLab(t, "")
	h := newHost(t, f, nil, nil)
	urls := make([]string, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range urls {
		wg.Go(func() { urls[i], errs[i] = h.Ensure(context.Background(), jobSpec(f)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Ensure %d: %v", i, err)
		}
	}
	if urls[0] != urls[1] {
		t.Errorf("URLs differ: %q and %q", urls[0], urls[1])
	}
	if open := f.openMRs(); len(open) != 1 {
		t.Errorf("%d open merge requests, want 1: %+v", len(open), open)
	}
}

func TestEnsureLostRaceReturnsTheOtherRunsMergeRequest(t *testing.T) {
	f := newFakeGitLab(t, "")
	var other fakeMR
	f.beforeCreate = func(f *fakeGitLab, p *fakeProject) {
		other = f.addMR(fakeMR{Source: "docsapi/job_123", Target: "main", Title: "Docs: the other run"})
	}
	logs := &logBuffer{}
	h := newHost(t, f, logs, nil)

	got, err := h.Ensure(context.Background(), jobSpec(f))
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if want := f.webURL(projectPath, other.IID); got != want {
		t.Errorf("URL = %q, want the other run's %q", got, want)
	}
	if diff := cmp.Diff([]call{getCall(f), listCall(f, "main"), createCall(f), listCall(f, "main")}, calls(f.log())); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if n := f.createCount(); n != 1 {
		t.Errorf("%d creates attempted, want 1", n)
	}
	if !strings.Contains(logs.String(), "another run") {
		t.Errorf("the race is not logged:\n%s", logs)
	}
}

func TestEnsureAlreadyExistsButNotListedIsTransient(t *testing.T) {
	f := newFakeGitLab(t, "")
	f.beforeCreate = func(f *fakeGitLab, p *fakeProject) {
		f.addMR(fakeMR{Source: "docsapi/job_123", Target: "main"})
		f.mu.Lock()
		f.intercept = func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == "GET" && strings.HasSuffix(r.URL.Path, "/merge_requests") {
				writeJSON(w, http.StatusOK, []any{})
				return true
			}
			return false
		}
		f.mu.Unlock()
	}
	h := newHost(t, f, nil, nil)
	_, err := h.Ensure(context.Background(), jobSpec(f))
	if err == nil {
		t.Fatal("Ensure succeeded without a URL to return")
	}
	if engine.IsPermanent(err) {
		t.Errorf("error %v is permanent; a retry will find the merge request", err)
	}
}

func TestEnsureDefaultBranch(t *testing.T) {
	f := newFakeGitLab(t, "")
	f.projects[projectPath].DefaultBranch = "trunk"
	h := newHost(t, f, nil, nil)
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
				h := newHost(t, f, nil, func(c *Config) { c.BaseURL = base })
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

// answer makes the fake reply to requests matching method and path suffix
// with status and body, and lets others through.
func answer(method, suffix string, status int, header http.Header, body any) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != method || !strings.HasSuffix(r.URL.Path, suffix) {
			return false
		}
		for k, v := range header {
			w.Header()[k] = v
		}
		writeJSON(w, status, body)
		return true
	}
}

func TestEnsureErrorClassification(t *testing.T) {
	tests := []struct {
		name      string
		edit      func(*Config)
		spec      func(engine.PullRequestSpec) engine.PullRequestSpec
		intercept func(w http.ResponseWriter, r *http.Request) bool
		permanent bool
		mention   string
	}{
		{name: "401 bad token", edit: func(c *Config) { c.Token = "glpat-wrong" }, permanent: true, mention: "401"},
		{name: "404 project", spec: func(s engine.PullRequestSpec) engine.PullRequestSpec {
			s.Repository = strings.Replace(s.Repository, "handbook", "missing", 1)
			return s
		}, permanent: true, mention: "404"},
		{name: "403 not allowed to open", intercept: answer("POST", "/merge_requests", 403, nil, map[string]any{"message": "403 Forbidden"}), permanent: true, mention: "403"},
		{name: "422 refused", intercept: answer("POST", "/merge_requests", 422, nil, map[string]any{
			"message": []any{"Source branch does not exist"},
		}), permanent: true, mention: "Source branch does not exist"},
		{name: "500 on list", intercept: answer("GET", "/merge_requests", 500, nil, map[string]any{"message": "500 Internal Server Error"}), permanent: false, mention: "500"},
		{name: "502 on create", intercept: answer("POST", "/merge_requests", 502, nil, map[string]any{"message": "502 Bad Gateway"}), permanent: false, mention: "502"},
		{name: "429 rate limit", intercept: answer("GET", "/merge_requests", 429, http.Header{"Retry-After": {"60"}}, map[string]any{"message": "Retry later"}), permanent: false, mention: "429"},
		{name: "409 other conflict", intercept: answer("POST", "/merge_requests", 409, nil, map[string]any{"message": "Resource lock"}), permanent: false, mention: "409"},
		{name: "token function fails", edit: func(c *Config) {
			c.Token, c.TokenFunc = "", func(context.Context) (string, error) { return "", errors.New("vault sealed") }
		}, permanent: false, mention: "vault sealed"},
		{name: "token function fails for good", edit: func(c *Config) {
			c.Token, c.TokenFunc = "", func(context.Context) (string, error) { return "", engine.Permanent(errors.New("token revoked")) }
		}, permanent: true, mention: "token revoked"},
		{name: "empty token from function", edit: func(c *Config) {
			c.Token, c.TokenFunc = "", func(context.Context) (string, error) { return "", nil }
		}, permanent: true, mention: "empty token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeGitLab(t, "")
			f.intercept = tt.intercept
			h := newHost(t, f, nil, tt.edit)
			spec := jobSpec(f)
			if tt.spec != nil {
				spec = tt.spec(spec)
			}
			url, err := h.Ensure(context.Background(), spec)
			if err == nil {
				t.Fatalf("Ensure = %q, want an error", url)
			}
			if got := engine.IsPermanent(err); got != tt.permanent {
				t.Errorf("IsPermanent = %t, want %t; error: %v", got, tt.permanent, err)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %q does not mention %q", err, tt.mention)
			}
		})
	}
}

func TestEnsureServerErrorIsNotRetriedInside(t *testing.T) {
	// One request per failed step: the engine owns retries, and client-go's
	// own would multiply them (and sleep).
	f := newFakeGitLab(t, "")
	f.intercept = answer("GET", "/merge_requests", 503, nil, map[string]any{"message": "503 Service Unavailable"})
	h := newHost(t, f, nil, nil)
	if _, err := h.Ensure(context.Background(), jobSpec(f)); err == nil {
		t.Fatal("Ensure succeeded against a failing server")
	}
	if diff := cmp.Diff([]call{getCall(f), listCall(f, "main")}, calls(f.log())); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestEnsureNetworkErrorIsTransient(t *testing.T) {
	f := newFakeGitLab(t, "")
	h := newHost(t, f, nil, nil)
	spec := jobSpec(f)
	f.srv.Close() // nothing listens any more: connection refused
	_, err := h.Ensure(context.Background(), spec)
	if err == nil {
		t.Fatal("Ensure succeeded against a closed server")
	}
	if engine.IsPermanent(err) {
		t.Errorf("network error %v is permanent", err)
	}
}

func TestEnsureBadSpecIsPermanentAndSendsNothing(t *testing.T) {
	f := newFakeGitLab(t, "")
	h := newHost(t, f, nil, nil)
	for name, edit := range map[string]func(*engine.PullRequestSpec){
		"no branch":            func(s *engine.PullRequestSpec) { s.Branch = "" },
		"no title":             func(s *engine.PullRequestSpec) { s.Title = "" },
		"bad repository":       func(s *engine.PullRequestSpec) { s.Repository = "not a url" },
		"repository elsewhere": func(s *engine.PullRequestSpec) { s.Repository = "https://gitlab.com/docs-team/guides/handbook.git" },
	} {
		t.Run(name, func(t *testing.T) {
			spec := jobSpec(f)
			edit(&spec)
			_, err := h.Ensure(context.Background(), spec)
			if !engine.IsPermanent(err) {
				t.Errorf("error %v, want a permanent one", err)
			}
		})
	}
	if n := len(f.log()); n != 0 {
		t.Errorf("%d requests sent for specs that cannot work", n)
	}
}

func TestEnsureContextCancelled(t *testing.T) {
	t.Run("before the call", func(t *testing.T) {
		f := newFakeGitLab(t, "")
		h := newHost(t, f, nil, nil)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := h.Ensure(ctx, jobSpec(f))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
		if engine.IsPermanent(err) {
			t.Errorf("cancellation %v is permanent", err)
		}
		if n := len(f.log()); n != 0 {
			t.Errorf("%d requests sent with a cancelled context", n)
		}
	})
	t.Run("during a request", func(t *testing.T) {
		f := newFakeGitLab(t, "")
		arrived := make(chan struct{})
		release := make(chan struct{})
		defer close(release)
		f.intercept = func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method != "GET" || !strings.HasSuffix(r.URL.Path, "/merge_requests") {
				return false
			}
			close(arrived)
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return true
		}
		h := newHost(t, f, nil, nil)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := h.Ensure(ctx, jobSpec(f))
			done <- err
		}()
		<-arrived
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("error %v, want context.Canceled", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Ensure did not return after its context was cancelled")
		}
	})
}

func TestSelfManagedBaseURLForms(t *testing.T) {
	f := newFakeGitLab(t, "")
	for _, base := range []string{f.srv.URL, f.srv.URL + "/", f.srv.URL + "/api/v4", f.srv.URL + "/api/v4/"} {
		t.Run(base, func(t *testing.T) {
			h := newHost(t, f, nil, func(c *Config) { c.BaseURL = base })
			if want := f.srv.URL + "/api/v4/"; h.api != want {
				t.Errorf("API base %q, want %q", h.api, want)
			}
			if _, err := h.Ensure(context.Background(), jobSpec(f)); err != nil {
				t.Errorf("Ensure: %v", err)
			}
		})
	}
}

func TestTokenFuncIsCalledPerRequest(t *testing.T) {
	f := newFakeGitLab(t, "")
	type ctxKey struct{}
	var mu sync.Mutex
	var n int
	h := newHost(t, f, nil, func(c *Config) {
		c.Token = ""
		c.TokenFunc = func(ctx context.Context) (string, error) {
			if ctx.Value(ctxKey{}) != "job_123" {
				return "", errors.New("the token function did not get Ensure's context")
			}
			mu.Lock()
			n++
			mu.Unlock()
			return sentinelToken, nil
		}
	})
	ctx := context.WithValue(context.Background(), ctxKey{}, "job_123")
	if _, err := h.Ensure(ctx, jobSpec(f)); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if got, want := n, len(f.log()); got != want {
		t.Errorf("token function called %d times for %d requests", got, want)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no token":       {},
		"both tokens":    {Token: sentinelToken, TokenFunc: func(context.Context) (string, error) { return "", nil }},
		"relative base":  {Token: sentinelToken, BaseURL: "gitlab.example.com/api/v4"},
		"other scheme":   {Token: sentinelToken, BaseURL: "ssh://gitlab.example.com/"},
		"base with user": {Token: sentinelToken, BaseURL: "https://oauth2:" + sentinelToken + "@gitlab.example.com/api/v4"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(cfg)
			if err == nil {
				t.Fatal("New accepted the configuration")
			}
			if strings.Contains(err.Error(), sentinelToken) {
				t.Errorf("the error shows the token: %v", err)
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
			got, err := tt.host.projectPath(tt.raw)
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

func TestTokenNeverLeaks(t *testing.T) {
	logs := &logBuffer{}
	var errs []error
	check := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	f := newFakeGitLab(t, "")
	h := newHost(t, f, logs, func(c *Config) { c.Draft = true })
	_, err := h.Ensure(context.Background(), jobSpec(f))
	check(err)
	_, err = h.Ensure(context.Background(), jobSpec(f))
	check(err)
	spec := jobSpec(f)
	spec.Repository = "https://oauth2:" + sentinelToken + "@gitlab.com/group/repo.git"
	_, err = h.Ensure(context.Background(), spec)
	check(err)
	spec.Repository = "https://oauth2:" + sentinelToken + "@" + strings.TrimPrefix(f.srv.URL, "http://") + "/group/missing.git"
	_, err = h.Ensure(context.Background(), spec)
	check(err)
	f.intercept = answer("GET", "/merge_requests", 500, nil, map[string]any{"message": "500 Internal Server Error"})
	_, err = h.Ensure(context.Background(), jobSpec(f))
	check(err)
	f.intercept = nil
	wrong := newHost(t, f, logs, func(c *Config) { c.Token = sentinelToken + "x" })
	_, err = wrong.Ensure(context.Background(), jobSpec(f))
	check(err)
	f.srv.Close()
	_, err = h.Ensure(context.Background(), jobSpec(f))
	check(err)

	if len(errs) < 5 {
		t.Fatalf("only %d failures happened: %v", len(errs), errs)
	}
	for _, err := range errs {
		if strings.Contains(err.Error(), sentinelToken) {
			t.Errorf("an error shows the token: %v", err)
		}
	}
	out := logs.String()
	if !strings.Contains(out, "githost: request") || !strings.Contains(out, "merge request opened") {
		t.Fatalf("the logs lack the records this test checks:\n%s", out)
	}
	if strings.Contains(out, sentinelToken) {
		t.Errorf("the logs show the token:\n%s", out)
	}
	cfg := Config{Token: sentinelToken, BaseURL: "https://gitlab.example.com/api/v4"}
	for _, s := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%v %+v", h, h)} {
		if strings.Contains(s, sentinelToken) {
			t.Errorf("a printed form shows the token: %s", s)
		}
	}
	var b bytes.Buffer
	slog.New(slog.NewTextHandler(&b, nil)).Info("config", slog.Any("cfg", cfg))
	if strings.Contains(b.String(), sentinelToken) {
		t.Errorf("slog shows the token: %s", b.String())
	}
}
