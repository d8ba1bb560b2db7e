package docsapi

// The SDK's test kit. Every test file of the package uses it; helpers that
// only one test needs stay next to that test.
//
//   - client:  newTestClient, newTestClientWithoutProject, testKey, testBaseURL
//   - reply:   replyJSON, replyAs, replyFixture, replyError, replyBrokenBody,
//     inTurn, viewRows, viewsPageJSON, and the fixture and golden files of
//     testdata/ (fixture, goldenJSON)
//   - serve:   serve with a table of routes, serveInOrder, pagedViews
//   - record:  recorder (what was sent, and when), callCount, captureLogs,
//     jobStatuses
//   - check:   asAPIError, wantStandardHeaders, collectPairs, splitPairs,
//     drain, errOf
//
// House rules: a fresh httpmock transport per test (newTestClient makes
// one; never the global transport), testing/synctest for everything that
// sleeps, go-cmp for diffs, golden files in testdata/ (rewritten with
// -update).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jarcoal/httpmock"
)

// ---------------------------------------------------------------- client

// testKey is a sentinel: no error string, log line or printed value may
// contain it, or any long part of it.
const testKey = "mint_SENTINEL7f3a9cKEYdoNotLeak"

const testBaseURL = "https://api.example.test"

// newTestClient returns a client whose requests go to a fresh httpmock
// transport (never the global one), with the project "proj" as default and
// jitter fixed at 0, so that delays are exactly the lower bound of each
// backoff window.
func newTestClient(t *testing.T, opts ...Option) (*Client, *httpmock.MockTransport) {
	t.Helper()
	return newMockedClient(t, append([]Option{WithProjectID("proj")}, opts...)...)
}

// newTestClientWithoutProject is newTestClient without a default project.
func newTestClientWithoutProject(t *testing.T, opts ...Option) (*Client, *httpmock.MockTransport) {
	t.Helper()
	return newMockedClient(t, opts...)
}

func newMockedClient(t *testing.T, opts ...Option) (*Client, *httpmock.MockTransport) {
	t.Helper()
	mt := httpmock.NewMockTransport()
	base := []Option{
		WithHTTPClient(&http.Client{Transport: mt}),
		WithBaseURL(testBaseURL),
	}
	c, err := NewClient(testKey, append(base, opts...)...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	c.cfg.jitter = func() float64 { return 0 }
	return c, mt
}

// ---------------------------------------------------------------- reply

// The job j1 and the views export of "proj", as most tests ask for them.
const (
	jobPathJ1       = "/v2/agent/proj/job/j1"
	jobURLJ1        = testBaseURL + jobPathJ1
	jobsURL         = testBaseURL + "/v2/agent/proj/job"
	messageURLJ1    = jobURLJ1 + "/message"
	viewsPath       = "/v1/analytics/proj/views"
	viewsURL        = testBaseURL + viewsPath
	jobJSONJ1       = `{"id":"j1","status":"active","source":{"repository":"acme/docs","ref":"main"},"model":"m1","prLink":null,"createdAt":"2026-08-01T12:00:00Z","archivedAt":null}`
	viewsJSON       = `{"totals":{"human":3,"ai":2,"total":5},"views":[{"path":"/a","human":3,"ai":2,"total":5}],"hasMore":false}`
	promptV2        = "Document v2"
	promptV2JSON    = `{"prompt":"Document v2"}`
	maintenanceJSON = `{"error":"maintenance"}`
)

var wantJobJ1 = &Job{
	ID:        "j1",
	Status:    JobStatusActive,
	Source:    JobSource{Repository: "acme/docs", Ref: "main"},
	Model:     "m1",
	CreatedAt: time.Date(2026, time.August, 1, 12, 0, 0, 0, time.UTC),
}

// errConnReset stands for a connection that failed in an unknown way; the
// pipeline treats it as "may have been sent".
var errConnReset = errors.New("connection reset by peer (mock)")

// plusTwo is a zone east of UTC, so that a date or instant that ignores
// its zone shows.
var plusTwo = time.FixedZone("UTC+2", 2*60*60)

// replyJSON answers with status and a JSON body; header adds (name, value)
// pairs, and may replace the content type.
func replyJSON(status int, body string, header ...string) httpmock.Responder {
	return replyAs(status, "application/json", body, header...)
}

// replyAs answers with status and body of contentType ("" sends none), its
// length declared as a server would; header adds (name, value) pairs.
func replyAs(status int, contentType, body string, header ...string) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		h := http.Header{}
		if contentType != "" {
			h.Set("Content-Type", contentType)
		}
		for i := 0; i+1 < len(header); i += 2 {
			h.Set(header[i], header[i+1])
		}
		return &http.Response{
			Status:        fmt.Sprintf("%03d %s", status, http.StatusText(status)),
			StatusCode:    status,
			Header:        h,
			ContentLength: int64(len(body)),
			Body:          io.NopCloser(strings.NewReader(body)),
			Request:       req,
		}, nil
	}
}

