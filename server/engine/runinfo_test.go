package engine

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// OnRunEnd hears of every run, whichever way it ended, with its attempt and
// how long it took on the engine's clock.
func TestOnRunEndTellsEachOutcome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu    sync.Mutex
			ended []RunInfo
			tries = map[string]int{}
		)
		w := newWorld(t, func(ctx context.Context, _ int, task Task) error {
			mu.Lock()
			tries[task.JobID]++
			try := tries[task.JobID]
			mu.Unlock()
			switch task.JobID {
			case "retried":
				if err := workFor(5*time.Second)(ctx, 0, task); err != nil {
					return err
				}
				if try == 1 {
					return errTransient
				}
				return nil
			case "refused":
				return Permanent(errors.New("the agent refused"))
			}
			return blockUntilDone(ctx, 0, task)
		})
		cfg := w.config("engine-a")
		cfg.OnRunEnd = func(r RunInfo) {
			mu.Lock()
			ended = append(ended, r)
			mu.Unlock()
		}
		e := w.start(cfg)
		runs := func() int {
			mu.Lock()
			defer mu.Unlock()
			return len(ended)
		}

		w.createJob(w.store, "retried", "Fails once, then works")
		e.JobQueued()
		w.waitDone("retried", time.Minute)
		w.createJob(w.store, "refused", "Fails for good")
		e.JobQueued()
		w.waitDone("refused", time.Minute)

		w.createJob(w.store, "archived", "Archived while it runs")
		e.JobQueued()
		waitFor(t, "the run to start", time.Minute, func() bool { return w.agent.started(4) })
		time.Sleep(2 * time.Second)
		if _, err := w.store.ArchiveJob(t.Context(), testProject, "archived", time.Now()); err != nil {
			t.Fatal(err)
		}
		e.JobArchived("archived")
		waitFor(t, "the archived run to end", time.Minute, func() bool { return runs() == 4 })

		w.createJob(w.store, "released", "Running at shutdown")
		e.JobQueued()
		waitFor(t, "the run to start", time.Minute, func() bool { return w.agent.started(5) })
		time.Sleep(3 * time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // no grace: the run is handed back at once
		_ = e.Shutdown(ctx)

		want := []RunInfo{
			{JobID: "retried", ProjectID: testProject, Attempt: 1, Outcome: RunRetried, Duration: 5 * time.Second},
			{JobID: "retried", ProjectID: testProject, Attempt: 2, Outcome: RunCompleted, Duration: 5 * time.Second},
			{JobID: "refused", ProjectID: testProject, Attempt: 1, Outcome: RunFailed, Duration: 0},
			{JobID: "archived", ProjectID: testProject, Attempt: 1, Outcome: RunAbandoned, Duration: 2 * time.Second},
			{JobID: "released", ProjectID: testProject, Attempt: 1, Outcome: RunReleased, Duration: 3 * time.Second},
		}
		mu.Lock()
		defer mu.Unlock()
		if d := cmp.Diff(want, ended); d != "" {
			t.Errorf("OnRunEnd calls (-want +got):\n%s", d)
		}
	})
}
