package bench

import (
	"context"
	"net/http"
	"net/http/httptrace"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
)

// Full export: every page of a 100,000-path project (400 pages of 250) from a
// server that sleeps 20 ms per request, through AllViews with the SDK's
// default HTTP client, sequentially and with WithPrefetch(8); and with
// WithPrefetch(8) over a connection pool as deep as the prefetch. Run it with
// -benchtime 1x: one export per run.
const (
	exportPaths    = 100_000
	exportLatency  = 20 * time.Millisecond
	exportPrefetch = 8
)

// heapSampler records the peak of two heap measures above a baseline taken
// after a full GC: heap objects (live and not yet swept, the in-use heap) and
// the live heap as marked by the latest GC.
type heapSampler struct {
	stop     chan struct{}
	done     sync.WaitGroup
	base     [2]uint64
	peak     [2]uint64
	samples  []metrics.Sample
	interval time.Duration
}

func startHeapSampler() *heapSampler {
	s := &heapSampler{
		stop:     make(chan struct{}),
		interval: 500 * time.Microsecond,
		samples: []metrics.Sample{
			{Name: "/memory/classes/heap/objects:bytes"},
			{Name: "/gc/heap/live:bytes"},
		},
	}
	runtime.GC()
	s.base = s.read()
	s.peak = s.base
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		t := time.NewTicker(s.interval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				v := s.read()
				s.peak[0] = max(s.peak[0], v[0])
				s.peak[1] = max(s.peak[1], v[1])
			}
		}
	}()
	return s
}

func (s *heapSampler) read() [2]uint64 {
	metrics.Read(s.samples)
	return [2]uint64{s.samples[0].Value.Uint64(), s.samples[1].Value.Uint64()}
}

// finish stops sampling and returns the peaks above the baseline, in MiB.
// A last forced GC makes the live measure include everything still held.
func (s *heapSampler) finish() (inUse, live float64) {
	runtime.GC()
	close(s.stop)
	s.done.Wait()
	v := s.read()
	s.peak[1] = max(s.peak[1], v[1])
	const mib = 1 << 20
	return float64(s.peak[0]-min(s.base[0], s.peak[0])) / mib, float64(s.peak[1]-min(s.base[1], s.peak[1])) / mib
}

func BenchmarkExport(b *testing.B) {
	srv := NewServer(ServerConfig{Paths: exportPaths, Latency: exportLatency})
	defer srv.Close()
	c := newSDK(b, srv, nil) // the SDK's default HTTP client
	pooled := newSDK(b, srv, newPoolClient(exportPrefetch))
	prefetch := docsapi.WithPrefetch(exportPrefetch)
	cases := []struct {
		name    string
		client  *docsapi.Client
		opts    []docsapi.RequestOption
		collect bool
	}{
		{name: "mode=sequential", client: c},
		{name: "mode=prefetch8", client: c, opts: []docsapi.RequestOption{prefetch}},
		// For comparison: what holding every row costs.
		{name: "mode=prefetch8-collect", client: c, opts: []docsapi.RequestOption{prefetch}, collect: true},
		// A pool as deep as the prefetch, so that no page in flight
		// waits for, or closes, a connection.
		{name: "mode=prefetch8-pool8", client: pooled, opts: []docsapi.RequestOption{prefetch}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			benchExport(b, tc.client, exportPaths, tc.opts, tc.collect)
		})
	}
}

// benchExport runs one whole export per iteration, checks that it yields
// every row, and reports the heap peaks and the connections dialed.
func benchExport(b *testing.B, c *docsapi.Client, paths int, opts []docsapi.RequestOption, collect bool) {
	b.Helper()
	params := docsapi.ViewsParams{
		DateFrom: docsapi.Day(2026, time.October, 1),
		DateTo:   docsapi.Day(2026, time.November, 1),
	}
	// Connections the exports dial rather than take from the pool: the
	// trace rides on the context into every page request, prefetched ones
	// included.
	var dialed atomic.Int64
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			if !info.Reused {
				dialed.Add(1)
			}
		},
	})
	var inUse, live float64
	for b.Loop() {
		// The sampler's forced collections, a few milliseconds, are not
		// timed: they would count at small sizes.
		b.StopTimer()
		sampler := startHeapSampler()
		b.StartTimer()
		var rows int
		var sum int64
		var all []docsapi.PageView
		for view, err := range c.Analytics.AllViews(ctx, "", params, opts...) {
			if err != nil {
				b.Fatal(err)
			}
			rows++
			sum += view.Total
			if collect {
				all = append(all, view)
			}
		}
		if rows != paths || sum == 0 {
			b.Fatalf("got %d rows, want %d", rows, paths)
		}
		b.StopTimer()
		u, l := sampler.finish()
		b.StartTimer()
		runtime.KeepAlive(all)
		inUse, live = max(inUse, u), max(live, l)
	}
	b.ReportMetric(inUse, "peak-heap-MiB")
	b.ReportMetric(live, "peak-live-MiB")
	b.ReportMetric(float64(dialed.Load())/float64(b.N), "conns/export")
}

// newPoolClient is the SDK's default HTTP client (go-cleanhttp's pooled
// transport has the same settings as http.DefaultTransport, apart from
// keeping GOMAXPROCS+1 idle connections per host, and a 60 s timeout) with
// a pool of n connections per host, idle or in use.
func newPoolClient(n int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = n
	t.MaxConnsPerHost = n
	return &http.Client{Transport: t, Timeout: docsapi.DefaultTimeout}
}
