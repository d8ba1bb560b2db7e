package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/pageviews"
	"github.com/docsapi/docsapi-go/server/store"
)

// Recording throughput end to end: page requests over real connections to
// a docs site whose trivial page handler is wrapped in
// pageviews.Recorder.Middleware, the recorder flushing into a new store of
// each backend (see backends) every recordFlush while the requests go on.
// The same site without the middleware is the reference; it stores nothing,
// so its names have no backend= level. After the timed requests the
// recorder is closed (its last flush) and the stored counts must equal the
// requests made, human and AI apart, or the benchmark fails: a recorder
// that dropped views would otherwise look faster.

const (
	recordProject = "docs"
	recordPaths   = 1000 // distinct pages, so that every flush writes many rows
	// recordFlush is far shorter than the default 10 s, so that a run of
	// about a second includes several flushes into the store, as a
	// long-running site would. It makes the flushes' share pessimistic: a flush writes one
	// row per page viewed since the last, so the fewer views a flush holds
	// per page, the more rows it writes per view.
	recordFlush = 100 * time.Millisecond
)

// recordAgents alternate: even requests come from a browser, odd ones from
// an AI agent fetching a page for its user.
var recordAgents = [2]string{
	"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
	"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)",
}

var pageBody = []byte("<!doctype html><title>Guide</title><h1>Guide</h1><p>A page of the docs.</p>\n")

// recordPage is the trivial page handler.
func recordPage(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(pageBody)
}

// getPage requests page i%recordPaths as agent i%2 and checks the answer.
func getPage(hc *http.Client, urls []string, i int) error {
	req, err := http.NewRequest(http.MethodGet, urls[i%len(urls)], nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", recordAgents[i%2])
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || n != int64(len(pageBody)) {
		return fmt.Errorf("GET %s: status %d, %d bytes", req.URL.Path, resp.StatusCode, n)
	}
	return nil
}

// recordSite serves h on a local listener and returns the page URLs and a client
// whose pool holds a connection for every caller.
func recordSite(b *testing.B, h http.Handler) ([]string, *http.Client) {
	b.Helper()
	hs := httptest.NewServer(h)
	b.Cleanup(hs.Close)
	hc := newHTTPClient()
	b.Cleanup(hc.CloseIdleConnections)
	urls := make([]string, recordPaths)
	for i := range urls {
		urls[i] = fmt.Sprintf("%s/guides/topic-%04d/", hs.URL, i)
	}
	return urls, hc
}

// BenchmarkRecord: page requests to the bare site, then to the recorded
// site on each backend, at each concurrency.
func BenchmarkRecord(b *testing.B) {
	for _, callers := range callerCounts()[1:] {
		b.Run("handler=bare/"+callersName(callers), func(b *testing.B) {
			urls, hc := recordSite(b, http.HandlerFunc(recordPage))
			runCallers(b, callers, "req/s", func(i int) error { return getPage(hc, urls, i) })
		})
		for _, be := range backends() {
			b.Run("handler=recorded/backend="+be.name+"/"+callersName(callers), func(b *testing.B) {
				benchRecorded(b, be.open(b), callers)
			})
		}
	}
}

// benchRecorded is one case of the recorded site, flushing into st.
func benchRecorded(b *testing.B, st store.Store, callers int) {
	rec, err := pageviews.New(pageviews.Config{Sink: st, FlushInterval: recordFlush})
	if err != nil {
		b.Fatal(err)
	}
	mw, err := rec.Middleware(pageviews.MiddlewareConfig{Project: recordProject})
	if err != nil {
		b.Fatal(err)
	}
	urls, hc := recordSite(b, mw(http.HandlerFunc(recordPage)))
	rec.Start()
	runCallers(b, callers, "views/s", func(i int) error { return getPage(hc, urls, i) })

	// Untimed: the last flush, then the counts.
	closeCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := rec.Close(closeCtx); err != nil {
		b.Fatal(err)
	}
	stats := rec.Stats()
	checkRecorded(b, st, stats, b.N)
	// A periodic flush has FlushInterval as its deadline; one that
	// misses it keeps its counts for the next, as designed. Shown,
	// since such a retry is part of the time measured.
	b.ReportMetric(float64(stats.FlushErrors), "flush-errors")
}

// checkRecorded fails b unless the store holds exactly the n views sent:
// requests 0 to n-1, the even ones human, the odd ones AI, on
// min(n, recordPaths) pages. Failed flushes are allowed: their counts are
// written by a later one, which is what the totals check. It reads through
// store.Store's QueryViews, so every backend is checked the same way.
func checkRecorded(b *testing.B, st store.Store, stats pageviews.Stats, n int) {
	b.Helper()
	if stats.Recorded != int64(n) || stats.Flushed != int64(n) || stats.Pending != 0 || stats.Overflowed != 0 {
		b.Fatalf("after %d requests the recorder reports %+v", n, stats)
	}
	res, err := st.QueryViews(context.Background(), store.ViewsQuery{ProjectID: recordProject, Limit: recordPaths})
	if err != nil {
		b.Fatal(err)
	}
	wantHuman, wantAI := int64((n+1)/2), int64(n/2)
	if res.Totals.Human != wantHuman || res.Totals.AI != wantAI {
		b.Fatalf("stored %d human and %d AI views, want %d and %d", res.Totals.Human, res.Totals.AI, wantHuman, wantAI)
	}
	var sum int64
	for _, r := range res.Rows {
		sum += r.Human + r.AI
	}
	if len(res.Rows) != min(n, recordPaths) || res.HasMore || sum != int64(n) {
		b.Fatalf("stored %d pages (more: %v) summing to %d views, want %d pages and %d views",
			len(res.Rows), res.HasMore, sum, min(n, recordPaths), n)
	}
}
