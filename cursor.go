package docsapi

import (
	"context"
	"errors"
	"fmt"
	"iter"
)

// cursorStyle is how a cursor-paginated export says that another page
// follows. The hosted exports use two.
type cursorStyle int

const (
	// untilNull: nextCursor alone; null ends the walk (searches).
	untilNull cursorStyle = iota
	// whileHasMore: hasMore says whether a page follows, nextCursor which
	// (feedback, assistant conversations).
	whileHasMore
)

// fetchCursorPage requests the page at cursor ("" for the first) and returns
// its items, its nextCursor ("" for null) and its hasMore (false where the
// export has none).
type fetchCursorPage[T any] func(ctx context.Context, cursor string) (items []T, nextCursor string, hasMore bool, err error)

// followCursor decides, from what one page said, whether to request another
// and with which cursor. A page that promises more without a cursor to ask
// with is an error: "" would ask for the first page again.
func followCursor(style cursorStyle, nextCursor string, hasMore bool) (cursor string, more bool, err error) {
	if style == untilNull {
		return nextCursor, nextCursor != "", nil
	}
	if !hasMore {
		return "", false, nil
	}
	if nextCursor == "" {
		return "", false, errors.New("hasMore is true but nextCursor is null or empty")
	}
	return nextCursor, true, nil
}

// cursorPager walks a cursor-paginated export as an iterator, with the
// promises of offsetPager: nothing is requested until the caller ranges;
// each range starts again at start; a failure is yielded once, with the
// zero item, and ends the walk; a break sends no further request; an empty
// page ends the walk whatever it says about more. A cursor that the walk
// has already used is an error, never a loop: a server that hands out a
// cursor twice would otherwise be asked for the same pages for ever.
// endpoint ("GET /v1/analytics/p/searches") names the export in errors.
func cursorPager[T any](ctx context.Context, endpoint string, style cursorStyle, start string, fetch fetchCursorPage[T]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		used := map[string]bool{start: true}
		cursor := start
		for page := 1; ; page++ {
			items, nextCursor, hasMore, err := fetch(ctx, cursor)
			if err != nil {
				yield(zero, err)
				return
			}
			for _, item := range items {
				if !yield(item, nil) {
					return
				}
			}
			if len(items) == 0 {
				return
			}
			next, more, err := followCursor(style, nextCursor, hasMore)
			if err == nil && more && used[next] {
				err = fmt.Errorf("nextCursor %q was already used; stopping rather than asking for the same pages again", next)
			}
			if err != nil {
				yield(zero, fmt.Errorf("docsapi: %s: page %d: %w", endpoint, page, err))
				return
			}
			if !more {
				return
			}
			used[next] = true
			cursor = next
		}
	}
}
