package rollup

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/docsapi/docsapi-go/server/store"
)

// Tally sums the rolls of one project over a range. The zero Tally is
// empty and ready to use.
type Tally struct {
	sum     []Count // per path, in PathID order
	spare   []Count // the buffer the next merge writes into
	decoded []Count // the buffer the next roll is decoded into
	totals  Count
}

// Add adds one roll to the tally. Rolls are sorted, so adding one is a
// linear merge: no map, and two buffers reused for every roll of a query.
func (t *Tally) Add(roll []byte) error {
	var err error
	if t.decoded, err = Decode(t.decoded[:0], roll); err != nil {
		return err
	}
	for _, c := range t.decoded {
		if t.totals, err = add(t.totals, c); err != nil {
			return err
		}
	}
	merged, err := mergeSorted(t.spare[:0], t.sum, t.decoded)
	if err != nil {
		return err
	}
	t.sum, t.spare = merged, t.sum
	return nil
}

// Totals returns the human and AI views of every roll added.
func (t *Tally) Totals() store.Counts {
	return store.Counts{Human: t.totals.Human, AI: t.totals.AI}
}

// Names returns the path of each of ids, which the store assigned. A
// missing ID is an error: rolls never name a path the store does not have.
type Names func(ids []int64) (map[int64]string, error)

// Page returns limit rows from offset in the views query's order (total
// descending, then path ascending in byte order) and whether a row follows.
//
// Only the rows around the page need their paths: sorted by total alone,
// the page is settled except among rows whose total equals that of the
// page's first or last row. So the paths fetched are those of the page
// widened to whole groups of equal totals, typically the page itself.
func (t *Tally) Page(offset, limit int, names Names) ([]store.PathCounts, bool, error) {
	rows := []store.PathCounts{}
	n := len(t.sum)
	if offset >= n || limit < 1 {
		return rows, false, nil
	}
	ranked := slices.Clone(t.sum)
	slices.SortFunc(ranked, func(a, b Count) int { return cmp.Compare(b.total(), a.total()) })

	// One row past the page tells whether more follow.
	end := min(n, offset+limit+1)
	lo, hi := offset, end
	for lo > 0 && ranked[lo-1].total() == ranked[offset].total() {
		lo--
	}
	for hi < n && ranked[hi].total() == ranked[end-1].total() {
		hi++
	}
	window := ranked[lo:hi]
	ids := make([]int64, len(window))
	for i, c := range window {
		ids[i] = c.PathID
	}
	paths, err := names(ids)
	if err != nil {
		return nil, false, err
	}
	named := make([]store.PathCounts, len(window))
	for i, c := range window {
		p, ok := paths[c.PathID]
		if !ok {
			return nil, false, fmt.Errorf("rollup: path ID %d has no path", c.PathID)
		}
		named[i] = store.PathCounts{Path: p, Counts: store.Counts{Human: c.Human, AI: c.AI}}
	}
	slices.SortFunc(named, func(a, b store.PathCounts) int {
		if c := cmp.Compare(b.Human+b.AI, a.Human+a.AI); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	rows = append(rows, named[offset-lo:end-lo]...)
	if len(rows) > limit {
		return rows[:limit], true, nil
	}
	return rows, false, nil
}
