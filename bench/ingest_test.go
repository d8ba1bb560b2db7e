package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/pageviews"
	"github.com/docsapi/docsapi-go/server/store"
)

// Ingestion throughput end to end: POST /v1/analytics/{project}/views over
// real connections to server.New's handler, configured as "docsapi serve"
// configures it (a Recorder flushing every recordFlush, started), storing
// into a new store of each backend. Each call sends one request of
// views=N views, cycling over recordPaths pages, alternately as a browser
// and as an AI agent (as BenchmarkRecord does), and must be answered 202
// with "accepted": N. The views/s metric counts views, req/s requests.
// After the timed requests the recorder is closed (its last flush, untimed)
// and the store must hold exactly the views sent, human and AI apart.

// ingestBatches are the views per request measured: one view per request
// (the most requests, the most commits), a typical batch and the largest
// a request may hold.
var ingestBatches = []int{1, 100, 1000}

// BenchmarkRecordIngest: ingestion requests from concurrent callers.
func BenchmarkRecordIngest(b *testing.B) {
	for _, callers := range callerCounts()[1:] {
		for _, be := range backends() {
			for _, per := range ingestBatches {
				b.Run(fmt.Sprintf("handler=ingest/backend=%s/views=%d/%s", be.name, per, callersName(callers)), func(b *testing.B) {
					benchIngest(b, be.open(b), per, callers)
				})
			}
		}
	}
}

// ingestBody is request i's body when each request holds per views: views
// i*per to i*per+per-1, view k on page k%recordPaths as agent k%2.
func ingestBody(i, per int) string {
	var sb strings.Builder
	sb.WriteString(`{"views":[`)
	for j := range per {
		k := i*per + j
		if j > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"path":"/guides/topic-%04d/","userAgent":%q,"accept":"text/html"}`, k%recordPaths, recordAgents[k%2])
	}
	sb.WriteString(`]}`)
	return sb.String()
}

// commitCounter counts the AddViews calls that reach the store.
type commitCounter struct {
	store.Store
	calls atomic.Int64
}

func (c *commitCounter) AddViews(ctx context.Context, counts []store.ViewCount) error {
	c.calls.Add(1)
	return c.Store.AddViews(ctx, counts)
}

func benchIngest(b *testing.B, backing store.Store, per, callers int) {
	ctx := context.Background()
	st := &commitCounter{Store: backing}
	rec, err := pageviews.New(pageviews.Config{Sink: st, FlushInterval: recordFlush})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := server.New(server.Config{Store: st, PageViews: rec})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := srv.CreateProject(ctx, store.Project{ID: recordProject, Repository: "https://github.com/acme/docs.git"}); err != nil {
		b.Fatal(err)
	}
	key, err := srv.CreateKey(ctx, server.KeyParams{Name: "bench", Projects: []string{recordProject}, Scopes: []store.Scope{store.ScopeWrite}})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	b.Cleanup(hs.Close)
	hc := newHTTPClient()
	b.Cleanup(hc.CloseIdleConnections)
	url := hs.URL + "/v1/analytics/" + recordProject + "/views"
	// Request i's body depends on i*per only modulo recordPaths (the
	// pages and the agents cycle with it), so the bodies are made once.
	bodies := make([]string, recordPaths/gcd(per, recordPaths))
	for i := range bodies {
		bodies[i] = ingestBody(i, per)
	}
	want := fmt.Sprintf(`{"accepted":%d}`, per)
	rec.Start()
	runCallers(b, callers, "req/s", func(i int) error {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(bodies[i%len(bodies)]))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+key.Secret)
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusAccepted || strings.TrimSpace(string(body)) != want {
			return fmt.Errorf("POST %s: %d %s", url, resp.StatusCode, body)
		}
		return nil
	})
	b.ReportMetric(float64(b.N*per)/b.Elapsed().Seconds(), "views/s")
	// Requests per store transaction: how well the commits are shared.
	b.ReportMetric(float64(b.N)/float64(max(st.calls.Load(), 1)), "req/commit")

	// Untimed: the recorder's last flush, then the counts.
	closeCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := rec.Close(closeCtx); err != nil {
		b.Fatal(err)
	}
	n := b.N * per
	res, err := st.QueryViews(ctx, store.ViewsQuery{ProjectID: recordProject, Limit: recordPaths})
	if err != nil {
		b.Fatal(err)
	}
	wantHuman, wantAI := int64((n+1)/2), int64(n/2)
	if res.Totals.Human != wantHuman || res.Totals.AI != wantAI || len(res.Rows) != min(n, recordPaths) || res.HasMore {
		b.Fatalf("stored %d human and %d AI views on %d pages (more: %v), want %d, %d and %d pages",
			res.Totals.Human, res.Totals.AI, len(res.Rows), res.HasMore, wantHuman, wantAI, min(n, recordPaths))
	}
}

// gcd is the greatest common divisor of a and b.
func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
