package rollup

import (
	"github.com/docsapi/docsapi-go/server/internal/hll"
	"github.com/docsapi/docsapi-go/server/store"
)

// VisitorTally merges the visitor segments of one project's rolls over a
// range and ranks the paths by their estimated total visitors. The zero
// VisitorTally is empty and ready to use; Release gives its buffers back
// for the next query's.
type VisitorTally struct {
	m *visitorMerge
}

// VisitorStats is the work a VisitorTally did.
type VisitorStats struct {
	Segments int // segments added
	Entries  int // entries decoded from them
	Paths    int // distinct paths in the merge
}

// Add merges one segment into the tally. seg is only read during the call,
// so it may be a driver's buffer that the next row overwrites.
func (t *VisitorTally) Add(seg []byte) error {
	if t.m == nil {
		t.m = getVisitorMerge()
	}
	return t.m.addSegment(seg)
}

// Stats returns the work done so far.
func (t *VisitorTally) Stats() VisitorStats {
	if t.m == nil {
		return VisitorStats{}
	}
	return VisitorStats{Segments: t.m.segments, Entries: t.m.entries, Paths: len(t.m.order)}
}

// Release gives the tally's buffers back; the VisitorTally is empty
// afterwards.
func (t *VisitorTally) Release() {
	if t.m != nil {
		putVisitorMerge(t.m)
	}
	*t = VisitorTally{}
}

// unionOf returns the estimate of the union of two sketches (nil: none),
// taken in the merge's spare sketch, which keeps its memory from one
// union to the next.
func (m *visitorMerge) unionOf(a, b *hll.Sketch) int64 {
	switch {
	case a == nil && b == nil:
		return 0
	case b == nil:
		return int64(a.Estimate())
	case a == nil:
		return int64(b.Estimate())
	}
	m.union.Reset()
	m.union.Merge(a)
	m.union.EncodedLen() // one sorted run at a time (see mergeInto)
	m.union.Merge(b)
	return int64(m.union.Estimate())
}

// estimate returns the estimate of a pool's sketch, 0 for none.
func estimate(s *hll.Sketch) int64 {
	if s == nil {
		return 0
	}
	return int64(s.Estimate())
}

// Result returns the visitors query's answer for q from the merge: the
// project's totals, and q's page of paths ordered by estimated total
// descending, then path. The merge is in path order, so ranking is among
// integers, by position among equal totals (as for views, see pick); only
// the page's rows are estimated by class and named.
func (t *VisitorTally) Result(q store.ViewsQuery) (store.VisitorsResult, error) {
	res := store.VisitorsResult{Rows: []store.PathVisitors{}}
	if t.m == nil {
		return res, nil
	}
	m := t.m
	res.Totals = store.VisitorTotals{
		Human: estimate(&m.human),
		AI:    estimate(&m.ai),
		Total: m.unionOf(&m.human, &m.ai),
	}
	if cap(m.totals) < len(m.order) {
		m.totals = make([]uint64, len(m.order))
	}
	totals := m.totals[:len(m.order)]
	n := 0
	for i, slot := range m.order {
		s := m.slots[slot]
		totals[i] = uint64(m.unionOf(m.slotSketch(s.human), m.slotSketch(s.ai)))
		if totals[i] > 0 {
			n++
		}
	}
	if q.Offset >= n || q.Limit < 1 {
		return res, nil
	}
	end := min(n, q.Offset+q.Limit+1)
	for _, i := range pick(totals, q.Offset, end, &m.vals) {
		s := m.slots[m.order[i]]
		res.Rows = append(res.Rows, store.PathVisitors{
			Path:  string(m.path(s)),
			Human: estimate(m.slotSketch(s.human)),
			AI:    estimate(m.slotSketch(s.ai)),
			Total: int64(totals[i]),
		})
	}
	if len(res.Rows) > q.Limit {
		res.Rows, res.HasMore = res.Rows[:q.Limit], true
	}
	return res, nil
}
