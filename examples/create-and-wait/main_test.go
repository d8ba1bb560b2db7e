package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

// fast polls often, so that the tests take milliseconds; Timeout only
// bounds a broken test.
var fast = docsapi.WaitParams{MinInterval: 5 * time.Millisecond, MaxInterval: 20 * time.Millisecond, Timeout: time.Minute}

// testServer is the real self-hosted server on SQLite, over HTTP.
type testServer struct {
	URL   string
	Key   string // a write key for project "handbook"
	Store store.Store
}

// newTestServer starts the server with cfg (its Store set here), its
// handler wrapped by wrap if not nil.
func newTestServer(t *testing.T, cfg server.Config, wrap func(http.Handler) http.Handler) *testServer {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docsapi.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg.Store = st
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.CreateProject(ctx, store.Project{ID: "handbook", Repository: "https://git.example.com/acme/handbook.git", Ref: "main"}); err != nil {
		t.Fatal(err)
	}
	key, err := srv.CreateKey(ctx, server.KeyParams{Name: "test", Projects: []string{"handbook"}, Scopes: []store.Scope{store.ScopeWrite}})
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = srv
	if wrap != nil {
		h = wrap(srv)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return &testServer{URL: ts.URL, Key: key.Secret, Store: st}
}

// fakeEngine does what the job engine does with the store, without git or
// an agent: told by the server that a job was queued, it claims it (the
// store's lease queue) and records the outcome finish decides.
type fakeEngine struct {
	store  store.Store
	finish func(store.Job) store.Finish
	queued chan struct{}
}

func (e *fakeEngine) JobQueued() {
	select {
	case e.queued <- struct{}{}:
	default: // a wake-up is already pending
	}
}

func (e *fakeEngine) JobArchived(string) {}

// run runs e until the test ends.
func (e *fakeEngine) run(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-e.queued:
			}
			for {
				job, err := e.store.ClaimJob(ctx, store.Claim{Owner: "test-engine", Now: time.Now(), LeaseFor: time.Minute, MaxAttempts: 3})
				if errors.Is(err, store.ErrNoJob) || ctx.Err() != nil {
					break // nothing to do, or the test is over
				}
				if err != nil {
					t.Errorf("ClaimJob: %v", err)
					return
				}
				f := e.finish(job)
				f.JobID, f.Owner, f.At = job.ID, "test-engine", time.Now()
				if _, err := e.store.FinishJob(ctx, f); err != nil && ctx.Err() == nil {
					t.Errorf("FinishJob: %v", err)
					return
				}
			}
		}
	})
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}

// serverWithEngine starts a server whose jobs end as finish says.
func serverWithEngine(t *testing.T, finish func(store.Job) store.Finish) *testServer {
	t.Helper()
	e := &fakeEngine{finish: finish, queued: make(chan struct{}, 1)}
	ts := newTestServer(t, server.Config{Jobs: e}, nil)
	e.store = ts.Store
	e.run(t)
	return ts
}

func (ts *testServer) config(prompt string) config {
	return config{key: ts.Key, baseURL: ts.URL, project: "handbook", prompt: prompt, wait: fast}
}

var progressLine = regexp.MustCompile(`^ *\d+[a-z0-9.]*s  job (\S+): (\S+)$`)

// progress parses the output's progress lines (one per status change, all
// of one job) and returns the job's ID, the statuses and the lines that
// follow them.
func progress(t *testing.T, out string) (id string, statuses []docsapi.JobStatus, rest []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for i, line := range lines {
		m := progressLine.FindStringSubmatch(line)
		if m == nil {
			return id, statuses, lines[i:]
		}
		if id != "" && m[1] != id {
			t.Fatalf("progress of two jobs, %s and %s:\n%s", id, m[1], out)
		}
		id = m[1]
		statuses = append(statuses, docsapi.JobStatus(m[2]))
	}
	return id, statuses, nil
}

// checkOutput checks that out shows the job active, then want, then the
// result line, and returns the job's ID.
func checkOutput(t *testing.T, out string, want docsapi.JobStatus, result string) string {
	t.Helper()
	id, statuses, rest := progress(t, out)
	if !slices.Equal(statuses, []docsapi.JobStatus{docsapi.JobStatusActive, want}) || !slices.Equal(rest, []string{result}) {
		t.Fatalf("output:\n%s\nwant the statuses active and %s, then %q", out, want, result)
	}
	return id
}

