package bench

import (
	"context"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
)

// Full export: every page of a 100,000-path project (400 pages of 250) from a
// server that sleeps 20 ms per request, through AllViews with the SDK's
// default HTTP client, sequentially and with WithPrefetch(8). Run it with
// -benchtime 1x: one export per run.
const (
	exportPaths   = 100_000
	exportLatency = 20 * time.Millisecond
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
	ctx := context.Background()
	params := docsapi.ViewsParams{
		DateFrom: docsapi.Day(2026, time.October, 1),
		DateTo:   docsapi.Day(2026, time.November, 1),
	}
	cases := []struct {
		name    string
		opts    []docsapi.RequestOption
		collect bool
	}{
		{name: "mode=sequential"},
		{name: "mode=prefetch8", opts: []docsapi.RequestOption{docsapi.WithPrefetch(8)}},
		// For comparison: what holding every row costs.
		{name: "mode=prefetch8-collect", opts: []docsapi.RequestOption{docsapi.WithPrefetch(8)}, collect: true},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			var inUse, live float64
			for b.Loop() {
				sampler := startHeapSampler()
				var rows int
				var sum int64
				var all []docsapi.PageView
				for view, err := range c.Analytics.AllViews(ctx, "", params, tc.opts...) {
					if err != nil {
						b.Fatal(err)
					}
					rows++
					sum += view.Total
					if tc.collect {
						all = append(all, view)
					}
				}
				if rows != exportPaths || sum == 0 {
					b.Fatalf("got %d rows, want %d", rows, exportPaths)
				}
				u, l := sampler.finish()
				runtime.KeepAlive(all)
				inUse, live = max(inUse, u), max(live, l)
			}
			b.ReportMetric(inUse, "peak-heap-MiB")
			b.ReportMetric(live, "peak-live-MiB")
		})
	}
}
