package engine

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// stallAfter is a pull-request host whose Ensure does its work and then
// hangs until its run is cancelled: the engine dies after the pull request
// exists but before it records the outcome, the worst moment for
// exactly-once.
type stallAfter struct {
	PullRequests
	entered chan struct{}
}

func (s stallAfter) Ensure(ctx context.Context, spec PullRequestSpec) (string, error) {
	url, err := s.PullRequests.Ensure(ctx, spec)
	if err != nil {
		return url, err
	}
	close(s.entered)
	<-ctx.Done()
	return "", ctx.Err()
}

// TestCrashTakeover models two server processes sharing one database: each
// engine has its own Store on the same file. Engine A claims the job and
// dies holding the lease; engine B takes the job over once the lease
// expires and completes it. The pull-request host is shared, as the real
// one would be.
func TestCrashTakeover(t *testing.T) {
	for _, tc := range []struct {
		name string
		// dying returns A's parts and a channel closed when A is at the
		// point where it dies.
		dying func(w *world) (Parts, <-chan struct{})
		// ensures is the number of Ensure calls in all.
		ensures int
	}{
		{
			name: "while the agent works",
			dying: func(w *world) (Parts, <-chan struct{}) {
				started := make(chan struct{})
				agent := newAgent(func(ctx context.Context, _ int, task Task) error {
					close(started)
					return blockUntilDone(ctx, 0, task)
				})
				return Parts{Repositories: w.repos, Agent: agent, PullRequests: w.prs}, started
			},
			ensures: 1,
		},
		{
			name: "after opening the pull request",
			dying: func(w *world) (Parts, <-chan struct{}) {
				entered := make(chan struct{})
				return Parts{Repositories: w.repos, Agent: newAgent(succeed), PullRequests: stallAfter{w.prs, entered}}, entered
			},
			ensures: 2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := newWorld(t, succeed) // w.agent is B's
				storeA, storeB := w.openStore(), w.openStore()
				partsA, dying := tc.dying(w)

				cfgA := w.config("engine-a")
				cfgA.Store = storeA
				cfgA.Parts = func(context.Context, store.Project) (Parts, error) { return partsA, nil }
				a := w.start(cfgA)
				w.createJob(storeA, "job-1", "Document the v2 API")
				a.JobQueued()
				waitFor(t, "engine A to reach the point where it dies", time.Minute, func() bool {
					select {
					case <-dying:
						return true
					default:
						return false
					}
				})

				// A dies: with its database gone, neither its release nor any
				// outcome nor a heartbeat can reach the store, as after a
				// crash; cancelling its run stops what still runs in-process.
				if err := storeA.Store.Close(); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				if err := a.Shutdown(ctx); !errors.Is(err, context.Canceled) {
					t.Errorf("A's Shutdown = %v, want context.Canceled (a run had to be cancelled)", err)
				}
				recA := storeA.record()
				if len(recA.finished) != 0 || recA.released != 0 || recA.releases != 1 || !errors.Is(recA.releaseErr[0], store.ErrClosed) {
					t.Fatalf("engine A: %d outcomes stored, %d of %d releases done (errors %v); want no outcome and one failed release",
						len(recA.finished), recA.released, recA.releases, recA.releaseErr)
				}
				abandoned, err := storeB.Job(t.Context(), testProject, "job-1")
				if err != nil {
					t.Fatal(err)
				}
				if abandoned.Status != store.JobStatusActive || abandoned.LeaseOwner != "engine-a" || abandoned.Attempts != 1 || !abandoned.LeaseExpiresAt.After(time.Now()) {
					t.Fatalf("after A died: status %q, lease %q until %v (now %v), Attempts %d; want an active job still leased to engine-a, Attempts 1",
						abandoned.Status, abandoned.LeaseOwner, abandoned.LeaseExpiresAt, time.Now(), abandoned.Attempts)
				}

				cfgB := w.config("engine-b")
				cfgB.Store = storeB
				w.start(cfgB)
				synctest.Wait()
				if n := len(w.agent.calls()); n != 0 {
					t.Fatalf("engine B ran the job %d times while A's lease held", n)
				}

				var done store.Job
				waitFor(t, "engine B to complete the job", 2*cfgB.LeaseFor, func() bool {
					done, err = storeB.Job(t.Context(), testProject, "job-1")
					return err == nil && done.Status != store.JobStatusActive
				})

				opened, specs, urls := w.prs.snapshot()
				if opened != 1 || len(specs) != tc.ensures {
					t.Errorf("pull requests opened = %d, Ensure calls = %d; want 1 and %d", opened, len(specs), tc.ensures)
				}
				if done.Status != store.JobStatusCompleted || done.Attempts != 2 || done.PRLink == "" || done.PRLink != urls[branchOf("job-1")] || done.LeaseOwner != "" {
					t.Errorf("job = status %q, Attempts %d, PRLink %q, lease %q; want completed, 2, %q, none",
						done.Status, done.Attempts, done.PRLink, done.LeaseOwner, urls[branchOf("job-1")])
				}
				calls := w.agent.calls()
				if len(calls) != 1 {
					t.Fatalf("engine B's agent ran %d times, want 1", len(calls))
				}
				if calls[0].Start.Before(abandoned.LeaseExpiresAt) {
					t.Errorf("engine B started the job at %v, before A's lease expired at %v", calls[0].Start, abandoned.LeaseExpiresAt)
				}
				recB := storeB.record()
				if len(recB.finishes) != 1 || len(recB.finished) != 1 || recB.finished[0].Status != store.JobStatusCompleted || recB.releases != 0 {
					t.Errorf("engine B: %d FinishJob calls storing %v, %d releases; want one completion and no release",
						len(recB.finishes), summarize(recB.finished), recB.releases)
				}
				if recA := storeA.record(); len(recA.finishes) != 0 {
					t.Errorf("engine A called FinishJob %d times, want never", len(recA.finishes))
				}
			})
		})
	}
}

