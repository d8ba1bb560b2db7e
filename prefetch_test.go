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
		// Ten pages: the first alone, whose totals prove the nine others
		// exist (900 views left, at most one a row), then four in flight.
		if peak != 4 || len(offsets) != 10 {
			t.Errorf("peak %d requests in flight and %d requests, want 4 and 10", peak, len(offsets))
		}
		// Sequentially 10 × 20 ms; here 1, 4, 4 and 1 pages a round.
		if elapsed != 80*time.Millisecond {
			t.Errorf("export took %v of virtual time, want 80ms", elapsed)
		}
	})
}

// The window's promise: an export from the first row whose rows come
// sorted by total requests no page past its end, whatever its length.
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
					if want := (rows + 99) / 100; len(offsets) != want {
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

// Where the totals prove nothing, each page is asked for once the page
// before says more follow: one request a round trip, none past the end.
func TestPrefetchReadsPageByPageWhenTheTotalsCannotTell(t *testing.T) {
	tests := []struct {
		name          string
		count         func(int) int64
		totalsDelta   int64
		totalsDeltaAt func(offset int) int64
		params        ViewsParams
	}{
		// Rows in increasing order: a row may hold more than the last.
		{"rows not sorted by total", func(i int) int64 { return int64(i + 1) }, 0, nil, ViewsParams{Limit: 100}},
		// Totals less than the first page's rows: the numbers disagree.
		{"totals less than the rows", nil, -2950, nil, ViewsParams{Limit: 100}},
		// The rows skipped could hold any part of the totals.
		{"export from an offset", descending(3000), 0, nil, ViewsParams{Limit: 100, Offset: 1}},
		// Every page sends larger totals, as while views are counted: the
		// views left would seem to need ever more rows.
		{"totals that grow", nil, 0, func(offset int) int64 { return int64(offset) * 10 }, ViewsParams{Limit: 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t)
				pages := &pagedViews{total: 3000, pageSize: 100, latency: 20 * time.Millisecond, failAt: -1,
					count: tt.count, totalsDelta: tt.totalsDelta, totalsDeltaAt: tt.totalsDeltaAt}
				pages.serve(mt)
				got, err := Collect(c.Analytics.AllViews(t.Context(), "", tt.params, WithPrefetch(8)))
				if err != nil || len(got) != 3000-tt.params.Offset {
					t.Fatalf("%d rows, %v", len(got), err)
				}
				synctest.Wait()
				offsets, _ := pages.seen()
				if want := (3000 - tt.params.Offset + 99) / 100; len(offsets) != want {
					t.Errorf("%d requests, want %d: none past the end", len(offsets), want)
				}
				// The first page alone, then what it proves (nothing, or,
				// for totals that grow, what the first page's totals
				// proved), then one a round.
				rounds := requestsPerRound(pages.rec.Times(), 20*time.Millisecond)
				if tt.totalsDeltaAt != nil {
					rounds = rounds[2:]
				}
				for i, n := range rounds {
					if n != 1 {
						t.Fatalf("requests per round trip %v, want one a round (from %d)", rounds, i)
					}
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

// Totals that overstate the rows (a server that is not what the API
// defines) make the window ask as far ahead as n allows: at most n-1
// requests past the end.
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
		// The first alone, and up to eight more as it arrived (those may
		// be cancelled before they are sent).
		if len(sent) < 1 || len(sent) > 9 {
			t.Fatalf("%d requests, want from 1 to 9", len(sent))
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

func TestPrefetchOfASinglePageAsksForItAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		pages := &pagedViews{total: 50, pageSize: 100, latency: 20 * time.Millisecond, failAt: -1}
		pages.serve(mt)
		rows, err := Collect(c.Analytics.AllViews(t.Context(), "", ViewsParams{Limit: 100}, WithPrefetch(8)))
		if err != nil || len(rows) != 50 {
			t.Fatalf("%d rows, %v", len(rows), err)
		}
		synctest.Wait()
		if offsets, _ := pages.seen(); len(offsets) != 1 {
			t.Fatalf("%d requests for one page, want 1", len(offsets))
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

// Requests waiting for the limiter when the loop breaks are never sent.
func TestPrefetchBreakWhileRequestsWaitForTheLimiterSendsNoMore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := rate.NewLimiter(rate.Every(time.Minute), 1)
		c, mt := newTestClient(t, WithRateLimiter(lim))
		pages := &pagedViews{total: 1000, pageSize: 100, latency: 20 * time.Millisecond, failAt: -1}
		pages.serve(mt)
		// The first page proves the others exist; they are asked for
		// before its rows are yielded, and wait for the limiter.
		for range c.Analytics.AllViews(t.Context(), "", ViewsParams{Limit: 100}, WithPrefetch(8)) {
			break
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if offsets, _ := pages.seen(); len(offsets) != 1 {
			t.Fatalf("%d requests, want the first page only", len(offsets))
		}
	})
}

// sortedSum's rules, one row each: how many rows at least are left after
// the counts added, given the total the page sent.
func TestSortedSum(t *testing.T) {
	tests := []struct {
		name   string
		counts []int64
		totals []int64 // the totals of the pages received; the last is asked
		want   int64   // -1: cannot tell
	}{
		{"rows left of the last count", []int64{9, 7}, []int64{16 + 70}, 10}, // 70 left, at most 7 a row
		{"rounded up", []int64{5, 5}, []int64{11}, 1},
		{"ties keep the order", []int64{5, 5, 5}, []int64{30}, 3},
		{"nothing left", []int64{3, 2}, []int64{5}, 0},
		{"rows of no views may follow", []int64{3, 0}, []int64{3}, 0},
		{"the same totals on every page", []int64{9, 7}, []int64{86, 86}, 10},
		{"largest sum", []int64{math.MaxInt64}, []int64{math.MaxInt64}, 0},
		{"views left but rows of none", []int64{3, 0}, []int64{10}, -1},
		{"rows out of order", []int64{2, 3}, []int64{100}, -1},
		{"total less than the rows", []int64{3, 2}, []int64{4}, -1},
		{"negative count", []int64{3, -1}, []int64{100}, -1},
		{"negative total", []int64{3}, []int64{-1}, -1},
		{"sum past int64", []int64{math.MaxInt64, 1}, []int64{math.MaxInt64}, -1},
		{"totals that changed", []int64{9, 7}, []int64{86, 87}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSortedSum()
			for _, c := range tt.counts {
				s.add(c)
			}
			var rows int64
			var ok bool
			for _, total := range tt.totals {
				rows, ok = s.rowsLeft(total)
			}
			if got := map[bool]int64{true: rows, false: -1}[ok]; got != tt.want {
				t.Fatalf("rowsLeft = %d, %v; want %d", rows, ok, tt.want)
			}
			if tt.want < 0 {
				// Broken for good: later rows cannot mend it.
				s.add(0)
				if rows, ok := s.rowsLeft(tt.totals[len(tt.totals)-1]); ok {
					t.Fatalf("after breaking, rowsLeft = %d, want it unable to tell", rows)
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

// The benchmark's export, 80 pages of 250 whose counts fall steadily, with
// 8 in flight: the first page alone, then 8 a round trip while the totals
// prove at least 8 pages left. Near the end they prove about half the
// pages left (the views left, shared among rows of at most the last row's
// count), so the last round trips carry 4, 2 and 1: 13 round trips where
// a sequential export takes 80, and no request past the end.
func TestPrefetchOfSteadyViewsTakesThirteenRoundTripsForEightyPages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		pages := &pagedViews{total: 20_000, pageSize: 250, latency: 20 * time.Millisecond, failAt: -1, count: steady(20_000)}
		pages.serve(mt)
		start := time.Now()
		got, err := Collect(c.Analytics.AllViews(t.Context(), "", ViewsParams{}, WithPrefetch(8)))
		elapsed := time.Since(start)
		if err != nil || len(got) != 20_000 {
			t.Fatalf("%d rows, %v", len(got), err)
		}
		synctest.Wait()
		offsets, peak := pages.seen()
		if len(offsets) != 80 || peak > 8 {
			t.Errorf("%d requests, at most %d in flight; want 80 (none past the end), at most 8", len(offsets), peak)
		}
		rounds := requestsPerRound(pages.rec.Times(), 20*time.Millisecond)
		if want := []int{1, 8, 8, 8, 8, 8, 8, 8, 8, 8, 4, 2, 1}; !slices.Equal(rounds, want) {
			t.Errorf("requests per round trip %v, want %v", rounds, want)
		}
		if elapsed != 13*20*time.Millisecond {
			t.Errorf("export took %v of virtual time, want 13 round trips of 20ms", elapsed)
		}
	})
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
	fetch := func(ctx context.Context, offset int) (offsetPage[int64], error) {
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

// For counts of the usual shapes, exports of any length ask for no page
// past their end: page views fall ever more slowly (Zipf, Pareto,
// log-normal), steadily, ever faster, or not at all.
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
					if want := (rows + 99) / 100; len(offsets) != want {
						t.Errorf("%d rows, prefetch %d: %d requests, want %d", rows, n, len(offsets), want)
					}
				}
			}
		})
	}
}
