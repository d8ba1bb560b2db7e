package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// hangingStore is a store that, once hang is called, answers no call: every
// call blocks until its context ends, as with a database that stops
// answering without dropping the connection (a partition, a stuck lock, a
// full disk). This is the crash that matters for fencing: a store that fails
// fast lets the engine see the trouble at once, one that hangs keeps the
// engine waiting while the lease runs out. A call whose context has no
// deadline blocks for ever, so an unbounded call cannot go unnoticed: the
// engine's shutdown never returns and synctest reports the deadlock.
type hangingStore struct {
	store.Store
	mu      sync.Mutex
	hanging bool
	hung    []hungCall
}

// hungCall is a call made to a hanging store.
type hungCall struct {
	method   string
	at       time.Time
	deadline time.Time // zero: none, the call hangs for ever
}

var _ store.Store = (*hangingStore)(nil)

// hang makes every later call block until its context ends.
func (s *hangingStore) hang() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hanging = true
}

func (s *hangingStore) calls() []hungCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.hung)
}

// gate lets a call through before hang, and after it blocks the call until
// ctx ends and returns ctx's error.
func (s *hangingStore) gate(ctx context.Context, method string) error {
	s.mu.Lock()
	if !s.hanging {
		s.mu.Unlock()
		return nil
	}
	deadline, _ := ctx.Deadline()
	s.hung = append(s.hung, hungCall{method: method, at: time.Now(), deadline: deadline})
	s.mu.Unlock()
	<-ctx.Done() // nil for a context that can never end: blocks for ever
	return ctx.Err()
}

func (s *hangingStore) CreateProject(ctx context.Context, p store.Project) error {
	if err := s.gate(ctx, "CreateProject"); err != nil {
		return err
	}
	return s.Store.CreateProject(ctx, p)
}

func (s *hangingStore) UpdateProject(ctx context.Context, p store.Project) error {
	if err := s.gate(ctx, "UpdateProject"); err != nil {
		return err
	}
	return s.Store.UpdateProject(ctx, p)
}

func (s *hangingStore) Project(ctx context.Context, id string) (store.Project, error) {
	if err := s.gate(ctx, "Project"); err != nil {
		return store.Project{}, err
	}
	return s.Store.Project(ctx, id)
}

func (s *hangingStore) Projects(ctx context.Context) ([]store.Project, error) {
	if err := s.gate(ctx, "Projects"); err != nil {
		return nil, err
	}
	return s.Store.Projects(ctx)
}

func (s *hangingStore) CreateKey(ctx context.Context, k store.APIKey) error {
	if err := s.gate(ctx, "CreateKey"); err != nil {
		return err
	}
	return s.Store.CreateKey(ctx, k)
}

func (s *hangingStore) KeyByHash(ctx context.Context, hash []byte) (store.APIKey, error) {
	if err := s.gate(ctx, "KeyByHash"); err != nil {
		return store.APIKey{}, err
	}
	return s.Store.KeyByHash(ctx, hash)
}

func (s *hangingStore) Keys(ctx context.Context) ([]store.APIKey, error) {
	if err := s.gate(ctx, "Keys"); err != nil {
		return nil, err
	}
	return s.Store.Keys(ctx)
}

func (s *hangingStore) RevokeKey(ctx context.Context, id string, at time.Time) error {
	if err := s.gate(ctx, "RevokeKey"); err != nil {
		return err
	}
	return s.Store.RevokeKey(ctx, id, at)
}

func (s *hangingStore) CreateJob(ctx context.Context, j store.NewJob) (store.Job, bool, error) {
	if err := s.gate(ctx, "CreateJob"); err != nil {
		return store.Job{}, false, err
	}
	return s.Store.CreateJob(ctx, j)
}

func (s *hangingStore) Job(ctx context.Context, projectID, jobID string) (store.Job, error) {
	if err := s.gate(ctx, "Job"); err != nil {
		return store.Job{}, err
	}
	return s.Store.Job(ctx, projectID, jobID)
}

func (s *hangingStore) AddPrompt(ctx context.Context, p store.NewPrompt) (store.Job, bool, error) {
	if err := s.gate(ctx, "AddPrompt"); err != nil {
		return store.Job{}, false, err
	}
	return s.Store.AddPrompt(ctx, p)
}

