package rollup

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/docsapi/docsapi-go/server/internal/hll"
)

// visitorFormat is the first byte of every visitors segment, a value the
// views' segments never take, so that neither reader misreads the other's.
const visitorFormat = 0x56 // 'V'

// A visitors segment is the format byte; the number of entries and the
// total length of their paths, each a uvarint; the project's human and AI
// sketches, each as a uvarint length and that many bytes (0: no visitor);
// then one entry per path in increasing byte order of path: the front-coded
// path as in the views' segments (shared prefix length, length of the
// rest, the rest), then its human and AI sketches the same way. An entry
// has at least one visitor.

// visitorMerge adds up visitor segments path by path, in path order. Paths
// live in one arena; each path's sketches are taken from a pool of
// sketches that outlives the merge (see getVisitorMerge), so that once
// warm a query allocates nothing per path or per sketch: merges read
// stored sketches straight from their bytes (hll.Sketch.MergeBinary), and
// a path's sketch stays sparse, a few bytes per visitor, until it is large.
type visitorMerge struct {
	arena []byte
	slots []visitorSlot
	order []int32 // slots in path order
	next  []int32 // the order being built by addSegment
	pool  []hll.Sketch
	used  int // sketches of pool in use
	// The project's sketches, and one to take unions in.
	human, ai, union hll.Sketch
	cur              []byte // the path being decoded
	totals, vals     []uint64
	segments         int
	summaries        int
	entries          int
	mergedPaths      int
	known            pathVisitors // the project's, from summaries

	// A query defers the paths' sketches (see VisitorTally): it keeps
	// copies of the segments, and where each slot's sketches are in them.
	kept    []byte
	parts   []visitorPart
	lazy    []lazySlot // by slot
	exact   []pathVisitors
	merged  []bool // by position in order: exact holds the path's estimates
	todo    []int
	mergers []*pathMerger
}

// visitorSlot is one path of a merge: its bytes in the arena and its
// sketches in the pool (-1: none yet).
type visitorSlot struct {
	off, n    uint32
	human, ai int32
}

func (m *visitorMerge) reset() {
	for i := range m.used {
		m.pool[i].Reset()
	}
	m.used = 0
	m.arena, m.slots, m.order = m.arena[:0], m.slots[:0], m.order[:0]
	m.kept, m.parts, m.lazy = m.kept[:0], m.parts[:0], m.lazy[:0]
	m.human.Reset()
	m.ai.Reset()
	m.union.Reset()
	m.segments, m.summaries, m.entries, m.mergedPaths = 0, 0, 0, 0
	m.known = pathVisitors{}
}

// Spare visitor merges, as for the views' mergers (see spare): a month of
// a busy project holds tens of thousands of sketches, which every query
// would otherwise make again. One is kept, if its pool is not larger than
// spareVisitorSketches.
var spareVisitors struct {
	mu sync.Mutex
	ms []*visitorMerge
}

const spareVisitorSketches = 1 << 17

func getVisitorMerge() *visitorMerge {
	spareVisitors.mu.Lock()
	defer spareVisitors.mu.Unlock()
	if n := len(spareVisitors.ms); n > 0 {
		m := spareVisitors.ms[n-1]
		spareVisitors.ms = spareVisitors.ms[:n-1]
		return m
	}
	return new(visitorMerge)
}

func putVisitorMerge(m *visitorMerge) {
	m.reset()
	if len(m.pool) > spareVisitorSketches || cap(m.arena) > spareBytes || cap(m.kept) > spareBytes {
		return
	}
	spareVisitors.mu.Lock()
	defer spareVisitors.mu.Unlock()
	if len(spareVisitors.ms) < spareMergers {
		spareVisitors.ms = append(spareVisitors.ms, m)
	}
}

// sketch returns an empty sketch of the pool.
func (m *visitorMerge) sketch() int32 {
	if m.used == len(m.pool) {
		m.pool = append(m.pool, hll.Sketch{})
	}
	m.used++
	return int32(m.used - 1)
}

// mergeInto merges the encoded sketch b into the slot's sketch *idx (made
// on first use) and into the project's sketch total, unless total is nil.
func (m *visitorMerge) mergeInto(idx *int32, b []byte, total *hll.Sketch) error {
	if len(b) == 0 {
		return nil
	}
	if *idx < 0 {
		*idx = m.sketch()
	}
	if err := m.pool[*idx].MergeBinary(b); err != nil {
		return err
	}
	if total != nil {
		return total.MergeBinary(b)
	}
	return nil
}

func (m *visitorMerge) path(s visitorSlot) []byte { return m.arena[s.off : s.off+s.n] }

