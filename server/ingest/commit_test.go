package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/openapitest"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/traffic"
)

// These tests send ingestion requests through the endpoint's handler
// (every answer checked against the OpenAPI document) to a SQLite store
// wrapped so that the test counts the AddViews calls and can hold one while
// others queue behind it. They wait for the queue with queueLen, polling: only
// waiting, never asserting, on the real clock.

// gatedStore counts AddViews calls; while gate is set, each call says it
// entered and waits for the gate before it writes; with fail set, it fails.
type gatedStore struct {
	store.Store
	gate    chan struct{}
	entered chan struct{}
	fail    error

	mu    sync.Mutex
	calls int
}

func (g *gatedStore) AddViews(ctx context.Context, counts []store.ViewCount) error {
	g.mu.Lock()
	g.calls++
	g.mu.Unlock()
	if g.gate != nil {
		g.entered <- struct{}{}
		<-g.gate
	}
	if g.fail != nil {
		return g.fail
	}
	return g.Store.AddViews(ctx, counts)
}

func (g *gatedStore) callCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls
}

type ingestEnv struct {
	h       *Handler
	store   *gatedStore
	handler http.Handler
}

// newIngestEnv serves the endpoint of a Handler configured as package
// server configures it, on a gated SQLite store holding the project alpha,
// behind the OpenAPI validator. The request id is set as the server sets
// it; the key's authentication, the server's and not the endpoint's, is
// left out.
func newIngestEnv(t *testing.T, mutate func(*Config)) *ingestEnv {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.CreateProject(ctx, store.Project{ID: "alpha", Repository: "https://git.example.com/alpha/docs.git", CreatedAt: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	gs := &gatedStore{Store: st, gate: make(chan struct{}), entered: make(chan struct{}, 100)}
	cfg := Config{
		Store: gs, Logger: slog.New(slog.DiscardHandler), Now: time.Now, Classifier: traffic.Default(), MaxBodyBytes: 1 << 20,
		Window: DefaultWindow, MaxCommit: DefaultMaxCommit, MaxQueued: DefaultMaxQueued,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	h := New(cfg)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/analytics/{projectId}/views", func(w http.ResponseWriter, r *http.Request) {
		// The request id, as the server sets it for every request.
		id := respond.RequestID(r)
		w.Header().Set("X-Request-Id", id)
		h.RecordViews(w, r.WithContext(respond.WithRequestID(r.Context(), id)), r.PathValue("projectId"))
	})
	return &ingestEnv{h: h, store: gs, handler: openapitest.New(t).Handler(t, mux)}
}

type ingestAnswer struct {
	status     int
	body       string
	retryAfter string
}

// post sends one ingestion request of one view of each path.
func (e *ingestEnv) post(paths ...string) ingestAnswer {
	views := make([]string, len(paths))
	for i, p := range paths {
		views[i] = fmt.Sprintf(`{"path": %q, "userAgent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0"}`, p)
	}
	req := httptest.NewRequest(http.MethodPost, "/v1/analytics/alpha/views", strings.NewReader(`{"views": [`+strings.Join(views, ",")+`]}`))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Result().Body)
	return ingestAnswer{rec.Code, strings.TrimSpace(string(body)), rec.Result().Header.Get("Retry-After")}
}

// stored is the human views the store holds for the project.
func (e *ingestEnv) stored(t *testing.T) int64 {
	t.Helper()
	res, err := e.store.QueryViews(context.Background(), store.ViewsQuery{ProjectID: "alpha", Limit: 250})
	if err != nil {
		t.Fatal(err)
	}
	return res.Totals.Human
}

// waitQueued waits until n requests wait in the queue.
func (e *ingestEnv) waitQueued(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if batches, _ := queueLen(e.h.commits); batches == n {
			return
		}
		if time.Now().After(deadline) {
			batches, _ := queueLen(e.h.commits)
			t.Fatalf("%d requests queued, want %d", batches, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestIngestConcurrentRequestsShareCommits holds the first commit while
// seven more requests queue: none is answered before its commit, and the
// seven share the next one.
func TestIngestConcurrentRequestsShareCommits(t *testing.T) {
	e := newIngestEnv(t, nil)
	const n = 8
	answers := make(chan ingestAnswer, n)
	go func() { answers <- e.post("/r0") }()
	<-e.store.entered // the first request's commit has begun and is held
	for i := 1; i < n; i++ {
		go func() { answers <- e.post(fmt.Sprintf("/r%d", i), "/shared") }()
	}
	e.waitQueued(t, n-1)
	select {
	case a := <-answers:
		t.Fatalf("answered %+v before any commit ended", a)
	default:
	}
	if got := e.stored(t); got != 0 {
		t.Fatalf("%d views stored while the commit is held", got)
	}
	close(e.store.gate)
	for range n {
		if a := <-answers; a.status != http.StatusAccepted {
			t.Errorf("answer %+v, want 202", a)
		}
	}
	if got := e.store.callCount(); got != 2 {
		t.Errorf("%d requests made %d AddViews calls, want 2: the held one and one shared", n, got)
	}
	if got := e.stored(t); got != 2*n-1 {
		t.Errorf("stored %d views, want %d", got, 2*n-1)
	}
}

// TestIngestFailedCommitFailsItsWholeGroup: a commit that fails answers
// 500 to every request that shared it, and stores none of their views.
func TestIngestFailedCommitFailsItsWholeGroup(t *testing.T) {
	e := newIngestEnv(t, nil)
	e.store.fail = errors.New("disk I/O error")
	const n = 6
	answers := make(chan ingestAnswer, n)
	go func() { answers <- e.post("/r0") }()
	<-e.store.entered
	for i := 1; i < n; i++ {
		go func() { answers <- e.post(fmt.Sprintf("/r%d", i)) }()
	}
	e.waitQueued(t, n-1)
	close(e.store.gate)
	for range n {
		if a := <-answers; a.status != http.StatusInternalServerError || !strings.Contains(a.body, "internal error") {
			t.Errorf("answer %+v, want 500 with a JSON error", a)
		}
	}
	if got := e.store.callCount(); got != 2 {
		t.Errorf("AddViews calls = %d, want 2", got)
	}
	if got := e.stored(t); got != 0 {
		t.Errorf("failed commits stored %d views", got)
	}
}

// TestIngestFullQueueAnswers503: a request that finds the queue full is
// refused at once with Retry-After, and nothing of it is stored.
func TestIngestFullQueueAnswers503(t *testing.T) {
	e := newIngestEnv(t, func(c *Config) { c.MaxQueued = 3 })
	answers := make(chan ingestAnswer, 2)
	go func() { answers <- e.post("/a") }()
	<-e.store.entered // /a is being committed
	go func() { answers <- e.post("/b1", "/b2") }()
	e.waitQueued(t, 1) // 2 of 3 counts queued
	a := e.post("/c1", "/c2")
	if a.status != http.StatusServiceUnavailable || a.retryAfter != "1" || !strings.Contains(a.body, "nothing was recorded") {
		t.Errorf("full queue: %+v, want 503 with Retry-After: 1", a)
	}
	close(e.store.gate)
	for range 2 {
		if a := <-answers; a.status != http.StatusAccepted {
			t.Errorf("answer %+v, want 202", a)
		}
	}
	if got := e.stored(t); got != 3 {
		t.Errorf("stored %d views, want the 3 admitted", got)
	}
}