func (s *hangingStore) ArchiveJob(ctx context.Context, projectID, jobID string, at time.Time) (store.Job, error) {
	if err := s.gate(ctx, "ArchiveJob"); err != nil {
		return store.Job{}, err
	}
	return s.Store.ArchiveJob(ctx, projectID, jobID, at)
}

func (s *hangingStore) ClaimJob(ctx context.Context, c store.Claim) (store.Job, error) {
	if err := s.gate(ctx, "ClaimJob"); err != nil {
		return store.Job{}, err
	}
	return s.Store.ClaimJob(ctx, c)
}

func (s *hangingStore) ExtendLease(ctx context.Context, jobID, owner string, now time.Time, leaseFor time.Duration) error {
	if err := s.gate(ctx, "ExtendLease"); err != nil {
		return err
	}
	return s.Store.ExtendLease(ctx, jobID, owner, now, leaseFor)
}

func (s *hangingStore) FinishJob(ctx context.Context, f store.Finish) (store.Job, error) {
	if err := s.gate(ctx, "FinishJob"); err != nil {
		return store.Job{}, err
	}
	return s.Store.FinishJob(ctx, f)
}

func (s *hangingStore) ReleaseJob(ctx context.Context, jobID, owner string) error {
	if err := s.gate(ctx, "ReleaseJob"); err != nil {
		return err
	}
	return s.Store.ReleaseJob(ctx, jobID, owner)
}

func (s *hangingStore) AddViews(ctx context.Context, counts []store.ViewCount) error {
	if err := s.gate(ctx, "AddViews"); err != nil {
		return err
	}
	return s.Store.AddViews(ctx, counts)
}

func (s *hangingStore) QueryViews(ctx context.Context, q store.ViewsQuery) (store.ViewsResult, error) {
	if err := s.gate(ctx, "QueryViews"); err != nil {
		return store.ViewsResult{}, err
	}
	return s.Store.QueryViews(ctx, q)
}

func (s *hangingStore) Ping(ctx context.Context) error {
	if err := s.gate(ctx, "Ping"); err != nil {
		return err
	}
	return s.Store.Ping(ctx)
}

// interval is one run of a job's agent, [start, end) in the bubble's time.
type interval struct {
	engine     string
	start, end time.Time // zero end: still running
}

func intervals(engine string, calls []agentCall) []interval {
	var out []interval
	for _, c := range calls {
		out = append(out, interval{engine: engine, start: c.Start, end: c.End})
	}
	return out
}

// fencingAgent is engine A's agent in TestFencingHangingStore.
type fencingAgent struct {
	name string
	// script is the agent for a lease of leaseFor, when A's store hangs
	// hangAfter after the agent started.
	script func(leaseFor, hangAfter time.Duration) func(context.Context, int, Task) error
	// publishes is how often A publishes: only a run that ends before its
	// fence may, since until then the job is surely A's.
	publishes int
	// finishes: A calls FinishJob, whose call must give up by the lease's
	// end; otherwise A must not try to record anything.
	finishes bool
}

var fencingAgents = []fencingAgent{
	{name: "an agent that runs until stopped", script: func(time.Duration, time.Duration) func(context.Context, int, Task) error {
		return blockUntilDone
	}},
	// Were it let finish, A would publish on the branch B works on.
	{name: "an agent that would finish after the lease", script: func(leaseFor, _ time.Duration) func(context.Context, int, Task) error {
		return workFor(leaseFor + leaseFor/2)
	}},
	// The outcome cannot be recorded and is dropped at the fence; B
	// runs the job again, which every step's idempotence makes harmless.
	{name: "an agent that finishes while the store hangs", script: func(leaseFor, hangAfter time.Duration) func(context.Context, int, Task) error {
		return workFor(hangAfter + leaseFor/6)
	}, publishes: 1, finishes: true},
	// The retry's ExtendLease hangs, and must give up at the fence.
	{name: "an agent that fails while the store hangs", script: func(leaseFor, hangAfter time.Duration) func(context.Context, int, Task) error {
		return func(ctx context.Context, call int, task Task) error {
			if err := workFor(hangAfter+leaseFor/6)(ctx, call, task); err != nil {
				return err
			}
			return errTransient
		}
	}},
}