// replyFixture answers with status and testdata/name as JSON.
func replyFixture(t *testing.T, status int, name string) httpmock.Responder {
	return replyJSON(status, string(fixture(t, name)))
}

// replyError is a transport failure: no response at all.
func replyError(err error) httpmock.Responder {
	return func(*http.Request) (*http.Response, error) { return nil, err }
}

// replyBrokenBody answers with status and a JSON body that breaks off
// half-way, as when a connection resets while the response is read.
func replyBrokenBody(status int) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		body := io.MultiReader(strings.NewReader(`{"id":"j`), iotest.ErrReader(io.ErrUnexpectedEOF))
		return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
			ContentLength: -1, Body: io.NopCloser(body), Request: req}, nil
	}
}

// inTurn answers the n-th call with replies[n], repeating the last one.
func inTurn(replies ...httpmock.Responder) httpmock.Responder {
	var mu sync.Mutex
	n := 0
	return func(req *http.Request) (*http.Response, error) {
		mu.Lock()
		r := replies[min(n, len(replies)-1)]
		n++
		mu.Unlock()
		return r(req)
	}
}

// viewRows returns n rows whose paths carry prefix, so that a page served
// twice or skipped is visible in a diff of the collected rows.
func viewRows(prefix string, n int) []PageView {
	rows := make([]PageView, n)
	for i := range rows {
		rows[i] = PageView{Path: fmt.Sprintf("/%s/%d", prefix, i), Human: int64(i + 1), AI: int64(n - i), Total: int64(n + 1)}
	}
	return rows
}

// viewsPageJSON encodes one page of the views export.
func viewsPageJSON(t *testing.T, rows []PageView, hasMore bool) string {
	t.Helper()
	if rows == nil {
		rows = []PageView{}
	}
	b, err := json.Marshal(ViewsPage{Totals: ViewCounts{Human: 1000, AI: 500, Total: 1500}, Views: rows, HasMore: hasMore})
	if err != nil {
		t.Fatalf("encoding page: %v", err)
	}
	return string(b)
}

// fixture returns the contents of testdata/name.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return b
}

// The -update flag rewrites the golden files. It is defined in an init
// function, after every package-level variable of the test files is set,
// and only if nothing else defined it: a second flag.Bool("update") would
// panic at start-up.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files in testdata")
	}
}

// updating reports whether -update was given.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

func writeGolden(t *testing.T, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join("testdata", name), b, 0o644); err != nil {
		t.Fatalf("updating golden file: %v", err)
	}
}

// goldenJSON compares a request body with testdata/name as JSON values
// (key order, spacing and escaping aside), or rewrites the file with
// -update.
func goldenJSON(t *testing.T, name string, got []byte) {
	t.Helper()
	if updating() {
		// Re-encoded without HTML escaping, so the file shows "<" and "&"
		// as the reader expects rather than as \u003c and \u0026.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(jsonValue(t, got)); err != nil {
			t.Fatalf("encoding golden file: %v", err)
		}
		writeGolden(t, name, buf.Bytes())
	}
	if diff := cmp.Diff(jsonValue(t, fixture(t, name)), jsonValue(t, got)); diff != "" {
		t.Errorf("request body differs from testdata/%s (-want +got):\n%s\nsent: %s", name, diff, got)
	}
}

// jsonValue decodes b into a generic value, so that two encodings compare
// equal whatever their key order, spacing and escaping.
func jsonValue(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("invalid JSON %q: %v", b, err)
	}
	return v
}

// ---------------------------------------------------------------- record

