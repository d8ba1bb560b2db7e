package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/hll"
	"github.com/docsapi/docsapi-go/server/internal/openapitest"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/store"
)

// visitorSpy is a store that keeps the visitors it is given (merged per
// path and class) and hands out a salt per day; its AddVisitors can fail.
type visitorSpy struct {
	store.Store
	mu       sync.Mutex
	sketches map[string]*hll.Sketch // "path class"
	raw      [][]byte
	fail     bool
	saltDays []string
}

func (v *visitorSpy) AddVisitors(_ context.Context, counts []store.VisitorCount) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.fail {
		return errors.New("storage is down")
	}
	if err := store.ValidateVisitorCounts(counts); err != nil {
		return err
	}
	if v.sketches == nil {
		v.sketches = map[string]*hll.Sketch{}
	}
	for _, c := range counts {
		for class, b := range map[string][]byte{"human": c.Human, "ai": c.AI} {
			if len(b) == 0 {
				continue
			}
			v.raw = append(v.raw, b)
			k := c.Path + " " + class
			if v.sketches[k] == nil {
				v.sketches[k] = new(hll.Sketch)
			}
			if err := v.sketches[k].MergeBinary(b); err != nil {
				return err
			}
		}
	}
	return nil
}

func (v *visitorSpy) VisitorSalt(_ context.Context, day time.Time) ([]byte, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	d := day.UTC().Format(time.DateOnly)
	v.saltDays = append(v.saltDays, d)
	return []byte(fmt.Sprintf("%-32s", "salt of "+d)), nil
}

func (v *visitorSpy) visitors(path, class string) uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	if s := v.sketches[path+" "+class]; s != nil {
		return s.Estimate()
	}
	return 0
}

// Ingested views that name a visitor count it, hashed with the day's salt
// and the project: the key is not stored; bots and views without a key
// count none, nor do views of days whose salt is gone.
func TestIngestCountsVisitors(t *testing.T) {
	spy := &visitorSpy{}
	e := newEnv(t, func(c *server.Config) { spy.Store = c.Store; c.Store = spy })
	const chrome = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	old := e.Clock.Now().AddDate(0, 0, -3).Format(time.RFC3339)
	body := `{"views":[
		{"path":"/x","userAgent":"` + chrome + `","visitor":"session-a"},
		{"path":"/x/","userAgent":"` + chrome + `","visitor":"session-b","count":3},
		{"path":"/x","userAgent":"` + chrome + `","visitor":"session-a"},
		{"path":"/x","userAgent":"` + chrome + `"},
		{"path":"/x","userAgent":"claude-code/1.0","visitor":"session-a"},
		{"path":"/x","userAgent":"Googlebot/2.1","visitor":"session-z"},
		{"path":"/old","userAgent":"` + chrome + `","visitor":"session-a","at":"` + old + `"}
	]}`
	if resp, b := e.Do("rw", "POST", "/v1/analytics/alpha/views", body); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("ingest: %d %s", resp.StatusCode, b)
	}
	// The visitors are added after the answer: wait for them.
	deadline := time.Now().Add(5 * time.Second)
	for spy.visitors("/x", "human") == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	for _, c := range []struct {
		path, class string
		want        uint64
	}{{"/x", "human", 2}, {"/x", "ai", 1}, {"/old", "human", 0}} {
		if got := spy.visitors(c.path, c.class); got != c.want {
			t.Errorf("visitors of %s (%s): %d, want %d", c.path, c.class, got, c.want)
		}
	}
	spy.mu.Lock()
	for _, b := range spy.raw {
		if bytes.Contains(b, []byte("session-")) {
			t.Errorf("a visitor key reached the store: %q", b)
		}
	}
	if len(spy.saltDays) != 1 || spy.saltDays[0] != "2026-08-14" {
		t.Errorf("salts asked for %v, want today's alone", spy.saltDays)
	}
	spy.mu.Unlock()
	if p := e.views("ro", ""); p.Totals.Human != 7 || p.Totals.AI != 1 {
		t.Errorf("views %+v, want 7 human (one of them without a visitor, being old) and 1 AI", p.Totals)
	}
}

