// Package metrics exports what the API server, the job engine and the
// page-view recorder measure, in the Prometheus format.
//
// It is the only package of the module that imports the Prometheus client.
// The packages it reads expose small hooks instead (server.Config.OnRequest,
// OnIngestCommit, OnSiteLimit, OnPublicRequest and OnSignIn,
// engine.Config.OnRunEnd, pageviews.Config.OnFlush,
// connlimit.Config.OnRefuse, pageviews.Recorder.Stats and store.JobCounter),
// so a program that embeds them without metrics compiles none of it:
//
//	m, err := metrics.New(metrics.Config{Jobs: st}) // st: a store.JobCounter
//	eng, err := engine.New(engine.Config{..., OnRunEnd: m.ObserveRun})
//	rec, err := pageviews.New(pageviews.Config{..., OnFlush: m.ObserveFlush})
//	m.WatchPageViews(rec)
//	srv, err := server.New(server.Config{..., OnRequest: m.ObserveRequest, OnIngestCommit: m.ObserveIngestCommit,
//		OnSiteLimit: m.ObserveSiteLimit, OnPublicRequest: m.ObservePublicRequest, OnSignIn: m.ObserveSignIn})
//	lim, err := connlimit.New(connlimit.Config{..., OnRefuse: m.ObserveRefusal})
//	go http.ListenAndServe("127.0.0.1:9464", m.Handler()) // not the API's listener
//
// Every label takes a bounded set of values: a request is labelled with its
// route's pattern, never its path, so clients that invent paths cannot
// make series without end.
package metrics

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/connlimit"
	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/pageviews"
	"github.com/docsapi/docsapi-go/server/store"
)

// DefaultJobsTimeout is the default of Config.JobsTimeout: well under the
// usual scrape timeout (10 s), so that a scrape answers, without the job
// counts, before Prometheus gives up on it.
const DefaultJobsTimeout = 5 * time.Second

// UnmatchedRoute is the route label of requests no route answered (a 404
// or 405 for a path or method the API does not have).
const UnmatchedRoute = "unmatched"

// maxScrapes bounds the scrapes served at once; more are answered 503. One
// scraper needs one; the bound keeps a flood of scrapes from piling up.
const maxScrapes = 4

// Config configures Metrics. Every field is optional.
type Config struct {
	// Jobs, if set, is read at every scrape for the jobs by status and
	// the depth of the queue: the store (both backends implement
	// store.JobCounter). Without it, those metrics are absent.
	Jobs store.JobCounter
	// JobsTimeout bounds that read: past it, or while an earlier read is
	// still running, the scrape answers without the job counts, and
	// docsapi_jobs_read_ok is 0. DefaultJobsTimeout by default.
	JobsTimeout time.Duration
	// Logger receives the failures of that read. The default discards
	// them.
	Logger *slog.Logger
	// Now tells the time the queue's depth is read at. Default time.Now.
	Now func() time.Time
	// Version is docsapi_build_info's version label (docsapi serve gives
	// its own). Empty, it is the server module's version as the binary
	// records it, or "unknown".
	Version string
}

// Metrics holds the measurements and serves them. Its Observe methods are
// the hooks of the server, the engine and the recorder. It is a
// prometheus.Collector, so a program with a registry of its own may
// register it there instead of serving Handler. It is safe for concurrent
// use.
type Metrics struct {
	requests *prometheus.CounterVec   // route, code
	latency  *prometheus.HistogramVec // route
	runs     *prometheus.HistogramVec // outcome
	flushes  *prometheus.HistogramVec // result
	ingested *prometheus.CounterVec   // result
	commits  *prometheus.HistogramVec // result
	site     *prometheus.CounterVec   // kind, reason
	refusals *prometheus.CounterVec   // reason
	public   *prometheus.CounterVec   // endpoint, outcome
	signIns  *prometheus.CounterVec   // result
	views    *viewsCollector
	parts    []prometheus.Collector // all of the above, and the job counts with Config.Jobs
	registry *prometheus.Registry
	errorLog *slog.Logger
}