// TestHeartbeatKeepsLongRun shows the other side of takeover: a run that
// lasts many lease periods keeps its job, because its heartbeats extend the
// lease, and a second engine polling the same database never takes it.
func TestHeartbeatKeepsLongRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, nil)
		cfg := w.config("engine-a")
		w.agent.script = workFor(10 * cfg.LeaseFor)
		a := w.start(cfg)

		cfgB := w.config("engine-b")
		cfgB.Store = w.openStore()
		w.start(cfgB)

		w.createJob(w.store, "job-1", "Rewrite every page")
		a.JobQueued()
		j := w.waitDone("job-1", 20*cfg.LeaseFor)

		if j.Status != store.JobStatusCompleted || j.Attempts != 1 {
			t.Errorf("job = status %q, Attempts %d, reason %q; want completed after 1 attempt", j.Status, j.Attempts, j.FailureReason)
		}
		calls := w.agent.calls()
		if len(calls) != 1 || calls[0].Err != nil {
			t.Errorf("the agent ran %d times (first error %v); want once, uninterrupted", len(calls), firstErr(calls))
		}
	})
}

func firstErr(calls []agentCall) error {
	if len(calls) == 0 {
		return nil
	}
	return calls[0].Err
}

// TestHeartbeatFailuresStopRun: when the heartbeat cannot reach the
// database, the run must stop before its lease can expire, since from then
// on another engine may claim the job; the job is then taken over once and
// completed once.
func TestHeartbeatFailuresStopRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, func(ctx context.Context, call int, task Task) error {
			if call == 1 {
				return blockUntilDone(ctx, call, task)
			}
			return nil
		})
		cfg := w.config("engine-a")
		e := w.start(cfg)
		w.createJob(w.store, "job-1", "Document the v2 API")
		e.JobQueued()
		waitFor(t, "the run to start", time.Minute, func() bool { return w.agent.started(1) })
		claimed := w.job("job-1")

		w.store.failExtend(errors.New("disk I/O error"))
		waitFor(t, "the run to stop", cfg.LeaseFor, func() bool { return w.agent.ended(1) })
		w.store.failExtend(nil)
		first := w.agent.calls()[0]
		if !errors.Is(first.Cause, errLeaseLost) || !first.End.Before(claimed.LeaseExpiresAt) {
			t.Errorf("the run stopped at %v with cause %v; want errLeaseLost before the lease expires at %v",
				first.End, first.Cause, claimed.LeaseExpiresAt)
		}
		if rec := w.store.record(); len(rec.finishes) != 0 || rec.releases != 0 {
			t.Errorf("the stopped run made %d FinishJob and %d ReleaseJob calls, want none: the job is no longer surely its own",
				len(rec.finishes), rec.releases)
		}

		j := w.waitDone("job-1", 2*cfg.LeaseFor)
		calls := w.agent.calls()
		if j.Status != store.JobStatusCompleted || j.Attempts != 2 || len(calls) != 2 {
			t.Fatalf("job = status %q, Attempts %d, %d runs; want completed by a second run", j.Status, j.Attempts, len(calls))
		}
		if calls[1].Start.Before(claimed.LeaseExpiresAt) {
			t.Errorf("the second run started at %v, before the first one's lease expired at %v", calls[1].Start, claimed.LeaseExpiresAt)
		}
		if opened, _, _ := w.prs.snapshot(); opened != 1 {
			t.Errorf("pull requests opened = %d, want 1", opened)
		}
		if rec := w.store.record(); len(rec.finished) != 1 {
			t.Errorf("%d outcomes stored, want 1", len(rec.finished))
		}
	})
}