// A failure to store visitors leaves the views stored and answered 202:
// the answer is the views'.
func TestIngestVisitorFailureKeepsViews(t *testing.T) {
	spy := &visitorSpy{fail: true}
	e := newEnv(t, func(c *server.Config) { spy.Store = c.Store; c.Store = spy })
	if resp, b := e.Do("rw", "POST", "/v1/analytics/alpha/views", `{"views":[{"path":"/x","userAgent":"Mozilla/5.0 Firefox/130.0","visitor":"s1"}]}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("ingest: %d %s", resp.StatusCode, b)
	}
	if p := e.views("ro", ""); p.Totals.Total != 1 {
		t.Errorf("views %+v, want 1", p.Totals)
	}
}

// visitorsWritten is a store that tells when each AddVisitors call has
// returned, so that a test waits for the visitors ingestion adds after
// its answer rather than for time to pass.
type visitorsWritten struct {
	store.Store
	done chan error
}

func (v *visitorsWritten) AddVisitors(ctx context.Context, counts []store.VisitorCount) error {
	err := v.Store.AddVisitors(ctx, counts)
	v.done <- err
	return err
}

// ingestVisitors sends views of path dated at, one per visitor key, and
// waits for their visitors to be stored. A view of today by the visitor
// "marker" rides along, so that a request whose other visitors count
// none still has a write to wait for.
func (e *env) ingestVisitors(w *visitorsWritten, path string, at time.Time, keys ...string) {
	e.T.Helper()
	const chrome = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	views := []string{`{"path":"/marker","userAgent":"` + chrome + `","visitor":"marker"}`}
	for _, k := range keys {
		views = append(views, fmt.Sprintf(`{"path":%q,"userAgent":%q,"visitor":%q,"at":%q}`, path, chrome, k, at.Format(time.RFC3339)))
	}
	if resp, b := e.Do("rw", "POST", "/v1/analytics/alpha/views", `{"views":[`+strings.Join(views, ",")+`]}`); resp.StatusCode != http.StatusAccepted {
		e.T.Fatalf("ingest: %d %s", resp.StatusCode, b)
	}
	select {
	case err := <-w.done:
		if err != nil {
			e.T.Fatalf("AddVisitors: %v", err)
		}
	case <-time.After(10 * time.Second):
		e.T.Fatal("the ingested visitors were not stored")
	}
}

// A day is yesterday to every server until its own midnight, while
// tomorrow's salt is asked for ahead of it: a view dated up to an hour
// ahead asks for it, and replicas' clocks are minutes apart. Readers of
// yesterday seen again then, on a replica that asks for the day's salt
// anew or on the one that asked for tomorrow's, count once. Once no
// server calls the day yesterday, it closes and its salt is deleted, and
// a reader of it seen again counts no visitor.
func TestIngestYesterdaysReadersCountOnceAroundMidnight(t *testing.T) {
	w := &visitorsWritten{done: make(chan error, 16)}
	e := newEnv(t, func(c *server.Config) { w.Store = c.Store; c.Store = w })
	behind := servertest.NewClock(e.Clock.Now().Add(-10 * time.Minute))
	replica, err := server.New(server.Config{Store: w, Now: behind.Now, Secret: e.Secret})
	if err != nil {
		t.Fatal(err)
	}
	other := &env{&servertest.Env{T: t, Server: replica, Store: w, Clock: behind, Handler: openapitest.New(t).Handler(t, replica), Keys: e.Keys}}
	advance := func(d time.Duration) { e.Clock.Advance(d); behind.Advance(d) }

	day := time.Date(2026, 8, 14, 0, 0, 0, 0, time.UTC) // today, by the clocks
	firstSalt, err := e.Store.VisitorSalt(t.Context(), day)
	if err != nil {
		t.Fatal(err)
	}
	e.ingestVisitors(w, "/guide", e.Clock.Now(), "r1", "r2", "r3")
	ofDay := func(when string) {
		t.Helper()
		var p docsapi.VisitorsPage
		e.GetJSON("ro", "/v1/analytics/alpha/visitors?dateFrom=2026-08-14&dateTo=2026-08-15", &p)
		want := docsapi.PageVisitors{Path: "/guide", Human: 3, Total: 3}
		if i := slices.IndexFunc(p.Visitors, func(r docsapi.PageVisitors) bool { return r.Path == "/guide" }); i < 0 || p.Visitors[i] != want {
			t.Errorf("%s: the day's visitors %+v, want /guide's 3 readers", when, p.Visitors)
		}
	}
	ofDay("the day")

	// The next day at 23:05: a view dated 00:04 asks for the salt of
	// the day after, while the first day is yesterday to both servers.
	advance(24*time.Hour + 14*time.Hour + 5*time.Minute)
	e.ingestVisitors(w, "/guide", e.Clock.Now().Add(59*time.Minute), "early")
	other.ingestVisitors(w, "/guide", day.Add(23*time.Hour+30*time.Minute), "r1", "r2", "r3")
	e.ingestVisitors(w, "/guide", day.Add(22*time.Hour), "r1", "r2", "r3")
	ofDay("yesterday, tomorrow's salt asked for")

	// A day later, at 23:05 again: the day after next's salt closes the
	// first day, and deletes its salt; a reader of it seen again, on
	// either server, counts no visitor.
	advance(24 * time.Hour)
	e.ingestVisitors(w, "/marker", e.Clock.Now().Add(59*time.Minute), "early")
	other.ingestVisitors(w, "/guide", day.Add(23*time.Hour+59*time.Minute), "r1", "r4")
	e.ingestVisitors(w, "/guide", day.Add(23*time.Hour+59*time.Minute), "r1", "r4")
	ofDay("closed")
	if again, err := e.Store.VisitorSalt(t.Context(), day); err != nil || bytes.Equal(again, firstSalt) {
		t.Errorf("the closed day's salt: kept %v (%v)", bytes.Equal(again, firstSalt), err)
	}
}
