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

// fetchPage returns the page at offset.
type fetchPage[T any] func(ctx context.Context, offset int) (offsetPage[T], error)

// offsetPager walks an offset-paginated list as an iterator. Nothing is
// requested until the caller ranges; each range starts again at start; a
// failure is yielded once, with the zero item, and ends the walk; a break
// sends no further request. An empty page ends the walk even when the server
// says more follow, because asking again at the next offset could loop over
// nothing for ever.
func offsetPager[T any](ctx context.Context, start, limit int, fetch fetchPage[T]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for offset := start; ; offset += limit {
			page, err := fetch(ctx, offset)
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

// prefetchPager is offsetPager with up to n requests in flight, for pages
// known to exist only: every request counts against the hosted service's
// hourly budget, and a page past the last one would be a request spent for
// nothing. Pages are fetched concurrently but yielded strictly in offset
// order, and ending the loop (last page, error or break) cancels the
// requests still in flight.
//
// A page that says more follow vouches for the next one. weight, when not
// nil, is the count the export's rows are sorted by, largest first, whose
// sum over every row each page sends as its total (views: their totals);
// from it a sortedSum proves how many rows at least are left.
func prefetchPager[T any](ctx context.Context, start, limit, n int, weight func(T) int64, fetch fetchPage[T]) iter.Seq2[T, error] {
	type result struct {
		page offsetPage[T]
		err  error
	}
	return func(yield func(T, error) bool) {
		parent := ctx
		ctx, cancel := context.WithCancel(parent)
		defer cancel()
		// The rows before start are not summed, and could hold any part
		// of the total: only an export from the first row proves anything.
		var proof *sortedSum
		if weight != nil && start == 0 {
			proof = newSortedSum()
		}
		// Each page has a buffered channel, so a fetch that finishes
		// after the loop ended never blocks: no goroutine is left behind.
		pending := make([]chan result, 0, n)
		requested, received := 0, 0
		known := 1 // pages known to exist: the first is asked for alone
		fill := func() {
			for requested < known && len(pending) < n {
				ch := make(chan result, 1)
				offset := start + requested*limit
				requested++
				go func() {
					page, err := fetch(ctx, offset)
					ch <- result{page, err}
				}()
				pending = append(pending, ch)
			}
		}
		fill()
		for len(pending) > 0 {
			if err := parent.Err(); err != nil {
				// As offsetPager, whose next request would fail: pages
				// that arrived before the context ended are not yielded.
				var zero T
				yield(zero, stopped(parent, err, nil))
				return
			}
			r := <-pending[0]
			pending = pending[1:]
			received++
			if r.err != nil {
				var zero T
				yield(zero, r.err)
				return
			}
			last := !r.page.more || len(r.page.items) == 0
			if !last {
				// Ask for what the page proves before handing its rows
				// over, so the requests run while the loop uses them.
				known = max(known, received+1)
				if proof != nil {
					for _, item := range r.page.items {
						proof.add(weight(item))
					}
					if rows, ok := proof.rowsLeft(r.page.total); ok {
						known = max(known, received+int(min(ceilDiv(rows, int64(limit)), int64(n))))
					}
				}
				fill()
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

// sortedSum follows the rows of an export sorted by a count, largest first,
// whose every page sends the count's sum over every row (the views export:
// rows by total, and totals.total), to prove how many rows at least are
// left: the rows left hold the sum less the rows seen, and none more than
// the last row seen, so there are at least that many of them. Once the rows
// break the order, the numbers do not add up, or pages send different sums
// (a range still being counted), it proves nothing more: the server is not
// what it assumed (the hosted service does not document the order of rows),
// and the pages come one after another.
type sortedSum struct {
	seen   int64 // the sum of the rows' counts so far
	last   int64 // the last row's count, the smallest so far
	total  int64 // the sum every page sent; -1 before the first
	broken bool
}

func newSortedSum() *sortedSum {
	return &sortedSum{last: math.MaxInt64, total: -1}
}

// add sums the next row's count.
func (s *sortedSum) add(c int64) {
	if s.broken || c < 0 || c > s.last || c > math.MaxInt64-s.seen {
		s.broken = true
		return
	}
	s.seen += c
	s.last = c
}

// rowsLeft returns how many rows at least follow those added, total being
// the sum the last page sent; false when it cannot tell. It is asked only
// after a page that says more follow.
func (s *sortedSum) rowsLeft(total int64) (int64, bool) {
	if s.total >= 0 && total != s.total {
		s.broken = true
	}
	s.total = total
	if s.broken {
		return 0, false
	}
	left := total - s.seen
	switch {
	case left < 0:
		s.broken = true // the rows hold more than the total
		return 0, false
	case left == 0:
		return 0, true // rows of no views may follow, or none
	case s.last == 0:
		s.broken = true // views left, but no row may hold any
		return 0, false
	}
	return ceilDiv(left, s.last), true
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
// prefetchPager's, or nil when the totals prove nothing.
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