func TestPullRequest(t *testing.T) {
	const pr = "https://git.example.com/acme/handbook/pull/7"
	ts := serverWithEngine(t, func(store.Job) store.Finish {
		return store.Finish{Outcome: store.Completed, PRLink: pr, Handled: 1}
	})
	var out strings.Builder
	if err := run(t.Context(), ts.config("Document the --verbose flag"), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	id := checkOutput(t, out.String(), docsapi.JobStatusCompleted, "pull request: "+pr)
	job, err := ts.Store.Job(t.Context(), "handbook", id)
	if err != nil {
		t.Fatal(err)
	}
	if len(job.Prompts) != 1 || job.Prompts[0].Text != "Document the --verbose flag" {
		t.Errorf("the job's prompts are %+v, want the -prompt", job.Prompts)
	}
}

func TestNoPullRequest(t *testing.T) {
	ts := serverWithEngine(t, func(store.Job) store.Finish {
		return store.Finish{Outcome: store.Completed, Handled: 1}
	})
	var out strings.Builder
	if err := run(t.Context(), ts.config("Fix a typo"), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	checkOutput(t, out.String(), docsapi.JobStatusCompleted, "completed without a pull request")
}

func TestFailedJob(t *testing.T) {
	ts := serverWithEngine(t, func(store.Job) store.Finish {
		return store.Finish{Outcome: store.Failed, FailureReason: "the agent gave up"}
	})
	var out strings.Builder
	err := run(t.Context(), ts.config("Rewrite everything"), &out)
	var failed *docsapi.JobFailedError
	if !errors.As(err, &failed) {
		t.Fatalf("run = %v, want a *docsapi.JobFailedError\n%s", err, out.String())
	}
	id, statuses, rest := progress(t, out.String())
	if !slices.Equal(statuses, []docsapi.JobStatus{docsapi.JobStatusActive, docsapi.JobStatusFailed}) || rest != nil {
		t.Errorf("output:\n%s\nwant the statuses active and failed, and nothing else", out.String())
	}
	if want := "the agent could not carry out the prompt: docsapi: agent job " + id + " failed"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
}

func TestTimeout(t *testing.T) {
	ts := newTestServer(t, server.Config{}, nil) // no engine: the job stays active
	cfg := ts.config("Document the --verbose flag")
	cfg.wait.Timeout = 200 * time.Millisecond
	var out strings.Builder
	err := run(t.Context(), cfg, &out)
	var timedOut *docsapi.WaitTimeoutError
	if !errors.As(err, &timedOut) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("run = %v, want a *docsapi.WaitTimeoutError for the timeout", err)
	}
	want := regexp.MustCompile(`^gave up; the job goes on running on the server: docsapi: stopped waiting for agent job ` +
		timedOut.Job.ID + ` \(last status active\) after \S+: context deadline exceeded$`)
	if !want.MatchString(err.Error()) {
		t.Errorf("message %q does not match %s", err, want)
	}
	id, statuses, rest := progress(t, out.String())
	if id != timedOut.Job.ID || !slices.Equal(statuses, []docsapi.JobStatus{docsapi.JobStatusActive}) || rest != nil {
		t.Errorf("output:\n%s\nwant only the job's first status, active", out.String())
	}
}

// TestInterrupted cancels the context during the first poll, as Ctrl-C
// would during the wait.
func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ts := newTestServer(t, server.Config{}, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				cancel()
			}
			next.ServeHTTP(w, r)
		})
	})
	var out strings.Builder
	err := run(ctx, ts.config("Document the --verbose flag"), &out)
	if err == nil || !regexp.MustCompile(`^interrupted: job \S+ goes on running on the server$`).MatchString(err.Error()) {
		t.Fatalf("run = %v, want the interruption explained", err)
	}
}

func TestRateLimited(t *testing.T) {
	ts := newTestServer(t, server.Config{RateLimits: server.RateLimits{Agent: server.Limit{Requests: 1, Per: time.Hour}}}, nil)
	cfg := ts.config("Document the --verbose flag")
	client, err := newClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Spend the hour's only request.
	if _, err := client.AgentJobs.Create(t.Context(), "", docsapi.CreateJobParams{Prompt: "First"}); err != nil {
		t.Fatal(err)
	}
	err = run(t.Context(), cfg, new(strings.Builder))
	if !errors.Is(err, docsapi.ErrRateLimited) || !strings.HasPrefix(err.Error(), "rate limited: try again in 1h0m0s: ") {
		t.Fatalf("run = %v, want the rate limit with the server's Retry-After", err)
	}
}

func TestRefused(t *testing.T) {
	ts := newTestServer(t, server.Config{}, nil)
	for _, tt := range []struct {
		name   string
		edit   func(*config)
		target error
		prefix string
	}{
		{"no prompt", func(c *config) { c.prompt = " " }, nil, "-prompt is required"},
		{"no key", func(c *config) { c.key = "" }, nil, "DOCSAPI_KEY is not set"},
		{"no project", func(c *config) { c.project = "" }, nil, "DOCSAPI_PROJECT is not set"},
		{"wrong key", func(c *config) { c.key = "mint_wrong" }, docsapi.ErrUnauthorized, "the key was refused"},
		{"another project", func(c *config) { c.project = "other" }, docsapi.ErrForbidden, `the key may not create jobs in project "other"`},
		{"bad base URL", func(c *config) { c.baseURL = "localhost:8080" }, docsapi.ErrInvalidParam, "docsapi: invalid baseURL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ts.config("Document the --verbose flag")
			tt.edit(&cfg)
			var out strings.Builder
			err := run(t.Context(), cfg, &out)
			if err == nil || !strings.HasPrefix(err.Error(), tt.prefix) || (tt.target != nil && !errors.Is(err, tt.target)) {
				t.Errorf("run = %v, want an error starting %q (matching %v)", err, tt.prefix, tt.target)
			}
			if out.Len() != 0 {
				t.Errorf("printed %q before failing", out.String())
			}
		})
	}
}
