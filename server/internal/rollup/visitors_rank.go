package rollup

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/docsapi/docsapi-go/server/internal/hll"
)

// A query ranks paths by their visitors over its range, and a busy month
// holds tens of thousands of (path, roll) sketches, most of them a few
// visitors each: merging them all took most of a query's time. So a
// query's merge defers them: it keeps the segments, notes where each of a
// path's sketches lies, and adds up an hll.Bound per path from their
// headers alone. Result then estimates the unions of only the paths
// whose bound could reach its page, most often the page's own rows and
// the large paths whose sketches are dense, with an hll.UnionEstimator,
// which gives what merging them would without building the unions.

var errTooManyParts = errors.New("rollup: a visitors query of more than 2^31 sketches")

// visitorPart is one stored sketch of a deferred path: its bytes, in a
// copy of their segment, and the path's next part of the same class (-1:
// none).
type visitorPart struct {
	b    []byte
	next int32
}

// lazySlot is what a query knows of a path before merging it: the bound
// of each class's union, and the visitors of its closed days, from their
// summaries, which the unions' estimates add to.
type lazySlot struct {
	human, ai hll.Bound
	known     pathVisitors
}

// growLazy makes m.lazy long enough to hold slot.
func (m *visitorMerge) growLazy(slot int32) {
	for len(m.lazy) <= int(slot) {
		m.lazy = append(m.lazy, lazySlot{})
	}
}

// pathVisitors is a merged path's estimates.
type pathVisitors struct {
	human, ai, total uint64
}

// readDeferred reads seg, a copy that the query keeps, into the query
// merge m: its project sketches merged, its paths' sketches noted with
// their bounds. In a deferred merge a slot's human and ai are the heads
// of its lists of parts, which keep slices of seg.
func (m *visitorMerge) readDeferred(seg []byte) error {
	return m.readSegment(seg, func(slot int32, h, a []byte) error {
		m.growLazy(slot)
		s, l := &m.slots[slot], &m.lazy[slot]
		if err := m.note(&s.human, &l.human, h); err != nil {
			return err
		}
		return m.note(&s.ai, &l.ai, a)
	})
}

// note adds the encoded sketch b, if any, to a path's list of parts at
// head and to its bound u.
func (m *visitorMerge) note(head *int32, u *hll.Bound, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if err := u.AddBinary(b); err != nil {
		return err
	}
	if len(m.parts) >= math.MaxInt32 {
		return errTooManyParts
	}
	m.parts = append(m.parts, visitorPart{b: b, next: *head})
	*head = int32(len(m.parts) - 1)
	return nil
}

// upper is the most visitors the path at position i of the order can have
// once merged: math.MaxUint64 when only merging tells.
func (m *visitorMerge) upper(i int) uint64 {
	l := m.lazy[m.order[i]]
	u := l.human
	u.Add(l.ai)
	if v, ok := u.Max(); ok {
		return l.known.total + v
	}
	return math.MaxUint64
}

// pathMerger estimates one path's unions at a time, keeping its memory
// from one path to the next. Each of a query's workers has its own.
type pathMerger struct {
	est       hll.UnionEstimator
	human, ai [][]byte
}

// partsOf returns the list of parts from head, appended to dst[:0].
func (m *visitorMerge) partsOf(dst [][]byte, head int32) [][]byte {
	dst = dst[:0]
	for p := head; p >= 0; p = m.parts[p].next {
		dst = append(dst, m.parts[p].b)
	}
	return dst
}

// estimates estimates the unions of the parts of the path at position i
// of m's order. It only reads m, so workers share it.
func (pm *pathMerger) estimates(m *visitorMerge, i int) (pathVisitors, error) {
	slot := m.order[i]
	s, e := m.slots[slot], m.lazy[slot].known
	if s.human < 0 && s.ai < 0 {
		return e, nil // only in summaries
	}
	pm.human = m.partsOf(pm.human, s.human)
	pm.ai = m.partsOf(pm.ai, s.ai)
	h, a, total, err := pm.est.Estimates(pm.human, pm.ai)
	if err != nil {
		return pathVisitors{}, err
	}
	e.add(pathVisitors{human: h, ai: a, total: total})
	return e, nil
}

// mergePaths merges the paths at the positions todo, on as many workers
// as the machine has cores (a few dozen large paths are most of a
// query's work), and stores their estimates in m.exact.
func (m *visitorMerge) mergePaths(todo []int) error {
	workers := min(runtime.GOMAXPROCS(0), len(todo))
	for len(m.mergers) < workers {
		m.mergers = append(m.mergers, new(pathMerger))
	}
	errs := make([]error, workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			pm := m.mergers[w]
			for {
				k := int(next.Add(1) - 1)
				if k >= len(todo) || errs[w] != nil {
					return
				}
				i := todo[k]
				e, err := pm.estimates(m, i)
				if err != nil {
					errs[w] = fmt.Errorf("rollup: damaged visitors segment: the sketches of %q: %w", m.path(m.slots[m.order[i]]), err)
					return
				}
				m.exact[i] = e
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// rank returns the positions in the order of the paths ranked 0 to want-1
// by total visitors descending, then position, with their estimates in
// m.exact. It ranks by every path's bound, merges the paths ranked within
// want that are not merged yet, which can only lower their totals, and
// ranks again, until the first want are all merged: a path still ranked
// below them by its bound is below them by its estimate too.
func (m *visitorMerge) rank(want int) ([]int, error) {
	n := len(m.order)
	if n > 0 {
		m.growLazy(int32(len(m.slots) - 1))
	}
	m.totals = grow(m.totals, n)
	m.exact = grow(m.exact, n)
	m.merged = grow(m.merged, n)
	clear(m.merged)
	for i := range n {
		m.totals[i] = m.upper(i)
	}
	for {
		top := pick(m.totals, 0, want, &m.vals)
		todo := m.todo[:0]
		for _, i := range top {
			if !m.merged[i] {
				todo = append(todo, i)
			}
		}
		m.todo = todo
		if len(todo) == 0 {
			return top, nil
		}
		if err := m.mergePaths(todo); err != nil {
			return nil, err
		}
		for _, i := range todo {
			m.merged[i], m.totals[i] = true, m.exact[i].total
		}
		m.mergedPaths += len(todo)
	}
}

// grow returns s with length n, reusing its memory when it can.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