// newSlot adds path as a slot with no sketches.
func (m *visitorMerge) newSlot(path []byte) (int32, error) {
	if len(m.arena)+len(path) > math.MaxUint32 {
		return 0, errors.New("rollup: the merge's paths exceed 4 GiB")
	}
	off := uint32(len(m.arena))
	m.arena = append(m.arena, path...)
	m.slots = append(m.slots, visitorSlot{off: off, n: uint32(len(path)), human: -1, ai: -1})
	return int32(len(m.slots) - 1), nil
}

// addSorted adds one path's sketches, path being at or after every path
// added so far: how a batch's counts, sorted, become a segment.
func (m *visitorMerge) addSorted(path string, human, ai []byte) error {
	if path == "" {
		return errors.New("rollup: empty path")
	}
	n := len(m.order)
	if n == 0 || string(m.path(m.slots[m.order[n-1]])) != path {
		if n > 0 && string(m.path(m.slots[m.order[n-1]])) > path {
			return errors.New("rollup: visitor counts out of order")
		}
		i, err := m.newSlot([]byte(path))
		if err != nil {
			return err
		}
		m.order = append(m.order, i)
		n++
	}
	s := &m.slots[m.order[n-1]]
	if err := m.mergeInto(&s.human, human, &m.human); err != nil {
		return err
	}
	return m.mergeInto(&s.ai, ai, &m.ai)
}

// readBytes reads a uvarint length and that many bytes.
func readBytes(b []byte) (v, rest []byte, ok bool) {
	n, k := uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil, false
	}
	return b[k : k+int(n)], b[k+int(n):], true
}

// visitorHeader reads a visitors segment's header: its entries, the total
// length of their paths, the project's sketches and the entries' bytes.
func visitorHeader(seg []byte) (entries, names int, human, ai, body []byte, err error) {
	bad := func() (int, int, []byte, []byte, []byte, error) {
		return 0, 0, nil, nil, nil, errors.New("rollup: damaged visitors segment header")
	}
	if len(seg) == 0 {
		return 0, 0, nil, nil, nil, errors.New("rollup: empty visitors segment")
	}
	if seg[0] != visitorFormat {
		return 0, 0, nil, nil, nil, fmt.Errorf("rollup: visitors segment format %d, this program reads %d", seg[0], visitorFormat)
	}
	b := seg[1:]
	e, k := uvarint(b)
	if k <= 0 {
		return bad()
	}
	b = b[k:]
	p, k := uvarint(b)
	if k <= 0 {
		return bad()
	}
	b = b[k:]
	var ok bool
	if human, b, ok = readBytes(b); !ok {
		return bad()
	}
	if ai, b, ok = readBytes(b); !ok {
		return bad()
	}
	// An entry takes at least four bytes, and no path is longer than the
	// entries' bytes.
	if e > uint64(len(b))/4 || p > e*uint64(len(b)) || p > math.MaxUint32 {
		return bad()
	}
	return int(e), int(p), human, ai, b, nil
}

// addSegment merges a stored segment into m: its project sketches into
// m's, and each entry's sketches into the slot of its path, made if new.
// seg is only read during the call.
func (m *visitorMerge) addSegment(seg []byte) error {
	return m.readSegment(seg, func(slot int32, h, a []byte) error {
		s := &m.slots[slot]
		if err := m.mergeInto(&s.human, h, nil); err != nil {
			return err
		}
		return m.mergeInto(&s.ai, a, nil)
	})
}

// readSegment reads a stored segment into m: its project sketches merged
// into m's, and each entry's sketches handed to take with the slot of its
// path, made if new. take may keep h and a only as long as seg.
func (m *visitorMerge) readSegment(seg []byte, take func(slot int32, h, a []byte) error) error {
	entries, names, human, ai, b, err := visitorHeader(seg)
	if err != nil {
		return err
	}
	for _, t := range [...]struct {
		s *hll.Sketch
		b []byte
	}{{&m.human, human}, {&m.ai, ai}} {
		if len(t.b) == 0 {
			continue
		}
		if err := t.s.MergeBinary(t.b); err != nil {
			return fmt.Errorf("rollup: damaged visitors segment: the project's sketch: %w", err)
		}
	}
	err = m.mergeEntries(b, entries, names, func(slot int32, b []byte) ([]byte, error) {
		h, b, ok := readBytes(b)
		if !ok {
			return nil, errors.New("bad sketch length")
		}
		a, b, ok := readBytes(b)
		if !ok {
			return nil, errors.New("bad sketch length")
		}
		if len(h) == 0 && len(a) == 0 {
			return nil, errors.New("no visitors")
		}
		return b, take(slot, h, a)
	})
	if err != nil {
		return fmt.Errorf("rollup: damaged visitors segment: %w", err)
	}
	m.segments++
	m.entries += entries
	return nil
}

