package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/postgres"
	"github.com/docsapi/docsapi-go/server/store"
)

// The parts of the replica tests: the engines are real and their stores are
// real PostgreSQL stores on one database; what a run does (workspace, agent,
// pull requests) is doubles that record what they were asked.

// run is one Run of an agent double: which replica ran which job, and when.
type run struct {
	job, owner string
	start, end time.Time // zero end: still running
}

// runLog records the runs of every replica's agent, and catches two runs of
// one job at once as they happen.
type runLog struct {
	mu      sync.Mutex
	runs    []run
	active  map[string][]string // job ID → owners running it now
	overlap []string            // descriptions of runs that met another
}

func newRunLog() *runLog { return &runLog{active: map[string][]string{}} }

// begin records the start of a run and returns its index for end.
func (l *runLog) begin(job, owner string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if others := l.active[job]; len(others) > 0 {
		l.overlap = append(l.overlap, fmt.Sprintf("job %s started on %s while running on %v", job, owner, others))
	}
	l.active[job] = append(l.active[job], owner)
	l.runs = append(l.runs, run{job: job, owner: owner, start: time.Now()})
	return len(l.runs) - 1
}

func (l *runLog) end(i int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := &l.runs[i]
	r.end = time.Now()
	l.active[r.job] = slices.DeleteFunc(l.active[r.job], func(o string) bool { return o == r.owner })
}

// snapshot returns the runs so far, by job.
func (l *runLog) snapshot() (byJob map[string][]run, overlap []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	byJob = map[string][]run{}
	for _, r := range l.runs {
		byJob[r.job] = append(byJob[r.job], r)
	}
	return byJob, slices.Clone(l.overlap)
}

// checkNoOverlap fails the test if two runs of a job overlap in time or one
// never ended, comparing the recorded intervals (the live check in begin
// catches the same from another angle).
func checkNoOverlap(t *testing.T, byJob map[string][]run) {
	t.Helper()
	for job, runs := range byJob {
		slices.SortFunc(runs, func(a, b run) int { return a.start.Compare(b.start) })
		for i, r := range runs {
			if r.end.IsZero() {
				t.Errorf("job %s: the run on %s started at %v never ended", job, r.owner, r.start)
				continue
			}
			if i > 0 && r.start.Before(runs[i-1].end) {
				t.Errorf("job %s ran on two replicas at once: %s [%v, %v] and %s [%v, %v]", job,
					runs[i-1].owner, runs[i-1].start, runs[i-1].end, r.owner, r.start, r.end)
			}
		}
	}
}

// agent is one replica's agent: it records its runs in log and does work.
type agent struct {
	owner string
	log   *runLog
	work  func(ctx context.Context, task engine.Task) error
}

func (a *agent) Run(ctx context.Context, task engine.Task) error {
	i := a.log.begin(task.JobID, a.owner)
	defer a.log.end(i)
	return a.work(ctx, task)
}

// sleepFor returns work that takes d, or less if the run is cancelled.
func sleepFor(d time.Duration) func(ctx context.Context, task engine.Task) error {
	return func(ctx context.Context, _ engine.Task) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		}
	}
}

// repos opens workspaces whose Publish reports that the branch changed, so
// every run goes on to the pull request.
type repos struct{}

func (repos) Open(_ context.Context, spec engine.RepoSpec) (engine.Workspace, error) {
	return workspace{dir: "workspace-of-" + spec.Branch}, nil
}

type workspace struct{ dir string }

func (w workspace) Dir() string                                 { return w.dir }
func (workspace) Publish(context.Context, string) (bool, error) { return true, nil }
func (workspace) Close() error                                  { return nil }

// pullRequests is the code host every replica shares: it counts the calls
// per branch and opens a pull request for a branch only once, as a real host
// double would, so the counts show how often the replicas asked.
type pullRequests struct {
	mu    sync.Mutex
	calls map[string]int    // branch → Ensure calls
	urls  map[string]string // branch → the pull request opened for it
}

func newPullRequests() *pullRequests {
	return &pullRequests{calls: map[string]int{}, urls: map[string]string{}}
}

func (p *pullRequests) Ensure(_ context.Context, spec engine.PullRequestSpec) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls[spec.Branch]++
	if u, ok := p.urls[spec.Branch]; ok {
		return u, nil
	}
	u := fmt.Sprintf("https://git.example.com/alpha/docs/pull/%d", len(p.urls)+1)
	p.urls[spec.Branch] = u
	return u, nil
}

// of returns the Ensure calls for branch and the URL opened for it.
func (p *pullRequests) of(branch string) (calls int, url string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[branch], p.urls[branch]
}

// opened is the number of pull requests opened in all.
func (p *pullRequests) opened() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.urls)
}

// replicaStore is one replica's store, counting the calls the tests check.
// Embedding keeps every other method, JobNotifications included, so the
// engine still sees a store.JobNotifier.
type replicaStore struct {
	*postgres.Store
	claims   atomic.Int64 // ClaimJob calls that returned
	extends  atomic.Int64 // ExtendLease calls that succeeded
	mu       sync.Mutex
	finishes map[string][]store.Finish // job ID → FinishJob calls that succeeded
	attempts int                       // FinishJob calls, successful or not
}

func newReplicaStore(s *postgres.Store) *replicaStore {
	return &replicaStore{Store: s, finishes: map[string][]store.Finish{}}
}

func (r *replicaStore) ClaimJob(ctx context.Context, c store.Claim) (store.Job, error) {
	defer r.claims.Add(1)
	return r.Store.ClaimJob(ctx, c)
}

func (r *replicaStore) ExtendLease(ctx context.Context, jobID, owner string, now time.Time, leaseFor time.Duration) error {
	err := r.Store.ExtendLease(ctx, jobID, owner, now, leaseFor)
	if err == nil {
		r.extends.Add(1)
	}
	return err
}

func (r *replicaStore) FinishJob(ctx context.Context, f store.Finish) (store.Job, error) {
	j, err := r.Store.FinishJob(ctx, f)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attempts++
	if err == nil {
		r.finishes[f.JobID] = append(r.finishes[f.JobID], f)
	}
	return j, err
}

// finished returns the successful FinishJob calls by job, and how many calls
// were made in all.
func (r *replicaStore) finished() (byJob map[string][]store.Finish, calls int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	byJob = make(map[string][]store.Finish, len(r.finishes))
	for id, fs := range r.finishes {
		byJob[id] = slices.Clone(fs)
	}
	return byJob, r.attempts
}

// startEngine starts an engine on s with the given parts, shut down when the
// test ends (before its store closes: cleanups run last-in first-out).
func startEngine(t *testing.T, cfg engine.Config) *engine.Engine {
	t.Helper()
	e, err := engine.New(cfg)
	if err != nil {
		t.Fatalf("engine.New(%s): %v", cfg.Owner, err)
	}
	e.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown(%s): %v", cfg.Owner, err)
		}
	})
	return e
}

// partsOf returns an engine's Parts function: every project runs with the
// shared repositories and pull requests and with this replica's agent.
func partsOf(a *agent, prs *pullRequests) func(context.Context, store.Project) (engine.Parts, error) {
	return func(context.Context, store.Project) (engine.Parts, error) {
		return engine.Parts{Repositories: repos{}, Agent: a, PullRequests: prs}, nil
	}
}