// sentRequest is one request as it went on the wire.
type sentRequest struct {
	// At is the time since the recorder was made; inside a synctest bubble
	// it is virtual, and exact.
	At     time.Duration
	Method string
	Path   string // escaped, so that %2F inside a project id stays visible
	Query  string // raw, so that the test sees the exact encoding
	Header http.Header
	Body   string
}

// recorder keeps every request that reaches the responders it wraps.
// Responders run on httpmock's goroutines, hence the lock. Make it inside
// the bubble when times matter, so that its start is on the bubble's clock.
type recorder struct {
	start time.Time
	mu    sync.Mutex
	reqs  []sentRequest
}

func newRecorder() *recorder { return &recorder{start: time.Now()} }

// record wraps next in a new recorder.
func record(next httpmock.Responder) (*recorder, httpmock.Responder) {
	rec := newRecorder()
	return rec, rec.wrap(next)
}

// wrap returns next, recording every request first. Like net/http's
// Transport, it refuses a request whose context is already done, without
// sending it: httpmock instead races the responder against ctx.Done(), so a
// cancelled call would otherwise succeed or fail at random.
func (r *recorder) wrap(next httpmock.Responder) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		if err := req.Context().Err(); err != nil {
			return nil, err
		}
		var body []byte
		if req.Body != nil {
			body, _ = io.ReadAll(req.Body)
		}
		r.mu.Lock()
		r.reqs = append(r.reqs, sentRequest{
			At:     time.Since(r.start),
			Method: req.Method,
			Path:   req.URL.EscapedPath(),
			Query:  req.URL.RawQuery,
			Header: req.Header.Clone(),
			Body:   string(body),
		})
		r.mu.Unlock()
		return next(req)
	}
}

// Requests returns every request recorded, in the order they arrived.
func (r *recorder) Requests() []sentRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reqs)
}

// Times returns the time of each request.
func (r *recorder) Times() []time.Duration {
	var ts []time.Duration
	for _, req := range r.Requests() {
		ts = append(ts, req.At)
	}
	return ts
}

// Queries returns the raw query of each request.
func (r *recorder) Queries() []string {
	var qs []string
	for _, req := range r.Requests() {
		qs = append(qs, req.Query)
	}
	return qs
}

// onTheWire compares sentRequests by method, path, query and Authorization
// header only.
var onTheWire = cmp.Transformer("onTheWire", func(r sentRequest) struct{ Method, Path, Query, Auth string } {
	return struct{ Method, Path, Query, Auth string }{r.Method, r.Path, r.Query, r.Header.Get("Authorization")}
})

// authorized is the header of every request the test client sends.
var authorized = http.Header{"Authorization": {"Bearer " + testKey}}

// callCount is the number of calls httpmock routed to method and url.
func callCount(mt *httpmock.MockTransport, method, url string) int {
	return mt.GetCallCountInfo()[method+" "+url]
}

// logRecord is a log record reduced to what the tests compare.
type logRecord struct {
	Level slog.Level
	Msg   string
	Attrs map[string]any
}

// logSink keeps the records of a captureLogs logger.
type logSink struct {
	mu      sync.Mutex
	records []logRecord
}

func (s *logSink) all() []logRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.records)
}

// captureLogs returns a logger that keeps every record at every level.
func captureLogs() (*slog.Logger, *logSink) {
	sink := new(logSink)
	return slog.New(sinkHandler{sink: sink}), sink
}

type sinkHandler struct {
	sink  *logSink
	attrs []slog.Attr
}

func (h sinkHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h sinkHandler) Handle(_ context.Context, r slog.Record) error {
	attrs := make(map[string]any)
	for _, a := range h.attrs {
		attrs[a.Key] = a.Value.Resolve().Any()
	}
	r.Attrs(func(a slog.Attr) bool {
		attrs[a.Key] = a.Value.Resolve().Any()
		return true
	})
	h.sink.mu.Lock()
	h.sink.records = append(h.sink.records, logRecord{Level: r.Level, Msg: r.Message, Attrs: attrs})
	h.sink.mu.Unlock()
	return nil
}

func (h sinkHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return sinkHandler{sink: h.sink, attrs: append(slices.Clip(h.attrs), as...)}
}

func (h sinkHandler) WithGroup(string) slog.Handler { return h }

// jobStatuses is an OnUpdate that records the statuses it sees.
type jobStatuses struct {
	mu   sync.Mutex
	seen []JobStatus
	last *Job
}

