package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/docsapi/docsapi-go/server/pageviews"
)

// viewsCollector exports a recorder's counters, read at each scrape: they
// are kept by the recorder already, so keeping them twice would only let
// the copies drift apart.
type viewsCollector struct {
	rec atomic.Pointer[pageviews.Recorder] // nil until WatchPageViews

	recorded, flushed, pending, folded, overflowed, flushErrors *prometheus.Desc
}

func newViewsCollector() *viewsCollector {
	desc := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, nil, nil) }
	return &viewsCollector{
		recorded:    desc("docsapi_pageviews_recorded_total", "Page views counted by the recorder."),
		flushed:     desc("docsapi_pageviews_flushed_total", "Page views the recorder wrote to the store."),
		pending:     desc("docsapi_pageviews_pending", "Page views counted and not yet written to the store."),
		folded:      desc("docsapi_pageviews_folded_total", "Page views a failed flush moved to the overflow path, past the bound on pending counters."),
		overflowed:  desc("docsapi_pageviews_overflowed_total", "Page views counted under the overflow path when recorded, past the bound on live counters or path length."),
		flushErrors: desc("docsapi_pageviews_flush_errors_total", "Writes of page views to the store that failed (their counts were kept for the next flush)."),
	}
}

func (c *viewsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.recorded, c.flushed, c.pending, c.folded, c.overflowed, c.flushErrors} {
		ch <- d
	}
}

func (c *viewsCollector) Collect(ch chan<- prometheus.Metric) {
	rec := c.rec.Load()
	if rec == nil {
		return
	}
	st := rec.Stats()
	counter := func(d *prometheus.Desc, v int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v))
	}
	counter(c.recorded, st.Recorded)
	counter(c.flushed, st.Flushed)
	counter(c.folded, st.Folded)
	counter(c.overflowed, st.Overflowed)
	counter(c.flushErrors, st.FlushErrors)
	ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(st.Pending))
}
