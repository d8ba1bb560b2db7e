package github

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

// newHost returns a Host on the fake, configured as a GitHub Enterprise
// Server whose base URL is the fake's, logging everything into logs.
func newHost(t *testing.T, f *fakeGitHub, logs *logBuffer, edit func(*Config)) *Host {
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
			h := newHost(t, f, nil, func(c *Config) { c.Draft = draft })
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
	h := newHost(t, f, nil, nil)

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
	h := newHost(t, f, nil, nil)
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

func TestEnsureTwiceOpensOnce(t *testing.T) {
	f := newFakeGitHub(t)
	h := newHost(t, f, nil, nil)
	first, err := h.Ensure(context.Background(), jobSpec(f))
	if err != nil {
		t.Fatalf("first Ensure: %v", err)
	}
	// A retry or a follow-up: same branch, maybe new words.
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
	f := newFakeGitHub(t)
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
	if open := f.openPulls(); len(open) != 1 {
		t.Errorf("%d open pull requests, want 1: %+v", len(open), open)
	}
}

func TestEnsureLostRaceReturnsTheOtherRunsPullRequest(t *testing.T) {
	f := newFakeGitHub(t)
	var other fakePull
	f.beforeCreate = func(f *fakeGitHub, owner, repo string) {
		// Another run opens it between our list and our create.
		other = f.addPull(fakePull{Owner: owner, Repo: repo, Head: "docsapi/job_123", Base: "main", Title: "Docs: the other run"})
	}
	logs := &logBuffer{}
	h := newHost(t, f, logs, nil)

	got, err := h.Ensure(context.Background(), jobSpec(f))
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if want := f.webURL("octo-org", "docs", other.Number); got != want {
		t.Errorf("URL = %q, want the other run's %q", got, want)
	}
	if diff := cmp.Diff([]call{listCall("main"), createCall, listCall("main")}, calls(f.log())); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if n := f.createCount(); n != 1 {
		t.Errorf("%d creates attempted, want 1", n)
	}
	if len(f.openPulls()) != 1 {
		t.Errorf("open pull requests: %+v, want one", f.openPulls())
	}
	if !strings.Contains(logs.String(), "another run") {
		t.Errorf("the race is not logged:\n%s", logs)
	}
}

func TestEnsureAlreadyExistsButNotListedIsTransient(t *testing.T) {
	f := newFakeGitHub(t)
	f.beforeCreate = func(f *fakeGitHub, owner, repo string) {
		f.addPull(fakePull{Owner: owner, Repo: repo, Head: "docsapi/job_123", Base: "main"})
		// The list lags behind: it still answers empty.
		f.mu.Lock()
		f.intercept = func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == "GET" {
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
		t.Errorf("error %v is permanent; a retry will find the pull request", err)
	}
}

func TestEnsureDefaultBranch(t *testing.T) {
	f := newFakeGitHub(t)
	f.repos["octo-org/docs"] = "trunk"
	h := newHost(t, f, nil, nil)
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

func TestEnsureFullBranchRefAsBase(t *testing.T) {
	f := newFakeGitHub(t)
	h := newHost(t, f, nil, nil)
	spec := jobSpec(f)
	spec.Base = "refs/heads/main"
	if _, err := h.Ensure(context.Background(), spec); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if diff := cmp.Diff([]call{listCall("main"), createCall}, calls(f.log())); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// answer makes the fake reply to requests matching method (and path suffix)
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
	reset := time.Now().Add(time.Hour).Unix()
	tests := []struct {
		name      string
		edit      func(*Config)
		spec      func(engine.PullRequestSpec) engine.PullRequestSpec
		intercept func(w http.ResponseWriter, r *http.Request) bool
		permanent bool
		mention   string
	}{
		{name: "401 bad credentials", edit: func(c *Config) { c.Token = "ghp_wrong" }, permanent: true, mention: "401"},
		{name: "404 repository", spec: func(s engine.PullRequestSpec) engine.PullRequestSpec {
			s.Repository, s.Base = strings.Replace(s.Repository, "docs", "missing", 1), ""
			return s
		}, permanent: true, mention: "404"},
		{name: "404 on list", spec: func(s engine.PullRequestSpec) engine.PullRequestSpec {
			s.Repository = strings.Replace(s.Repository, "docs", "missing", 1)
			return s
		}, permanent: true, mention: "404"},
		{name: "403 not allowed to open", intercept: answer("POST", "/pulls", 403, nil, map[string]any{
			"message": "Resource not accessible by personal access token", "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request", "status": "403",
		}), permanent: true, mention: "403"},
		{name: "422 validation", intercept: answer("POST", "/pulls", 422, nil, map[string]any{
			"message": "Validation Failed",
			"errors":  []any{map[string]any{"resource": "PullRequest", "code": "custom", "message": "No commits between main and docsapi/job_123"}},
			"status":  "422",
		}), permanent: true, mention: "No commits between"},
		{name: "500 on list", intercept: answer("GET", "/pulls", 500, nil, map[string]any{"message": "Server Error"}), permanent: false, mention: "500"},
		{name: "502 on create", intercept: answer("POST", "/pulls", 502, nil, map[string]any{"message": "Bad Gateway"}), permanent: false, mention: "502"},
		{name: "403 rate limit", intercept: answer("GET", "/pulls", 403, http.Header{
			"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {fmt.Sprint(reset)},
		}, map[string]any{"message": "API rate limit exceeded for user ID 424242.", "status": "403"}), permanent: false},
		{name: "429 secondary rate limit", intercept: answer("POST", "/pulls", 429, http.Header{"Retry-After": {"60"}}, map[string]any{
			"message": "You have exceeded a secondary rate limit.", "documentation_url": "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits",
		}), permanent: false},
		{name: "token function fails", edit: func(c *Config) {
			c.Token, c.TokenFunc = "", func(context.Context) (string, error) { return "", errors.New("app key unreadable") }
		}, permanent: false, mention: "app key unreadable"},
		{name: "token function fails for good", edit: func(c *Config) {
			c.Token, c.TokenFunc = "", func(context.Context) (string, error) { return "", engine.Permanent(errors.New("app uninstalled")) }
		}, permanent: true, mention: "app uninstalled"},
		{name: "empty token from function", edit: func(c *Config) {
			c.Token, c.TokenFunc = "", func(context.Context) (string, error) { return "", nil }
		}, permanent: true, mention: "empty token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeGitHub(t)
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

func TestEnsureNetworkErrorIsTransient(t *testing.T) {
	f := newFakeGitHub(t)
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
	f := newFakeGitHub(t)
	h := newHost(t, f, nil, nil)
	for name, edit := range map[string]func(*engine.PullRequestSpec){
		"no branch":         func(s *engine.PullRequestSpec) { s.Branch = "" },
		"no title":          func(s *engine.PullRequestSpec) { s.Title = "" },
		"bad repository":    func(s *engine.PullRequestSpec) { s.Repository = "not a url" },
		"repository on GHC": func(s *engine.PullRequestSpec) { s.Repository = "https://github.com/octo-org/docs.git" },
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
		f := newFakeGitHub(t)
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
		f := newFakeGitHub(t)
		arrived := make(chan struct{})
		release := make(chan struct{})
		defer close(release)
		f.intercept = func(w http.ResponseWriter, r *http.Request) bool {
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

func TestEnterpriseBaseURLForms(t *testing.T) {
	f := newFakeGitHub(t)
	for _, base := range []string{f.srv.URL, f.srv.URL + "/", f.srv.URL + "/api/v3", f.srv.URL + "/api/v3/"} {
		t.Run(base, func(t *testing.T) {
			h := newHost(t, f, nil, func(c *Config) { c.BaseURL = base })
			if want := f.srv.URL + "/api/v3/"; h.api != want {
				t.Errorf("API base %q, want %q", h.api, want)
			}
			if _, err := h.Ensure(context.Background(), jobSpec(f)); err != nil {
				t.Errorf("Ensure: %v", err)
			}
		})
	}
}

func TestTokenFuncIsCalledPerRequest(t *testing.T) {
	f := newFakeGitHub(t)
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
		"no token":         {},
		"both tokens":      {Token: sentinelToken, TokenFunc: func(context.Context) (string, error) { return "", nil }},
		"relative base":    {Token: sentinelToken, BaseURL: "ghe.example.com/api/v3"},
		"base with scheme": {Token: sentinelToken, BaseURL: "ftp://ghe.example.com/"},
		"base with user":   {Token: sentinelToken, BaseURL: "https://" + sentinelToken + "@ghe.example.com/api/v3/"},
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
			owner, repo, err := tt.host.repository(tt.raw)
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

func TestTokenNeverLeaks(t *testing.T) {
	logs := &logBuffer{}
	var errs []error
	check := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	// Success, every kind of failure, and a repository URL that carries
	// the token itself.
	f := newFakeGitHub(t)
	h := newHost(t, f, logs, func(c *Config) { c.Draft = true })
	_, err := h.Ensure(context.Background(), jobSpec(f))
	check(err)
	_, err = h.Ensure(context.Background(), jobSpec(f))
	check(err)
	spec := jobSpec(f)
	spec.Repository = "https://x-access-token:" + sentinelToken + "@github.com/octo-org/docs.git"
	_, err = h.Ensure(context.Background(), spec)
	check(err)
	spec.Repository = "https://" + sentinelToken + "@" + strings.TrimPrefix(f.srv.URL, "http://") + "/octo-org/missing.git"
	spec.Base = ""
	_, err = h.Ensure(context.Background(), spec)
	check(err)
	f.intercept = answer("GET", "/pulls", 500, nil, map[string]any{"message": "Server Error"})
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
	if !strings.Contains(out, "githost: request") || !strings.Contains(out, "pull request opened") {
		t.Fatalf("the logs lack the records this test checks:\n%s", out)
	}
	if strings.Contains(out, sentinelToken) {
		t.Errorf("the logs show the token:\n%s", out)
	}
	cfg := Config{Token: sentinelToken, BaseURL: "https://ghe.example.com/api/v3/"}
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
