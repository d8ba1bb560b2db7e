package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/sqlitetest"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

// The tests run the engine against the real SQLite store, on a file, inside
// a synctest bubble: leases, heartbeats, retries and polls then run on the
// bubble's fake clock, so a test waits minutes of engine time in
// milliseconds and every interleaving of timers is the same on every run.
// The parts (repositories, agent, pull requests) are doubles that record
// what they were asked.

// Test values of a project and its jobs.
const (
	testProject = "p1"
	testRepo    = "https://git.example/acme/docs.git"
	testRef     = "main"
	testModel   = "test-model"
)

// branchOf is the deterministic branch the tests give a job, as the server
// does, so that every run of the job meets the same pull request.
func branchOf(jobID string) string { return "docsapi/" + jobID }

// --- Repositories and Workspace ---

// fakeRepos hands out workspaces whose Publish reports changed, and records
// every call made to them.
type fakeRepos struct {
	mu         sync.Mutex
	changed    bool
	publishErr func(call int) error // optional: the error of the call-th Publish (1-based)
	specs      []RepoSpec
	messages   []string // Publish's commit messages, in call order
	closed     int
}

func newRepos(changed bool) *fakeRepos { return &fakeRepos{changed: changed} }

func (r *fakeRepos) Open(_ context.Context, spec RepoSpec) (Workspace, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.specs = append(r.specs, spec)
	// Not a real folder: the agent double never touches it, and a name
	// unique per workspace shows which one the agent was given.
	dir := fmt.Sprintf("workspace-%d", len(r.specs))
	return &fakeWorkspace{repos: r, dir: dir}, nil
}

func (r *fakeRepos) snapshot() (specs []RepoSpec, messages []string, closed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]RepoSpec(nil), r.specs...), append([]string(nil), r.messages...), r.closed
}

type fakeWorkspace struct {
	repos *fakeRepos
	dir   string
}

func (w *fakeWorkspace) Dir() string { return w.dir }

func (w *fakeWorkspace) Publish(_ context.Context, message string) (bool, error) {
	r := w.repos
	r.mu.Lock()
	defer r.mu.Unlock()
	r.messages = append(r.messages, message)
	if r.publishErr != nil {
		if err := r.publishErr(len(r.messages)); err != nil {
			return false, err
		}
	}
	return r.changed, nil
}

func (w *fakeWorkspace) Close() error {
	w.repos.mu.Lock()
	defer w.repos.mu.Unlock()
	w.repos.closed++
	return nil
}

// --- Agent ---

// agentCall is one Run of the agent double.
type agentCall struct {
	Task       Task
	Start, End time.Time // zero End: still running
	Err        error     // what Run returned
	Cause      error     // context.Cause of Run's context when it returned
}

// fakeAgent runs script for every call (numbered from 1) and records it.
type fakeAgent struct {
	mu     sync.Mutex
	script func(ctx context.Context, call int, task Task) error
	log    []agentCall
}

// setScript changes the script between runs.
func (a *fakeAgent) setScript(script func(ctx context.Context, call int, task Task) error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.script = script
}

func newAgent(script func(ctx context.Context, call int, task Task) error) *fakeAgent {
	return &fakeAgent{script: script}
}

func (a *fakeAgent) Run(ctx context.Context, task Task) error {
	task.Prompts = append([]string(nil), task.Prompts...)
	a.mu.Lock()
	a.log = append(a.log, agentCall{Task: task, Start: time.Now()})
	n, script := len(a.log), a.script
	a.mu.Unlock()
	err := script(ctx, n, task)
	a.mu.Lock()
	a.log[n-1].End, a.log[n-1].Err, a.log[n-1].Cause = time.Now(), err, context.Cause(ctx)
	a.mu.Unlock()
	return err
}

func (a *fakeAgent) calls() []agentCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]agentCall(nil), a.log...)
}

// started reports whether the call-th run has begun.
func (a *fakeAgent) started(call int) bool { return len(a.calls()) >= call }

// ended reports whether the call-th run has returned.
func (a *fakeAgent) ended(call int) bool {
	c := a.calls()
	return len(c) >= call && !c[call-1].End.IsZero()
}

// Agent scripts.

func succeed(context.Context, int, Task) error { return nil }

// blockUntilDone is an agent that never finishes on its own: only the end
// of its run's context stops it.
func blockUntilDone(ctx context.Context, _ int, _ Task) error {
	<-ctx.Done()
	return ctx.Err()
}

