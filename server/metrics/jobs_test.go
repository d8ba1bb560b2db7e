package metrics_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/docsapi/docsapi-go/server/metrics"
	"github.com/docsapi/docsapi-go/server/store"
)

// hangingCounter hangs on its first call until release is closed, whatever
// its context says, as a database that stopped answering might; later calls
// answer at once.
type hangingCounter struct {
	release chan struct{}
	calls   atomic.Int32
}

func (c *hangingCounter) JobCounts(context.Context, time.Time) (store.JobCounts, error) {
	if c.calls.Add(1) == 1 {
		<-c.release
	}
	return store.JobCounts{Active: 3, Ready: 2, Completed: 5}, nil
}

// A store that hangs cannot hang the scrape: past the timeout it answers
// without the job counts, and while the hung read has not returned, no
// other is started.
func TestHangingStoreDoesNotHangTheScrape(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &hangingCounter{release: make(chan struct{})}
		m := newMetrics(t, metrics.Config{Jobs: c, JobsTimeout: 5 * time.Second})
		h := m.Handler()
		start := time.Now()
		got := scrape(t, h)
		if took := time.Since(start); took != 5*time.Second {
			t.Errorf("the scrape took %s, want the timeout, 5s", took)
		}
		want(t, got, "docsapi_jobs_read_ok", 0)
		if s := series(got, "docsapi_jobs"); len(s) != 0 {
			t.Errorf("job counts exported without a read: %v", s)
		}

		// The read still hangs: the next scrape does not wait for it, nor
		// start another.
		start = time.Now()
		want(t, scrape(t, h), "docsapi_jobs_read_ok", 0)
		if took := time.Since(start); took != 0 {
			t.Errorf("a scrape during the hung read took %s, want no wait", took)
		}
		if n := c.calls.Load(); n != 1 {
			t.Errorf("JobCounts called %d times while the first call hung, want 1", n)
		}

		close(c.release)
		synctest.Wait() // the hung read returns
		got = scrape(t, h)
		want(t, got, "docsapi_jobs_read_ok", 1)
		want(t, got, `docsapi_jobs{status="active"}`, 3)
		want(t, got, `docsapi_jobs{status="completed"}`, 5)
		want(t, got, "docsapi_jobs_queued", 2)
	})
}

type failingCounter struct{}

func (failingCounter) JobCounts(context.Context, time.Time) (store.JobCounts, error) {
	return store.JobCounts{}, errors.New("connection refused")
}

func TestFailingStoreLeavesTheJobCountsOut(t *testing.T) {
	m := newMetrics(t, metrics.Config{Jobs: failingCounter{}})
	got := scrape(t, m.Handler())
	want(t, got, "docsapi_jobs_read_ok", 0)
	if s := series(got, "docsapi_jobs_queued"); len(s) != 0 {
		t.Errorf("the queue's depth exported without a read: %v", s)
	}
}

// The queue's depth is read at Config.Now.
type nowCounter struct{ at chan time.Time }

func (c nowCounter) JobCounts(_ context.Context, now time.Time) (store.JobCounts, error) {
	c.at <- now
	return store.JobCounts{}, nil
}

func TestJobCountsAreReadAtNow(t *testing.T) {
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	c := nowCounter{at: make(chan time.Time, 1)}
	m := newMetrics(t, metrics.Config{Jobs: c, Now: func() time.Time { return at }})
	scrape(t, m.Handler())
	if got := <-c.at; !got.Equal(at) {
		t.Errorf("JobCounts asked at %s, want %s", got, at)
	}
}