// TestFencingHangingStore models two server processes sharing one database
// when A's database stops answering (every call hangs) while A runs a job:
// A must stop its run before its lease can expire, so that B, which takes
// the job over after the expiry, never runs it at the same time; A must
// publish nothing past its fence and record nothing, and every store call A
// makes for the run must give up by the time the lease ends rather than
// after a fixed timeout.
func TestFencingHangingStore(t *testing.T) {
	for _, leaseFor := range []time.Duration{30 * time.Second, time.Minute, DefaultLeaseFor} {
		for _, hang := range []struct {
			name string
			// after is when A's store hangs, after its agent started; the
			// first heartbeat comes at leaseFor/3.
			after func(leaseFor time.Duration) time.Duration
		}{
			{"hangs as the agent starts", func(time.Duration) time.Duration { return 0 }},
			{"hangs after a heartbeat", func(l time.Duration) time.Duration { return l / 2 }},
		} {
			for _, agent := range fencingAgents {
				t.Run(fmt.Sprintf("lease %v/%s/%s", leaseFor, hang.name, agent.name), func(t *testing.T) {
					t.Parallel() // a bubble and a database of its own
					synctest.Test(t, func(t *testing.T) {
						testFencing(t, leaseFor, hang.after(leaseFor), agent)
					})
				})
			}
		}
	}
}

// engineA is engine A of a fencing test and its doubles.
type engineA struct {
	*Engine
	store *hangingStore
	agent *fakeAgent
	repos *fakeRepos
	prs   *fakePRs
}

// startA starts engine A, with its own store on w's database and its own
// doubles, and has it claim job-1 and start its agent, which runs script.
// It returns A and the job as claimed.
func startA(w *world, leaseFor time.Duration, script func(context.Context, int, Task) error) (engineA, store.Job) {
	a := engineA{store: &hangingStore{Store: w.openStore()}, agent: newAgent(script), repos: newRepos(true), prs: newPRs()}
	cfg := w.config("engine-a")
	cfg.Store = w.clocks.store(a.store)
	cfg.Now = clockAhead(w.clocks.a)
	cfg.LeaseFor = leaseFor
	cfg.Parts = func(context.Context, store.Project) (Parts, error) {
		return Parts{Repositories: a.repos, Agent: a.agent, PullRequests: a.prs}, nil
	}
	a.Engine = w.start(cfg)
	w.createJob(w.store, "job-1", "Document the v2 API")
	a.JobQueued()
	waitFor(w.t, "engine A's agent to start", time.Minute, func() bool { return a.agent.started(1) })
	return a, w.job("job-1")
}

// startB starts engine B, with its own store on w's database and the
// world's doubles.
func startB(w *world, leaseFor time.Duration) {
	cfg := w.config("engine-b")
	cfg.Store = w.clocks.store(w.openStore())
	cfg.Now = clockAhead(w.clocks.b)
	cfg.LeaseFor = leaseFor
	w.start(cfg)
}

// hangA makes A's store hang and returns when A's lease ends, which it can
// no longer extend.
func hangA(w *world, a engineA) time.Time {
	w.t.Helper()
	synctest.Wait() // A is between store calls: none is half done
	a.store.hang()
	leased := w.job("job-1")
	if leased.LeaseOwner != "engine-a" || leased.Status != store.JobStatusActive || !leased.LeaseExpiresAt.After(time.Now()) {
		w.t.Fatalf("when A's store hangs at %v: job %q leased to %q until %v; want active, leased to engine-a, a lease not yet expired",
			time.Now(), leased.Status, leased.LeaseOwner, leased.LeaseExpiresAt)
	}
	return leased.LeaseExpiresAt
}

func testFencing(t *testing.T, leaseFor, hangAfter time.Duration, agent fencingAgent) {
	testFencingClocks(t, leaseFor, hangAfter, agent, clocksApart{})
}

