package docsapi

import (
	"context"
	"iter"
)

// fetchPage returns the items at offset and whether more follow.
type fetchPage[T any] func(ctx context.Context, offset int) (items []T, hasMore bool, err error)

// offsetPager walks an offset-paginated list as an iterator. Nothing is
// requested until the caller ranges; each range starts again at start; a
// failure is yielded once, with the zero item, and ends the walk; a break
// sends no further request. An empty page ends the walk even when the server
// says more follow, because asking again at the next offset could loop over
// nothing for ever.
func offsetPager[T any](ctx context.Context, start, limit int, fetch fetchPage[T]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for offset := start; ; offset += limit {
			items, more, err := fetch(ctx, offset)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, item := range items {
				if !yield(item, nil) {
					return
				}
			}
			if !more || len(items) == 0 {
				return
			}
		}
	}
}

// prefetchPager is offsetPager with up to n pages in flight. Pages are
// fetched concurrently but yielded strictly in offset order; a new page is
// requested each time one is consumed, so at most n-1 pages past the last
// one are ever requested. Ending the loop (last page, error or break)
// cancels the requests still in flight.
func prefetchPager[T any](ctx context.Context, start, limit, n int, fetch fetchPage[T]) iter.Seq2[T, error] {
	type page struct {
		items []T
		more  bool
		err   error
	}
	return func(yield func(T, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		// Each page has a buffered channel, so a fetch that finishes
		// after the loop ended never blocks: no goroutine is left behind.
		inFlight := make([]chan page, 0, n)
		next := start
		launch := func() {
			ch := make(chan page, 1)
			offset := next
			next += limit
			go func() {
				items, more, err := fetch(ctx, offset)
				ch <- page{items, more, err}
			}()
			inFlight = append(inFlight, ch)
		}
		for range n {
			launch()
		}
		for len(inFlight) > 0 {
			p := <-inFlight[0]
			inFlight = inFlight[1:]
			if p.err != nil {
				var zero T
				yield(zero, p.err)
				return
			}
			for _, item := range p.items {
				if !yield(item, nil) {
					return
				}
			}
			if !p.more || len(p.items) == 0 {
				return
			}
			launch()
		}
	}
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
// or prefetchPager when the options ask for WithPrefetch.
func offsetExport[T any](ctx context.Context, opts []RequestOption, start, limit int, fetch fetchPage[T]) iter.Seq2[T, error] {
	call := applyOptions(opts)
	if call.err == nil && call.prefetch > 1 && call.response != nil {
		// Pages in flight at once would all write the one Response.
		call.err = invalid("prefetch", "cannot be combined with WithResponse")
	}
	if call.err != nil {
		return failed[T](call.err)
	}
	if call.prefetch > 1 {
		return prefetchPager(ctx, start, limit, call.prefetch, fetch)
	}
	return offsetPager(ctx, start, limit, fetch)
}
