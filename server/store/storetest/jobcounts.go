package storetest

import (
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// RunJobCounts runs the tests of store.JobCounter against a backend whose
// open returns a new, empty store that implements it. A backend that
// counts its jobs calls it next to Run:
//
//	func TestConformanceJobCounts(t *testing.T) {
//		storetest.RunJobCounts(t, func(t *testing.T) store.Store { ... })
//	}
func RunJobCounts(t *testing.T, open func(t *testing.T) store.Store) {
	t.Helper()
	count := func(t *testing.T, s store.Store, now time.Time) store.JobCounts {
		t.Helper()
		c, ok := s.(store.JobCounter)
		if !ok {
			t.Fatalf("%T does not implement store.JobCounter", s)
		}
		n, err := c.JobCounts(t.Context(), now)
		must(t, "JobCounts", err)
		return n
	}
	runAll(t, open, []subtest{
		{"EmptyStoreCountsNothing", func(t *testing.T, s store.Store) {
			if got := count(t, s, At(0)); got != (store.JobCounts{}) {
				t.Errorf("JobCounts of an empty store = %+v, want zeros", got)
			}
		}},
		{"ByStatusAndReadyAtNow", func(t *testing.T, s store.Store) {
			lt := leaseTimesOf(t, s)
			mustProject(t, s, "p1")
			mustProject(t, s, "p2")
			for i, id := range []string{"running", "done", "broken", "waiting", "shelved"} {
				mustCreateJob(t, s, NewJob("p1", id, At(time.Duration(i)*time.Second)))
			}
			mustCreateJob(t, s, NewJob("p2", "other", At(10*time.Second)))
			now := At(time.Minute)
			running := mustClaim(t, s, "w1", now, "running")
			mustClaim(t, s, "w1", now, "done")
			mustFinish(t, s, store.Finish{JobID: "done", Owner: "w1", At: now, Outcome: store.Completed, Handled: 1})
			mustClaim(t, s, "w1", now, "broken")
			mustFinish(t, s, store.Finish{JobID: "broken", Owner: "w1", At: now, Outcome: store.Failed, FailureReason: "no"})
			_, err := s.ArchiveJob(t.Context(), "p1", "shelved", now)
			must(t, "ArchiveJob", err)

			want := store.JobCounts{Active: 3, Ready: 2, Completed: 1, Failed: 1, Archived: 1}
			if got := count(t, s, lt.whileHeld(running, now)); got != want {
				t.Errorf("JobCounts while a lease holds = %+v, want %+v", got, want)
			}
			if lt.toldTime() {
				// A lease holds up to and including its expiry instant,
				// as ClaimJob judges it; after it, the job is ready
				// again.
				if got := count(t, s, now.Add(leaseFor)); got != want {
					t.Errorf("JobCounts at the lease's expiry = %+v, want %+v", got, want)
				}
			}
			running = lt.endSoon(running)
			want.Ready = 3
			if got := count(t, s, lt.onceEnded(running, now.Add(leaseFor+time.Microsecond))); got != want {
				t.Errorf("JobCounts after the lease expired = %+v, want %+v", got, want)
			}
		}},
	})
}
