package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/internal/sessiontest"
	"github.com/docsapi/docsapi-go/server/postgres"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// These tests model replicas of the server sharing one database: each
// replica is an engine with a postgres.Store of its own (its own pool) on the
// same database, and a distinct Owner. They run on the wall clock, since the
// database does, with short leases and an overall deadline per wait.

// The acceptance test of running several replicas: 200 jobs created through
// the API are spread over three replicas, each job runs once, on one replica
// at a time, completes once and opens one pull request.
func TestReplicasRunEveryJobExactlyOnce(t *testing.T) {
	const (
		replicas = 3
		jobs     = 200
	)
	db := newDatabase(t)
	started := time.Now()

	log := newRunLog()
	prs := newPullRequests()
	stores := make([]*replicaStore, replicas)
	for i := range stores {
		stores[i] = newReplicaStore(open(t, db))
	}
	// One API server, on the first replica's store, takes the requests.
	srv, err := server.New(server.Config{Store: stores[0].Store})
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	ctx := t.Context()
	if _, err := srv.CreateProject(ctx, store.Project{ID: "alpha", Name: "Alpha docs",
		Repository: "https://git.example.com/alpha/docs.git", Ref: "main", Model: "test-model"}); err != nil {
		t.Fatalf("CreateProject: %v", err)
	}
	key, err := srv.CreateKey(ctx, server.KeyParams{Name: "ci", Projects: []string{"alpha"}, Scopes: []store.Scope{store.ScopeWrite}})
	if err != nil {
		t.Fatalf("CreateKey: %v", err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	client, err := docsapi.NewClient(key.Secret, docsapi.WithBaseURL(ts.URL), docsapi.WithProjectID("alpha"))
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}

	// The engines start first, so that every replica competes for the jobs
	// as they arrive. Leases are long next to a run: none expires, so a
	// second run of a job could only come from a double claim.
	for i, s := range stores {
		owner := fmt.Sprintf("replica-%d", i)
		a := &agent{owner: owner, log: log, work: func(ctx context.Context, task engine.Task) error {
			return sleepFor(time.Duration(5+rand.IntN(20))*time.Millisecond)(ctx, task)
		}}
		startEngine(t, engine.Config{
			Store: s, Owner: owner, Parts: partsOf(a, prs),
			Concurrency: 4, LeaseFor: 10 * time.Second, PollInterval: 200 * time.Millisecond,
			JobTimeout: 20 * time.Second, MaxAttempts: 3, RetryDelay: 100 * time.Millisecond,
		})
	}

	ids := make([]string, jobs)
	var wg sync.WaitGroup
	errs := make(chan error, jobs)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < jobs; i += 8 {
				job, err := client.AgentJobs.Create(ctx, "", docsapi.CreateJobParams{Prompt: fmt.Sprintf("Document feature %d", i)})
				if err != nil {
					errs <- fmt.Errorf("Create %d: %w", i, err)
					continue
				}
				ids[i] = job.ID
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	created := time.Now()

	completed := func() int {
		n := 0
		for _, s := range stores {
			byJob, _ := s.finished()
			n += len(byJob)
		}
		return n
	}
	eventually(t, 25*time.Second, "not every job was finished", func() bool { return completed() >= jobs })
	done := time.Now()

	// Every job: completed, finished once (by one replica), run once,
	// one pull request asked for and linked.
	finishes := map[string][]string{} // job → owners whose FinishJob succeeded
	for i, s := range stores {
		byJob, _ := s.finished()
		for id, fs := range byJob {
			for _, f := range fs {
				if f.Outcome != store.Completed {
					t.Errorf("job %s finished by replica-%d with outcome %d (%s), want completed", id, i, f.Outcome, f.FailureReason)
				}
				finishes[id] = append(finishes[id], fmt.Sprintf("replica-%d", i))
			}
		}
	}
	byJob, overlap := log.snapshot()
	for _, o := range overlap {
		t.Error(o)
	}
	checkNoOverlap(t, byJob)
	perReplica := map[string]int{}
	for _, id := range ids {
		j, err := stores[1].Job(ctx, "alpha", id)
		if err != nil {
			t.Errorf("Job %s: %v", id, err)
			continue
		}
		calls, url := prs.of(j.Branch)
		switch {
		case j.Status != store.JobStatusCompleted:
			t.Errorf("job %s: status %s, want completed", id, j.Status)
		case len(finishes[id]) != 1:
			t.Errorf("job %s: %d successful FinishJob calls (by %v), want 1", id, len(finishes[id]), finishes[id])
		case len(byJob[id]) != 1:
			t.Errorf("job %s: ran %d times, want once", id, len(byJob[id]))
		case calls != 1 || url == "" || j.PRLink != url:
			t.Errorf("job %s: %d pull request calls for %s, PR %q, PRLink %q; want 1 call, linked", id, calls, j.Branch, url, j.PRLink)
		case byJob[id][0].owner != finishes[id][0]:
			t.Errorf("job %s: ran on %s but finished by %s", id, byJob[id][0].owner, finishes[id][0])
		}
		if runs := byJob[id]; len(runs) > 0 {
			perReplica[runs[0].owner]++
		}
	}
	if n := prs.opened(); n != jobs {
		t.Errorf("%d pull requests opened, want %d", n, jobs)
	}
	// The test models replicas only if they all took part.
	for i := range replicas {
		if owner := fmt.Sprintf("replica-%d", i); perReplica[owner] == 0 {
			t.Errorf("%s ran no job (runs per replica: %v)", owner, perReplica)
		}
	}
	t.Logf("%d jobs: created in %v, all done %v later; runs per replica %v",
		jobs, created.Sub(started).Round(time.Millisecond), done.Sub(created).Round(time.Millisecond), perReplica)
}

// A replica that dies mid-job leaves its lease behind; once the lease
// expires, another replica takes the job over and completes it, opening the
// one pull request; the dead replica never records an outcome.
func TestReplicaKilledMidJobIsTakenOver(t *testing.T) {
	testKilledMidJobIsTakenOver(t, 0, 0)
}

// testKilledMidJobIsTakenOver runs TestReplicaKilledMidJobIsTakenOver with
// replica A's clock aheadA ahead of the machine's, and B's aheadB.
func testKilledMidJobIsTakenOver(t *testing.T, aheadA, aheadB time.Duration) {
	db := newDatabase(t)
	ctx := t.Context()
	log := newRunLog()
	prs := newPullRequests()

	// Replica A's store is closed by the test, mid-job: opened by hand so
	// that the cleanup's Close is a harmless second one.
	pa, err := postgres.Open(ctx, db)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { pa.Close() })
	sa := newReplicaStore(pa)
	sb := newReplicaStore(open(t, db))

	must(t, sb.CreateProject(ctx, storetest.NewProject("alpha")))
	nj := storetest.NewJob("alpha", "job-1", time.Now())
	if _, _, err := sb.CreateJob(ctx, nj); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}

	const lease = time.Second
	aStarted := make(chan struct{})
	var once sync.Once
	agentA := &agent{owner: "replica-a", log: log, work: func(ctx context.Context, _ engine.Task) error {
		once.Do(func() { close(aStarted) })
		<-ctx.Done() // hangs until the engine gives the run up
		return ctx.Err()
	}}
	startEngine(t, engine.Config{Store: sa, Owner: "replica-a", Parts: partsOf(agentA, prs),
		Concurrency: 1, LeaseFor: lease, PollInterval: 50 * time.Millisecond, Now: clockAhead(aheadA)})
	select {
	case <-aStarted:
	case <-time.After(10 * time.Second):
		t.Fatal("replica A did not start the job")
	}

	// The kill: A's database connections go away with its pool, and with
	// them every heartbeat, release and outcome A could still send.
	if err := pa.Close(); err != nil {
		t.Fatalf("closing replica A's store: %v", err)
	}
	leased, err := sb.Job(ctx, "alpha", "job-1")
	must(t, err)
	if leased.LeaseOwner != "replica-a" || leased.Attempts != 1 || leased.Status != store.JobStatusActive {
		t.Fatalf("after A died: job leased to %q with %d attempts, status %s; want replica-a, 1, active",
			leased.LeaseOwner, leased.Attempts, leased.Status)
	}

	// B notes when it starts by the database's clock, the one A's lease
	// (LeaseExpiresAt) is on.
	var bStartedOnDB atomic.Pointer[time.Time]
	agentB := &agent{owner: "replica-b", log: log, work: func(ctx context.Context, task engine.Task) error {
		if now, err := sb.LeaseNow(ctx); err == nil {
			bStartedOnDB.CompareAndSwap(nil, &now)
		}
		return sleepFor(10*time.Millisecond)(ctx, task)
	}}
	startEngine(t, engine.Config{Store: sb, Owner: "replica-b", Parts: partsOf(agentB, prs),
		Concurrency: 1, LeaseFor: lease, PollInterval: 50 * time.Millisecond, Now: clockAhead(aheadB)})

	// Well within a clock's offset of minutes: B takes over once A's
	// lease ends, not once B's clock says it does.
	var final store.Job
	eventually(t, 15*time.Second, "replica B did not complete the job", func() bool {
		j, err := sb.Job(ctx, "alpha", "job-1")
		final = j
		// The call is counted once FinishJob returns, after the commit
		// that shows the job completed.
		fs, _ := sb.finished()
		return err == nil && j.Status == store.JobStatusCompleted && len(fs["job-1"]) > 0
	})

	byJob, overlap := log.snapshot()
	for _, o := range overlap {
		t.Error(o)
	}
	runs := byJob["job-1"]
	if len(runs) != 2 || runs[0].owner != "replica-a" || runs[1].owner != "replica-b" {
		t.Fatalf("runs = %+v, want one on replica-a, then one on replica-b", runs)
	}
	if started := bStartedOnDB.Load(); started == nil || !started.After(leased.LeaseExpiresAt) {
		t.Errorf("replica B started at %v by the database's clock, not after A's lease expired at %v", started, leased.LeaseExpiresAt)
	}
	checkNoOverlap(t, byJob)
	if _, calls := sa.finished(); calls != 0 {
		t.Errorf("replica A made %d FinishJob calls, want none", calls)
	}
	if fs, _ := sb.finished(); len(fs["job-1"]) != 1 || fs["job-1"][0].Outcome != store.Completed {
		t.Errorf("replica B's FinishJob calls: %+v, want one completed", fs["job-1"])
	}
	calls, url := prs.of(nj.Branch)
	if prs.opened() != 1 || calls != 1 || final.PRLink != url {
		t.Errorf("%d pull requests opened, %d calls for the branch, PRLink %q (PR %q); want 1, 1, linked",
			prs.opened(), calls, final.PRLink, url)
	}
	if final.Attempts != 2 || final.LeaseOwner != "" {
		t.Errorf("final job: %d attempts, lease %q; want 2 (A's and B's), none", final.Attempts, final.LeaseOwner)
	}
}