// testFencingClocks is testFencing with the engines' clocks set as clocks
// says (see TestFencingClocksApart).
func testFencingClocks(t *testing.T, leaseFor, hangAfter time.Duration, agent fencingAgent, clocks clocksApart) {
	w := newWorld(t, workFor(2*leaseFor)) // w.agent, w.repos and w.prs are B's
	w.clocks = clocks
	a, claimed := startA(w, leaseFor, agent.script(leaseFor, hangAfter))
	startB(w, leaseFor)

	time.Sleep(hangAfter)
	end := hangA(w, a)
	if hangAfter > leaseFor/3 && !end.After(claimed.LeaseExpiresAt) {
		t.Fatalf("A's lease ends at %v as when it was claimed; want a heartbeat to have extended it", end)
	}

	done := w.waitDone("job-1", 5*leaseFor)
	checkNoOverlap(t, a.agent, w.agent)
	callsA := a.agent.calls()
	if len(callsA) != 1 {
		t.Fatalf("engine A's agent ran %d times, want once", len(callsA))
	}
	if !callsA[0].End.IsZero() && !callsA[0].End.Before(end) {
		t.Errorf("engine A's run ended at %v, not before its lease did at %v", callsA[0].End, end)
	}

	// B completed the job, and A did nothing visible past its fence.
	checkCompletedByB(t, w, done)
	_, published, _ := a.repos.snapshot()
	_, ensured, _ := a.prs.snapshot()
	if len(published) != agent.publishes || len(ensured) != agent.publishes {
		t.Errorf("engine A published %d times and called Ensure %d times, want %d: past its fence, the job is no longer surely its own",
			len(published), len(ensured), agent.publishes)
	}

	finishes := 0
	for _, c := range a.store.calls() {
		switch c.method {
		case "FinishJob":
			finishes++
		case "ReleaseJob":
			t.Errorf("engine A called ReleaseJob at %v", c.at)
		}
	}
	want := 0
	if agent.finishes {
		want = 1 // and it gave up at the fence: see checkBounded
	}
	if finishes != want {
		t.Errorf("engine A called FinishJob %d times after its store hung, want %d", finishes, want)
	}
	checkBounded(t, a.store, end)
}

// TestFencingShutdownHangingStore: an engine shut down while its store
// hangs gives its lease back with a ReleaseJob that gives up when the lease
// ends; its shutdown returns by then, and another engine takes the job over.
func TestFencingShutdownHangingStore(t *testing.T) {
	for _, leaseFor := range []time.Duration{30 * time.Second, time.Minute, DefaultLeaseFor} {
		t.Run(fmt.Sprintf("lease %v", leaseFor), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := newWorld(t, workFor(2*leaseFor))
				a, _ := startA(w, leaseFor, blockUntilDone)
				end := hangA(w, a)

				time.Sleep(leaseFor / 6)
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				if err := a.Shutdown(ctx); !errors.Is(err, context.Canceled) {
					t.Errorf("A's Shutdown = %v, want context.Canceled (a run had to be cancelled)", err)
				}
				if now := time.Now(); !now.Before(end) {
					t.Errorf("A's Shutdown returned at %v, not before its lease ended at %v", now, end)
				}
				releases := 0
				for _, c := range a.store.calls() {
					if c.method == "ReleaseJob" {
						releases++
					}
				}
				if releases != 1 {
					t.Errorf("engine A called ReleaseJob %d times, want once", releases)
				}
				checkBounded(t, a.store, end)

				startB(w, leaseFor)
				done := w.waitDone("job-1", 5*leaseFor)
				checkNoOverlap(t, a.agent, w.agent)
				checkCompletedByB(t, w, done)
				if _, published, _ := a.repos.snapshot(); len(published) != 0 {
					t.Errorf("engine A published %d times, want never", len(published))
				}
			})
		})
	}
}

