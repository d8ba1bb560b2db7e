package metrics_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/metrics"
	"github.com/docsapi/docsapi-go/server/pageviews"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/traffic"
)

// noChanges are the parts of a run whose agent changes nothing: the job
// completes without a pull request.
type noChanges struct{ dir string }

func (p noChanges) Open(context.Context, engine.RepoSpec) (engine.Workspace, error) { return p, nil }
func (p noChanges) Dir() string                                                     { return p.dir }
func (noChanges) Publish(context.Context, string) (bool, error)                     { return false, nil }
func (noChanges) Close() error                                                      { return nil }
func (noChanges) Run(context.Context, engine.Task) error                            { return nil }
func (noChanges) Ensure(context.Context, engine.PullRequestSpec) (string, error) {
	return "", nil
}

// stack is a server, an engine and a recorder on one SQLite store, each
// hooked to m.
type stack struct {
	m   *metrics.Metrics
	srv *server.Server
	rec *pageviews.Recorder
	key string
	ran chan engine.RunInfo
}

func newStack(t *testing.T) *stack {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docsapi.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m := newMetrics(t, metrics.Config{Jobs: st})
	s := &stack{m: m, ran: make(chan engine.RunInfo, 1)}
	parts := noChanges{dir: t.TempDir()}
	eng, err := engine.New(engine.Config{
		Store: st, Owner: "test",
		Parts: func(context.Context, store.Project) (engine.Parts, error) {
			return engine.Parts{Repositories: parts, Agent: parts, PullRequests: parts}, nil
		},
		OnRunEnd: func(r engine.RunInfo) {
			m.ObserveRun(r)
			s.ran <- r
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.rec, err = pageviews.New(pageviews.Config{Sink: st, OnFlush: m.ObserveFlush}); err != nil {
		t.Fatal(err)
	}
	m.WatchPageViews(s.rec)
	if s.srv, err = server.New(server.Config{
		Store: st, Jobs: eng, PageViews: s.rec,
		OnRequest: m.ObserveRequest, OnIngestCommit: m.ObserveIngestCommit, OnSiteLimit: m.ObserveSiteLimit,
		// Small caps and shares, which TestSiteLimitsAreCounted meets.
		Site: server.SiteConfig{
			MaxFeedbackPerDay: 3, MaxFeedbackPerAddress: 1, MaxFeedbackPerNetwork: 2,
			MaxQueriesPerDay: 2, MaxQueriesPerAddress: 1, MaxQueriesPerNetwork: 2,
		},
	}); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := s.srv.CreateProject(ctx, store.Project{ID: "handbook", Repository: "https://git.example.com/handbook.git", Ref: "main", Model: "m"}); err != nil {
		t.Fatal(err)
	}
	key, err := s.srv.CreateKey(ctx, server.KeyParams{Name: "test", Projects: []string{"handbook"}, Scopes: []store.Scope{store.ScopeWrite}})
	if err != nil {
		t.Fatal(err)
	}
	s.key = key.Secret
	eng.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		eng.Shutdown(ctx)
	})
	return s
}

// call serves one request and returns the response.
func (s *stack) call(method, path, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+s.key)
	w := httptest.NewRecorder()
	s.srv.ServeHTTP(w, r)
	return w
}

