package pageviews

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkMiddleware measures what recording adds to a page request: the
// same request served by the bare handler and through the middleware (a
// human reading a page already counted this hour, the common case), with
// its visitor counted (hashed with the day's salt and inserted into the
// page's sketch) or without (a Sink that keeps no visitors).
// "recorded/human/two-visitors" alternates two visitors on the page, so
// that every request inserts into the sketch; "recorded/human/new-visitors"
// is a new client every request (65,536 addresses in turn), hashed and inserted each time. BENCHMARKS.md
// reports the difference, and the allocations per request, none for a
// page already counted ("recorded/human", and "recorded/human/no-visitors"
// without a visitor): the benchmarks report them rather than a test
// asserting them, since a Go release may change them.
func BenchmarkMiddleware(b *testing.B) {
	page := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	r, err := New(Config{Sink: newVisitorSink()})
	if err != nil {
		b.Fatal(err)
	}
	r.refreshSalts(context.Background())
	mw, _ := r.Middleware(MiddlewareConfig{Project: "docs"})
	plain, err := New(Config{Sink: &memSink{}})
	if err != nil {
		b.Fatal(err)
	}
	plainMW, _ := plain.Middleware(MiddlewareConfig{Project: "docs"})
	newRequest := func(ua string) *http.Request {
		req := httptest.NewRequest("GET", "/guide/getting-started/", nil)
		req.Header.Set("User-Agent", ua)
		req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
		return req
	}
	for _, bench := range []struct {
		name string
		h    http.Handler
		ua   []string
	}{
		{"bare", page, []string{chromeUA}},
		{"recorded/human/no-visitors", plainMW(page), []string{chromeUA}},
		{"recorded/human", mw(page), []string{chromeUA}},
		{"recorded/human/two-visitors", mw(page), []string{chromeUA, chromeUA + " Edg/131.0"}},
		{"recorded/ai-agent", mw(page), []string{agentUA}},
		{"recorded/crawler", mw(page), []string{botUA}},
	} {
		b.Run(bench.name, func(b *testing.B) {
			reqs := make([]*http.Request, len(bench.ua))
			w := &nopWriter{h: http.Header{}}
			for i, ua := range bench.ua {
				reqs[i] = newRequest(ua)
				bench.h.ServeHTTP(w, reqs[i])
			}
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				bench.h.ServeHTTP(w, reqs[i%len(reqs)])
				i++
			}
		})
	}
	b.Run("recorded/human/new-visitors", func(b *testing.B) {
		h := mw(page)
		addrs := make([]string, 1<<16)
		for i := range addrs {
			addrs[i] = fmt.Sprintf("10.%d.%d.%d:50000", i>>16, byte(i>>8), byte(i))
		}
		req := newRequest(chromeUA)
		w := &nopWriter{h: http.Header{}}
		b.ReportAllocs()
		b.ResetTimer()
		i := 0
		for b.Loop() {
			req.RemoteAddr = addrs[i%len(addrs)]
			h.ServeHTTP(w, req)
			i++
		}
	})
	b.Run("recorded/parallel", func(b *testing.B) {
		h := mw(page)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			req := newRequest(chromeUA)
			w := &nopWriter{h: http.Header{}}
			for pb.Next() {
				h.ServeHTTP(w, req)
			}
		})
	})
}