// checkNoOverlap checks that the runs of the agents never overlap: each
// ended strictly before the next started.
func checkNoOverlap(t *testing.T, agents ...*fakeAgent) {
	t.Helper()
	var runs []interval
	for i, a := range agents {
		runs = append(runs, intervals(string(rune('A'+i)), a.calls())...)
	}
	slices.SortFunc(runs, func(x, y interval) int { return x.start.Compare(y.start) })
	for i, r := range runs {
		if r.end.IsZero() {
			t.Errorf("%s's run started at %v is still running", r.engine, r.start)
			continue
		}
		if i+1 < len(runs) && !r.end.Before(runs[i+1].start) {
			t.Errorf("two runs at once: %s's ran over [%v, %v), %s's started at %v",
				r.engine, r.start, r.end, runs[i+1].engine, runs[i+1].start)
		}
	}
}

// checkCompletedByB checks that job-1 was completed by B's one run (its
// second attempt), with B's pull request.
func checkCompletedByB(t *testing.T, w *world, done store.Job) {
	t.Helper()
	opened, specs, urls := w.prs.snapshot()
	if done.Status != store.JobStatusCompleted || done.Attempts != 2 || done.PRLink == "" || done.PRLink != urls[branchOf("job-1")] {
		t.Errorf("job = status %q, Attempts %d, PRLink %q; want completed by B's run (Attempts 2) with B's pull request %q",
			done.Status, done.Attempts, done.PRLink, urls[branchOf("job-1")])
	}
	if callsB := w.agent.calls(); len(callsB) != 1 || opened != 1 || len(specs) != 1 {
		t.Errorf("engine B: %d runs, %d pull requests opened, %d Ensure calls; want 1, 1, 1", len(callsB), opened, len(specs))
	}
}

// checkBounded checks that every call made to s after it hung had a
// deadline, and that those made for a run (all but claims) gave up by end,
// when the run's lease ended.
func checkBounded(t *testing.T, s *hangingStore, end time.Time) {
	t.Helper()
	for _, c := range s.calls() {
		switch {
		case c.deadline.IsZero():
			t.Errorf("engine A called %s at %v with no deadline: it hangs for ever", c.method, c.at)
		case c.method != "ClaimJob" && c.deadline.After(end):
			t.Errorf("engine A called %s at %v with a deadline of %v, after its lease ended at %v",
				c.method, c.at, c.deadline, end)
		}
	}
}

// TestLeaseMargin checks the fence's arithmetic: how long before its lease
// ends a run stops itself, and how long a run may still act on its lease.
func TestLeaseMargin(t *testing.T) {
	for _, tc := range []struct {
		leaseFor, want time.Duration
	}{
		{time.Millisecond, 250 * time.Microsecond}, // the shortest lease New accepts: a quarter
		{time.Second, 250 * time.Millisecond},
		{3 * time.Second, 750 * time.Millisecond},
		{4 * time.Second, time.Second},  // the quarter meets the floor
		{5 * time.Second, time.Second},  // the floor
		{10 * time.Second, time.Second}, // the tenth meets the floor
		{30 * time.Second, 3 * time.Second},
		{time.Minute, 6 * time.Second},
		{DefaultLeaseFor, 12 * time.Second},
		{10 * time.Minute, time.Minute},
	} {
		got := leaseMargin(tc.leaseFor)
		if got != tc.want {
			t.Errorf("leaseMargin(%v) = %v, want %v", tc.leaseFor, got, tc.want)
		}
		// Whatever the lease: some margin, and the fence after the second
		// heartbeat that follows a renewal.
		if got <= 0 || got >= tc.leaseFor/3 {
			t.Errorf("leaseMargin(%v) = %v, want more than 0 and less than a third of the lease", tc.leaseFor, got)
		}
	}
}

