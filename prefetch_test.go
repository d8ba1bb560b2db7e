package docsapi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/time/rate"
)

func TestPrefetchYieldsEveryRowInOrderAndOverlapsRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		pages := &pagedViews{total: 1000, pageSize: 100, latency: 20 * time.Millisecond, failAt: -1}
		pages.serve(mt)

		start := time.Now()
		var paths []string
		for v, err := range c.Analytics.AllViews(t.Context(), "", ViewsParams{Limit: 100}, WithPrefetch(4)) {
			if err != nil {
				t.Fatal(err)
			}
			paths = append(paths, v.Path)
		}
		elapsed := time.Since(start)
		if len(paths) != 1000 {
			t.Fatalf("%d rows, want 1000", len(paths))
		}
		for i, p := range paths {
			if want := fmt.Sprintf("/p%05d", i); p != want {
				t.Fatalf("row %d is %s, want %s: rows must come in order", i, p, want)
			}
		}
		offsets, peak := pages.seen()
		// Ten pages, four in flight: the first four together, then each
		// consumed page starts the next. At most 3 pages past the end.
		if peak != 4 || len(offsets) > 13 {
			t.Errorf("peak %d requests in flight and %d requests, want 4 and at most 13", peak, len(offsets))
		}
		// Sequentially, 10 × 20 ms; with four in flight, three rounds.
		if elapsed != 60*time.Millisecond {
			t.Errorf("export took %v of virtual time, want 60ms", elapsed)
		}
	})
}

func TestPrefetchStopsAtTheFirstErrorInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		pages := &pagedViews{total: 1000, pageSize: 100, latency: 20 * time.Millisecond, failAt: 300}
		pages.serve(mt)
		var rows int
		var errs []error
		for _, err := range c.Analytics.AllViews(t.Context(), "", ViewsParams{Limit: 100}, WithPrefetch(4)) {
			if err != nil {
				errs = append(errs, err)
				continue
			}
			rows++
		}
		// Pages 0, 100 and 200 come first, whole; then the one error.
		if rows != 300 || len(errs) != 1 || !errors.Is(errs[0], ErrBadRequest) {
			t.Fatalf("%d rows and errors %v; want 300 rows then one ErrBadRequest", rows, errs)
		}
		synctest.Wait() // requests still in flight were cancelled and returned
	})
}

func TestPrefetchBreakCancelsWhatIsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		// The first page answers after a millisecond, the others only after
		// an hour: when the loop breaks, seven requests are still waiting.
		pages := &pagedViews{total: 1000, pageSize: 100, latency: time.Hour, failAt: -1, firstFast: true}
		pages.serve(mt)
		for range c.Analytics.AllViews(t.Context(), "", ViewsParams{Limit: 100}, WithPrefetch(8)) {
			break
		}
		synctest.Wait()
		offsets, _ := pages.seen()
		if len(offsets) != 8 {
			t.Fatalf("%d requests, want the 8 launched before the break and no more", len(offsets))
		}
		pages.mu.Lock()
		active := pages.active
		pages.mu.Unlock()
		if active != 0 {
			t.Fatalf("%d requests still running after the loop ended", active)
		}
	})
}

func TestPrefetchOfASinglePageAsksLittlePastTheEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		pages := &pagedViews{total: 50, pageSize: 100, latency: 20 * time.Millisecond, failAt: -1}
		pages.serve(mt)
		rows, err := Collect(c.Analytics.AllViews(t.Context(), "", ViewsParams{Limit: 100}, WithPrefetch(3)))
		if err != nil || len(rows) != 50 {
			t.Fatalf("%d rows, %v", len(rows), err)
		}
		synctest.Wait()
		if offsets, _ := pages.seen(); len(offsets) > 3 {
			t.Fatalf("%d requests for one page, want at most 3 (n-1 past the end)", len(offsets))
		}
	})
}

func TestPrefetchRefusesBadArguments(t *testing.T) {
	c, mt := newTestClient(t)
	for _, opts := range [][]RequestOption{
		{WithPrefetch(0)}, {WithPrefetch(33)},
		{WithPrefetch(4), WithResponse(&Response{})},
	} {
		_, err := Collect(c.Analytics.AllViews(context.Background(), "", ViewsParams{}, opts...))
		var v *ValidationError
		if !errors.As(err, &v) || v.Param != "prefetch" {
			t.Errorf("options %d: %v, want a validation error on prefetch", len(opts), err)
		}
	}
	if n := mt.GetTotalCallCount(); n != 0 {
		t.Fatalf("%d requests sent, want none", n)
	}
}

func TestPrefetchRespectsTheRateLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// One request a second, no burst beyond one: eight pages in
		// flight may be asked for, but they leave one a second.
		lim := rate.NewLimiter(rate.Every(time.Second), 1)
		c, mt := newTestClient(t, WithRateLimiter(lim))
		pages := &pagedViews{total: 500, pageSize: 100, latency: 0, failAt: -1}
		pages.serve(mt)
		rows, err := Collect(c.Analytics.AllViews(t.Context(), "", ViewsParams{Limit: 100}, WithPrefetch(8)))
		if err != nil || len(rows) != 500 {
			t.Fatalf("%d rows, %v", len(rows), err)
		}
		synctest.Wait()
		sent := pages.rec.Times() // since the start
		slices.Sort(sent)
		for i := 1; i < len(sent); i++ {
			if gap := sent[i] - sent[i-1]; gap < time.Second {
				t.Fatalf("requests %d and %d left %v apart, want at least the limiter's 1s (sent at %v)", i-1, i, gap, sent)
			}
		}
		if len(sent) < 5 || sent[4] < 4*time.Second {
			t.Fatalf("%d requests, the fifth at %v: want the five pages spread over at least 4s", len(sent), sent)
		}
	})
}