func (s *jobStatuses) OnUpdate(j *Job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, j.Status)
	s.last = j
}

func (s *jobStatuses) Seen() []JobStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

// ---------------------------------------------------------------- serve

// route answers method on path (escaped, as on the wire) with replies in
// turn, repeating the last one. Make one with on.
type route struct {
	method, path string
	replies      []httpmock.Responder
}

// on is the route answering method on path with replies.
func on(method, path string, replies ...httpmock.Responder) route {
	return route{method, path, replies}
}

// serve answers the routes and records every request, those to no route
// included. A request to no route fails the test: a wrong path would
// otherwise look like a network error, which pollers silently survive.
// It is answered 404, which nobody retries, so the test ends quickly.
func serve(t *testing.T, mt *httpmock.MockTransport, routes ...route) *recorder {
	t.Helper()
	rec := newRecorder()
	for _, r := range routes {
		mt.RegisterResponder(r.method, testBaseURL+r.path, rec.wrap(inTurn(r.replies...)))
	}
	mt.RegisterNoResponder(rec.wrap(func(req *http.Request) (*http.Response, error) {
		t.Errorf("unexpected request %s %s", req.Method, req.URL.EscapedPath())
		return replyJSON(http.StatusNotFound, `{"error":"unexpected request"}`)(req)
	}))
	return rec
}

// serveInOrder answers the n-th request, whatever its route, with the n-th
// reply, and records every request: a request to a wrong path shows up in
// the path assertions instead of being lost in an httpmock "no responder"
// error. A request past the last reply fails the test, and is answered
// 418, which is not retried, so it cannot start a retry loop that sleeps
// outside a synctest bubble.
func serveInOrder(t *testing.T, mt *httpmock.MockTransport, replies ...httpmock.Responder) *recorder {
	t.Helper()
	rec := newRecorder()
	var mu sync.Mutex
	n := 0
	mt.RegisterNoResponder(rec.wrap(func(req *http.Request) (*http.Response, error) {
		mu.Lock()
		i := n
		n++
		mu.Unlock()
		if i >= len(replies) {
			if i == len(replies) { // once: a runaway pager would flood the log
				t.Errorf("unexpected request #%d: %s %s", i+1, req.Method, req.URL)
			}
			return replyJSON(http.StatusTeapot, `{"error":"unexpected request"}`)(req)
		}
		return replies[i](req)
	}))
	return rec
}

// pagedViews answers views requests for a project of total paths, pageSize
// a page, after latency on the bubble's clock, and records the requests
// and how many were in flight at once. failAt, if not negative, answers
// that offset with a 400.
type pagedViews struct {
	total, pageSize int
	latency         time.Duration
	failAt          int
	// latencyOf, when set, is the latency of the page at offset.
	latencyOf func(offset int) time.Duration
	// count is the views of row i, 1 when nil; the totals each page sends
	// are their sum, plus totalsDelta (to make them disagree).
	count       func(i int) int64
	totalsDelta int64
	// totalsDeltaAt, when set, is added to the totals of the page at
	// offset too (totals that change as the export runs).
	totalsDeltaAt func(offset int) int64
	// firstFast makes the page at offset 0 answer after a millisecond. The
	// bubble's clock moves only once every goroutine is blocked, so by then
	// every request launched has reached the responder.
	firstFast bool

	rec    *recorder
	mu     sync.Mutex
	active int
	peak   int
}

// serve routes the views export of "proj" to p.
func (p *pagedViews) serve(mt *httpmock.MockTransport) {
	p.rec = newRecorder()
	mt.RegisterResponder(http.MethodGet, testBaseURL+"/v1/analytics/proj/views", p.rec.wrap(p.respond))
}

