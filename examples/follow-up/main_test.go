package main

import (
	"context"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

// testServer is the real self-hosted server on SQLite, over HTTP, with a
// client of its own for setting up jobs.
type testServer struct {
	URL    string
	Key    string // a write key for project "handbook"
	Store  store.Store
	Client *docsapi.Client
	Runs   atomic.Int64 // runs the engine made
}

// newTestServer starts the server. With finish, a stand-in for the job
// engine runs every queued job through the store's lease methods (ClaimJob,
// then FinishJob with what finish returns); without, jobs stay active.
func newTestServer(t *testing.T, finish func(store.Job) store.Finish) *testServer {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docsapi.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ts := &testServer{Store: st}
	cfg := server.Config{Store: st}
	if finish != nil {
		e := &fakeEngine{store: st, finish: finish, runs: &ts.Runs, queued: make(chan struct{}, 1)}
		e.run(t)
		cfg.Jobs = e
	}
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
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	ts.URL, ts.Key = hs.URL, key.Secret
	ts.Client, err = docsapi.NewClient(ts.Key, docsapi.WithBaseURL(ts.URL), docsapi.WithProjectID("handbook"))
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// fakeEngine does what the job engine does with the store, without git or
// an agent.
type fakeEngine struct {
	store  store.Store
	finish func(store.Job) store.Finish
	runs   *atomic.Int64
	queued chan struct{}
}

func (e *fakeEngine) JobQueued() {
	select {
	case e.queued <- struct{}{}:
	default: // a wake-up is already pending
	}
}

func (e *fakeEngine) JobArchived(string) {}

// run claims and finishes every queued job until the test ends.
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
				e.runs.Add(1) // before the outcome, which ends the test's wait
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

// pullRequestOf is the pull request a host finds or opens for a job's
// branch: always the same for one branch.
func pullRequestOf(job store.Job) string {
	return "https://git.example.com/acme/handbook/pull/" + strings.TrimPrefix(job.Branch, "docs-agent/")
}

// completeWithPR completes every run with the branch's pull request.
func completeWithPR(job store.Job) store.Finish {
	return store.Finish{Outcome: store.Completed, PRLink: pullRequestOf(job), Handled: len(job.Prompts)}
}

// createJob creates a job and waits until the engine is done with it.
func (ts *testServer) createJob(t *testing.T, prompt string) *docsapi.Job {
	t.Helper()
	job, err := ts.Client.AgentJobs.CreateAndWait(t.Context(), "", docsapi.CreateJobParams{Prompt: prompt}, fast)
	if err != nil {
		t.Fatalf("creating the job: %v", err)
	}
	return job
}

func (ts *testServer) config(jobID, prompt string) config {
	return config{key: ts.Key, baseURL: ts.URL, project: "handbook", jobID: jobID, prompt: prompt, wait: fast}
}

var progressLine = regexp.MustCompile(`^ *\d+[a-z0-9.]*s  job (\S+): (\S+)$`)

// checkOutput checks the whole output: the job's state before, its
// statuses (active, then want), and the result line if not "".
func checkOutput(t *testing.T, out, id, before string, want docsapi.JobStatus, result string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if lines[0] != before {
		t.Fatalf("first line = %q, want %q", lines[0], before)
	}
	var statuses []docsapi.JobStatus
	rest := lines[1:]
	for len(rest) > 0 {
		m := progressLine.FindStringSubmatch(rest[0])
		if m == nil {
			break
		}
		if m[1] != id {
			t.Fatalf("progress of job %s, want %s:\n%s", m[1], id, out)
		}
		statuses = append(statuses, docsapi.JobStatus(m[2]))
		rest = rest[1:]
	}
	var wantRest []string
	if result != "" {
		wantRest = []string{result}
	}
	if !slices.Equal(statuses, []docsapi.JobStatus{docsapi.JobStatusActive, want}) || !slices.Equal(rest, wantRest) {
		t.Fatalf("output:\n%s\nwant the statuses active and %s, then %q", out, want, result)
	}
}

func TestUpdatesTheSamePullRequest(t *testing.T) {
	ts := newTestServer(t, completeWithPR)
	job := ts.createJob(t, "Document the --verbose flag")
	pr := job.PRLink
	if pr == "" {
		t.Fatal("the first run opened no pull request")
	}

	var out strings.Builder
	if err := run(t.Context(), ts.config(job.ID, "Also add an example"), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	checkOutput(t, out.String(), job.ID, "job "+job.ID+" is completed; pull request: "+pr,
		docsapi.JobStatusCompleted, "pull request updated: "+pr)

	stored, err := ts.Store.Job(t.Context(), "handbook", job.ID)
	if err != nil {
		t.Fatal(err)
	}
	var prompts []string
	for _, p := range stored.Prompts {
		prompts = append(prompts, p.Text)
	}
	if want := []string{"Document the --verbose flag", "Also add an example"}; !slices.Equal(prompts, want) {
		t.Errorf("prompts = %q, want %q", prompts, want)
	}
	if stored.Status != store.JobStatusCompleted || stored.Handled != 2 || ts.Runs.Load() != 2 {
		t.Errorf("job %s handled %d prompts in %d runs, want completed, 2 in 2", stored.Status, stored.Handled, ts.Runs.Load())
	}
}

func TestOpensAPullRequest(t *testing.T) {
	// The first instruction changed nothing; the follow-up does.
	ts := newTestServer(t, func(job store.Job) store.Finish {
		if len(job.Prompts) == 1 {
			return store.Finish{Outcome: store.Completed, Handled: 1}
		}
		return completeWithPR(job)
	})
	job := ts.createJob(t, "Check the spelling")
	var out strings.Builder
	if err := run(t.Context(), ts.config(job.ID, "Document the --verbose flag"), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	pr := pullRequestOf(store.Job{Branch: "docs-agent/" + job.ID})
	checkOutput(t, out.String(), job.ID, "job "+job.ID+" is completed; pull request: none",
		docsapi.JobStatusCompleted, "pull request opened: "+pr)
}

func TestFollowUpFails(t *testing.T) {
	ts := newTestServer(t, func(job store.Job) store.Finish {
		if len(job.Prompts) == 1 {
			return completeWithPR(job)
		}
		return store.Finish{Outcome: store.Failed, FailureReason: "the agent refused"}
	})
	job := ts.createJob(t, "Document the --verbose flag")
	var out strings.Builder
	err := run(t.Context(), ts.config(job.ID, "Delete every page"), &out)
	var failed *docsapi.JobFailedError
	if !errors.As(err, &failed) || err.Error() != "the agent could not carry out the follow-up: docsapi: agent job "+job.ID+" failed" {
		t.Fatalf("run = %v, want the failure explained", err)
	}
	checkOutput(t, out.String(), job.ID, "job "+job.ID+" is completed; pull request: "+job.PRLink, docsapi.JobStatusFailed, "")
}

func TestArchivedJob(t *testing.T) {
	ts := newTestServer(t, completeWithPR)
	job := ts.createJob(t, "Document the --verbose flag")
	if _, err := ts.Store.ArchiveJob(t.Context(), "handbook", job.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	err := run(t.Context(), ts.config(job.ID, "Also add an example"), &out)
	want := `the server refused the message: job "` + job.ID + `" is archived and takes no more messages: `
	if !errors.Is(err, docsapi.ErrBadRequest) || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("run = %v, want an error starting %q", err, want)
	}
	if got, want := out.String(), "job "+job.ID+" is archived; pull request: "+job.PRLink+"\n"; got != want {
		t.Errorf("output = %q, want %q", got, want)
	}
	if ts.Runs.Load() != 1 {
		t.Errorf("%d runs, want the first only", ts.Runs.Load())
	}
}

func TestTimeout(t *testing.T) {
	ts := newTestServer(t, nil) // no engine: jobs stay active
	job, err := ts.Client.AgentJobs.Create(t.Context(), "", docsapi.CreateJobParams{Prompt: "Document the --verbose flag"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := ts.config(job.ID, "Also add an example")
	cfg.wait.Timeout = 200 * time.Millisecond
	var out strings.Builder
	err = run(t.Context(), cfg, &out)
	var timedOut *docsapi.WaitTimeoutError
	if !errors.As(err, &timedOut) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("run = %v, want a *docsapi.WaitTimeoutError for the timeout", err)
	}
	want := regexp.MustCompile(`^gave up; the job goes on running on the server: docsapi: stopped waiting for agent job ` +
		job.ID + ` \(last status active\) after \S+: context deadline exceeded$`)
	if !want.MatchString(err.Error()) {
		t.Errorf("message %q does not match %s", err, want)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 || lines[0] != "job "+job.ID+" is active; pull request: none" || !strings.HasSuffix(lines[1], "job "+job.ID+": active") {
		t.Errorf("output:\n%s\nwant the job's state, then its one status, active", out.String())
	}
}

func TestRefused(t *testing.T) {
	ts := newTestServer(t, nil)
	job, err := ts.Client.AgentJobs.Create(t.Context(), "", docsapi.CreateJobParams{Prompt: "Document the --verbose flag"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		edit   func(*config)
		target error
		prefix string
	}{
		{"no job", func(c *config) { c.jobID = "" }, nil, "-job is required"},
		{"no prompt", func(c *config) { c.prompt = "" }, nil, "-prompt is required"},
		{"no key", func(c *config) { c.key = "" }, nil, "DOCSAPI_KEY is not set"},
		{"no such job", func(c *config) { c.jobID = "job_nope" }, docsapi.ErrNotFound, `no job job_nope in project "handbook"`},
		{"wrong key", func(c *config) { c.key = "mint_wrong" }, docsapi.ErrUnauthorized, "the key was refused"},
		{"another project", func(c *config) { c.project = "other" }, docsapi.ErrForbidden, `the key may not use project "other"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ts.config(job.ID, "Also add an example")
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
	stored, err := ts.Store.Job(t.Context(), "handbook", job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored.Prompts) != 1 {
		t.Errorf("the job has %d prompts, want none added", len(stored.Prompts))
	}
}
