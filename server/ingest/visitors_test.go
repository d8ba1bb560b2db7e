package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/hll"
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