// workFor is an agent that takes d, or less if its run is cancelled.
func workFor(d time.Duration) func(context.Context, int, Task) error {
	return func(ctx context.Context, _ int, _ Task) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// failFirst is an agent whose first n calls fail with err.
func failFirst(n int, err error) func(context.Context, int, Task) error {
	return func(_ context.Context, call int, _ Task) error {
		if call <= n {
			return err
		}
		return nil
	}
}

// --- PullRequests ---

// fakePRs is a pull-request host: one pull request per branch, found again
// by later Ensure calls, as the real hosts' Ensure does.
type fakePRs struct {
	mu      sync.Mutex
	urls    map[string]string // branch → URL
	opened  int
	specs   []PullRequestSpec
	failErr func(call int) error // optional: the error of the call-th Ensure, returned after it did its work
}

func newPRs() *fakePRs { return &fakePRs{urls: map[string]string{}} }

func (p *fakePRs) Ensure(_ context.Context, spec PullRequestSpec) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.specs = append(p.specs, spec)
	url, ok := p.urls[spec.Branch]
	if !ok {
		p.opened++
		url = fmt.Sprintf("https://git.example/acme/docs/pull/%d", p.opened)
		p.urls[spec.Branch] = url
	}
	if p.failErr != nil {
		if err := p.failErr(len(p.specs)); err != nil {
			return "", err
		}
	}
	return url, nil
}

func (p *fakePRs) snapshot() (opened int, specs []PullRequestSpec, urls map[string]string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	urls = map[string]string{}
	for k, v := range p.urls {
		urls[k] = v
	}
	return p.opened, append([]PullRequestSpec(nil), p.specs...), urls
}

func (p *fakePRs) url(branch string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.urls[branch]
}

// --- Store spy ---

// spyStore is the real store with a record of the engine's outcome writes:
// the exactly-once claims are about these calls.
type spyStore struct {
	store.Store
	mu         sync.Mutex
	finishes   []store.Finish // every FinishJob call
	finished   []store.Job    // the jobs that successful FinishJob calls stored
	releases   int            // every ReleaseJob call
	released   int            // successful ReleaseJob calls
	releaseErr []error
	extendErr  error // when set, ExtendLease fails with it without reaching the database
}

// failExtend makes every ExtendLease fail with err (nil: work again), as a
// database that stops answering this process would.
func (s *spyStore) failExtend(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.extendErr = err
}

func (s *spyStore) ExtendLease(ctx context.Context, jobID, owner string, now time.Time, leaseFor time.Duration) error {
	s.mu.Lock()
	err := s.extendErr
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.Store.ExtendLease(ctx, jobID, owner, now, leaseFor)
}

func (s *spyStore) FinishJob(ctx context.Context, f store.Finish) (store.Job, error) {
	j, err := s.Store.FinishJob(ctx, f)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finishes = append(s.finishes, f)
	if err == nil {
		s.finished = append(s.finished, j)
	}
	return j, err
}

func (s *spyStore) ReleaseJob(ctx context.Context, jobID, owner string) error {
	err := s.Store.ReleaseJob(ctx, jobID, owner)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releases++
	if err == nil {
		s.released++
	} else {
		s.releaseErr = append(s.releaseErr, err)
	}
	return err
}

type spyRecord struct {
	finishes   []store.Finish
	finished   []store.Job
	releases   int
	released   int
	releaseErr []error
}

func (s *spyStore) record() spyRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return spyRecord{
		finishes:   append([]store.Finish(nil), s.finishes...),
		finished:   append([]store.Job(nil), s.finished...),
		releases:   s.releases,
		released:   s.released,
		releaseErr: append([]error(nil), s.releaseErr...),
	}
}

// --- The world of one test ---

// world is one test's database file and the doubles its engines run with.
// It must be made inside the test's synctest bubble.
type world struct {
	t     *testing.T
	path  string
	store *spyStore // the store of the process under test
	repos *fakeRepos
	agent *fakeAgent
	prs   *fakePRs
	// clocks, in the fencing tests, sets engine A's and B's clocks apart
	// from their store's (see fencing_clocks_test.go).
	clocks clocksApart
}

func newWorld(t *testing.T, agent func(context.Context, int, Task) error) *world {
	t.Helper()
	w := &world{
		t:     t,
		path:  sqlitetest.FreshFile(t),
		repos: newRepos(true),
		agent: newAgent(agent),
		prs:   newPRs(),
	}
	w.store = w.openStore()
	if err := w.store.CreateProject(t.Context(), store.Project{
		ID: testProject, Name: "Docs", Repository: testRepo, Ref: testRef, Model: testModel, CreatedAt: time.Now(),
	}); err != nil {
		t.Fatalf("CreateProject: %v", err)
	}
	return w
}

