package docsapi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/time/rate"
)

// descending is a views export sorted by total, largest first, as servers
// send it: row i of n has n-i views.
func descending(n int) func(int) int64 {
	return func(i int) int64 { return int64(n - i) }
}

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
		synctest.Wait()
		offsets, peak := pages.seen()
		// Ten pages: two at first, then four in flight, and the totals
		// tell that no page is past the end.
		if peak != 4 || len(offsets) != 10 {
			t.Errorf("peak %d requests in flight and %d requests, want 4 and 10", peak, len(offsets))
		}
		// Sequentially 10 × 20 ms; here 2, then 4 and 4 pages a round.
		if elapsed != 60*time.Millisecond {
			t.Errorf("export took %v of virtual time, want 60ms", elapsed)
		}
	})
}

// The plan's promise: an export from the first row whose rows come sorted
// by total requests no page past its end, whatever its length, but the
// second page of a single-page export.
func TestPrefetchRequestsNoPagePastTheEndOfSortedViews(t *testing.T) {
	for _, prefetch := range []int{2, 4, 8, 32} {
		for _, rows := range []int{1, 99, 100, 101, 250, 799, 800, 1234, 3000} {
			t.Run(fmt.Sprintf("prefetch %d, %d rows", prefetch, rows), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					c, mt := newTestClient(t)
					pages := &pagedViews{total: rows, pageSize: 100, latency: 20 * time.Millisecond, failAt: -1, count: descending(rows)}
					pages.serve(mt)
					got, err := Collect(c.Analytics.AllViews(t.Context(), "", ViewsParams{Limit: 100}, WithPrefetch(prefetch)))
					if err != nil || len(got) != rows {
						t.Fatalf("%d rows, %v; want %d", len(got), err, rows)
					}
					for i, v := range got {
						if v.Total != int64(rows-i) {
							t.Fatalf("row %d has total %d, want %d: rows out of order", i, v.Total, rows-i)
						}
					}
					synctest.Wait()
					offsets, peak := pages.seen()
					want := (rows + 99) / 100
					if want == 1 {
						want = 2 // the one page asked for before any answered
					}
					if len(offsets) != want {
						t.Errorf("%d requests (offsets %v), want %d", len(offsets), offsets, want)
					}
					if peak > prefetch {
						t.Errorf("%d requests in flight, want at most %d", peak, prefetch)
					}
				})
			})
		}
	}
}

// Without a bound on the rows left the pages in flight double at each round
// trip, up to n: 2, 4, 8, 8...
func TestPrefetchRampsUpWhenTheTotalsCannotTell(t *testing.T) {
	tests := []struct {
		name        string
		count       func(int) int64
		totalsDelta int64
		params      ViewsParams
	}{
		// Rows in increasing order: a row may hold more than the last.
		{"rows not sorted by total", func(i int) int64 { return int64(i + 1) }, 0, ViewsParams{Limit: 100}},
		// Totals less than the first page's rows: the numbers disagree.
		{"totals less than the rows", nil, -2950, ViewsParams{Limit: 100}},
		// The rows skipped could hold any part of the totals.
		{"export from an offset", descending(3000), 0, ViewsParams{Limit: 100, Offset: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t)
				pages := &pagedViews{total: 3000, pageSize: 100, latency: 20 * time.Millisecond, failAt: -1, count: tt.count, totalsDelta: tt.totalsDelta}
				pages.serve(mt)
				got, err := Collect(c.Analytics.AllViews(t.Context(), "", tt.params, WithPrefetch(8)))
				if err != nil || len(got) != 3000-tt.params.Offset {
					t.Fatalf("%d rows, %v", len(got), err)
				}
				synctest.Wait()
				rounds := requestsPerRound(pages.rec.Times(), 20*time.Millisecond)
				if len(rounds) < 4 || !slices.Equal(rounds[:4], []int{2, 4, 8, 8}) {
					t.Errorf("requests per round trip %v, want 2, 4, 8, 8 first", rounds)
				}
				if past := sum(rounds) - 30; past > 7 {
					t.Errorf("%d requests past the end, want at most 7", past)
				}
			})
		})
	}
}

// requestsPerRound counts the requests sent in each round trip of d.
func requestsPerRound(sent []time.Duration, d time.Duration) []int {
	var rounds []int
	for _, at := range sent {
		r := int(at / d)
		for len(rounds) <= r {
			rounds = append(rounds, 0)
		}
		rounds[r]++
	}
	return rounds
}

func sum(n []int) int {
	s := 0
	for _, v := range n {
		s += v
	}
	return s
}

// Totals that overstate the rows make the plan ask as far ahead as n
// allows, as before it had a plan: at most n-1 requests past the end.
func TestPrefetchWithTotalsThatOverstateAsksAtMostNMinusOnePastTheEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		pages := &pagedViews{total: 3000, pageSize: 100, latency: 20 * time.Millisecond, failAt: -1, totalsDelta: 50_000}
		pages.serve(mt)
		rows, err := Collect(c.Analytics.AllViews(t.Context(), "", ViewsParams{Limit: 100}, WithPrefetch(8)))
		if err != nil || len(rows) != 3000 {
			t.Fatalf("%d rows, %v", len(rows), err)
		}
		synctest.Wait()
		if offsets, _ := pages.seen(); len(offsets) > 30+7 {
			t.Fatalf("%d requests for 30 pages, want at most 37", len(offsets))
		}
	})
}

