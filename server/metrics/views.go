package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/docsapi/docsapi-go/server/pageviews"
)

// The source label of the page-view counters: the two ways a view comes
// in. In docsapi serve only the ingestion endpoint takes views (the
// recorder's middleware serves a program's own pages), so a total that
// left ingested views out would read as broken.
const (
	sourceMiddleware = "middleware"
	sourceIngest     = "ingest"
)

// viewsCollector exports the page-view counters: a recorder's, read at
// each scrape (they are kept by the recorder already, so keeping them
// twice would only let the copies drift apart), and the views the
// ingestion endpoint stored, told by ObserveIngestCommit.
type viewsCollector struct {
	rec      atomic.Pointer[pageviews.Recorder] // nil until WatchPageViews
	ingested atomic.Int64                       // views of successful ingestion commits

	recorded, flushed, pending, folded, overflowed, flushErrors *prometheus.Desc
}

func newViewsCollector() *viewsCollector {
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &viewsCollector{
		recorded: desc("docsapi_pageviews_recorded_total",
			"Page views counted, by source: middleware (the recorder's, counted in memory, then flushed) or ingest (the ingestion endpoint's, counted once stored).", "source"),
		flushed: desc("docsapi_pageviews_flushed_total",
			"Page views written to the store, by source: middleware (the recorder's flushes) or ingest (the ingestion endpoint's commits).", "source"),
		pending:     desc("docsapi_pageviews_pending", "Page views the recorder counted and has not yet written to the store."),
		folded:      desc("docsapi_pageviews_folded_total", "Page views a failed flush of the recorder moved to the overflow path, past the bound on pending counters."),
		overflowed:  desc("docsapi_pageviews_overflowed_total", "Page views the recorder counted under the overflow path when recorded, past the bound on live counters or path length."),
		flushErrors: desc("docsapi_pageviews_flush_errors_total", "Writes of the recorder's page views to the store that failed (their counts were kept for the next flush)."),
	}
}

func (c *viewsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.recorded, c.flushed, c.pending, c.folded, c.overflowed, c.flushErrors} {
		ch <- d
	}
}

func (c *viewsCollector) Collect(ch chan<- prometheus.Metric) {
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	// An ingested view is written when it is counted.
	ingested := c.ingested.Load()
	counter(c.recorded, ingested, sourceIngest)
	counter(c.flushed, ingested, sourceIngest)
	rec := c.rec.Load()
	if rec == nil {
		return
	}
	st := rec.Stats()
	counter(c.recorded, st.Recorded, sourceMiddleware)
	counter(c.flushed, st.Flushed, sourceMiddleware)
	counter(c.folded, st.Folded)
	counter(c.overflowed, st.Overflowed)
	counter(c.flushErrors, st.FlushErrors)
	ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(st.Pending))
}
