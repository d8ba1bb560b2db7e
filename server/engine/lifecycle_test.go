package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

func TestShutdown(t *testing.T) {
	t.Run("a run that ends before the deadline is not lost", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t, workFor(2*time.Minute))
			e := w.start(w.config("engine-a"))
			w.createJob(w.store, "job-1", "Document the v2 API")
			e.JobQueued()
			waitFor(t, "the run to start", time.Minute, func() bool { return w.agent.started(1) })

			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			if err := e.Shutdown(ctx); err != nil {
				t.Errorf("Shutdown = %v, want nil: the run ended in time", err)
			}
			// Shutdown has returned, so the outcome must be stored already.
			j := w.job("job-1")
			if j.Status != store.JobStatusCompleted || j.PRLink == "" || j.LeaseOwner != "" {
				t.Errorf("job = status %q, PRLink %q, lease %q; want completed with a pull request, no lease", j.Status, j.PRLink, j.LeaseOwner)
			}
			if calls := w.agent.calls(); len(calls) != 1 || calls[0].Err != nil {
				t.Errorf("the agent ran %d times (first error %v); want once, uninterrupted", len(calls), firstErr(calls))
			}

			// A stopped engine claims nothing more.
			w.createJob(w.store, "job-2", "Too late")
			e.JobQueued()
			time.Sleep(10 * w.config("").PollInterval)
			synctest.Wait()
			if j := w.job("job-2"); j.LeaseOwner != "" || j.Attempts != 0 || len(w.agent.calls()) != 1 {
				t.Errorf("a job queued after Shutdown was claimed by %q (Attempts %d)", j.LeaseOwner, j.Attempts)
			}
		})
	})

	t.Run("a run past the deadline is released and resumed by the next engine", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t, workFor(10*time.Minute))
			e := w.start(w.config("engine-a"))
			w.createJob(w.store, "job-1", "Document the v2 API")
			e.JobQueued()
			waitFor(t, "the run to start", time.Minute, func() bool { return w.agent.started(1) })

			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := e.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Shutdown = %v, want context.DeadlineExceeded", err)
			}
			calls := w.agent.calls()
			if len(calls) != 1 || calls[0].End.IsZero() || !errors.Is(calls[0].Cause, errShutdown) {
				t.Fatalf("the agent ran %d times; want once, cancelled by the shutdown (cause %v)", len(calls), causeOf(calls))
			}
			j := w.job("job-1")
			if j.Status != store.JobStatusActive || j.LeaseOwner != "" || !j.LeaseExpiresAt.IsZero() || j.Attempts != 0 {
				t.Errorf("after Shutdown: status %q, lease %q until %v, Attempts %d; want active, released, Attempts given back",
					j.Status, j.LeaseOwner, j.LeaseExpiresAt, j.Attempts)
			}
			if rec := w.store.record(); rec.released != 1 || len(rec.finishes) != 0 {
				t.Errorf("%d releases, %d FinishJob calls; want one release and no outcome", rec.released, len(rec.finishes))
			}

			// The restarted process: a new engine with its own store, the
			// released job ready for it at once, without waiting for a lease.
			cfg := w.config("engine-a2")
			cfg.Store = w.openStore()
			cfg.PollInterval = time.Hour
			w.start(cfg)
			j = w.waitDone("job-1", 20*time.Minute)
			if j.Status != store.JobStatusCompleted || j.Attempts != 1 || j.PRLink == "" {
				t.Errorf("after the restart: status %q, Attempts %d, PRLink %q; want completed after 1 counted attempt", j.Status, j.Attempts, j.PRLink)
			}
			if calls := w.agent.calls(); len(calls) != 2 || !calls[1].Start.Equal(calls[0].End) {
				t.Errorf("the agent ran %d times; want a second run that started as soon as the new engine did", len(calls))
			}
		})
	})

	t.Run("Run shuts down when its context ends", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t, workFor(2*time.Minute))
			e, err := New(w.config("engine-a"))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() { errc <- e.Run(ctx, 5*time.Minute) }()
			w.createJob(w.store, "job-1", "Document the v2 API")
			e.JobQueued()
			waitFor(t, "the run to start", time.Minute, func() bool { return w.agent.started(1) })
			cancel()
			if err := <-errc; err != nil {
				t.Errorf("Run = %v, want nil: the run ended within the grace period", err)
			}
			if j := w.job("job-1"); j.Status != store.JobStatusCompleted {
				t.Errorf("job status %q, want completed", j.Status)
			}
		})
	})
}

