package rollup

import (
	"cmp"
	"math/rand/v2"
	"slices"

	"github.com/docsapi/docsapi-go/server/store"
)

// Tally sums the segments of one project's rolls over a range and ranks the
// sum: a views tally by human plus AI views, a visitors tally by total
// visitors. The zero Tally is an empty views tally, ready to use; Release
// gives its buffers back for the next query's.
type Tally struct {
	// Visitors makes the tally one of visitors rolls: it keeps each
	// entry's third number, the total, and ranks by it.
	Visitors bool
	// Path, if set, makes the tally one of that path alone: each
	// segment is summed as it is read (sumSegment, as a series is),
	// nothing is merged or ranked, and a page holds the path's row, if
	// it has one.
	Path string

	m      *merger
	one    views // the sums of Path, when set
	totals [2]int64
	// Work done, for tests that check it stays bounded.
	stats Stats
}

// Stats is the work a Tally did.
type Stats struct {
	Segments int // segments added
	Entries  int // entries decoded from them
	Paths    int // distinct paths in the sum
	Named    int // paths turned into strings for a page's rows
}

// Add adds one segment to the tally. seg is only read during the call,
// so it may be a driver's buffer that the next row overwrites.
func (t *Tally) Add(seg []byte) error {
	if t.Path != "" {
		v, err := sumSegment(seg, t.Path)
		if err != nil {
			return err
		}
		if t.one, err = addViews(t.one, v); err != nil {
			return err
		}
		t.totals[0], t.totals[1] = t.one.human, t.one.ai
		t.stats.Segments++
		return nil
	}
	if t.m == nil {
		t.m = getMerger()
		t.m.bots = t.Visitors
	}
	before := len(t.m.rows)
	h, a, ok, err := t.m.addSegment(seg)
	if err != nil {
		return err
	}
	if !ok {
		return errOverflow
	}
	sum, err := addViews(views{human: t.totals[0], ai: t.totals[1]}, views{human: h, ai: a})
	if err != nil {
		return err
	}
	t.totals[0], t.totals[1] = sum.human, sum.ai
	t.stats.Segments++
	t.stats.Entries += len(t.m.rows) - before
	return nil
}

// Totals returns the human and AI views of every segment added (of a
// views tally: visitors are not the sum of their paths'), or of Path's
// entries in them, if set.
func (t *Tally) Totals() store.Counts {
	return store.Counts{Human: t.totals[0], AI: t.totals[1]}
}

// PathVisitors returns the visitors of Path, set, in a visitors tally:
// the sums of its entries, as its row has them. (Without a path, the
// project's visitors are not its paths' sum: the store keeps them apart.)
func (t *Tally) PathVisitors() store.VisitorTotals {
	return store.VisitorTotals{Human: t.one.human, AI: t.one.ai, Total: t.one.bot}
}

// Stats returns the work done so far.
func (t *Tally) Stats() Stats { return t.stats }

// Release gives the tally's buffers back; the Tally is empty afterwards.
func (t *Tally) Release() {
	if t.m != nil {
		putMerger(t.m)
	}
	*t = Tally{Visitors: t.Visitors, Path: t.Path}
}

// Page returns limit rows from offset in the views query's order (total
// descending, then path ascending in byte order) and whether a row follows.
func (t *Tally) Page(offset, limit int) ([]store.PathCounts, bool, error) {
	rows := []store.PathCounts{}
	if t.Path != "" {
		if t.pathRow(offset, limit, t.one.human > 0 || t.one.ai > 0) {
			rows = append(rows, store.PathCounts{Path: t.Path, Counts: t.Totals()})
		}
		return rows, false, nil
	}
	more, err := t.page(offset, limit, func(path []byte, r row) {
		rows = append(rows, store.PathCounts{Path: string(path), Counts: store.Counts{Human: r.human, AI: r.ai}})
	})
	return rows, more, err
}

// VisitorsPage is Page for a visitors tally: its rows ordered by total
// visitors, then path.
func (t *Tally) VisitorsPage(offset, limit int) ([]store.PathVisitors, bool, error) {
	rows := []store.PathVisitors{}
	if t.Path != "" {
		if t.pathRow(offset, limit, t.one.bot > 0) {
			v := t.PathVisitors()
			rows = append(rows, store.PathVisitors{Path: t.Path, Human: v.Human, AI: v.AI, Total: v.Total})
		}
		return rows, false, nil
	}
	more, err := t.page(offset, limit, func(path []byte, r row) {
		rows = append(rows, store.PathVisitors{Path: string(path), Human: r.human, AI: r.ai, Total: t.m.bot(r)})
	})
	return rows, more, err
}

// pathRow reports whether the page from offset of at most limit rows of
// a tally of one path holds its row, which it has if counted: the one
// row, first if any. It records the work as page does.
func (t *Tally) pathRow(offset, limit int, counted bool) bool {
	if !counted {
		return false
	}
	t.stats.Paths = 1
	if offset > 0 || limit < 1 {
		return false
	}
	t.stats.Named++
	return true
}