func (p *pagedViews) respond(req *http.Request) (*http.Response, error) {
	offset, _ := strconv.Atoi(req.URL.Query().Get("offset"))
	p.mu.Lock()
	p.active++
	p.peak = max(p.peak, p.active)
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.active--
		p.mu.Unlock()
	}()
	latency := p.latency
	if p.latencyOf != nil {
		latency = p.latencyOf(offset)
	}
	if p.firstFast && offset == 0 {
		latency = time.Millisecond
	}
	select {
	case <-time.After(latency):
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	if offset == p.failAt {
		return replyJSON(http.StatusBadRequest, `{"error":"bad page"}`)(req)
	}
	count := p.count
	if count == nil {
		count = func(int) int64 { return 1 }
	}
	var rows []string
	for i := offset; i < min(offset+p.pageSize, p.total); i++ {
		rows = append(rows, fmt.Sprintf(`{"path":"/p%05d","human":%d,"ai":0,"total":%[2]d}`, i, count(i)))
	}
	sum := p.totalsDelta
	if p.totalsDeltaAt != nil {
		sum += p.totalsDeltaAt(offset)
	}
	for i := range p.total {
		sum += count(i)
	}
	body := fmt.Sprintf(`{"totals":{"human":%d,"ai":0,"total":%[1]d},"views":[%s],"hasMore":%v}`,
		sum, strings.Join(rows, ","), offset+p.pageSize < p.total)
	return replyJSON(http.StatusOK, body)(req)
}

// seen returns the offsets asked for, in order, and the most requests that
// were in flight at once.
func (p *pagedViews) seen() ([]int, int) {
	var offsets []int
	for _, req := range p.rec.Requests() {
		q, _ := url.ParseQuery(req.Query)
		offset, _ := strconv.Atoi(q.Get("offset"))
		offsets = append(offsets, offset)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return offsets, p.peak
}

// ---------------------------------------------------------------- check

// asAPIError returns err as an *APIError, or fails the test.
func asAPIError(t *testing.T, err error) *APIError {
	t.Helper()
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("error %v (%T) is not an *APIError", err, err)
	}
	return apiErr
}

// errOf drops the result of a call and keeps its error.
func errOf[T any](_ T, err error) error { return err }

// wantStandardHeaders checks the headers every request carries: the key,
// JSON accepted, and a JSON content type only when there is a body. No
// idempotency key is sent.
func wantStandardHeaders(t *testing.T, r sentRequest, withBody bool) {
	t.Helper()
	want := map[string]string{
		"Authorization":   "Bearer " + testKey,
		"Accept":          "application/json",
		"Content-Type":    "",
		"Idempotency-Key": "",
	}
	if withBody {
		want["Content-Type"] = "application/json"
	}
	for name, v := range want {
		got := r.Header.Get(name)
		switch {
		case got == v:
		case name == "Authorization":
			// Never print the key, even in a failing test's log.
			t.Errorf("%s %s: Authorization is not \"Bearer \" + testKey (len %d, want len %d)", r.Method, r.Path, len(got), len(v))
		default:
			t.Errorf("%s %s: header %s = %q, want %q", r.Method, r.Path, name, got, v)
		}
	}
}

// pair is one (item, error) pair an iterator yielded.
type pair[T any] struct {
	Item T
	Err  error
}

// rangeBound is more pairs than any test expects from one range.
const rangeBound = 1000

// collectPairs ranges seq without breaking, so a test sees everything the
// iterator chooses to yield, including anything it should not yield after
// an error. It gives up after rangeBound pairs, so a pager that never stops
// fails the test instead of hanging it.
func collectPairs[T any](t *testing.T, seq iter.Seq2[T, error]) []pair[T] {
	t.Helper()
	var pairs []pair[T]
	for v, err := range seq {
		pairs = append(pairs, pair[T]{v, err})
		if len(pairs) == rangeBound {
			t.Errorf("iterator still yielding after %d pairs", rangeBound)
			break
		}
	}
	return pairs
}

// splitPairs returns the items yielded without error and the errors, and
// fails the test if an error comes with an item or an item follows an
// error.
func splitPairs[T comparable](t *testing.T, pairs []pair[T]) (items []T, errs []error) {
	t.Helper()
	var zero T
	for i, p := range pairs {
		if p.Err != nil {
			if p.Item != zero {
				t.Errorf("pair %d: error %v came with item %+v, want the zero %T", i, p.Err, p.Item, zero)
			}
			errs = append(errs, p.Err)
			continue
		}
		if len(errs) > 0 {
			t.Errorf("pair %d: item %+v yielded after error %v", i, p.Item, errs[0])
		}
		items = append(items, p.Item)
	}
	return items, errs
}

// drain is splitPairs(collectPairs(seq)).
func drain[T comparable](t *testing.T, seq iter.Seq2[T, error]) (items []T, errs []error) {
	t.Helper()
	return splitPairs(t, collectPairs(t, seq))
}

// firstErr is errs[0], or nil.
func firstErr(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return errs[0]
}