// An idle replica whose next poll is an hour away starts a job created
// through another replica at once: the store's NOTIFY wakes it.
func TestNotificationWakesIdleReplica(t *testing.T) {
	db := newDatabase(t)
	ctx := t.Context()
	sa := newReplicaStore(open(t, db))
	sb := open(t, db)
	must(t, sb.CreateProject(ctx, storetest.NewProject("alpha")))

	log := newRunLog()
	a := &agent{owner: "replica-a", log: log, work: sleepFor(0)}
	startEngine(t, engine.Config{Store: sa, Owner: "replica-a", Parts: partsOf(a, newPullRequests()),
		Concurrency: 1, PollInterval: time.Hour})

	// Before the job is created, A must be asleep (its first poll came back
	// empty) and listening: otherwise the job would be found by that poll,
	// or the notification sent before anyone listened.
	eventually(t, 10*time.Second, "replica A did not poll", func() bool { return sa.claims.Load() >= 1 })
	waitListeners(t, db, 1)

	created := time.Now()
	if _, _, err := sb.CreateJob(ctx, storetest.NewJob("alpha", "job-1", created)); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	// Anything well under the hour-long poll interval proves the wake-up;
	// the generous bound keeps a loaded machine from failing the test.
	eventually(t, 30*time.Second, "replica A did not start the job created through replica B", func() bool {
		byJob, _ := log.snapshot()
		return len(byJob["job-1"]) == 1
	})
	byJob, _ := log.snapshot()
	t.Logf("started %v after it was created", byJob["job-1"][0].start.Sub(created).Round(time.Millisecond))
}

// waitListeners waits until n connections to the database at dbURL listen
// for job notifications.
func waitListeners(t *testing.T, dbURL string, n int) {
	t.Helper()
	conn := connect(t, dbURL)
	eventually(t, 10*time.Second, fmt.Sprintf("%d listeners did not appear", n), func() bool {
		var got int
		err := conn.QueryRow(context.Background(),
			`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN docsapi_jobs'`).Scan(&got)
		return err == nil && got == n
	})
}

// must stops the test on an error.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A dashboard session signed out on one replica is refused by another
// replica on the same database, and by a replica started afterwards: the
// sign-out is in the database (see package sessiontest).
func TestReplicasRefuseASignedOutSession(t *testing.T) {
	db := newDatabase(t)
	sessiontest.SignOutLasts(t, func(t *testing.T) store.Store { return open(t, db) })
}