// page calls row with each of the limit rows from offset in the order of
// the tally's kind, and reports whether a row follows.
//
// The sum is in path order, so "then path" is "then position in the sum":
// the page is found among integers, by selecting the totals at its first
// and last rank, and counting. That costs a few passes over the sum,
// whatever the offset and however many paths share a total; only the
// page's own rows become strings.
func (t *Tally) page(offset, limit int, row func(path []byte, r row)) (bool, error) {
	if t.m == nil || limit < 1 {
		return false, nil
	}
	sum, err := t.m.merge()
	if err != nil {
		return false, err
	}
	if cap(t.m.totals) < len(sum) {
		t.m.totals = make([]uint64, len(sum))
	}
	totals := t.m.totals[:len(sum)]
	n := 0 // paths with a total: the rows of the query
	for i, r := range sum {
		if t.Visitors {
			totals[i] = uint64(t.m.bot(r))
		} else {
			// Human and AI are each at most MaxInt64: their sum fits.
			totals[i] = uint64(r.human) + uint64(r.ai)
		}
		if totals[i] > 0 {
			n++
		}
	}
	t.stats.Paths = n
	if offset >= n {
		return false, nil
	}
	// One row past the page tells whether more follow. Paths of no total
	// (seen only by bots) rank after every row: ending at n leaves them out.
	end := min(n, offset+limit+1)
	picked := pick(totals, offset, end, &t.m.vals)
	more := len(picked) > limit
	if more {
		picked = picked[:limit]
	}
	for _, i := range picked {
		row(t.m.path(sum[i]), sum[i])
	}
	t.stats.Named += len(picked)
	return more, nil
}

// pick returns the positions in totals of the rows ranked offset to end-1
// by total descending, then position, in that order. 0 <= offset < end <=
// len(totals). vals is a buffer to reuse.
func pick(totals []uint64, offset, end int, vals *[]uint64) []int {
	// The totals at the page's first and last rank.
	hi, lo := rankTotals(totals, offset, end-1, vals)
	// How many rows rank above each group the page touches: the rows of
	// total hi start at rank above; those of lo at rank above+eqHi+mid.
	var above, eqHi, mid int
	for _, v := range totals {
		switch {
		case v > hi:
			above++
		case v == hi:
			eqHi++
		case v > lo:
			mid++
		}
	}
	// Walk the sum in order: within a group of equal totals, position
	// order is rank order.
	picked := make([]int, 0, end-offset)
	skipHi := offset - above             // rows of total hi before the page
	takeHi := min(eqHi, end-above)       // rows of total hi up to the page's end
	takeLo := end - (above + eqHi + mid) // rows of total lo in the page, if lo < hi
	var seenHi, seenLo int
	for i, v := range totals {
		switch {
		case v > hi || v < lo:
		case v == hi:
			if seenHi >= skipHi && seenHi < takeHi {
				picked = append(picked, i)
			}
			seenHi++
		case v > lo:
			picked = append(picked, i)
		default: // v == lo < hi
			if seenLo < takeLo {
				picked = append(picked, i)
			}
			seenLo++
		}
		if len(picked) == end-offset {
			break
		}
	}
	slices.SortFunc(picked, func(a, b int) int {
		return cmp.Or(cmp.Compare(totals[b], totals[a]), cmp.Compare(a, b))
	})
	return picked
}

// rankTotals returns the totals at ranks i <= j, ranked descending.
func rankTotals(totals []uint64, i, j int, vals *[]uint64) (uint64, uint64) {
	if j < 256 {
		// A short head: the j+1 largest in a min-heap, which most rows
		// pass by with one comparison against its root.
		h := make([]uint64, 0, j+1)
		for _, v := range totals {
			switch {
			case len(h) <= j:
				h = append(h, v)
				for c := len(h) - 1; c > 0 && h[(c-1)/2] > h[c]; c = (c - 1) / 2 {
					h[c], h[(c-1)/2] = h[(c-1)/2], h[c]
				}
			case v > h[0]:
				h[0] = v
				for c := 0; ; {
					m := c
					if l := 2*c + 1; l < len(h) && h[l] < h[m] {
						m = l
					}
					if r := 2*c + 2; r < len(h) && h[r] < h[m] {
						m = r
					}
					if m == c {
						break
					}
					h[c], h[m] = h[m], h[c]
					c = m
				}
			}
		}
		slices.SortFunc(h, func(a, b uint64) int { return cmp.Compare(b, a) })
		return h[i], h[j]
	}
	if cap(*vals) < len(totals) {
		*vals = make([]uint64, len(totals))
	}
	v := (*vals)[:len(totals)]
	copy(v, totals)
	lo := selectDesc(v, j)
	// selectDesc leaves the j largest before position j.
	hi := selectDesc(v[:j+1], i)
	return hi, lo
}

// selectDesc returns the value of rank k (0 the largest) in vals,
// rearranging vals so that the k values before position k are at least
// as large. Pivots are random, and values equal to the pivot are set
// apart, so neither crafted totals nor ties make it quadratic.
func selectDesc(vals []uint64, k int) uint64 {
	lo, hi := 0, len(vals) // the rank-k value lies in vals[lo:hi]
	for hi-lo > 1 {
		p := vals[lo+rand.IntN(hi-lo)]
		// Three-way partition of vals[lo:hi]: greater, equal, less.
		gt, i, lt := lo, lo, hi
		for i < lt {
			switch v := vals[i]; {
			case v > p:
				vals[gt], vals[i] = vals[i], vals[gt]
				gt++
				i++
			case v < p:
				lt--
				vals[lt], vals[i] = vals[i], vals[lt]
			default:
				i++
			}
		}
		switch {
		case k < gt:
			hi = gt
		case k >= lt:
			lo = lt
		default:
			return p
		}
	}
	return vals[k]
}

// Result returns the views query's answer for q from the sum: the totals
// and q's page. hook, if not nil, is told the work done (a test's look).
func (t *Tally) Result(q store.ViewsQuery, hook func(Stats)) (store.ViewsResult, error) {
	rows, more, err := t.Page(q.Offset, q.Limit)
	if err != nil {
		return store.ViewsResult{}, err
	}
	if hook != nil {
		hook(t.Stats())
	}
	return store.ViewsResult{Totals: t.Totals(), Rows: rows, HasMore: more}, nil
}
