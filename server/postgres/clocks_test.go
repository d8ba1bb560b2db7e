package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// These tests run replicas whose clocks disagree: each engine's Config.Now
// reads the machine's clock moved by an offset, as on a replica whose clock
// is wrong. Leases follow the database's clock, so the offsets must change
// nothing: a job runs once, and a dead replica's job is taken over when its
// lease ends.

// clocksApart is how far apart the replicas' clocks are: far longer than
// any lease of the tests.
const clocksApart = 5 * time.Minute

// clockAhead returns a clock that reads d ahead of the machine's.
func clockAhead(d time.Duration) func() time.Time {
	return func() time.Time { return time.Now().Add(d) }
}

// Two replicas whose clocks are five minutes apart share one database:
// while the first runs a job and renews its lease, the second, polling all
// along, never claims it, whichever of the two is ahead, and the lease
// ends at most LeaseFor after the database's clock; the job runs once, and
// completes once.
func TestReplicasWithClocksApartRunAJobOnce(t *testing.T) {
	for _, tc := range []struct {
		name          string
		first, second time.Duration // how far ahead each replica's clock is
	}{
		{"the replica ahead claims first", clocksApart, 0},
		{"the replica behind claims first", 0, clocksApart},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each case waits out leases on the database's clock, on a
			// database of its own: the two wait together.
			t.Parallel()
			testClocksApartRunAJobOnce(t, tc.first, tc.second)
		})
	}
}

func testClocksApartRunAJobOnce(t *testing.T, aheadA, aheadB time.Duration) {
	db := newDatabase(t)
	ctx := t.Context()
	log := newRunLog()
	prs := newPullRequests()
	sa := newReplicaStore(open(t, db))
	sb := newReplicaStore(open(t, db))
	must(t, sa.CreateProject(ctx, storetest.NewProject("alpha")))

	// A's run is held open until the test lets it finish. Its lease leaves
	// each heartbeat seconds to come back before the fence, on a busy
	// machine.
	const lease = 6 * time.Second
	started := make(chan struct{})
	finish := make(chan struct{})
	var once sync.Once
	agentA := &agent{owner: "replica-a", log: log, work: func(ctx context.Context, _ engine.Task) error {
		once.Do(func() { close(started) })
		select {
		case <-finish:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}}
	startEngine(t, engine.Config{Store: sa, Owner: "replica-a", Parts: partsOf(agentA, prs),
		Concurrency: 1, LeaseFor: lease, PollInterval: 50 * time.Millisecond, Now: clockAhead(aheadA)})
	nj := storetest.NewJob("alpha", "job-1", clockAhead(aheadA)())
	if _, _, err := sa.CreateJob(ctx, nj); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("replica A did not start the job")
	}

	agentB := &agent{owner: "replica-b", log: log, work: sleepFor(0)}
	startEngine(t, engine.Config{Store: sb, Owner: "replica-b", Parts: partsOf(agentB, prs),
		Concurrency: 1, LeaseFor: lease, PollInterval: 50 * time.Millisecond, Now: clockAhead(aheadB)})

	// A renews its lease (every third of it) more than three times: its
	// run outlasts the lease it claimed, and the lease of each renewal but
	// the last. B polls after each; after the last, B has polled a few
	// times more. Had B judged A's lease by its own clock, or A's
	// renewals not counted, B would have claimed the job by then.
	bRan := func() bool {
		byJob, _ := log.snapshot()
		for _, r := range byJob["job-1"] {
			if r.owner == "replica-b" {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(2 * time.Minute)
	for renewals, polls := int64(0), int64(-1); ; time.Sleep(10 * time.Millisecond) {
		if bRan() {
			t.Fatalf("replica B started job-1 while replica A was running it (A had renewed its lease %d times)", sa.extends.Load())
		}
		if polls < 0 && sa.extends.Load() > 3 {
			renewals, polls = sa.extends.Load(), sb.claims.Load()
		}
		if polls >= 0 && sb.claims.Load() >= polls+5 {
			t.Logf("A renewed its lease %d times, B polled %d times since the last counted", renewals, sb.claims.Load()-polls)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 2m: A renewed its lease %d times and B polled %d times; want more than 3 renewals, then 5 polls",
				sa.extends.Load(), sb.claims.Load())
		}
	}
	leased, err := sb.Job(ctx, "alpha", "job-1")
	if err != nil || leased.LeaseOwner != "replica-a" || leased.Attempts != 1 {
		t.Fatalf("while A runs: job leased to %q with %d attempts (error %v); want replica-a and 1", leased.LeaseOwner, leased.Attempts, err)
	}
	// The lease A renewed ends LeaseFor at most after the database's
	// clock, whatever A's clock says: were A to die now, B would take the
	// job over within LeaseFor, not once its own clock caught up with A's.
	dbNow, err := sb.LeaseNow(ctx)
	must(t, err)
	if latest := dbNow.Add(lease); leased.LeaseExpiresAt.After(latest) {
		t.Errorf("A's lease ends at %v, %v after the database's clock (%v); want at most LeaseFor (%v)",
			leased.LeaseExpiresAt, leased.LeaseExpiresAt.Sub(dbNow), dbNow, lease)
	}

	close(finish)
	var final store.Job
	eventually(t, 30*time.Second, "replica A did not complete the job", func() bool {
		j, err := sa.Job(ctx, "alpha", "job-1")
		final = j
		// The call is counted once FinishJob returns, after the commit
		// that shows the job completed.
		fs, _ := sa.finished()
		return err == nil && j.Status == store.JobStatusCompleted && len(fs["job-1"]) > 0
	})
	byJob, overlap := log.snapshot()
	for _, o := range overlap {
		t.Error(o)
	}
	if runs := byJob["job-1"]; len(runs) != 1 || runs[0].owner != "replica-a" {
		t.Errorf("runs = %+v, want one, on replica-a", runs)
	}
	checkNoOverlap(t, byJob)
	if fs, _ := sa.finished(); len(fs["job-1"]) != 1 || fs["job-1"][0].Outcome != store.Completed {
		t.Errorf("replica A's FinishJob calls: %+v, want one completed", fs["job-1"])
	}
	if _, calls := sb.finished(); calls != 0 {
		t.Errorf("replica B made %d FinishJob calls, want none", calls)
	}
	if calls, url := prs.of(nj.Branch); prs.opened() != 1 || calls != 1 || final.PRLink != url || final.Attempts != 1 {
		t.Errorf("%d pull requests opened, %d calls for the branch, PRLink %q (PR %q), %d attempts; want 1, 1, linked, 1",
			prs.opened(), calls, final.PRLink, url, final.Attempts)
	}
}

// A replica that dies mid-job is taken over once its lease ends by the
// database's clock, whichever of the two replicas' clocks is ahead: not
// before (the replica ahead must not cut the lease short) and not minutes
// after (the replica behind must not wait for its clock to catch up).
func TestReplicaWithClockApartKilledMidJobIsTakenOver(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b time.Duration // how far ahead each replica's clock is
	}{
		{"the dead replica was ahead", clocksApart, 0},
		{"the dead replica was behind", 0, clocksApart},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testKilledMidJobIsTakenOver(t, tc.a, tc.b)
		})
	}
}