func TestTimeLeft(t *testing.T) {
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name          string
		leaseFor      time.Duration
		until, now    time.Time
		want          time.Duration
		wantCallsMade bool
	}{
		{"just claimed", 30 * time.Second, t0.Add(30 * time.Second), t0, 27 * time.Second, true},
		{"at the first heartbeat", 30 * time.Second, t0.Add(30 * time.Second), t0.Add(10 * time.Second), 17 * time.Second, true},
		{"at the second heartbeat", 30 * time.Second, t0.Add(30 * time.Second), t0.Add(20 * time.Second), 7 * time.Second, true},
		{"a nanosecond before the fence", 30 * time.Second, t0.Add(30 * time.Second), t0.Add(27*time.Second - 1), 1, true},
		{"at the fence", 30 * time.Second, t0.Add(30 * time.Second), t0.Add(27 * time.Second), 0, false},
		{"within the margin", 30 * time.Second, t0.Add(30 * time.Second), t0.Add(29 * time.Second), -2 * time.Second, false},
		{"after the lease", 30 * time.Second, t0.Add(30 * time.Second), t0.Add(45 * time.Second), -18 * time.Second, false},
		{"a minute's lease, at its second heartbeat", time.Minute, t0.Add(time.Minute), t0.Add(40 * time.Second), 14 * time.Second, true},
		{"the default lease, renewed", DefaultLeaseFor, t0.Add(40*time.Second + DefaultLeaseFor), t0.Add(80 * time.Second), 68 * time.Second, true},
		{"a test's short lease", time.Second, t0.Add(time.Second), t0.Add(500 * time.Millisecond), 250 * time.Millisecond, true},
		{"a claim that came back too late", DefaultLeaseFor, t0.Add(DefaultLeaseFor), t0.Add(110 * time.Second), -2 * time.Second, false},
	} {
		got := timeLeft(tc.until, tc.now, tc.leaseFor)
		if got != tc.want || (got > 0) != tc.wantCallsMade {
			t.Errorf("%s: timeLeft(until %v, now %v, lease %v) = %v, want %v (calls made: %v)",
				tc.name, tc.until.Sub(t0), tc.now.Sub(t0), tc.leaseFor, got, tc.want, tc.wantCallsMade)
		}
	}
}

// TestLeaseFence checks the fence of one run on the bubble's clock: it
// fires leaseMargin before the lease ends, an extension moves it, and once
// fired it stays fired.
func TestLeaseFence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := &Engine{cfg: Config{LeaseFor: 30 * time.Second, Now: time.Now}}
		start := time.Now()
		var mu sync.Mutex
		var fired []time.Duration
		l := e.newLease(start.Add(30*time.Second), func() {
			mu.Lock()
			defer mu.Unlock()
			fired = append(fired, time.Since(start))
		})
		defer l.stopFence()
		firedAt := func() []time.Duration {
			synctest.Wait()
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(fired)
		}

		time.Sleep(10 * time.Second)
		l.extend(start.Add(40 * time.Second)) // a heartbeat at 10 s
		l.extend(start.Add(35 * time.Second)) // a late answer to an older one: ignored
		if got := l.left(); got != 27*time.Second {
			t.Errorf("after extending at 10s to 40s: %v left, want 27s", got)
		}
		time.Sleep(26 * time.Second) // 36 s: the first fence, at 27 s, was moved
		if got := firedAt(); len(got) != 0 {
			t.Fatalf("the fence fired at %v, before 37s", got)
		}
		if ctx, cancel, ok := l.storeContext(context.Background()); !ok {
			t.Error("storeContext at 36s: no time left, want 1s")
		} else {
			if d, _ := ctx.Deadline(); !d.Equal(start.Add(37 * time.Second)) {
				t.Errorf("a store call's deadline at 36s = %v, want the fence at 37s", d.Sub(start))
			}
			cancel()
		}
		time.Sleep(time.Second)
		if got := firedAt(); !slices.Equal(got, []time.Duration{37 * time.Second}) {
			t.Fatalf("the fence fired at %v, want once at 37s", got)
		}
		if _, _, ok := l.storeContext(context.Background()); ok {
			t.Error("storeContext at the fence gave a context, want none: no call may be made")
		}
		l.extend(start.Add(70 * time.Second)) // too late: the run is stopping
		if _, _, ok := l.storeContext(context.Background()); ok || !l.end().Equal(start.Add(40*time.Second)) {
			t.Errorf("after a late extension, storeContext gave a context (%v) or the lease's end moved (%v); want neither",
				ok, l.end().Sub(start))
		}
		time.Sleep(time.Minute)
		if got := firedAt(); !slices.Equal(got, []time.Duration{37 * time.Second}) {
			t.Errorf("the fence fired at %v, want once at 37s, not again after a late extension", got)
		}
	})
}
