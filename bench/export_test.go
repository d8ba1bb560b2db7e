package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/bench/internal/genclient"
)

// Full export: every page of a 100,000-path project (400 pages of 250) from a
// server that sleeps 20 ms per request, through AllViews with the SDK's
// default HTTP client, sequentially and with WithPrefetch(8); and with
// WithPrefetch(8) over a connection pool as deep as the prefetch. The same
// for 20,000 paths (80 pages). Run it with -benchtime 1x: one export per
// run; -short leaves out the 400-page exports.
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
	for _, paths := range []int{20_000, exportPaths} {
		b.Run(fmt.Sprintf("paths=%d", paths), func(b *testing.B) {
			if paths > 20_000 && testing.Short() {
				b.Skip("400 pages at 20 ms each; skipped with -short")
			}
			benchExportModes(b, paths)
		})
	}
}

func benchExportModes(b *testing.B, paths int) {
	srv := StartServer(ServerConfig{Paths: paths, Latency: exportLatency})
	defer srv.Close()
	c := newSDK(b, srv.URL, nil) // the SDK's default HTTP client
	pooled := newSDK(b, srv.URL, newPoolClient(exportPrefetch))
	prefetch := docsapi.WithPrefetch(exportPrefetch)
	cases := []struct {
		name    string
		client  *docsapi.Client
		opts    []docsapi.RequestOption
		collect bool
	}{
		{name: "mode=sequential", client: c},
		{name: "mode=prefetch8", client: c, opts: []docsapi.RequestOption{prefetch}},
		// A deeper window: the proof of which pages exist halves near the
		// end of a steady export, so more in flight means fewer rounds.
		{name: "mode=prefetch16", client: c, opts: []docsapi.RequestOption{docsapi.WithPrefetch(16)}},
		// For comparison: what holding every row costs.
		{name: "mode=prefetch8-collect", client: c, opts: []docsapi.RequestOption{prefetch}, collect: true},
		// A pool of at most 8 connections, idle or in use.
		{name: "mode=prefetch8-pool8", client: pooled, opts: []docsapi.RequestOption{prefetch}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			benchExport(b, srv, paths, sdkExport(tc.client, tc.opts, tc.collect))
		})
	}
	// The peers, sequentially, as a user would write the loop: offset +=
	// limit while hasMore, over the per-request benchmarks' HTTP client.
	b.Run("mode=sequential-floor", func(b *testing.B) {
		benchExport(b, srv, paths, floorExport(newHTTPClient(), srv.URL))
	})
	b.Run("mode=sequential-oapi-codegen", func(b *testing.B) {
		benchExport(b, srv, paths, genExport(newGen(b, srv.URL, newHTTPClient())))
	})
}

// exportFunc runs one whole export and returns the rows it yielded and the
// sum of their totals.
type exportFunc func(ctx context.Context) (rows int, sum int64, err error)

// exportParams is the date range every export asks for.
var exportParams = docsapi.ViewsParams{
	DateFrom: docsapi.Day(2026, time.October, 1),
	DateTo:   docsapi.Day(2026, time.November, 1),
}

// sdkExport exports through AllViews, keeping every row if collect is set.
func sdkExport(c *docsapi.Client, opts []docsapi.RequestOption, collect bool) exportFunc {
	return func(ctx context.Context) (int, int64, error) {
		var rows int
		var sum int64
		var all []docsapi.PageView
		for view, err := range c.Analytics.AllViews(ctx, "", exportParams, opts...) {
			if err != nil {
				return 0, 0, err
			}
			rows++
			sum += view.Total
			if collect {
				all = append(all, view)
			}
		}
		runtime.KeepAlive(all)
		return rows, sum, nil
	}
}

// floorExport exports with the hand-written net/http + encoding/json call
// of the per-request benchmarks.
func floorExport(hc *http.Client, base string) exportFunc {
	return func(ctx context.Context) (int, int64, error) {
		var rows int
		var sum int64
		for offset := 0; ; offset += PageLimit {
			url := fmt.Sprintf("%s/v1/analytics/%s/views?dateFrom=2026-10-01&dateTo=2026-11-01&limit=%d&offset=%d",
				base, ProjectID, PageLimit, offset)
			var page floorPage
			if err := floorGet(ctx, hc, url, &page); err != nil {
				return 0, 0, err
			}
			for _, v := range page.Views {
				rows++
				sum += v.Total
			}
			if !page.HasMore {
				return rows, sum, nil
			}
		}
	}
}

// genExport exports with the client oapi-codegen generated.
func genExport(c *genclient.ClientWithResponses) exportFunc {
	return func(ctx context.Context) (int, int64, error) {
		var rows int
		var sum int64
		from, to, limit := "2026-10-01", "2026-11-01", PageLimit
		for offset := 0; ; offset += PageLimit {
			res, err := c.GetPageViewsWithResponse(ctx, ProjectID,
				&genclient.GetPageViewsParams{DateFrom: &from, DateTo: &to, Limit: &limit, Offset: &offset})
			if err != nil {
				return 0, 0, err
			}
			if res.JSON200 == nil {
				return 0, 0, fmt.Errorf("status %d", res.StatusCode())
			}
			for _, v := range res.JSON200.Views {
				rows++
				if v.Total != nil { // the generated model's counts are *float32
					sum += int64(*v.Total)
				}
			}
			if !res.JSON200.HasMore {
				return rows, sum, nil
			}
		}
	}
}

// benchExport runs one whole export per iteration, checks that it yields
// every row, and reports the heap peaks, the connections dialled, and what
// the server counted: requests, those past the last page, connections.
func benchExport(b *testing.B, srv *Server, paths int, export exportFunc) {
	b.Helper()
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
	var counted Counts
	for b.Loop() {
		// The sampler's forced collections, a few milliseconds, are not
		// timed: they would count at small sizes. Nor are the counts read
		// from the server.
		b.StopTimer()
		sampler := startHeapSampler()
		before := srv.Counts()
		b.StartTimer()
		rows, sum, err := export(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if rows != paths || sum == 0 {
			b.Fatalf("got %d rows, want %d", rows, paths)
		}
		b.StopTimer()
		u, l := sampler.finish()
		// Requests cancelled at the end may reach the server a moment
		// after the export returned: wait for the pages in flight.
		time.Sleep(2 * exportLatency)
		d := srv.Counts().Sub(before)
		counted = Counts{counted.Requests + d.Requests, counted.PastEnd + d.PastEnd, counted.Conns + d.Conns}
		b.StartTimer()
		inUse, live = max(inUse, u), max(live, l)
	}
	n := float64(b.N)
	b.ReportMetric(inUse, "peak-heap-MiB")
	b.ReportMetric(live, "peak-live-MiB")
	b.ReportMetric(float64(dialed.Load())/n, "conns/export")
	b.ReportMetric(float64(counted.Requests)/n, "requests/export")
	b.ReportMetric(float64(counted.PastEnd)/n, "past-end/export")
	b.ReportMetric(float64(counted.Conns)/n, "accepted/export")
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