func TestPrefetchStopsAtTheFirstErrorInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		pages := &pagedViews{total: 1000, pageSize: 100, latency: 20 * time.Millisecond, failAt: 300, count: descending(1000)}
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
		sent, _ := pages.seen()
		time.Sleep(time.Hour)
		synctest.Wait()
		if later, _ := pages.seen(); len(later) != len(sent) {
			t.Errorf("%d requests after the error, want none", len(later)-len(sent))
		}
		// Four in flight when page 300 failed: 400 to 600 at most.
		if len(sent) > 7 {
			t.Errorf("%d requests, want at most 7", len(sent))
		}
	})
}

func TestPrefetchBreakCancelsWhatIsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		// The first page answers after a millisecond, the others only after
		// an hour: when the loop breaks, the requests made as the first
		// page arrived are still waiting.
		pages := &pagedViews{total: 1000, pageSize: 100, latency: time.Hour, failAt: -1, firstFast: true}
		pages.serve(mt)
		for range c.Analytics.AllViews(t.Context(), "", ViewsParams{Limit: 100}, WithPrefetch(8)) {
			break
		}
		synctest.Wait()
		sent, _ := pages.seen()
		// Two at first, and up to seven more as the first page arrived
		// (those may be cancelled before they are sent).
		if len(sent) < 2 || len(sent) > 9 {
			t.Fatalf("%d requests, want from 2 to 9", len(sent))
		}
		pages.mu.Lock()
		active := pages.active
		pages.mu.Unlock()
		if active != 0 {
			t.Fatalf("%d requests still running after the loop ended", active)
		}
		time.Sleep(2 * time.Hour)
		synctest.Wait()
		if later, _ := pages.seen(); len(later) != len(sent) {
			t.Fatalf("%d requests after the break, want none", len(later)-len(sent))
		}
	})
}

func TestPrefetchContextCanceledMidwayYieldsOneErrorAndCancelsTheRest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		pages := &pagedViews{total: 1000, pageSize: 100, latency: 20 * time.Millisecond, failAt: -1, count: descending(1000)}
		pages.serve(mt)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var rows int
		var errs []error
		for _, err := range c.Analytics.AllViews(ctx, "", ViewsParams{Limit: 100}, WithPrefetch(4)) {
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if rows++; rows == 150 {
				cancel()
			}
		}
		if rows != 200 || len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
			t.Fatalf("%d rows and errors %v; want the two pages received, then one context.Canceled", rows, errs)
		}
		synctest.Wait()
		pages.mu.Lock()
		active := pages.active
		pages.mu.Unlock()
		if active != 0 {
			t.Fatalf("%d requests still running after the loop ended", active)
		}
	})
}

func TestPrefetchOfASinglePageAsksAtMostOnePastTheEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		pages := &pagedViews{total: 50, pageSize: 100, latency: 20 * time.Millisecond, failAt: -1}
		pages.serve(mt)
		rows, err := Collect(c.Analytics.AllViews(t.Context(), "", ViewsParams{Limit: 100}, WithPrefetch(8)))
		if err != nil || len(rows) != 50 {
			t.Fatalf("%d rows, %v", len(rows), err)
		}
		synctest.Wait()
		if offsets, _ := pages.seen(); len(offsets) > 2 {
			t.Fatalf("%d requests for one page, want at most 2", len(offsets))
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
		// One request a second, no burst beyond one: pages may be asked
		// for ahead, but they leave one a second.
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
		if len(sent) != 5 || sent[4] < 4*time.Second {
			t.Fatalf("%d requests, the fifth at %v: want the five pages, spread over at least 4s", len(sent), sent)
		}
	})
}

// A request waiting for the limiter when the export ends is never sent: the
// one page past the end of a single-page export costs nothing then.
func TestPrefetchPageWaitingForTheLimiterAtTheEndIsNotSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := rate.NewLimiter(rate.Every(time.Minute), 1)
		c, mt := newTestClient(t, WithRateLimiter(lim))
		pages := &pagedViews{total: 50, pageSize: 100, latency: 20 * time.Millisecond, failAt: -1}
		pages.serve(mt)
		rows, err := Collect(c.Analytics.AllViews(t.Context(), "", ViewsParams{Limit: 100}, WithPrefetch(8)))
		if err != nil || len(rows) != 50 {
			t.Fatalf("%d rows, %v", len(rows), err)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if offsets, _ := pages.seen(); len(offsets) != 1 {
			t.Fatalf("%d requests, want the one page only", len(offsets))
		}
	})
}

