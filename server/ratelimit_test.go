package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server"
)

// Ingestion has a budget of its own: a site sending views cannot spend the
// budget of the dashboards that read them, nor the other way round.
func TestIngestHasItsOwnRateLimit(t *testing.T) {
	e := newEnv(t, func(c *server.Config) {
		c.RateLimits = server.RateLimits{
			Analytics: server.Limit{Requests: 1, Per: time.Minute},
			Ingest:    server.Limit{Requests: 2, Per: time.Minute},
		}
	})
	const views = `{"views": [{"path": "/a"}]}`
	for i := range 2 {
		if resp, body := e.Do("rw", "POST", "/v1/analytics/alpha/views", views); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("ingestion %d: %d %s, want 202 (under the limit)", i, resp.StatusCode, body)
		}
	}
	resp, body := e.Do("rw", "POST", "/v1/analytics/alpha/views", views)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "30" {
		t.Fatalf("third ingestion: %d Retry-After %q %s, want 429 and 30", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	// The same key still reads, once.
	if resp, body := e.Do("rw", "GET", "/v1/analytics/alpha/views", ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("read after ingestion ran out: %d %s, want 200", resp.StatusCode, body)
	}
	resp, _ = e.Do("rw", "GET", "/v1/analytics/alpha/views", "")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "60" {
		t.Fatalf("second read: %d Retry-After %q, want 429 and 60", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	// Another key has budgets of its own.
	if resp, body := e.Do("beta", "POST", "/v1/analytics/beta/views", views); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("another key: %d %s, want 202", resp.StatusCode, body)
	}
	e.Clock.Advance(30 * time.Second)
	if resp, body := e.Do("rw", "POST", "/v1/analytics/alpha/views", views); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("after Retry-After: %d %s, want 202", resp.StatusCode, body)
	}
}

func TestDefaultRateLimits(t *testing.T) {
	d := server.DefaultRateLimits()
	want := server.RateLimits{
		Analytics: server.Limit{Requests: 600, Per: time.Minute},
		Ingest:    server.Limit{Requests: 6000, Per: time.Minute},
	}
	if d != want {
		t.Fatalf("DefaultRateLimits() = %+v, want %+v", d, want)
	}
	e := newEnv(t)
	if _, err := server.New(server.Config{Store: e.Store, RateLimits: d}); err != nil {
		t.Fatalf("New refuses the defaults: %v", err)
	}
	if _, err := server.New(server.Config{Store: e.Store, RateLimits: server.RateLimits{Ingest: server.Limit{Per: time.Minute}}}); err == nil {
		t.Fatal("New accepts an ingestion limit without requests")
	}
}