func TestScrapeAfterRequestsARunAndAFlush(t *testing.T) {
	s := newStack(t)
	h := s.m.Handler()

	// Before anything happened: the series that exist from the start.
	before := scrape(t, h)
	want(t, before, `docsapi_job_run_duration_seconds_count{outcome="completed"}`, 0)
	want(t, before, `docsapi_pageviews_recorded_total{source="middleware"}`, 0)
	want(t, before, `docsapi_pageviews_recorded_total{source="ingest"}`, 0)
	want(t, before, `docsapi_jobs_read_ok`, 1)
	want(t, before, `docsapi_jobs{status="active"}`, 0)

	created := s.call("POST", "/v2/agent/handbook/job", `{"prompt": "Document the new flag"}`)
	if created.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", created.Code, created.Body)
	}
	var job struct{ ID string }
	if err := json.Unmarshal(created.Body.Bytes(), &job); err != nil {
		t.Fatal(err)
	}
	if r := <-s.ran; r.Outcome != engine.RunCompleted || r.JobID != job.ID {
		t.Fatalf("the run ended %+v, want job %s completed", r, job.ID)
	}
	for range 2 {
		if w := s.call("GET", "/v2/agent/handbook/job/"+job.ID, ""); w.Code != http.StatusOK {
			t.Fatalf("get: %d %s", w.Code, w.Body)
		}
	}
	if w := s.call("GET", "/v2/agent/handbook/job/no-such-job", ""); w.Code != http.StatusNotFound {
		t.Fatalf("get a missing job: %d %s", w.Code, w.Body)
	}
	if w := s.call("GET", "/no/such/endpoint", ""); w.Code != http.StatusNotFound {
		t.Fatalf("unknown path: %d %s", w.Code, w.Body)
	}

	ingest := s.call("POST", "/v1/analytics/handbook/views", `{"views": [{"path": "/a"}, {"path": "/b"}, {"path": "/a"}]}`)
	if ingest.Code != http.StatusAccepted {
		t.Fatalf("ingest: %d %s", ingest.Code, ingest.Body)
	}

	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	s.rec.Record("handbook", "/intro", traffic.Human, at, 3)
	s.rec.Record("handbook", "/setup", traffic.AI, at, 2)
	if err := s.rec.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.rec.Record("handbook", "/intro", traffic.Human, at, 4) // pending: not flushed yet

	got := scrape(t, h)
	const job1 = `route="GET /v2/agent/{projectId}/job/{id}"`
	want(t, got, `docsapi_http_requests_total{code="201",route="POST /v2/agent/{projectId}/job"}`, 1)
	want(t, got, `docsapi_http_requests_total{code="200",`+job1+`}`, 2)
	want(t, got, `docsapi_http_requests_total{code="404",`+job1+`}`, 1)
	want(t, got, `docsapi_http_requests_total{code="404",route="unmatched"}`, 1)
	want(t, got, `docsapi_http_request_duration_seconds_count{`+job1+`}`, 3)
	want(t, got, `docsapi_http_request_duration_seconds_bucket{`+job1+`,le="+Inf"}`, 3)

	want(t, got, `docsapi_job_run_duration_seconds_count{outcome="completed"}`, 1)
	want(t, got, `docsapi_job_run_duration_seconds_count{outcome="failed"}`, 0)
	want(t, got, `docsapi_jobs{status="completed"}`, 1)
	want(t, got, `docsapi_jobs{status="active"}`, 0)
	want(t, got, `docsapi_jobs_queued`, 0)
	want(t, got, `docsapi_jobs_read_ok`, 1)

	// The recorder's views and the ingestion endpoint's, apart.
	want(t, got, `docsapi_pageviews_recorded_total{source="middleware"}`, 9)
	want(t, got, `docsapi_pageviews_flushed_total{source="middleware"}`, 5)
	want(t, got, `docsapi_pageviews_recorded_total{source="ingest"}`, 3)
	want(t, got, `docsapi_pageviews_flushed_total{source="ingest"}`, 3)
	want(t, got, `docsapi_pageviews_pending`, 4)
	want(t, got, `docsapi_pageviews_folded_total`, 0)
	want(t, got, `docsapi_pageviews_flush_errors_total`, 0)
	want(t, got, `docsapi_pageviews_flush_duration_seconds_count{result="ok"}`, 1)
	want(t, got, `docsapi_pageviews_flush_duration_seconds_count{result="error"}`, 0)
	want(t, got, `docsapi_ingest_views_total{result="ok"}`, 3)
	want(t, got, `docsapi_ingest_views_total{result="error"}`, 0)
	want(t, got, `docsapi_ingest_commit_duration_seconds_count{result="ok"}`, 1)
	want(t, got, `docsapi_http_requests_total{code="202",route="POST /v1/analytics/{projectId}/views"}`, 1)

	// The Go runtime's and the process's metrics come along.
	if len(series(got, "go_goroutines")) != 1 {
		t.Error("no go_goroutines")
	}
}