func causeOf(calls []agentCall) error {
	if len(calls) == 0 {
		return nil
	}
	return calls[0].Cause
}

func TestArchiveStopsRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		// archive archives the running job, as the API handler or another
		// process does, and returns how long the run may take to stop.
		archive func(w *world, e *Engine) time.Duration
	}{
		{"JobArchived cancels the run at once", func(w *world, e *Engine) time.Duration {
			if _, err := w.store.ArchiveJob(w.t.Context(), testProject, "job-1", time.Now()); err != nil {
				w.t.Fatal(err)
			}
			e.JobArchived("job-1")
			return 0
		}},
		{"the heartbeat notices an archive made elsewhere", func(w *world, _ *Engine) time.Duration {
			other := w.openStore()
			if _, err := other.ArchiveJob(w.t.Context(), testProject, "job-1", time.Now()); err != nil {
				w.t.Fatal(err)
			}
			return w.config("").LeaseFor / 3
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := newWorld(t, blockUntilDone)
				cfg := w.config("engine-a")
				e := w.start(cfg)
				w.createJob(w.store, "job-1", "Document the v2 API")
				e.JobQueued()
				waitFor(t, "the run to start", time.Minute, func() bool { return w.agent.started(1) })

				archivedAt := time.Now()
				within := tc.archive(w, e)
				waitFor(t, "the run to stop", within, func() bool { return w.agent.ended(1) })
				calls := w.agent.calls()
				if !errors.Is(calls[0].Cause, errLeaseLost) {
					t.Errorf("the run's context ended with %v, want errLeaseLost", calls[0].Cause)
				}

				// Long after, nothing has been recorded nor run again.
				time.Sleep(3 * cfg.LeaseFor)
				synctest.Wait()
				j := w.job("job-1")
				if j.Status != store.JobStatusArchived || !j.ArchivedAt.Equal(archivedAt) || j.LeaseOwner != "" || j.PRLink != "" || j.Handled != 0 {
					t.Errorf("job = status %q archived at %v, lease %q, PRLink %q, Handled %d; want archived at %v, untouched since",
						j.Status, j.ArchivedAt, j.LeaseOwner, j.PRLink, j.Handled, archivedAt)
				}
				if rec := w.store.record(); len(rec.finishes) != 0 || rec.releases != 0 {
					t.Errorf("%d FinishJob and %d ReleaseJob calls, want none", len(rec.finishes), rec.releases)
				}
				if n := len(w.agent.calls()); n != 1 {
					t.Errorf("the agent ran %d times, want 1", n)
				}
				if _, _, closed := w.repos.snapshot(); closed != 1 {
					t.Errorf("workspaces closed = %d, want 1", closed)
				}

				// The worker is free again.
				w.agent.setScript(succeed)
				w.createJob(w.store, "job-2", "Next")
				e.JobQueued()
				if j := w.waitDone("job-2", time.Minute); j.Status != store.JobStatusCompleted {
					t.Errorf("the next job: status %q, want completed", j.Status)
				}
			})
		})
	}
}

func TestJobTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, blockUntilDone)
		cfg := w.config("engine-a")
		cfg.JobTimeout = time.Minute // longer than LeaseFor: the heartbeat must not be what stops it
		e := w.start(cfg)
		w.createJob(w.store, "job-1", "Rewrite everything")
		e.JobQueued()
		j := w.waitDone("job-1", 2*cfg.JobTimeout)

		time.Sleep(10 * cfg.RetryDelay)
		synctest.Wait()
		j2 := w.job("job-1")
		if j.Status != j2.Status || j.Attempts != j2.Attempts {
			t.Errorf("the job changed after it failed: %q/%d → %q/%d", j.Status, j.Attempts, j2.Status, j2.Attempts)
		}
		if j.Status != store.JobStatusFailed || j.FailureReason != "the run took longer than 1m0s" || j.Attempts != 1 {
			t.Errorf("job = status %q, reason %q, Attempts %d; want failed, %q, 1", j.Status, j.FailureReason, j.Attempts, "the run took longer than 1m0s")
		}
		calls := w.agent.calls()
		if len(calls) != 1 || !errors.Is(calls[0].Cause, errTimeout) {
			t.Errorf("the agent ran %d times (cause %v); want once, stopped by the timeout", len(calls), causeOf(calls))
		}
	})
}