// New checks cfg and returns Metrics.
func New(cfg Config) (*Metrics, error) {
	if cfg.JobsTimeout < 0 {
		return nil, fmt.Errorf("metrics: Config.JobsTimeout must not be negative, got %s", cfg.JobsTimeout)
	}
	if cfg.JobsTimeout == 0 {
		cfg.JobsTimeout = DefaultJobsTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	m := &Metrics{
		requests: counter("docsapi_http_requests_total",
			"API requests answered, by route pattern and status code.", "route", "code"),
		latency: histogram("docsapi_http_request_duration_seconds",
			"How long API requests took to answer, by route pattern.", prometheus.DefBuckets, "route"),
		runs: histogram("docsapi_job_run_duration_seconds",
			"How long job runs took, by outcome (completed, failed, retried, released, abandoned); its count is the runs.",
			// Agent runs take from seconds to the job timeout (30 minutes
			// by default).
			[]float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600}, "outcome"),
		flushes: histogram("docsapi_pageviews_flush_duration_seconds",
			"How long flushes of recorded page views to the store took, by result (ok or error).", prometheus.DefBuckets, "result"),
		ingested: counter("docsapi_ingest_views_total",
			"Page views sent to the ingestion endpoint, by result: ok if stored, error if the store failed (and the requests were answered 503).", "result"),
		commits: histogram("docsapi_ingest_commit_duration_seconds",
			"How long commits of ingested page views (one per group of requests) took, by result (ok or error).", prometheus.DefBuckets, "result"),
		site: counter("docsapi_site_limited_total",
			"Submissions to the public site endpoints that met a project's daily cap or a client's share of it, by kind (feedback: refused with 429; searches: counted under \"(other searches)\" or without the result opened) and reason (cap: the project's day was full; share: the client's address or network had added its share of the day).",
			"kind", "reason"),
		refusals: counter("docsapi_connections_refused_total",
			"Connections refused or closed, and public requests refused, by the connection limits, by reason: "+
				"address_connections, address_waiting (an address's budgets), full (the cap, with no connection to take), "+
				"evicted (a waiting connection closed for a client holding fewer), public_busy (a site request answered 503).", "reason"),
		public: counter("docsapi_public_requests_total",
			"Requests to the public endpoints (feedback, searches, their CORS preflights, and ingest: the ingestion endpoint), by outcome: accepted, or why refused "+
				"(rate_limited, bad_token, bad_key, origin, bad_request, too_large, bad_body, share, cap, busy, cancelled, error; honeypot: answered as accepted and dropped).",
			"endpoint", "outcome"),
		signIns: counter("docsapi_dashboard_signins_total",
			"Attempts to sign in to the dashboard, by result: ok, refused (the key), limited (the address's budget), invalid (the form's origin or CSRF token), error.", "result"),
		views:    newViewsCollector(),
		errorLog: cfg.Logger,
	}
	// Series that exist from the start: a rate over a series that
	// appears with its first event misses that event.
	for _, o := range []engine.RunOutcome{engine.RunCompleted, engine.RunFailed, engine.RunRetried, engine.RunReleased, engine.RunAbandoned} {
		m.runs.WithLabelValues(string(o))
	}
	for _, r := range []string{resultOK, resultError} {
		m.flushes.WithLabelValues(r)
		m.ingested.WithLabelValues(r)
		m.commits.WithLabelValues(r)
	}
	for _, kind := range []string{server.SiteLimitFeedback, server.SiteLimitSearches} {
		for _, reason := range []string{server.SiteLimitCap, server.SiteLimitShare} {
			m.site.WithLabelValues(kind, reason)
		}
	}
	for _, r := range connlimit.Reasons() {
		m.refusals.WithLabelValues(string(r))
	}
	for _, p := range server.PublicRequestOutcomes() {
		m.public.WithLabelValues(p.Endpoint, p.Outcome)
	}
	for _, r := range server.SignInResults() {
		m.signIns.WithLabelValues(r)
	}
	m.parts = []prometheus.Collector{buildInfo(cfg.Version), m.requests, m.latency, m.runs, m.flushes, m.ingested, m.commits, m.site, m.refusals, m.public, m.signIns, m.views}
	if cfg.Jobs != nil {
		m.parts = append(m.parts, newJobsCollector(cfg.Jobs, cfg.JobsTimeout, cfg.Now, cfg.Logger))
	}
	m.registry = prometheus.NewRegistry()
	if err := m.registry.Register(m); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	if err := errors.Join(
		m.registry.Register(collectors.NewGoCollector()),
		m.registry.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})),
	); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return m, nil
}

