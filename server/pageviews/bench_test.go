package pageviews

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkMiddleware measures what recording adds to a page request: the
// same request served by the bare handler and through the middleware (a
// human reading a page already counted this hour, the common case).
// BENCHMARKS.md reports the difference.
func BenchmarkMiddleware(b *testing.B) {
	page := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	r, err := New(Config{Sink: &memSink{}})
	if err != nil {
		b.Fatal(err)
	}
	mw, _ := r.Middleware(MiddlewareConfig{Project: "docs"})
	for _, bench := range []struct {
		name string
		h    http.Handler
		ua   string
	}{
		{"bare", page, chromeUA},
		{"recorded/human", mw(page), chromeUA},
		{"recorded/ai-agent", mw(page), agentUA},
		{"recorded/crawler", mw(page), botUA},
	} {
		b.Run(bench.name, func(b *testing.B) {
			req := httptest.NewRequest("GET", "/guide/getting-started/", nil)
			req.Header.Set("User-Agent", bench.ua)
			req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
			w := &nopWriter{h: http.Header{}}
			bench.h.ServeHTTP(w, req)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				bench.h.ServeHTTP(w, req)
			}
		})
	}
	b.Run("recorded/parallel", func(b *testing.B) {
		h := mw(page)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			req := httptest.NewRequest("GET", "/guide/getting-started/", nil)
			req.Header.Set("User-Agent", chromeUA)
			w := &nopWriter{h: http.Header{}}
			for pb.Next() {
				h.ServeHTTP(w, req)
			}
		})
	})
}