// Submissions that meet a day's cap, or a client's share of it, are
// counted by kind and reason.
func TestSiteLimitsAreCounted(t *testing.T) {
	s := newStack(t)
	const origin = "https://docs.example"
	tok, err := s.srv.CreateSiteToken(t.Context(), server.SiteTokenParams{Project: "handbook", Name: "docs", Origins: []string{origin}})
	if err != nil {
		t.Fatal(err)
	}
	post := func(endpoint, addr, body string, status int) {
		t.Helper()
		r := httptest.NewRequest("POST", "/v1/site/handbook/"+endpoint+"?token="+tok.Token, strings.NewReader(body))
		r.RemoteAddr, r.Header["Origin"] = addr+":1", []string{origin}
		w := httptest.NewRecorder()
		s.srv.ServeHTTP(w, r)
		if w.Code != status {
			t.Fatalf("%s from %s: %d %s, want %d", endpoint, addr, w.Code, w.Body, status)
		}
	}
	h := s.m.Handler()
	before := scrape(t, h)
	for _, kind := range []string{"feedback", "searches"} {
		for _, reason := range []string{"cap", "share"} {
			want(t, before, `docsapi_site_limited_total{kind="`+kind+`",reason="`+reason+`"}`, 0)
		}
	}

	const vote = `{"path": "/a", "helpful": true}`
	post("feedback", "192.0.2.1", vote, http.StatusAccepted)
	post("feedback", "192.0.2.1", vote, http.StatusTooManyRequests) // its address's share
	post("feedback", "192.0.2.2", vote, http.StatusAccepted)
	post("feedback", "192.0.2.3", vote, http.StatusTooManyRequests) // its network's share
	post("feedback", "198.51.100.1", vote, http.StatusAccepted)     // the day's third: the cap
	post("feedback", "203.0.113.1", vote, http.StatusTooManyRequests)

	post("searches", "192.0.2.1", `{"query": "one"}`, http.StatusAccepted)
	post("searches", "192.0.2.1", `{"query": "two"}`, http.StatusAccepted) // folded: its share
	post("searches", "192.0.2.2", `{"query": "two"}`, http.StatusAccepted) // the day's second: the cap
	post("searches", "198.51.100.1", `{"query": "three"}`, http.StatusAccepted)

	got := scrape(t, h)
	want(t, got, `docsapi_site_limited_total{kind="feedback",reason="share"}`, 2)
	want(t, got, `docsapi_site_limited_total{kind="feedback",reason="cap"}`, 1)
	want(t, got, `docsapi_site_limited_total{kind="searches",reason="share"}`, 1)
	want(t, got, `docsapi_site_limited_total{kind="searches",reason="cap"}`, 1)
}

// Clients that invent paths, methods and malformed paths cannot add series:
// after a flood of distinct requests, there are as many series as after a
// few of the same kinds.
func TestRouteLabelsStayBounded(t *testing.T) {
	s := newStack(t)
	flood := func(from, to int) {
		for i := from; i < to; i++ {
			n := strings.Repeat("x", i%7) + string(rune('a'+i%26))
			for _, r := range []struct{ method, path string }{
				{"GET", "/invented/" + n + "/" + strings.Repeat("y", i)},
				{"POST", "/v2/agent/handbook/job/invented-" + n + "/nothing"},
				{"DELETE", "/v2/agent/handbook/job/invented-" + n},      // 405: the path exists for GET
				{"BREW" + strings.ToUpper(n), "/v2/agent/handbook/job"}, // an unknown method
				{"GET", "/v2/agent//handbook/./job/invented-" + n},      // a path the mux redirects
				{"CONNECT", "/invented-" + n},
				{"GET", "/v2/agent/handbook/job/invented-" + n + "?" + n}, // a 404 of a real route
			} {
				s.call(r.method, r.path, "")
			}
		}
	}
	h := s.m.Handler()
	flood(0, 30)
	few := scrape(t, h)
	flood(30, 300)
	many := scrape(t, h)
	for _, name := range []string{"docsapi_http_requests_total", "docsapi_http_request_duration_seconds_bucket"} {
		if a, b := len(series(few, name)), len(series(many, name)); a != b || a == 0 {
			t.Errorf("%s: %d series after 30 rounds of invented requests, %d after 300", name, a, b)
		}
	}
	for _, s := range series(many, "docsapi_http_requests_total") {
		if strings.Contains(s, "invented") || strings.Contains(s, "BREW") {
			t.Errorf("a label holds what the client sent: %s", s)
		}
	}
	want(t, many, `docsapi_http_requests_total{code="404",route="unmatched"}`, 3*300)
	want(t, many, `docsapi_http_requests_total{code="405",route="unmatched"}`, 2*300)
}