func counter(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

func histogram(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
}

// Handler serves the metrics, with the Go runtime's and the process's, in
// the Prometheus text format. It belongs on a listener of its own, not the
// API's: it needs no key.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{
		ErrorLog:            slog.NewLogLogger(m.errorLog.Handler(), slog.LevelError),
		MaxRequestsInFlight: maxScrapes,
	})
}

// ObserveRequest counts an answered request; it is server.Config.OnRequest.
func (m *Metrics) ObserveRequest(r server.RequestInfo) {
	route := r.Route
	if route == "" {
		route = UnmatchedRoute
	}
	m.requests.WithLabelValues(route, strconv.Itoa(r.Status)).Inc()
	m.latency.WithLabelValues(route).Observe(r.Duration.Seconds())
}

// ObserveSiteLimit counts a submission that met a day's cap or a client's
// share of it; it is server.Config.OnSiteLimit.
func (m *Metrics) ObserveSiteLimit(l server.SiteLimitInfo) {
	m.site.WithLabelValues(l.Kind, l.Reason).Inc()
}

// ObservePublicRequest counts a request to a public endpoint by its
// outcome; it is server.Config.OnPublicRequest.
func (m *Metrics) ObservePublicRequest(p server.PublicRequestInfo) {
	m.public.WithLabelValues(p.Endpoint, p.Outcome).Inc()
}

// ObserveSignIn counts an attempt to sign in to the dashboard; it is
// server.Config.OnSignIn.
func (m *Metrics) ObserveSignIn(s server.SignInInfo) {
	m.signIns.WithLabelValues(s.Result).Inc()
}

// ObserveRefusal counts a refusal of the connection limits; it is
// connlimit.Config.OnRefuse.
func (m *Metrics) ObserveRefusal(r connlimit.Refusal) {
	m.refusals.WithLabelValues(string(r.Reason)).Inc()
}

// ObserveRun counts a job run; it is engine.Config.OnRunEnd.
func (m *Metrics) ObserveRun(r engine.RunInfo) {
	m.runs.WithLabelValues(string(r.Outcome)).Observe(r.Duration.Seconds())
}

// The result labels of writes to the store.
const (
	resultOK    = "ok"
	resultError = "error"
)

// result is the result label of a write that returned err.
func result(err error) string {
	if err != nil {
		return resultError
	}
	return resultOK
}

// ObserveFlush times a flush of page views; it is pageviews.Config.OnFlush.
func (m *Metrics) ObserveFlush(f pageviews.FlushInfo) {
	m.flushes.WithLabelValues(result(f.Err)).Observe(f.Duration.Seconds())
}

// ObserveIngestCommit counts and times a commit of ingested page views; it
// is server.Config.OnIngestCommit.
func (m *Metrics) ObserveIngestCommit(c server.IngestCommitInfo) {
	r := result(c.Err)
	m.ingested.WithLabelValues(r).Add(float64(c.Views))
	if c.Err == nil {
		m.views.ingested.Add(c.Views)
	}
	m.commits.WithLabelValues(r).Observe(c.Duration.Seconds())
}

// WatchPageViews exports rec's counters (pageviews.Stats) at every scrape,
// in place of any recorder watched before.
func (m *Metrics) WatchPageViews(rec *pageviews.Recorder) {
	m.views.rec.Store(rec)
}

// Describe sends the descriptions of every metric m exports but the Go
// runtime's and the process's; it implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m.parts {
		c.Describe(ch)
	}
}

// Collect sends the current value of every metric m exports but the Go
// runtime's and the process's, reading the job counts from the store; it
// implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	for _, c := range m.parts {
		c.Collect(ch)
	}
}
