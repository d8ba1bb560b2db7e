package engine

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// notifyingStore adds store.JobNotifier to the test store: the test sends
// the notifications another process's writes would cause.
type notifyingStore struct {
	*spyStore
	ch chan struct{}
}

func (n *notifyingStore) JobNotifications(ctx context.Context) (<-chan struct{}, error) {
	out := make(chan struct{})
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				return
			case <-n.ch:
				out <- struct{}{}
			}
		}
	}()
	return out, nil
}

// A store that announces jobs wakes an idle engine at once, though its poll
// is an hour away; and the listener stops with the engine.
func TestJobNotificationsWakeTheEngine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, succeed)
		ns := &notifyingStore{spyStore: w.store, ch: make(chan struct{})}
		cfg := w.config("engine-a")
		cfg.Store = ns
		cfg.PollInterval = time.Hour
		e := w.start(cfg)
		synctest.Wait() // the first poll found nothing; the engine sleeps

		// Another process creates a job: it is not seen until notified.
		w.createJob(w.openStore(), "job-1", "Document the v2 API")
		time.Sleep(time.Minute)
		synctest.Wait()
		if j := w.job("job-1"); j.Attempts != 0 {
			t.Fatalf("the job was claimed before any notification: %+v", j)
		}
		ns.ch <- struct{}{}
		if j := w.waitDone("job-1", time.Minute); j.Status != store.JobStatusCompleted {
			t.Fatalf("after the notification: %+v", j)
		}

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := e.Shutdown(ctx); err != nil {
			t.Fatalf("Shutdown with a listener: %v", err)
		}
	})
}