func TestNewRefusesANegativeTimeout(t *testing.T) {
	if _, err := metrics.New(metrics.Config{JobsTimeout: -time.Second}); err == nil || !strings.Contains(err.Error(), "JobsTimeout") {
		t.Errorf("New with a negative JobsTimeout: %v, want an error naming it", err)
	}
}

// Without a job counter and before a recorder is watched, their metrics
// are absent rather than zero: zeros would claim an empty queue.
func TestAbsentSourcesExportNothing(t *testing.T) {
	m := newMetrics(t, metrics.Config{})
	got := scrape(t, m.Handler())
	for _, name := range []string{"docsapi_jobs", "docsapi_jobs_queued", "docsapi_jobs_read_ok", "docsapi_pageviews_pending"} {
		if s := series(got, name); len(s) != 0 {
			t.Errorf("%s exported without its source: %v", name, s)
		}
	}
	// The ingestion endpoint's views are told by a hook: they are there
	// from the start, the recorder's are not.
	if s := series(got, "docsapi_pageviews_recorded_total"); len(s) != 1 || s[0] != `docsapi_pageviews_recorded_total{source="ingest"}` {
		t.Errorf("docsapi_pageviews_recorded_total without a recorder: %v, want the ingestion endpoint's alone", s)
	}
	want(t, got, `docsapi_job_run_duration_seconds_count{outcome="abandoned"}`, 0)
}

// A failed write counts under result="error", apart from those stored.
func TestFailedWritesCountApart(t *testing.T) {
	m := newMetrics(t, metrics.Config{})
	down := errors.New("storage is down")
	m.ObserveIngestCommit(server.IngestCommitInfo{Requests: 2, Views: 7, Duration: 2 * time.Second, Err: down})
	m.ObserveIngestCommit(server.IngestCommitInfo{Requests: 1, Views: 1, Duration: time.Second})
	m.ObserveFlush(pageviews.FlushInfo{Duration: 3 * time.Second, Err: down})
	got := scrape(t, m.Handler())
	want(t, got, `docsapi_ingest_views_total{result="error"}`, 7)
	want(t, got, `docsapi_ingest_views_total{result="ok"}`, 1)
	want(t, got, `docsapi_pageviews_recorded_total{source="ingest"}`, 1) // the stored view alone
	want(t, got, `docsapi_ingest_commit_duration_seconds_sum{result="error"}`, 2)
	want(t, got, `docsapi_ingest_commit_duration_seconds_count{result="ok"}`, 1)
	want(t, got, `docsapi_pageviews_flush_duration_seconds_sum{result="error"}`, 3)
	want(t, got, `docsapi_pageviews_flush_duration_seconds_bucket{result="error",le="2.5"}`, 0)
	want(t, got, `docsapi_pageviews_flush_duration_seconds_bucket{result="error",le="5"}`, 1)
}

// docsapi_build_info is 1, labelled with the version given, the Go
// version and the revision, as Prometheus' own *_build_info are.
func TestBuildInfoIsExposed(t *testing.T) {
	got := scrape(t, newMetrics(t, metrics.Config{Version: "v1.2.3-test"}).Handler())
	s := series(got, "docsapi_build_info")
	if len(s) != 1 {
		t.Fatalf("docsapi_build_info: %v, want one series", s)
	}
	for _, label := range []string{`version="v1.2.3-test"`, `goversion="` + runtime.Version() + `"`, `revision="`} {
		if !strings.Contains(s[0], label) {
			t.Errorf("%s lacks %s", s[0], label)
		}
	}
	want(t, got, s[0], 1)
}
