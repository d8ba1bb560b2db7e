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