func TestWakeUp(t *testing.T) {
	t.Run("JobQueued wakes an idle worker", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t, succeed)
			cfg := w.config("engine-a")
			cfg.PollInterval = time.Hour
			e := w.start(cfg)
			synctest.Wait() // the worker found nothing and sleeps
			start := time.Now()

			w.createJob(w.store, "job-1", "Queued without a word")
			synctest.Wait()
			if j := w.job("job-1"); j.LeaseOwner != "" || j.Attempts != 0 {
				t.Fatalf("a job was claimed with no wake-up and no poll (by %q)", j.LeaseOwner)
			}

			e.JobQueued()
			synctest.Wait() // no time passes: only the wake-up can have done it
			if j := w.job("job-1"); j.Status != store.JobStatusCompleted {
				t.Errorf("after JobQueued, job status %q, want completed without any time passing", j.Status)
			}
			if !time.Now().Equal(start) {
				t.Errorf("the clock moved by %v", time.Since(start))
			}
		})
	})

	t.Run("a job queued by another process is found by polling", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t, succeed)
			cfg := w.config("engine-a")
			cfg.PollInterval = time.Minute
			w.start(cfg)
			synctest.Wait()

			other := w.openStore()
			w.createJob(other, "job-1", "From another replica")
			time.Sleep(cfg.PollInterval / 2)
			synctest.Wait()
			if j := w.job("job-1"); j.LeaseOwner != "" || j.Attempts != 0 {
				t.Fatalf("the job was claimed by %q before the next poll", j.LeaseOwner)
			}
			if j := w.waitDone("job-1", cfg.PollInterval); j.Status != store.JobStatusCompleted {
				t.Errorf("job status %q, want completed at the next poll", j.Status)
			}
		})
	})
}

// runLog is an agent script that records which jobs run at the same moment.
type runLog struct {
	mu       sync.Mutex
	running  map[string]bool
	runs     map[string]int
	overlaps []string
	peak     int
}

func (l *runLog) agent(ctx context.Context, call int, task Task) error {
	l.mu.Lock()
	if l.running[task.JobID] {
		l.overlaps = append(l.overlaps, task.JobID)
	}
	l.running[task.JobID] = true
	l.runs[task.JobID]++
	l.peak = max(l.peak, len(l.running))
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.running, task.JobID)
		l.mu.Unlock()
	}()
	// Runs of different lengths, so that the workers fall out of step.
	return workFor(time.Duration(1+call%3)*time.Second)(ctx, call, task)
}

func TestConcurrency(t *testing.T) {
	const jobs = 20
	for _, tc := range []struct {
		name     string
		engines  int // each with its own store on the one file
		perEng   int
		wantPeak int
	}{
		{"one engine, 3 workers", 1, 3, 3},
		{"two processes, 2 workers each", 2, 2, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := &runLog{running: map[string]bool{}, runs: map[string]int{}}
				w := newWorld(t, l.agent)
				for i := range jobs {
					w.createJob(w.store, fmt.Sprintf("job-%02d", i), "prompt")
				}
				for i := range tc.engines {
					cfg := w.config(fmt.Sprintf("engine-%d", i))
					cfg.Concurrency = tc.perEng
					if i > 0 {
						cfg.Store = w.openStore()
					}
					w.start(cfg)
				}
				waitFor(t, "every job to end", 10*time.Minute, func() bool {
					for i := range jobs {
						if w.job(fmt.Sprintf("job-%02d", i)).Status == store.JobStatusActive {
							return false
						}
					}
					return true
				})

				for i := range jobs {
					id := fmt.Sprintf("job-%02d", i)
					if j := w.job(id); j.Status != store.JobStatusCompleted || j.Attempts != 1 {
						t.Errorf("%s: status %q, Attempts %d; want completed after 1 attempt", id, j.Status, j.Attempts)
					}
					if l.runs[id] != 1 {
						t.Errorf("%s ran %d times, want 1", id, l.runs[id])
					}
				}
				if len(l.overlaps) != 0 {
					t.Errorf("jobs run twice at once: %v", l.overlaps)
				}
				if l.peak != tc.wantPeak {
					t.Errorf("at most %d jobs ran at once, want %d", l.peak, tc.wantPeak)
				}
				if opened, _, _ := w.prs.snapshot(); opened != jobs {
					t.Errorf("pull requests opened = %d, want %d", opened, jobs)
				}
			})
		})
	}
}
