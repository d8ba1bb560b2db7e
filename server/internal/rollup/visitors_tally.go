package rollup

import (
	"errors"
	"sync/atomic"

	"github.com/docsapi/docsapi-go/server/internal/hll"
	"github.com/docsapi/docsapi-go/server/store"
)

// VisitorTally reads the visitor segments of one project's rolls over a
// range and ranks the paths by their estimated total visitors, merging
// the sketches of only the paths that can reach the page asked for (see
// rank). The zero VisitorTally is empty and ready to use; Release gives
// its buffers back for the next query's, and must be called once the
// tally has been added to.
//
// Reading a month of segments is two jobs of about equal cost: the
// database's, fetching them and copying each out of its buffer (Add), and
// the tally's, reading their paths and sketch headers. They run side by
// side: Add hands each copy to a goroutine that reads the segments in
// order, and Result waits for it.
type VisitorTally struct {
	m      *visitorMerge
	segs   chan []byte   // copies to read, in order; nil once read
	done   chan struct{} // closed when the reader has read them all
	err    error         // the reader's first error, once done
	failed atomic.Bool   // the reader has failed: Add stops early
}

// VisitorStats is the work a VisitorTally did.
type VisitorStats struct {
	Segments  int // segments added
	Summaries int // summaries added
	Entries   int // entries read from them
	Paths     int // distinct paths among them
	Merged    int // paths whose sketches Result merged
}

// Add adds one segment, or one day's summary (SummarizeVisitorDay), to
// the tally. A summary's day must be apart from every segment's, since
// its visitors are added to theirs rather than merged. seg is only read
// during the call, so it may be a driver's buffer that the next row
// overwrites: the tally keeps a copy. A damaged segment is reported by
// Add or, if it is read after Add returns, by Result.
func (t *VisitorTally) Add(seg []byte) error {
	if t.m == nil {
		t.m = getVisitorMerge()
	}
	if t.segs == nil {
		if t.done != nil {
			return errors.New("rollup: a visitors tally added to after its result")
		}
		t.segs, t.done = make(chan []byte, 16), make(chan struct{})
		go t.read(t.m, t.segs)
	}
	if t.failed.Load() {
		return t.wait()
	}
	m := t.m
	start := len(m.kept)
	m.kept = append(m.kept, seg...)
	// The reader keeps slices of this copy; a later append that moves
	// kept leaves them on the old array, which they keep alive.
	t.segs <- m.kept[start:len(m.kept):len(m.kept)]
	return nil
}

// read reads the segments from segs into m until segs is closed, and
// stops at the first error, which it keeps in t.err.
func (t *VisitorTally) read(m *visitorMerge, segs <-chan []byte) {
	defer close(t.done)
	for seg := range segs {
		if t.err != nil {
			continue
		}
		if t.err = m.readStored(seg); t.err != nil {
			t.failed.Store(true)
		}
	}
}

// readStored reads a segment or a summary into m, by its format byte.
func (m *visitorMerge) readStored(seg []byte) error {
	if len(seg) > 0 && seg[0] == visitorSummaryFormat {
		return m.readSummary(seg)
	}
	return m.readDeferred(seg)
}

// wait waits until the reader has read every segment added, and returns
// its error.
func (t *VisitorTally) wait() error {
	if t.segs != nil {
		close(t.segs)
		t.segs = nil
		<-t.done
	}
	return t.err
}

// Stats returns the work done so far.
func (t *VisitorTally) Stats() VisitorStats {
	if t.m == nil {
		return VisitorStats{}
	}
	t.wait()
	return VisitorStats{Segments: t.m.segments, Summaries: t.m.summaries, Entries: t.m.entries, Paths: len(t.m.order), Merged: t.m.mergedPaths}
}

// Release gives the tally's buffers back; the VisitorTally is empty
// afterwards.
func (t *VisitorTally) Release() {
	t.wait()
	if t.m != nil {
		putVisitorMerge(t.m)
	}
	*t = VisitorTally{}
}

// unionOf returns the estimate of the union of two sketches (nil: none),
// taken in u, which keeps its memory from one union to the next.
func unionOf(u, a, b *hll.Sketch) int64 {
	switch {
	case a == nil && b == nil:
		return 0
	case b == nil:
		return int64(a.Estimate())
	case a == nil:
		return int64(b.Estimate())
	}
	u.Reset()
	u.Merge(a)
	u.EncodedLen() // one sorted run at a time (see mergeInto)
	u.Merge(b)
	return int64(u.Estimate())
}

// estimate returns the estimate of a pool's sketch, 0 for none.
func estimate(s *hll.Sketch) int64 {
	if s == nil {
		return 0
	}
	return int64(s.Estimate())
}

// Result returns the visitors query's answer for q: the project's totals,
// and q's page of paths ordered by estimated total descending, then path.
// The merge is in path order, so ranking is among integers, by position
// among equal totals (as for views, see pick).
func (t *VisitorTally) Result(q store.ViewsQuery) (store.VisitorsResult, error) {
	res := store.VisitorsResult{Rows: []store.PathVisitors{}}
	if t.m == nil {
		return res, nil
	}
	if err := t.wait(); err != nil {
		return store.VisitorsResult{}, err
	}
	m := t.m
	k := m.known
	res.Totals = store.VisitorTotals{
		Human: int64(k.human) + estimate(&m.human),
		AI:    int64(k.ai) + estimate(&m.ai),
		Total: int64(k.total) + unionOf(&m.union, &m.human, &m.ai),
	}
	// Every path read holds a visitor: a segment keeps no other.
	n := len(m.order)
	if q.Offset >= n || q.Limit < 1 {
		return res, nil
	}
	top, err := m.rank(min(n, q.Offset+q.Limit+1))
	if err != nil {
		return store.VisitorsResult{}, err
	}
	for _, i := range top[q.Offset:] {
		e := m.exact[i]
		res.Rows = append(res.Rows, store.PathVisitors{
			Path:  string(m.path(m.slots[m.order[i]])),
			Human: int64(e.human),
			AI:    int64(e.ai),
			Total: int64(e.total),
		})
	}
	if len(res.Rows) > q.Limit {
		res.Rows, res.HasMore = res.Rows[:q.Limit], true
	}
	return res, nil
}
