package storetest

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// workers is how many goroutines hit a store at once: more than the cores
// of a small machine, so that calls really interleave.
const workers = 8

// together runs f(0) .. f(workers-1) in goroutines released at the same
// moment, and waits for all of them.
func together(f func(w int)) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			<-start
			f(w)
		})
	}
	close(start)
	wg.Wait()
}

func testConcurrency(t *testing.T, open opener) {
	runAll(t, open, []subtest{
		{"ConcurrentClaimsLeaseEachJobOnce", func(t *testing.T, s store.Store) {
			const jobs = 40
			mustProject(t, s, "p1")
			ids := make([]string, jobs)
			for i := range ids {
				ids[i] = fmt.Sprintf("job-%02d", i)
				mustCreateJob(t, s, NewJob("p1", ids[i], At(time.Duration(i)*time.Second)))
			}
			now := At(time.Hour)
			type result struct {
				claimed  []string
				errs     []error
				unleased []string // jobs seen unleased after an ErrNoJob
			}
			results := make([]result, workers)
			var inFlight atomic.Int32 // claims under way
			together(func(w int) {
				r := &results[w]
				owner := fmt.Sprintf("worker-%d", w)
				ctx := t.Context()
				for {
					inFlight.Add(1)
					j, err := s.ClaimJob(ctx, store.Claim{Owner: owner, Now: now, LeaseFor: time.Hour, MaxAttempts: 3})
					inFlight.Add(-1)
					if errors.Is(err, store.ErrNoJob) {
						// A claim may pass over jobs that other claims
						// have locked but not yet committed (PostgreSQL's
						// SKIP LOCKED does), so ErrNoJob may come while
						// those are under way. Once no claim is under
						// way, and since no lease ends while the workers
						// run, every job must be leased, or the ErrNoJob
						// came too early. (Every worker stops at its
						// first ErrNoJob, so jobs a backend wrongly hides
						// stay unleased to the end.)
						for deadline := time.Now().Add(10 * time.Second); inFlight.Load() > 0 && time.Now().Before(deadline); {
							runtime.Gosched()
						}
						for _, id := range ids {
							j, err := s.Job(ctx, "p1", id)
							if err != nil {
								r.errs = append(r.errs, err)
							} else if j.LeaseOwner == "" {
								r.unleased = append(r.unleased, id)
							}
						}
						return
					}
					if err != nil {
						r.errs = append(r.errs, err)
						return
					}
					if j.LeaseOwner != owner || j.Attempts != 1 {
						r.errs = append(r.errs, fmt.Errorf("ClaimJob by %s: job %s leased to %q with %d attempts, want %s and 1",
							owner, j.ID, j.LeaseOwner, j.Attempts, owner))
					}
					r.claimed = append(r.claimed, j.ID)
				}
			})
			owners := map[string]string{}
			for w, r := range results {
				owner := fmt.Sprintf("worker-%d", w)
				for _, err := range r.errs {
					t.Errorf("%s: %v", owner, err)
				}
				if len(r.unleased) > 0 {
					t.Errorf("%s: got ErrNoJob while %v were not leased", owner, r.unleased)
				}
				for _, id := range r.claimed {
					if prev, dup := owners[id]; dup {
						t.Errorf("job %s leased twice: to %s and to %s", id, prev, owner)
					}
					owners[id] = owner
				}
			}
			if len(owners) != jobs {
				t.Errorf("%d distinct jobs leased, want %d", len(owners), jobs)
			}
			// Each lease is real: its owner, and only its owner, can
			// finish the job.
			for id, owner := range owners {
				j, err := s.FinishJob(t.Context(), store.Finish{JobID: id, Owner: owner, At: now.Add(time.Minute), Outcome: store.Completed, Handled: 1})
				if err != nil {
					t.Errorf("FinishJob %s by %s: %v", id, owner, err)
				} else if j.Attempts != 1 {
					t.Errorf("FinishJob %s: Attempts = %d, want 1", id, j.Attempts)
				}
			}
			wantNoJob(t, s, "after finishing every job", now.Add(24*time.Hour))
		}},
		{"ConcurrentAddViewsSumExactly", func(t *testing.T, s store.Store) {
			const batches = 25
			mustProject(t, s, "p1")
			errs := make([]error, workers)
			together(func(w int) {
				a := store.ViewCount{ProjectID: "p1", Path: "/a", Hour: Hour(0), Human: 1, AI: 2, Bot: 1}
				b := store.ViewCount{ProjectID: "p1", Path: "/b", Hour: Hour(0), Human: 4}
				// Half the workers touch the rows in the other order: a
				// backend that locks rows in batch order can deadlock.
				batch := []store.ViewCount{a, b}
				if w%2 == 1 {
					batch = []store.ViewCount{b, a}
				}
				for range batches {
					if err := s.AddViews(t.Context(), batch); err != nil {
						errs[w] = err
						return
					}
				}
			})
			for w, err := range errs {
				if err != nil {
					t.Errorf("worker %d: AddViews: %v", w, err)
				}
			}
			n := int64(workers * batches)
			wantResult(t, "QueryViews", store.ViewsResult{
				Totals: store.Counts{Human: 5 * n, AI: 2 * n},
				Rows:   []store.PathCounts{row("/b", 4*n, 0), row("/a", n, 2*n)},
			}, mustQuery(t, s, all("p1")))
		}},
		{"ConcurrentCreateReplaysMakeOneJob", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			type result struct {
				job      store.Job
				replayed bool
				err      error
			}
			results := make([]result, workers)
			together(func(w int) {
				r := &results[w]
				r.job, r.replayed, r.err = s.CreateJob(t.Context(),
					keyed(NewJob("p1", fmt.Sprintf("job-%d", w), At(time.Duration(w)*time.Second)), "k", "req"))
			})
			fresh := 0
			var winner string
			for w, r := range results {
				if r.err != nil {
					t.Errorf("worker %d: CreateJob: %v", w, r.err)
					continue
				}
				if !r.replayed {
					fresh++
					winner = r.job.ID
				}
			}
			if fresh != 1 {
				t.Fatalf("%d CreateJob calls created a job, want exactly 1", fresh)
			}
			for w, r := range results {
				if r.err == nil && r.job.ID != winner {
					t.Errorf("worker %d: CreateJob returned job %s, want %s", w, r.job.ID, winner)
				}
				if id := fmt.Sprintf("job-%d", w); id != winner {
					wantAbsent(t, s, "p1", id)
				}
			}
			wantJob := mustJob(t, s, "p1", winner)
			if len(wantJob.Prompts) != 1 {
				t.Errorf("Job %s has %d prompts, want 1", winner, len(wantJob.Prompts))
			}
		}},
		{"ConcurrentPromptReplaysAppendOnce", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			replays := make([]bool, workers)
			errs := make([]error, workers)
			together(func(w int) {
				_, replays[w], errs[w] = s.AddPrompt(t.Context(),
					keyedPrompt("p1", "j1", "more", At(time.Duration(w+1)*time.Second), "k", "req"))
			})
			fresh := 0
			for w := range workers {
				if errs[w] != nil {
					t.Errorf("worker %d: AddPrompt: %v", w, errs[w])
				} else if !replays[w] {
					fresh++
				}
			}
			if fresh != 1 {
				t.Errorf("%d AddPrompt calls appended, want exactly 1", fresh)
			}
			if j := mustJob(t, s, "p1", "j1"); len(j.Prompts) != 2 {
				t.Errorf("Job has %d prompts, want 2", len(j.Prompts))
			}
		}},
	})
}
