package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/docsapi/docsapi-go/server/store"
)

// jobsCollector reads the job counts from the store at each scrape. The
// read runs on a goroutine of its own, so that a store that ignores its
// context's end still cannot hold the scrape past the timeout; and only one
// runs at a time, so that such a store holds one goroutine, not one per
// scrape.
type jobsCollector struct {
	counter store.JobCounter
	timeout time.Duration
	now     func() time.Time
	log     *slog.Logger
	busy    chan struct{} // holds a token while a read runs

	jobs, queued, ok *prometheus.Desc
}

func newJobsCollector(counter store.JobCounter, timeout time.Duration, now func() time.Time, log *slog.Logger) *jobsCollector {
	return &jobsCollector{
		counter: counter, timeout: timeout, now: now, log: log, busy: make(chan struct{}, 1),
		jobs: prometheus.NewDesc("docsapi_jobs",
			"Jobs in the store, by status (active, completed, failed, archived).", []string{"status"}, nil),
		queued: prometheus.NewDesc("docsapi_jobs_queued",
			"Active jobs an engine could claim now, leased by none (or their lease expired): the depth of the queue.", nil, nil),
		ok: prometheus.NewDesc("docsapi_jobs_read_ok",
			"1 if this scrape read the job counts from the store, 0 if the store failed or took too long (the job metrics are then absent).", nil, nil),
	}
}

// errReadRunning is the error of a read asked for while the last one has
// not returned.
var errReadRunning = errors.New("the last read of the job counts has not returned yet")

func (c *jobsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.jobs
	ch <- c.queued
	ch <- c.ok
}

func (c *jobsCollector) Collect(ch chan<- prometheus.Metric) {
	n, err := c.read()
	if err != nil {
		c.log.Warn("metrics: the job counts are missing from this scrape", slog.Any("error", err))
		ch <- prometheus.MustNewConstMetric(c.ok, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.ok, prometheus.GaugeValue, 1)
	for _, s := range []struct {
		status store.JobStatus
		n      int64
	}{
		{store.JobStatusActive, n.Active},
		{store.JobStatusCompleted, n.Completed},
		{store.JobStatusFailed, n.Failed},
		{store.JobStatusArchived, n.Archived},
	} {
		ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(s.n), string(s.status))
	}
	ch <- prometheus.MustNewConstMetric(c.queued, prometheus.GaugeValue, float64(n.Ready))
}

// read returns the store's job counts, or an error once the timeout has
// passed.
func (c *jobsCollector) read() (store.JobCounts, error) {
	select {
	case c.busy <- struct{}{}:
	default:
		return store.JobCounts{}, errReadRunning
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	type result struct {
		n   store.JobCounts
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() { <-c.busy }()
		n, err := c.counter.JobCounts(ctx, c.now())
		done <- result{n, err}
	}()
	select {
	case r := <-done:
		return r.n, r.err
	case <-ctx.Done():
		return store.JobCounts{}, fmt.Errorf("the store did not count the jobs within %s", c.timeout)
	}
}
