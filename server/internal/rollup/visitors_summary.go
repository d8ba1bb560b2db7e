package rollup

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Closed days are kept as numbers. Every visitor's hash is keyed with the
// salt of its own UTC day, and a day's salt is deleted once the day after
// it is over, so no hash is in the sketches of two days: a reader who
// comes back tomorrow is another hash. The visitors of a range of days are
// therefore the sum of each day's visitors, and a day whose visitors can
// no longer be recorded needs its sketches only to be counted once. Its
// summary holds that count per path and class: a query of a month adds up
// a few integers per path for its closed days instead of decoding the
// millions of entries of their sketches, and merges sketches only within
// the days still open (and within the hours at a range's ragged edges,
// which share their day's salt).
//
// A summary is of one day roll and names the last Seq of the segments it
// was made from. Segments are only ever replaced by one of a higher Seq
// (see AppendVisitors), so a summary describes its roll exactly while that
// Seq is still the roll's last: a query checks it in the snapshot it
// reads, and a day written to after its summary (a flush retried late) is
// read from its sketches until it is summarized again.

// visitorSummaryFormat is the first byte of every visitors summary, a
// value no segment takes.
const visitorSummaryFormat = 0x53 // 'S'

// A summary is the format byte; the number of entries and the total length
// of their paths, each a uvarint; the project's human, AI and total
// visitors, each a uvarint; then one entry per path in increasing byte
// order of path: the front-coded path as in the segments, then its human,
// AI and total visitors, each a uvarint. An entry has a visitor. Last,
// the CRC-32C of every byte before it, 4 bytes little-endian: unlike a
// segment's sketches, which carry their own, a count has nothing else to
// tell a flipped bit.

// SummarizeVisitorDay returns the summary of a day roll whose segments are
// segs: each path's estimated human, AI and total visitors, and the
// project's.
func SummarizeVisitorDay(segs [][]byte) ([]byte, error) {
	m := getVisitorMerge()
	defer putVisitorMerge(m)
	for _, s := range segs {
		if err := m.addSegment(s); err != nil {
			return nil, err
		}
	}
	var sum summaryWriter
	for _, i := range m.order {
		s := m.slots[i]
		h, a := m.slotSketch(s.human), m.slotSketch(s.ai)
		sum.add(m.path(s), pathVisitors{human: uint64(estimate(h)), ai: uint64(estimate(a)), total: uint64(unionOf(&m.union, h, a))})
	}
	project := pathVisitors{
		human: uint64(estimate(&m.human)),
		ai:    uint64(estimate(&m.ai)),
		total: uint64(unionOf(&m.union, &m.human, &m.ai)),
	}
	return sum.finish(project), nil
}

// SumVisitorSummaries returns the summary of the days whose summaries are
// sums: per path, and for the project, the sum of their visitors, which
// is their days' visitors since days share none.
func SumVisitorSummaries(sums [][]byte) ([]byte, error) {
	m := getVisitorMerge()
	defer putVisitorMerge(m)
	for _, s := range sums {
		if err := m.readSummary(s); err != nil {
			return nil, err
		}
	}
	var sum summaryWriter
	for _, i := range m.order {
		sum.add(m.path(m.slots[i]), m.lazy[i].known)
	}
	return sum.finish(m.known), nil
}

// summaryWriter encodes a summary, its paths added in byte order.
type summaryWriter struct {
	body           []byte
	prev           []byte
	entries, names int
}

// add adds path's visitors, unless it has none.
func (w *summaryWriter) add(path []byte, v pathVisitors) {
	if v.total == 0 && v.human == 0 && v.ai == 0 {
		return // no visitor: a segment keeps none, but be sure
	}
	w.body = appendFrontCoded(w.body, w.prev, path)
	w.body = appendVisitorCounts(w.body, v)
	w.prev = path
	w.entries++
	w.names += len(path)
}

// finish returns the summary of the paths added and the project's
// visitors.
func (w *summaryWriter) finish(project pathVisitors) []byte {
	dst := make([]byte, 0, 48+len(w.body))
	dst = append(dst, visitorSummaryFormat)
	dst = binary.AppendUvarint(dst, uint64(w.entries))
	dst = binary.AppendUvarint(dst, uint64(w.names))
	dst = appendVisitorCounts(dst, project)
	dst = append(dst, w.body...)
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst, castagnoli))
}

// appendVisitorCounts appends v's human, AI and total visitors.
func appendVisitorCounts(dst []byte, v pathVisitors) []byte {
	dst = binary.AppendUvarint(dst, v.human)
	dst = binary.AppendUvarint(dst, v.ai)
	return binary.AppendUvarint(dst, v.total)
}

// appendFrontCoded appends path front-coded after prev: the length of the
// prefix they share, the length of the rest, the rest.
func appendFrontCoded(dst, prev, path []byte) []byte {
	shared := 0
	for shared < len(prev) && shared < len(path) && prev[shared] == path[shared] {
		shared++
	}
	dst = binary.AppendUvarint(dst, uint64(shared))
	dst = binary.AppendUvarint(dst, uint64(len(path)-shared))
	return append(dst, path[shared:]...)
}

// readVisitorCounts reads three uvarints: human, AI and total visitors.
func readVisitorCounts(b []byte) (v pathVisitors, rest []byte, ok bool) {
	var n [3]uint64
	for i := range n {
		x, k := uvarint(b)
		// No count of distinct 64-bit hashes is near 2^63, and sums of
		// them must not wrap.
		if k <= 0 || x > math.MaxInt64/4 {
			return pathVisitors{}, nil, false
		}
		n[i], b = x, b[k:]
	}
	return pathVisitors{human: n[0], ai: n[1], total: n[2]}, b, true
}

// readSummary adds a summary to the query merge m: its counts to the
// project's and to each path's known visitors.
func (m *visitorMerge) readSummary(seg []byte) error {
	bad := errors.New("rollup: damaged visitors summary header")
	if len(seg) < 1+crc32.Size || seg[0] != visitorSummaryFormat {
		return bad
	}
	n := len(seg) - crc32.Size
	if crc32.Checksum(seg[:n], castagnoli) != binary.LittleEndian.Uint32(seg[n:]) {
		return errors.New("rollup: damaged visitors summary (checksum mismatch)")
	}
	b := seg[1:n]
	e, k := uvarint(b)
	if k <= 0 {
		return bad
	}
	b = b[k:]
	p, k := uvarint(b)
	if k <= 0 {
		return bad
	}
	b = b[k:]
	project, b, ok := readVisitorCounts(b)
	if !ok {
		return bad
	}
	// An entry takes at least five bytes.
	if e > uint64(len(b))/5 || p > e*uint64(len(b)) || p > math.MaxUint32 {
		return bad
	}
	err := m.mergeEntries(b, int(e), int(p), func(slot int32, b []byte) ([]byte, error) {
		v, rest, ok := readVisitorCounts(b)
		if !ok {
			return nil, errors.New("bad counts")
		}
		if v.total == 0 && v.human == 0 && v.ai == 0 {
			return nil, errors.New("no visitors")
		}
		m.growLazy(slot)
		m.lazy[slot].known.add(v)
		return rest, nil
	})
	if err != nil {
		return fmt.Errorf("rollup: damaged visitors summary: %w", err)
	}
	m.known.add(project)
	m.summaries++
	return nil
}

// add adds o's counts to v.
func (v *pathVisitors) add(o pathVisitors) {
	v.human += o.human
	v.ai += o.ai
	v.total += o.total
}
