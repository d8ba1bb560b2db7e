package docsapi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
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
		left        pagesLeft // what the tally said of the page received
		wantAllowed int
	}
	none := unknownLeft
	proven := func(n int) pagesLeft { return pagesLeft{n, n} }
	tests := []struct {
		name      string
		n         int
		wantFirst int
		steps     []step
	}{
		{"ramp without a tally", 8, 2, []step{
			{none, 4}, {none, 6}, // round 2: four in flight
			{none, 8}, {none, 10}, {none, 12}, {none, 14}, // round 3: eight
			{none, 15}, {none, 16}, // then one for each page received
		}},
		{"ramp capped by n", 2, 2, []step{{none, 3}, {none, 4}, {none, 5}}},
		{"a tally opens the window at once", 8, 2, []step{{proven(100), 9}, {proven(100), 10}}},
		{"a tally never asks past what it knows", 8, 2, []step{{proven(3), 4}, {proven(2), 4}, {proven(1), 4}}},
		{"hasMore vouches for the next page", 8, 2, []step{{proven(0), 2}, {proven(0), 3}}},
		{"a tally then none ramps again", 8, 2, []step{{proven(2), 3}, {none, 4}, {none, 6}}},
		// The line's pages are asked for too, within n.
		{"likely pages", 8, 2, []step{{pagesLeft{2, 4}, 5}, {pagesLeft{2, 4}, 6}, {pagesLeft{1, 30}, 11}}},
		// A later prediction that says less withdraws the earlier one (what
		// was requested stays requested), and what is proven still counts.
		{"a prediction withdrawn", 8, 2, []step{{pagesLeft{1, 6}, 7}, {pagesLeft{1, 1}, 3}, {pagesLeft{6, 6}, 9}}},
		{"a broken tally drops the prediction", 8, 2, []step{{pagesLeft{1, 6}, 7}, {none, 4}, {none, 6}, {none, 8}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPrefetchPlan(tt.n)
			if got := p.allowed(); got != tt.wantFirst {
				t.Fatalf("allowed before any page = %d, want %d", got, tt.wantFirst)
			}
			for i, s := range tt.steps {
				p.receive(s.left)
				if got := p.allowed(); got != s.wantAllowed {
					t.Fatalf("after page %d (%+v): allowed %d, want %d", i, s.left, got, s.wantAllowed)
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
			// One page, so no line: what is likely is what is proven.
			if got := tally.pagesLeft(tt.total, tt.limit, 8); got != (pagesLeft{tt.want, tt.want}) {
				t.Fatalf("pagesLeft = %+v, want %d proven and likely", got, tt.want)
			}
			if tt.want < 0 {
				// Broken for good: later rows cannot mend it.
				tally.page()
				tally.add(0)
				if got := tally.pagesLeft(math.MaxInt64, tt.limit, 8); got != unknownLeft {
					t.Fatalf("after breaking, pagesLeft = %+v, want unknown", got)
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

// steady is a views export whose counts fall steadily, as those of the
// benchmark's server do (bench/server.go): row i of n has 3(n-i)+7 views.
func steady(n int) func(int) int64 {
	return func(i int) int64 { return int64(3*(n-i) + 7) }
}

// The last pages of an export whose counts fall steadily are as many in
// flight as n allows, with no request past the end: 80 pages of 250 take 11
// round trips (2 pages, then 8 a round), the fewest for a plan that asks
// for one page ahead before the first answers. Keeping to the pages the
// totals prove took 12: 8, 4, then 2 pages in the last round trips.
func TestPrefetchKeepsTheLastPagesInFlight(t *testing.T) {
	for _, rows := range []int{20_000, 19_990, 20_010, 20_500, 20_750, 3_000} {
		t.Run(fmt.Sprintf("%d rows", rows), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t)
				pages := &pagedViews{total: rows, pageSize: 250, latency: 20 * time.Millisecond, failAt: -1, count: steady(rows)}
				pages.serve(mt)
				start := time.Now()
				got, err := Collect(c.Analytics.AllViews(t.Context(), "", ViewsParams{}, WithPrefetch(8)))
				elapsed := time.Since(start)
				if err != nil || len(got) != rows {
					t.Fatalf("%d rows, %v; want %d", len(got), err, rows)
				}
				synctest.Wait()
				want := (rows + 249) / 250
				offsets, peak := pages.seen()
				if len(offsets) != want || peak > 8 {
					t.Errorf("%d requests, at most %d in flight; want %d (none past the end), at most 8", len(offsets), peak, want)
				}
				rounds := 1 + (want-2+7)/8
				if elapsed != time.Duration(rounds)*20*time.Millisecond {
					t.Errorf("export took %v of virtual time, want %d round trips of 20ms; requests per round trip: %v",
						elapsed, rounds, requestsPerRound(pages.rec.Times(), 20*time.Millisecond))
				}
			})
		})
	}
}

// exportCounts runs prefetchPager over an export of the given counts, sorted
// largest first, each page answered at once, and returns the counts it
// yielded and the offsets it asked for. Every page requested counts, even
// one the end of the loop cancelled (a server may have counted it).
func exportCounts(t *testing.T, counts []int64, limit, n int) (got []int64, offsets []int) {
	t.Helper()
	var total int64
	for _, c := range counts {
		total += c
	}
	var mu sync.Mutex
	fetch := func(ctx context.Context, offset int, _ limiterTurn) (offsetPage[int64], error) {
		mu.Lock()
		offsets = append(offsets, offset)
		mu.Unlock()
		end := min(offset+limit, len(counts))
		page := offsetPage[int64]{more: end < len(counts), total: total}
		if offset < end {
			page.items = counts[offset:end]
		}
		return page, nil
	}
	synctest.Test(t, func(t *testing.T) {
		var err error
		got, err = Collect(prefetchPager(t.Context(), 0, limit, n, func(c int64) int64 { return c }, fetch))
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the requests the end of the loop cancelled
	})
	return got, offsets
}

// shape makes the counts of an export of n rows, largest first.
type shape struct {
	name   string
	counts func(n int) []int64
}

// formula is a shape whose row i of n has count(n, i).
func formula(name string, count func(n, i int) int64) shape {
	return shape{name, func(n int) []int64 {
		counts := make([]int64, n)
		for i := range counts {
			counts[i] = count(n, i)
		}
		return counts
	}}
}

// samples is a shape of n counts drawn from draw, sorted largest first.
func samples(name string, draw func(*rand.Rand) int64) shape {
	return shape{name, func(n int) []int64 {
		r := rand.New(rand.NewPCG(uint64(n), 7))
		counts := make([]int64, n)
		for i := range counts {
			counts[i] = draw(r)
		}
		slices.Sort(counts)
		slices.Reverse(counts)
		return counts
	}}
}

// The line is a bet the plan takes only where the counts bear it out: for
// counts of the usual shapes, exports of any length ask for no page past
// their end but the second page of a single-page export. Page views fall
// ever more slowly (Zipf, Pareto, log-normal), where a line overshoots; it
// must not be drawn there, nor through the falls of a view or two a page
// of their long tail.
func TestPrefetchAsksForNoPagePastTheEndOfUsualShapes(t *testing.T) {
	shapes := []shape{
		formula("steady", func(n, i int) int64 { return steady(n)(i) }),
		formula("ties", func(n, i int) int64 { return 5 }),
		formula("zipf", func(n, i int) int64 { return max(1, 10_000/int64(i+1)) }),
		formula("zipf, large counts", func(n, i int) int64 { return 1_000_000_000/int64(i+1) + 1 }),
		formula("exponential", func(n, i int) int64 { return int64(1e6*math.Exp(-5*float64(i)/float64(n))) + 1 }),
		formula("falling ever faster", func(n, i int) int64 {
			x := float64(i) / float64(n)
			return int64(1e6*(1-x*x)) + 1
		}),
		formula("square root", func(n, i int) int64 { return int64(1000*math.Sqrt(float64(n-i))) + 1 }),
		samples("pareto samples", func(r *rand.Rand) int64 { return 1 + int64(100*math.Pow(r.Float64(), -1/1.5)) }),
		samples("log-normal samples", func(r *rand.Rand) int64 { return 1 + int64(math.Exp(3+2*r.NormFloat64())) }),
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			for _, n := range []int{8, 32} {
				for rows := 1; rows <= 3000; rows += 13 {
					counts := sh.counts(rows)
					got, offsets := exportCounts(t, counts, 100, n)
					if !slices.Equal(got, counts) {
						t.Fatalf("%d rows, prefetch %d: rows differ from the export's", rows, n)
					}
					pages := (rows + 99) / 100
					if want := max(pages, 2); len(offsets) != want {
						t.Errorf("%d rows, prefetch %d: %d requests, want %d", rows, n, len(offsets), want)
					}
				}
			}
		})
	}
}

// A lost bet costs at most (n+1)/2 requests past the end. Here the counts
// fall steadily, 50 a row, until the last flat rows, which all have the
// count the row before them had: twice as many rows as they are would have
// been needed to add up to their sum had the counts gone on falling.
func TestPrefetchLostBetCostsAtMostHalfTheWindow(t *testing.T) {
	for _, n := range []int{2, 3, 8, 32} {
		worst := 0
		for _, flat := range []int{100, 300, 1000} {
			for rows := flat + 200; rows <= flat+3000; rows += 7 {
				counts := make([]int64, rows)
				for i := range counts {
					counts[i] = int64(100*flat + 50*max(rows-flat-i, 0))
				}
				_, offsets := exportCounts(t, counts, 100, n)
				past := len(offsets) - (rows+99)/100
				if past > (n+1)/2 {
					t.Fatalf("prefetch %d, %d rows, the last %d tied: %d requests past the end, want at most %d", n, rows, flat, past, (n+1)/2)
				}
				worst = max(worst, past)
			}
		}
		// Else the test proves nothing: the bet was never lost.
		if worst == 0 {
			t.Errorf("prefetch %d: no export lost the bet", n)
		}
		t.Logf("prefetch %d: at most %d requests past the end", n, worst)
	}
}

// tallyOf tallies pages of counts.
func tallyOf(pages ...[]int64) *countTally {
	t := newCountTally()
	for _, page := range pages {
		t.page()
		for _, c := range page {
			t.add(c)
		}
	}
	return t
}

// fall returns rows counts from first down, falling by step each row.
func fall(first, step int64, rows int) []int64 {
	counts := make([]int64, rows)
	for i := range counts {
		counts[i] = first - int64(i)*step
	}
	return counts
}

// For counts that fall steadily, whatever their slope and size, the line
// tells exactly how many rows are left, after every page.
func TestRowsOnTheLineIsExactForSteadyCounts(t *testing.T) {
	for _, slope := range []int64{1, 3, 7, 1000, 1_000_000} {
		for _, floor := range []int64{1, 7, 1_000_000_000} {
			for _, rows := range []int{250, 1234, 5000} {
				counts := make([]int64, rows)
				for i := range counts {
					counts[i] = slope*int64(rows-i) + floor
				}
				var total int64
				for _, c := range counts {
					total += c
				}
				tally := newCountTally()
				for start := 0; start+100 < rows; start += 100 {
					tally.page()
					for _, c := range counts[start : start+100] {
						tally.add(c)
					}
					got := tally.rowsOnTheLine(total - tally.seen)
					if start > 0 && got != int64(rows-start-100) {
						t.Fatalf("slope %d, floor %d, %d rows, after row %d: line says %d rows left, want %d",
							slope, floor, rows, start+100, got, rows-start-100)
					}
				}
			}
		}
	}
}

func TestRowsOnTheLineDrawsNoLineItCannotTrust(t *testing.T) {
	tests := []struct {
		name  string
		tally *countTally
		left  int64
		want  int64
	}{
		// 40 a row, then 40: 30 rows of 1240 down to 40.
		{"steady", tallyOf(fall(2000, 40, 10), fall(1600, 40, 10)), 18600, 30},
		{"no page before", tallyOf(fall(1600, 40, 10)), 18600, 0},
		{"a page of one row", tallyOf(fall(2000, 40, 10), []int64{1600}), 18600, 0},
		// 40 a row, then 39: the counts fall ever more slowly.
		{"fall slowed", tallyOf(fall(2000, 40, 10), fall(1600, 39, 10)), 18600, 0},
		// 400 over 10 rows, then 359 over 9: slower by less than a view.
		{"slower by less than a view", tallyOf(fall(2000, 40, 10), append(fall(1600, 40, 9), 1241)), 18600, 28},
		{"slower by a view", tallyOf(fall(2000, 40, 10), append(fall(1600, 40, 9), 1242)), 18600, 0},
		// Falls of 30 a page: too coarse to tell a line from a bend.
		{"small falls", tallyOf(fall(1000, 3, 11)[:10], fall(970, 3, 11)), 20000, 0},
		// 40 a row, then 50: a line at 50 a row from 1150 adds up to 10000
		// in 12 rows.
		{"falling faster", tallyOf(fall(2000, 40, 10), fall(1600, 50, 10)), 10000, 12},
		// More left than the line holds before it reaches zero: the
		// counts must level out.
		{"line reaches zero", tallyOf(fall(2000, 40, 10), fall(1600, 40, 10)), 1_000_000, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.tally.rowsOnTheLine(tt.left); got != tt.want {
				t.Fatalf("rowsOnTheLine(%d) = %d, want %d", tt.left, got, tt.want)
			}
		})
	}
}

// The line never predicts more than twice the rows proven, and one more:
// what bounds the cost of a lost bet.
func TestRowsOnTheLineAtMostTwiceTheRowsProven(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		step := 1 + r.Int64N(1000)
		last := 32*step + r.Int64N(1_000_000)
		tally := tallyOf(fall(last+20*step, step, 10), fall(last+9*step, step, 10))
		left := 1 + r.Int64N(last*last/step)
		proven, _ := rowsLeftAtLeast(left, tally.smallest)
		if got := tally.rowsOnTheLine(left); got > 2*proven+1 {
			t.Fatalf("counts falling %d a row to %d, %d left: line says %d rows, proven %d", step, last, left, got, proven)
		}
	}
}
