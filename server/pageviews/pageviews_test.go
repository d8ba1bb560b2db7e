package pageviews

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/traffic"
)

const (
	chromeUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	agentUA  = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot"
	botUA    = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
)

// memSink keeps what was flushed, summed per key, and can be made to fail.
type memSink struct {
	mu    sync.Mutex
	got   map[string]store.ViewCount
	calls int
	fail  int // fail this many calls first
}

func (m *memSink) AddViews(_ context.Context, counts []store.ViewCount) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.fail > 0 {
		m.fail--
		return errors.New("storage is down")
	}
	if m.got == nil {
		m.got = map[string]store.ViewCount{}
	}
	if err := store.ValidateViewCounts(counts); err != nil {
		return err
	}
	for _, c := range counts {
		k := c.ProjectID + " " + c.Path + " " + c.Hour.Format(time.RFC3339)
		prev := m.got[k]
		c.Human += prev.Human
		c.AI += prev.AI
		c.Bot += prev.Bot
		c.Agents = mergeAgents(prev.Agents, c.Agents)
		m.got[k] = c
	}
	return nil
}

// mergeAgents adds b's agents to a copy of a's, sorted by class then name,
// as a store adds them up.
func mergeAgents(a, b []store.AgentCount) []store.AgentCount {
	var out []store.AgentCount
	for _, add := range [][]store.AgentCount{a, b} {
		for _, ac := range add {
			i := slices.IndexFunc(out, func(o store.AgentCount) bool { return o.Name == ac.Name && o.Class == ac.Class })
			if i < 0 {
				out = append(out, ac)
			} else {
				out[i].Views += ac.Views
			}
		}
	}
	slices.SortFunc(out, func(x, y store.AgentCount) int {
		return cmp.Or(strings.Compare(string(x.Class), string(y.Class)), strings.Compare(x.Name, y.Name))
	})
	return out
}

func (m *memSink) snapshot() map[string]store.ViewCount {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]store.ViewCount{}
	for k, v := range m.got {
		out[k] = v
	}
	return out
}

var at = time.Date(2026, 8, 14, 9, 30, 0, 0, time.UTC)