// The plan's arithmetic, step by step: what may have been requested after
// each page received.
func TestPrefetchPlan(t *testing.T) {
	type step struct {
		pagesLeft   int // what the tally said of the page received
		wantAllowed int
	}
	tests := []struct {
		name      string
		n         int
		wantFirst int
		steps     []step
	}{
		{"ramp without a tally", 8, 2, []step{
			{-1, 4}, {-1, 6}, // round 2: four in flight
			{-1, 8}, {-1, 10}, {-1, 12}, {-1, 14}, // round 3: eight
			{-1, 15}, {-1, 16}, // then one for each page received
		}},
		{"ramp capped by n", 2, 2, []step{{-1, 3}, {-1, 4}, {-1, 5}}},
		{"a tally opens the window at once", 8, 2, []step{{100, 9}, {100, 10}}},
		{"a tally never asks past what it knows", 8, 2, []step{{3, 4}, {2, 4}, {1, 4}}},
		{"hasMore vouches for the next page", 8, 2, []step{{0, 2}, {0, 3}}},
		{"a tally then none ramps again", 8, 2, []step{{2, 3}, {-1, 4}, {-1, 6}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPrefetchPlan(tt.n)
			if got := p.allowed(); got != tt.wantFirst {
				t.Fatalf("allowed before any page = %d, want %d", got, tt.wantFirst)
			}
			for i, s := range tt.steps {
				p.receive(s.pagesLeft)
				if got := p.allowed(); got != s.wantAllowed {
					t.Fatalf("after page %d (pages left %d): allowed %d, want %d", i, s.pagesLeft, got, s.wantAllowed)
				}
			}
		})
	}
}

func TestRowsLeftAtLeast(t *testing.T) {
	tests := []struct {
		left, smallest int64
		want           int64
		ok             bool
	}{
		{0, 5, 0, true},
		{10, 5, 2, true},
		{11, 5, 3, true}, // 5 + 5 + 1
		{1, 5, 1, true},
		{5, 1, 5, true},
		{math.MaxInt64, 1, math.MaxInt64, true},
		{math.MaxInt64, math.MaxInt64, 1, true},
		{0, 0, 0, true},   // rows of zero views may follow, or none
		{3, 0, 0, false},  // views left, but no row may hold any
		{-1, 5, 0, false}, // the totals are less than the rows seen
		{5, -1, 0, false},
	}
	for _, tt := range tests {
		got, ok := rowsLeftAtLeast(tt.left, tt.smallest)
		if got != tt.want || ok != tt.ok {
			t.Errorf("rowsLeftAtLeast(%d, %d) = %d, %v; want %d, %v", tt.left, tt.smallest, got, ok, tt.want, tt.ok)
		}
	}
}

func TestCountTally(t *testing.T) {
	tests := []struct {
		name   string
		counts []int64
		total  int64
		limit  int
		want   int
	}{
		{"rows left of the smallest count", []int64{9, 7}, 16 + 70, 3, 4}, // 70 left, at most 7 a row: 10 rows
		{"at most n pages", []int64{1}, 1_000_000, 10, 8},
		{"one row left is one page", []int64{5, 5}, 11, 100, 1},
		{"ties keep the order", []int64{5, 5, 5}, 30, 1, 3},
		{"nothing left yet more", []int64{3, 2}, 5, 10, -1},
		{"rows out of order", []int64{2, 3}, 100, 10, -1},
		{"total less than the rows", []int64{3, 2}, 4, 10, -1},
		{"negative count", []int64{3, -1}, 100, 10, -1},
		{"negative total", []int64{3}, -1, 10, -1},
		{"sum past int64", []int64{math.MaxInt64, 1}, math.MaxInt64, 10, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tally := newCountTally()
			for _, c := range tt.counts {
				tally.add(c)
			}
			if got := tally.pagesLeft(tt.total, tt.limit, 8); got != tt.want {
				t.Fatalf("pagesLeft = %d, want %d", got, tt.want)
			}
			if tt.want < 0 {
				// Broken for good: later rows cannot mend it.
				tally.add(0)
				if got := tally.pagesLeft(math.MaxInt64, tt.limit, 8); got != -1 {
					t.Fatalf("after breaking, pagesLeft = %d, want -1", got)
				}
			}
		})
	}
}

func TestPrefetchOrderOfRowsAcrossPages(t *testing.T) {
	// Pages answer in reverse order of their requests (the later, the
	// sooner): rows still come in offset order.
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		pages := &pagedViews{total: 2000, pageSize: 100, failAt: -1, count: descending(2000)}
		pages.latencyOf = func(offset int) time.Duration { return time.Duration(2000-offset) * time.Millisecond }
		pages.serve(mt)
		got, err := Collect(c.Analytics.AllViews(t.Context(), "", ViewsParams{Limit: 100}, WithPrefetch(8)))
		if err != nil {
			t.Fatal(err)
		}
		want := make([]int64, 2000)
		for i := range want {
			want[i] = int64(2000 - i)
		}
		totals := make([]int64, len(got))
		for i, v := range got {
			totals[i] = v.Total
		}
		if diff := cmp.Diff(want, totals); diff != "" {
			t.Errorf("rows out of order (-want +got):\n%s", diff)
		}
	})
}