// mergeEntries merges the entries of b, the body of a segment or summary
// of entries entries whose paths take names bytes, into m's order: each
// entry is a front-coded path, then what entry reads off the front of the
// bytes after it, given the slot of the path (made if new). Both m's paths
// and b's are in byte order, so this is one merge of two sorted lists,
// with one comparison of paths per step.
func (m *visitorMerge) mergeEntries(b []byte, entries, names int, entry func(slot int32, b []byte) ([]byte, error)) error {
	damaged := func(what string, at int) error {
		return fmt.Errorf("%s at entry %d", what, at)
	}
	next := m.next[:0]
	if cap(next) < len(m.order)+entries {
		next = make([]int32, 0, len(m.order)+entries)
	}
	cur, i, got, pathBytes := m.cur[:0], 0, 0, 0
	for ; len(b) > 0; got++ {
		// Each entry is read off the front of b.
		shared, k := uvarint(b)
		if k <= 0 {
			return damaged("bad varint", got)
		}
		b = b[k:]
		rest, k := uvarint(b)
		if k <= 0 {
			return damaged("bad varint", got)
		}
		b = b[k:]
		switch {
		case shared > uint64(len(cur)):
			return damaged("shared prefix longer than the previous path", got)
		case rest == 0 || rest > uint64(len(b)):
			return damaged("bad path length", got)
		case shared < uint64(len(cur)) && b[0] <= cur[shared]:
			return damaged("paths out of order", got)
		}
		cur = append(cur[:shared], b[:rest]...)
		b = b[rest:]
		pathBytes += len(cur)
		// The slots before cur's place come first.
		c := 1
		for ; i < len(m.order); i++ {
			if c = bytes.Compare(m.path(m.slots[m.order[i]]), cur); c >= 0 {
				break
			}
			next = append(next, m.order[i])
		}
		var slot int32
		if c == 0 {
			slot = m.order[i]
			i++
		} else {
			var err error
			if slot, err = m.newSlot(cur); err != nil {
				return err
			}
		}
		next = append(next, slot)
		var err error
		if b, err = entry(slot, b); err != nil {
			return damaged(err.Error(), got)
		}
	}
	if got != entries || pathBytes != names {
		return damaged("header does not match the entries", got)
	}
	next = append(next, m.order[i:]...)
	m.order, m.next, m.cur = next, m.order, cur
	return nil
}

// emptyLen is the length of an empty sketch's encoding: no sketch that
// holds a visitor is as short.
var emptyLen = new(hll.Sketch).EncodedLen()

// appendSketch appends the uvarint length and the encoding of s, or a 0
// length if s is nil or empty.
func appendSketch(dst []byte, s *hll.Sketch) []byte {
	if s == nil {
		return append(dst, 0)
	}
	n := s.EncodedLen()
	if n <= emptyLen {
		return append(dst, 0)
	}
	dst = binary.AppendUvarint(dst, uint64(n))
	return s.AppendBinary(dst)
}

// empty reports whether s holds no visitor.
func empty(s *hll.Sketch) bool { return s == nil || s.EncodedLen() <= emptyLen }

func (m *visitorMerge) slotSketch(idx int32) *hll.Sketch {
	if idx < 0 {
		return nil
	}
	return &m.pool[idx]
}

// encode appends the segment of m's paths that hold a visitor to dst, and
// returns how many it holds.
func (m *visitorMerge) encode(dst []byte) ([]byte, int) {
	keep := m.next[:0]
	names := 0
	for _, i := range m.order {
		s := m.slots[i]
		if empty(m.slotSketch(s.human)) && empty(m.slotSketch(s.ai)) {
			continue
		}
		keep = append(keep, i)
		names += int(s.n)
	}
	m.next = keep
	dst = append(dst, visitorFormat)
	dst = binary.AppendUvarint(dst, uint64(len(keep)))
	dst = binary.AppendUvarint(dst, uint64(names))
	dst = appendSketch(dst, &m.human)
	dst = appendSketch(dst, &m.ai)
	var prev []byte
	for _, i := range keep {
		s := m.slots[i]
		path := m.path(s)
		dst = appendFrontCoded(dst, prev, path)
		dst = appendSketch(dst, m.slotSketch(s.human))
		dst = appendSketch(dst, m.slotSketch(s.ai))
		prev = path
	}
	return dst, len(keep)
}
