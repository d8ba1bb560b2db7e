package docsapi

import (
	"context"
	"iter"
	"math"
)

// offsetPage is one page of an offset export, as its fetch returns it.
type offsetPage[T any] struct {
	items []T
	more  bool // the server's hasMore
	// total is the sum, over every row of the export and not only this
	// page's, of what the export's weight measures (see prefetchPager):
	// for views, totals.total.
	total int64
}

// fetchPage returns the page at offset; its request takes the rate
// limiter's token in turn.
type fetchPage[T any] func(ctx context.Context, offset int, turn limiterTurn) (offsetPage[T], error)

// offsetPager walks an offset-paginated list as an iterator. Nothing is
// requested until the caller ranges; each range starts again at start; a
// failure is yielded once, with the zero item, and ends the walk; a break
// sends no further request. An empty page ends the walk even when the server
// says more follow, because asking again at the next offset could loop over
// nothing for ever.
func offsetPager[T any](ctx context.Context, start, limit int, fetch fetchPage[T]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for offset := start; ; offset += limit {
			page, err := fetch(ctx, offset, limiterTurn{})
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, item := range page.items {
				if !yield(item, nil) {
					return
				}
			}
			if !page.more || len(page.items) == 0 {
				return
			}
		}
	}
}

// prefetchPager is offsetPager with up to n pages in flight. Pages are
// fetched concurrently but yielded strictly in offset order, and ending the
// loop (last page, error or break) cancels the requests still in flight.
//
// Every request counts against the hosted service's hourly budget, and a
// page past the last one is a request spent for nothing, so how far ahead
// to ask is a prefetchPlan's decision, from what the pages received so far
// tell. weight, when not nil, is the count the export's rows are sorted by,
// largest first, and whose sum over every row each page sends (views:
// their totals); from it a countTally bounds how many rows are left.
func prefetchPager[T any](ctx context.Context, start, limit, n int, weight func(T) int64, fetch fetchPage[T]) iter.Seq2[T, error] {
	type result struct {
		page offsetPage[T]
		err  error
	}
	return func(yield func(T, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		plan := newPrefetchPlan(n)
		// The rows before start are not tallied, and could hold any part
		// of the total: only an export from the first row can be bounded.
		var tally *countTally
		if weight != nil && start == 0 {
			tally = newCountTally()
		}
		// Each page has a buffered channel, so a fetch that finishes
		// after the loop ended never blocks: no goroutine is left behind.
		pending := make([]chan result, 0, n)
		requested := 0
		var turn <-chan struct{} // the last page's, which the next one waits for
		request := func() {
			ch := make(chan result, 1)
			offset := start + requested*limit
			requested++
			t := limiterTurn{after: turn, done: make(chan struct{})}
			turn = t.done
			go func() {
				page, err := fetch(ctx, offset, t)
				t.pass() // in case fetch returned before its request reached the limiter
				ch <- result{page, err}
			}()
			pending = append(pending, ch)
		}
		for requested < plan.allowed() {
			request()
		}
		for len(pending) > 0 {
			r := <-pending[0]
			pending = pending[1:]
			if r.err != nil {
				var zero T
				yield(zero, r.err)
				return
			}
			last := !r.page.more || len(r.page.items) == 0
			if !last {
				// Ask for what the page allows before handing its rows
				// over, so the requests run while the loop uses them.
				left := unknownLeft
				if tally != nil {
					tally.page()
					for _, item := range r.page.items {
						tally.add(weight(item))
					}
					left = tally.pagesLeft(r.page.total, limit, n)
				}
				plan.receive(left)
				for requested < plan.allowed() {
					request()
				}
			}
			for _, item := range r.page.items {
				if !yield(item, nil) {
					return
				}
			}
			if last {
				return
			}
		}
	}
}

// firstAhead is how many pages past the first the plan requests before any
// page has answered: one, so that an export of a single page (a small
// project) costs at most one request too many, and a longer one gains a
// round trip. Nothing the API or the caller says before the first answer
// tells how long the export is, so asking further would charge every small
// export for the long ones.
const firstAhead = 1

// prefetchPlan decides how many pages of an offset export, counted from
// the first, may have been requested: at most n more than have been
// received, and no more than those known or likely to exist and ahead past
// them.
//
// Once a tally bounds the rows left, it asks for the pages the bound proves
// exist, and for those the tally's line predicts (countTally.pagesLeft).
// The bound alone is loose near the end of an export where the counts still
// fall: keeping to it, the pages in flight dwindle over the last round trips
// (8, 4, 2 for counts that fall steadily) where the line keeps them full. A
// lost bet costs the pages the line added to the bound, at most (n+1)/2:
// the line predicts at most twice the rows proven and one more, and no more
// than n pages.
//
// Without a tally, it ramps up as TCP's slow start does: each page that
// says more follow lets it ask for one more past those known, so that the
// pages in flight double at each round trip (2, 4, 8...) and an export that
// ends early was charged for few pages past its end.
type prefetchPlan struct {
	n        int // most pages in flight
	received int // pages received, in order
	known    int // pages known to exist
	likely   int // pages the tally predicts exist; 0 without a tally
	ahead    int // pages it may request past those known to exist
}

func newPrefetchPlan(n int) prefetchPlan {
	return prefetchPlan{n: n, known: 1, ahead: firstAhead}
}

// allowed returns how many pages may have been requested by now.
func (p *prefetchPlan) allowed() int {
	return min(p.received+p.n, max(p.known+p.ahead, p.likely))
}

// receive records the next page, one that says more follow, and what the
// tally says of the pages after it (unknownLeft when there is none to tell).
func (p *prefetchPlan) receive(left pagesLeft) {
	p.received++
	p.known = max(p.known, p.received+1)
	if left.proven >= 0 {
		p.known = max(p.known, p.received+left.proven)
		// The latest prediction, not the largest: one the later counts
		// no longer bear out asks for nothing more.
		p.likely = p.received + left.likely
		p.ahead = 0
		return
	}
	p.likely = 0
	p.ahead = min(p.ahead+1, p.n)
}

// pagesLeft is what a countTally tells of the pages that follow those
// received: proven of them exist for sure; likely, at least proven, are
// predicted to. unknownLeft: the tally cannot tell.
type pagesLeft struct{ proven, likely int }

var unknownLeft = pagesLeft{-1, -1}

// countTally follows the rows of an export sorted by a count, largest
// first, whose pages each send the count's sum over every row (the views
// export: rows by total, and totals.total), to bound how many rows are
// left. Once the rows break the order, or the numbers do not add up, it
// stops telling for good: the server is not what it assumed (the hosted
// service does not document the order of rows), and the plan falls back to
// its ramp.
type countTally struct {
	seen     int64 // sum of the rows' counts so far
	smallest int64 // the last row's count, the smallest so far
	// The count of the first row of the last page and how many rows it
	// has; the same of the page before it (prevRows 0: none), for the line
	// of rowsOnTheLine.
	first, prevFirst int64
	rows, prevRows   int
	broken           bool
}

func newCountTally() *countTally {
	return &countTally{smallest: math.MaxInt64}
}

// page starts the next page: the rows added from now on are its own.
func (t *countTally) page() {
	if t.rows > 0 {
		t.prevFirst, t.prevRows = t.first, t.rows
	}
	t.rows = 0
}

// pagesLeft tells how many pages of limit rows follow the rows added so far,
// each number at most most (no plan needs to know more). total is the sum
// the last page sent. It is asked only after a page that says more follow,
// so numbers that say no row is left break the tally.
//
// proven is what the sum left proves, each row left holding at most the
// last row's count (rowsLeftAtLeast). It is exact where the counts level
// out, but falls short where they go on falling: for counts that fall
// steadily, it proves about half the rows left. likely adds the rows a
// straight line through the last pages' counts predicts (rowsOnTheLine): a
// bet, whose pages are requests past the end if it is lost.
func (t *countTally) pagesLeft(total int64, limit, most int) pagesLeft {
	if t.broken || total < 0 {
		t.broken = true
		return unknownLeft
	}
	left := total - t.seen
	rows, ok := rowsLeftAtLeast(left, t.smallest)
	if !ok || rows == 0 {
		t.broken = true
		return unknownLeft
	}
	likely := max(rows, t.rowsOnTheLine(left))
	return pagesLeft{
		proven: int(min(ceilDiv(rows, int64(limit)), int64(most))),
		likely: int(min(ceilDiv(likely, int64(limit)), int64(most))),
	}
}

// minLineFall is the least fall of the counts, over each of the last two
// pages, for rowsOnTheLine to draw its line. Counts are whole views, so a
// fall is known to a view or so: over a smaller fall, that view could hide
// counts falling more than 3% slower a page, on which the line overshoots
// (the long tail of pages viewed a few times, whose counts fall by a view
// or two a page, then not at all).
const minLineFall = 32

// rowsOnTheLine returns how many rows are left if their counts go on
// falling in a straight line at the rate d they fell over the last page:
// the rows r whose counts smallest-d, smallest-2d, ..., smallest-r·d add up
// to left. It returns 0 when it has no line it can trust.
//
// Counts that fall ever more slowly (the usual shape of page views) lie
// above the line, so they add up to left in fewer rows than it predicts:
// the line would ask past the end. Counts that fall steadily or ever faster
// lie on or below it, and take at least as many rows as it predicts. What
// the rows left will do cannot be known; the evidence taken is that the
// counts fell over the last page at least as fast as over the one before,
// give or take the view that rounding to whole views can account for, each
// by at least minLineFall. Without it, or when the line reaches zero before
// it adds up to left (so the counts must level out), it returns 0.
//
// Since the line stays above zero until it adds up to left, r is at most
// 2·left/smallest + 1: at most twice the rows proven, and one more.
func (t *countTally) rowsOnTheLine(left int64) int64 {
	if t.prevRows == 0 || t.rows < 2 || t.smallest <= 0 || left <= 0 {
		return 0
	}
	prevFall, fall := t.prevFirst-t.first, t.first-t.smallest
	if prevFall < minLineFall || fall < minLineFall {
		return 0
	}
	// Per row, from the first row of the page before to the first of the
	// last, then to its last row: fall/(rows-1) >= prevFall/prevRows -
	// 1/(rows-1), without dividing. The counts are sorted, so the falls
	// are at most first and their products fit a float64 well enough.
	h1, h2 := float64(t.prevRows), float64(t.rows-1)
	if float64(fall)*h1+h1 < float64(prevFall)*h2 {
		return 0
	}
	s := float64(t.smallest)
	d := float64(fall) / h2
	// s·r - d·r(r+1)/2 = left, that is (d/2)r² - (s-d/2)r + left = 0,
	// whose smaller root is where the sum first reaches left. Written as
	// 2·left / (b + √disc), it loses no precision to cancellation. For
	// counts that fall exactly in a line, the root is a whole number that
	// rounding recovers from floating point.
	b := s - d/2
	disc := b*b - 2*d*float64(left)
	if b <= 0 || disc < 0 {
		return 0
	}
	r := math.Round(2 * float64(left) / (b + math.Sqrt(disc)))
	if r >= 1<<62 {
		return 1 << 62
	}
	return int64(r)
}

// add tallies the next row's count.
func (t *countTally) add(c int64) {
	if t.broken || c < 0 || c > t.smallest || c > math.MaxInt64-t.seen {
		t.broken = true
		return
	}
	t.seen += c
	t.smallest = c
	if t.rows == 0 {
		t.first = c
	}
	t.rows++
}

// rowsLeftAtLeast returns how many rows at least are left in a list sorted
// by a count, largest first, when the rows left hold left between them and
// none more than smallest, the count of the last row seen: each row left
// holds at most smallest, so there are at least left/smallest of them,
// rounded up. It reports false when the numbers cannot come from such a
// list: a negative sum (the total is less than the rows seen), or a sum to
// share among rows of count zero.
func rowsLeftAtLeast(left, smallest int64) (rows int64, ok bool) {
	switch {
	case left < 0 || smallest < 0:
		return 0, false
	case left == 0:
		return 0, true
	case smallest == 0:
		return 0, false
	}
	return ceilDiv(left, smallest), true
}

// ceilDiv is a/b rounded up, for a >= 0 and b > 0, without overflowing.
func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}

// failed returns an iterator that yields err once.
func failed[T any](err error) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		yield(zero, err)
	}
}

// Collect ranges over seq and returns its items. It stops at the first error
// and returns it together with the items received before it.
func Collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var items []T
	for item, err := range seq {
		if err != nil {
			return items, err
		}
		items = append(items, item)
	}
	return items, nil
}

// offsetExport is the iterator of an offset-paginated export: offsetPager,
// or prefetchPager when the options ask for WithPrefetch; weight is
// prefetchPager's, or nil.
func offsetExport[T any](ctx context.Context, opts []RequestOption, start, limit int, weight func(T) int64, fetch fetchPage[T]) iter.Seq2[T, error] {
	call := applyOptions(opts)
	if call.err == nil && call.prefetch > 1 && call.response != nil {
		// Pages in flight at once would all write the one Response.
		call.err = invalid("prefetch", "cannot be combined with WithResponse")
	}
	if call.err != nil {
		return failed[T](call.err)
	}
	if call.prefetch > 1 {
		return prefetchPager(ctx, start, limit, call.prefetch, weight, fetch)
	}
	return offsetPager(ctx, start, limit, fetch)
}