func newRecorder(t *testing.T, sink Sink, mutate ...func(*Config)) *Recorder {
	t.Helper()
	cfg := Config{Sink: sink, Now: func() time.Time { return at }}
	for _, m := range mutate {
		m(&cfg)
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestNormalizePath(t *testing.T) {
	for in, want := range map[string]string{
		"":                  "/",
		"/":                 "/",
		"/index.html":       "/",
		"/index.md":         "/",
		"/guide":            "/guide",
		"/guide/":           "/guide",
		"/guide//":          "/guide",
		"/guide/index.html": "/guide",
		"/guide/index.htm":  "/guide",
		"/guide.md":         "/guide",
		"/guide.mdx":        "/guide",
		"/guide.html":       "/guide",
		"/a/b.c/page.md":    "/a/b.c/page",
		"/.md":              "/.md",
		"/llms.txt":         "/llms.txt",
	} {
		if got := NormalizePath(in); got != want {
			t.Errorf("NormalizePath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsPage(t *testing.T) {
	for path, want := range map[string]bool{
		"/": true, "/guide": true, "/guide/": true, "/guide.html": true, "/guide.md": true, "/a.mdx": true,
		"/llms.txt": true, "/llms-full.txt": true, "/v1.2/intro": true,
		"/style.css": false, "/app.js": false, "/logo.svg": false, "/favicon.ico": false, "/font.woff2": false,
		"/robots.txt": false, "/sitemap.xml": false, "/.well-known": false, "/data.json": false,
	} {
		if got := IsPage(path); got != want {
			t.Errorf("IsPage(%q) = %v, want %v", path, got, want)
		}
	}
}

// site answers every path with the status the path asks for.
func site() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			http.NotFound(w, r)
		case "/moved":
			http.Redirect(w, r, "/guide", http.StatusMovedPermanently)
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		case "/silent":
			// writes nothing: net/http answers 200
		default:
			w.Write([]byte("<h1>docs</h1>"))
		}
	})
}

func TestMiddlewareCountsOnlySuccessfulPageViews(t *testing.T) {
	sink := &memSink{}
	r := newRecorder(t, sink)
	mw, err := r.Middleware(MiddlewareConfig{Project: "docs"})
	if err != nil {
		t.Fatal(err)
	}
	h := mw(site())
	send := func(method, target, ua string, header ...string) int {
		req := httptest.NewRequest(method, target, nil)
		req.Header.Set("User-Agent", ua)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	send("GET", "/guide/", chromeUA)
	send("GET", "/guide/index.html?utm=1", chromeUA)
	send("GET", "/guide.md", chromeUA) // markdown: AI
	send("GET", "/guide", agentUA)
	send("GET", "/guide", botUA)
	send("GET", "/silent", chromeUA)
	// Not views:
	send("HEAD", "/guide", chromeUA)
	send("POST", "/guide", chromeUA)
	send("GET", "/missing", chromeUA)
	send("GET", "/empty", chromeUA)
	if code := send("GET", "/moved", chromeUA); code != http.StatusMovedPermanently {
		t.Fatalf("the middleware changed the response: %d", code)
	}
	send("GET", "/style.css", chromeUA)
	send("GET", "/guide", chromeUA, "Sec-Purpose", "prefetch;prerender")
	send("GET", "/guide", chromeUA, "Purpose", "prefetch")
	send("GET", "/guide", chromeUA, "x-purpose", "preview")
	send("GET", "/guide", chromeUA, "X-MOZ", "prefetch")

	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	hour := "2026-08-14T09:00:00Z"
	want := map[string]store.ViewCount{
		"docs /guide " + hour: {ProjectID: "docs", Path: "/guide", Hour: at.Truncate(time.Hour), Human: 2, AI: 2, Bot: 1, Agents: []store.AgentCount{
			{Name: "ChatGPT-User", Class: store.AgentAI, Views: 1},
			{Name: "Markdown (.md URL)", Class: store.AgentAI, Views: 1},
			{Name: "Googlebot", Class: store.AgentSearchBot, Views: 1},
		}},
		"docs /silent " + hour: {ProjectID: "docs", Path: "/silent", Hour: at.Truncate(time.Hour), Human: 1},
	}
	if diff := gocmp.Diff(want, sink.snapshot()); diff != "" {
		t.Fatalf("flushed counts (-want +got):\n%s", diff)
	}
	if st := r.Stats(); st.Recorded != 6 || st.Flushed != 6 || st.Pending != 0 {
		t.Errorf("stats = %+v", st)
	}
}

func TestMiddlewareNeedsAProject(t *testing.T) {
	if _, err := newRecorder(t, &memSink{}).Middleware(MiddlewareConfig{}); err == nil {
		t.Fatal("a middleware without a project was accepted")
	}
}

// nopWriter is a ResponseWriter that keeps nothing, for the benchmarks.
type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *nopWriter) WriteHeader(int)             {}

// A failed flush keeps its counts: after the storage recovers, every view
// is stored exactly once, including those recorded while it was down.
func TestFlushFailureKeepsCountsExact(t *testing.T) {
	sink := &memSink{fail: 3}
	r := newRecorder(t, sink)
	ctx := context.Background()
	r.Record("docs", "/a", traffic.Human, at, 5)
	r.Record("docs", "/b", traffic.AI, at, 2)
	for range 3 {
		if err := r.Flush(ctx); err == nil {
			t.Fatal("a flush into failing storage reported success")
		}
		r.Record("docs", "/a", traffic.Human, at, 1) // views keep coming meanwhile
	}
	if st := r.Stats(); st.Pending != 10 || st.FlushErrors != 3 || st.Flushed != 0 {
		t.Fatalf("stats while storage is down = %+v", st)
	}
	if err := r.Flush(ctx); err != nil {
		t.Fatalf("flush after recovery: %v", err)
	}
	got := sink.snapshot()
	if a, b := got["docs /a 2026-08-14T09:00:00Z"], got["docs /b 2026-08-14T09:00:00Z"]; a.Human != 8 || b.AI != 2 || len(got) != 2 {
		t.Fatalf("stored after recovery: %+v", got)
	}
	// Nothing is written twice by later flushes.
	if err := r.Flush(ctx); err != nil || len(sink.snapshot()) != 2 || sink.snapshot()["docs /a 2026-08-14T09:00:00Z"].Human != 8 {
		t.Fatalf("a later flush changed the counts: %+v, %v", sink.snapshot(), err)
	}
}

// Close retries a failing sink until it recovers or the context ends.
func TestCloseRetriesUntilFlushed(t *testing.T) {
	sink := &memSink{fail: 2}
	r := newRecorder(t, sink)
	r.Start()
	r.Record("docs", "/a", traffic.Human, at, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := sink.snapshot()["docs /a 2026-08-14T09:00:00Z"]; got.Human != 3 {
		t.Fatalf("after Close: %+v", sink.snapshot())
	}
	// A sink that never recovers: Close gives up when ctx ends, and the
	// views stay counted as pending.
	dead := &memSink{fail: 1 << 30}
	r2 := newRecorder(t, dead)
	r2.Record("docs", "/a", traffic.Human, at, 4)
	short, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	if err := r2.Close(short); err == nil || r2.Stats().Pending != 4 {
		t.Fatalf("Close on a dead sink = %v, pending %d; want an error and 4 pending", err, r2.Stats().Pending)
	}
}

// Past MaxKeys, views of new paths are counted under the overflow path:
// memory stays bounded and totals stay exact.
func TestOverflowKeepsTotalsExact(t *testing.T) {
	sink := &memSink{}
	r := newRecorder(t, sink, func(c *Config) { c.MaxKeys = 3 })
	for _, p := range []string{"/a", "/b", "/c", "/d", "/e", "/a"} {
		r.Record("docs", p, traffic.Human, at, 1)
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := sink.snapshot()
	var total int64
	for _, v := range got {
		total += v.Human
	}
	// /a, /b and /c fill the three keys; /d and /e land in the overflow
	// counter, which takes no key of its own.
	if total != 6 || got["docs "+DefaultOverflowPath+" 2026-08-14T09:00:00Z"].Human != 2 ||
		got["docs /a 2026-08-14T09:00:00Z"].Human != 2 || got["docs /c 2026-08-14T09:00:00Z"].Human != 1 {
		t.Fatalf("flushed %+v, want 6 views in all with 2 overflowed", got)
	}
	if st := r.Stats(); st.Overflowed != 2 {
		t.Fatalf("Overflowed = %d, want 2", st.Overflowed)
	}
	// After a flush the keys are free again.
	r.Record("docs", "/f", traffic.Human, at, 1)
	r.Flush(context.Background())
	if sink.snapshot()["docs /f 2026-08-14T09:00:00Z"].Human != 1 {
		t.Fatal("a new path after the flush went to overflow")
	}
}

func TestRecordFloorsToTheHour(t *testing.T) {
	sink := &memSink{}
	r := newRecorder(t, sink)
	r.Record("docs", "/a", traffic.Human, time.Date(2026, 8, 14, 9, 59, 59, 999, time.UTC), 1)
	r.Record("docs", "/a", traffic.Human, time.Date(2026, 8, 14, 10, 0, 0, 0, time.FixedZone("x", 3600)), 1) // 09:00 UTC
	r.Record("docs", "/a", traffic.Human, time.Date(1969, 12, 31, 23, 30, 0, 0, time.UTC), 1)
	r.Record("docs", "/a", traffic.Human, at, 0) // nothing
	r.Flush(context.Background())
	got := sink.snapshot()
	if got["docs /a 2026-08-14T09:00:00Z"].Human != 2 || got["docs /a 1969-12-31T23:00:00Z"].Human != 1 || len(got) != 2 {
		t.Fatalf("hours = %+v", got)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no sink":           {},
		"negative interval": {Sink: &memSink{}, FlushInterval: -1},
		"negative keys":     {Sink: &memSink{}, MaxKeys: -1},
		"negative batch":    {Sink: &memSink{}, BatchSize: -1},
		"negative pending":  {Sink: &memSink{}, MaxPendingKeys: -1},
		"negative path":     {Sink: &memSink{}, MaxPathBytes: -1},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestFlushWritesInBatches(t *testing.T) {
	sink := &memSink{}
	r := newRecorder(t, sink, func(c *Config) { c.BatchSize = 2 })
	for _, p := range []string{"/a", "/b", "/c", "/d", "/e"} {
		r.Record("docs", p, traffic.Human, at, 1)
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sink.calls != 3 || len(sink.snapshot()) != 5 {
		t.Fatalf("%d AddViews calls for %d keys, want 3 calls for 5", sink.calls, len(sink.snapshot()))
	}
}