// openStore opens another Store on the world's database file, as another
// process would. It is closed when the test ends: inside the bubble, since
// database/sql's goroutines belong to it and must be gone when it ends.
func (w *world) openStore() *spyStore {
	w.t.Helper()
	s, err := sqlite.Open(w.t.Context(), w.path)
	if err != nil {
		w.t.Fatalf("sqlite.Open: %v", err)
	}
	w.t.Cleanup(func() {
		if err := s.Close(); err != nil {
			w.t.Errorf("closing the store: %v", err)
		}
	})
	return &spyStore{Store: s}
}

// parts is a Config.Parts that gives the test project the world's doubles.
func (w *world) parts(_ context.Context, p store.Project) (Parts, error) {
	if p.ID != testProject || p.Repository != testRepo {
		return Parts{}, fmt.Errorf("parts asked for an unexpected project %+v", p)
	}
	return Parts{Repositories: w.repos, Agent: w.agent, PullRequests: w.prs}, nil
}

// config is the tests' engine configuration: every duration short enough
// for a test to pass several of them, on the bubble's clock.
func (w *world) config(owner string) Config {
	return Config{
		Store:        w.store,
		Owner:        owner,
		Parts:        w.parts,
		Concurrency:  1,
		LeaseFor:     30 * time.Second,
		JobTimeout:   time.Hour,
		MaxAttempts:  3,
		PollInterval: time.Second,
		RetryDelay:   10 * time.Second,
		Logger:       testLogger(w.t, owner),
	}
}

// start creates and starts an engine that is shut down when the test ends.
func (w *world) start(cfg Config) *Engine {
	w.t.Helper()
	e, err := New(cfg)
	if err != nil {
		w.t.Fatalf("New: %v", err)
	}
	e.Start()
	w.t.Cleanup(func() {
		// Cancelling at once rather than waiting: whatever still runs
		// when a test ends, the test has failed or no longer needs it.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = e.Shutdown(ctx)
	})
	return e
}

// createJob stores a new job of the test project through s.
func (w *world) createJob(s store.Store, id, prompt string) store.Job {
	w.t.Helper()
	j, _, err := s.CreateJob(w.t.Context(), store.NewJob{
		ID: id, ProjectID: testProject, Prompt: prompt,
		Repository: testRepo, Ref: testRef, Model: testModel, Branch: branchOf(id),
		CreatedAt: time.Now(),
	})
	if err != nil {
		w.t.Fatalf("CreateJob %s: %v", id, err)
	}
	return j
}

func (w *world) addPrompt(id, prompt string) store.Job {
	w.t.Helper()
	j, _, err := w.store.AddPrompt(w.t.Context(), store.NewPrompt{ProjectID: testProject, JobID: id, Prompt: prompt, At: time.Now()})
	if err != nil {
		w.t.Fatalf("AddPrompt %s: %v", id, err)
	}
	return j
}

func (w *world) job(id string) store.Job {
	w.t.Helper()
	j, err := w.store.Job(w.t.Context(), testProject, id)
	if err != nil {
		w.t.Fatalf("Job %s: %v", id, err)
	}
	return j
}

// waitFor waits on the bubble's clock, up to limit, until cond holds.
// Between looks it lets every goroutine of the bubble settle, so cond is
// judged on a quiet engine, not in the middle of a store write.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	// Fine enough to see a deadline kept or missed, coarse enough that a
	// long wait does not spend its time reading the database.
	step := max(limit/200, 10*time.Millisecond)
	for {
		synctest.Wait()
		if cond() {
			return
		}
		if !time.Now().Before(deadline) {
			t.Fatalf("still waiting after %v for %s", limit, what)
		}
		time.Sleep(step)
	}
}

// waitDone waits until the job is no longer active and returns it.
func (w *world) waitDone(id string, limit time.Duration) store.Job {
	w.t.Helper()
	var j store.Job
	waitFor(w.t, "job "+id+" to end", limit, func() bool {
		j = w.job(id)
		return j.Status != store.JobStatusActive
	})
	return j
}

// testLogger sends the engine's log to the test's, shown when a test fails.
func testLogger(t *testing.T, owner string) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})).With("engine", owner)
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// errTransient stands for a failure a retry may mend (a network error).
var errTransient = errors.New("connection reset by peer")
