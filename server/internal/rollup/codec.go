package rollup

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
)

// format is the first byte of every segment. A store that meets another
// value refuses the segment rather than misread it: another layout wrote
// it.
const format = 3

// A segment is the format byte; the number of entries and the total length
// of their paths, each a uvarint (so a reader allocates once); then one
// entry per path in increasing byte order of path: how many leading bytes
// the path shares with the previous entry's, the length of the rest, the
// rest, then its three numbers (Count's Human, AI and Bot), each a
// uvarint. Sorted paths share long prefixes, so an entry of a docs site's
// path holds little more than what its path adds to the one before.

// errOverflow is returned when a sum leaves int64: a merge, a flush or a
// query fails rather than store or answer a wrong count. (No path gets
// near it: a view adds one.)
var errOverflow = errors.New("rollup: count overflows int64")

// Normalize sorts counts by path (bytes), adds up the counts of the same
// path and drops those with no views, in place; it returns the shortened
// slice. Encode needs normalized counts. Counts in path order already (as
// Group makes them) are only checked, not sorted again.
func Normalize(counts []Count) ([]Count, error) {
	byPath := func(a, b Count) int { return strings.Compare(a.Path, b.Path) }
	if !slices.IsSortedFunc(counts, byPath) {
		slices.SortFunc(counts, byPath)
	}
	out := counts[:0]
	for _, c := range counts {
		if c.Path == "" || c.Human < 0 || c.AI < 0 || c.Bot < 0 {
			return nil, fmt.Errorf("rollup: invalid count %+v", c)
		}
		if c.Human == 0 && c.AI == 0 && c.Bot == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Path == c.Path {
			sum, err := addViews(views{out[n-1].Human, out[n-1].AI, out[n-1].Bot}, views{c.Human, c.AI, c.Bot})
			if err != nil {
				return nil, err
			}
			out[n-1].Human, out[n-1].AI, out[n-1].Bot = sum.human, sum.ai, sum.bot
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// views are one path's counts of each kind, each at least 0.
type views struct{ human, ai, bot int64 }

// addViews sums two counts of the same path.
func addViews(x, y views) (views, error) {
	if x.human > math.MaxInt64-y.human || x.ai > math.MaxInt64-y.ai || x.bot > math.MaxInt64-y.bot {
		return views{}, errOverflow
	}
	return views{x.human + y.human, x.ai + y.ai, x.bot + y.bot}, nil
}

// Encode appends the segment of normalized counts to dst.
func Encode(dst []byte, counts []Count) []byte {
	names := 0
	for _, c := range counts {
		names += len(c.Path)
	}
	dst = appendHeader(dst, len(counts), names)
	prev := ""
	for _, c := range counts {
		dst = appendEntry(dst, prev, c.Path, views{c.Human, c.AI, c.Bot})
		prev = c.Path
	}
	return dst
}

func appendHeader(dst []byte, entries, names int) []byte {
	dst = append(dst, format)
	dst = binary.AppendUvarint(dst, uint64(entries))
	return binary.AppendUvarint(dst, uint64(names))
}

// appendEntry appends the entry of path after prev. It takes strings or
// byte slices alike (the merger's paths are slices of its arena).
func appendEntry[S string | []byte](dst []byte, prev, path S, v views) []byte {
	shared := 0
	for shared < len(prev) && shared < len(path) && prev[shared] == path[shared] {
		shared++
	}
	dst = binary.AppendUvarint(dst, uint64(shared))
	dst = binary.AppendUvarint(dst, uint64(len(path)-shared))
	dst = append(dst, path[shared:]...)
	dst = binary.AppendUvarint(dst, uint64(v.human))
	dst = binary.AppendUvarint(dst, uint64(v.ai))
	return binary.AppendUvarint(dst, uint64(v.bot))
}

// Decode returns the counts of a segment, in path order. It refuses a
// segment it cannot read whole: a store must never answer from a damaged
// one. The stores decode into a merger instead; Decode is for tests and
// tools.
func Decode(seg []byte) ([]Count, error) {
	m := merger{bots: true}
	if _, _, _, err := m.addSegment(seg); err != nil {
		return nil, err
	}
	counts := make([]Count, len(m.rows))
	for i, r := range m.rows {
		counts[i] = Count{Path: string(m.path(r)), Human: r.human, AI: r.ai, Bot: m.bot(r)}
	}
	return counts, nil
}

// Entries returns how many paths a segment holds, from its header.
func Entries(seg []byte) (int, error) {
	n, _, _, err := header(seg)
	return n, err
}

// header reads a segment's header and returns its entries, the total
// length of their paths and the entries' bytes.
func header(seg []byte) (entries, names int, body []byte, err error) {
	if len(seg) == 0 {
		return 0, 0, nil, errors.New("rollup: empty segment")
	}
	if seg[0] != format {
		return 0, 0, nil, fmt.Errorf("rollup: segment format %d, this program reads %d", seg[0], format)
	}
	b := seg[1:]
	e, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, 0, nil, errors.New("rollup: damaged segment header")
	}
	b = b[n:]
	p, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, 0, nil, errors.New("rollup: damaged segment header")
	}
	b = b[n:]
	// An entry takes at least five bytes, and no path is longer than the
	// entries' bytes. Larger claims are damage.
	if e > uint64(len(b))/5 || p > e*uint64(len(b)) || p > math.MaxUint32 {
		return 0, 0, nil, errors.New("rollup: damaged segment header")
	}
	return int(e), int(p), b, nil
}

// row is an entry decoded into a merger: its path is a slice of the
// merger's arena. Rows are 32 bytes, which the merges of a query move
// millions of: the third number (bot views, which no views query ranks
// by; a visitors roll's total) is not in the row but in the arena after
// the path, and only when the merger keeps it.
type row struct {
	// key is the eight bytes of the path that follow the prefix every
	// path of the merge shares, big-endian: rows compare by key first and
	// by path only when keys are equal.
	key       uint64
	off, n    uint32
	human, ai int64
}

// merger adds up sorted lists of counts, decoded segments or a batch's
// counts, into one list in path order. Paths live in one arena, so
// decoding allocates nothing per entry.
type merger struct {
	// bots keeps each entry's third number in the arena, eight bytes
	// after its path: merges that write segments keep it, and a visitors
	// Tally, which ranks by it; a views Tally does not.
	bots  bool
	arena []byte
	rows  []row // every list's rows, one list after another
	ends  []int // where each list ends in rows
	// Buffers kept for the next merge: the merges' output, and the
	// totals a Tally ranks.
	slab         []row
	totals, vals []uint64
}

func (m *merger) reset() {
	m.bots, m.arena, m.rows, m.ends = false, m.arena[:0], m.rows[:0], m.ends[:0]
}

// bytes returns how much memory m's buffers hold.
func (m *merger) bytes() int {
	return cap(m.arena) + 32*(cap(m.rows)+cap(m.slab)) + 8*(cap(m.totals)+cap(m.vals))
}

// spare keeps the buffers of a finished merge for the next one: a month of
// a busy project's rolls is tens of megabytes, which every query would
// otherwise allocate again (and the kernel zero again). A sync.Pool would
// drop them at every garbage collection, which such queries cause. At most
// spareMergers are kept, of at most spareBytes each (enough for a range
// of a million paths); a larger merge's buffers are left to the garbage
// collector.
var spare struct {
	mu sync.Mutex
	ms []*merger
}

const (
	spareMergers = 1
	spareBytes   = 128 << 20
)

// getMerger returns an empty merger, with buffers if one is spare.
func getMerger() *merger {
	spare.mu.Lock()
	defer spare.mu.Unlock()
	if n := len(spare.ms); n > 0 {
		m := spare.ms[n-1]
		spare.ms = spare.ms[:n-1]
		return m
	}
	return new(merger)
}

// putMerger keeps m's buffers for a later merge, or drops them.
func putMerger(m *merger) {
	m.reset()
	if m.bytes() > spareBytes {
		return
	}
	spare.mu.Lock()
	defer spare.mu.Unlock()
	if len(spare.ms) < spareMergers {
		spare.ms = append(spare.ms, m)
	}
}

func (m *merger) path(r row) []byte { return m.arena[r.off : r.off+r.n] }

// botBytes is the room an entry's bot views take in the arena, when kept.
const botBytes = 8

// bot returns r's bot views: 0 unless m keeps them.
func (m *merger) bot(r row) int64 {
	if !m.bots {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(m.arena[r.off+r.n:]))
}

// setBot stores r's bot views; m keeps them.
func (m *merger) setBot(r row, bot int64) {
	binary.LittleEndian.PutUint64(m.arena[r.off+r.n:], uint64(bot))
}

// addSegment decodes seg as one more list. It returns the sums of the
// list's human and AI views, and false if either passes int64. (Bot views
// are not summed: no query totals them over a range yet.)
func (m *merger) addSegment(seg []byte) (human, ai int64, ok bool, err error) {
	entries, names, b, err := header(seg)
	if err != nil {
		return 0, 0, false, err
	}
	if len(m.arena)+names > math.MaxUint32 {
		return 0, 0, false, errors.New("rollup: the merge's paths exceed 4 GiB")
	}
	// The header sizes the buffers, within what the segment's own size
	// allows: a damaged header must not make a huge allocation. The loop
	// works on local copies of the buffers, which it stores back at the
	// end: the hot loop of every query.
	keep := 0 // arena bytes an entry takes besides its path
	if m.bots {
		keep = botBytes
	}
	arena := slices.Grow(m.arena, min(names+keep*entries, 64*len(seg)))
	rows := slices.Grow(m.rows, entries)
	start, arenaStart := len(rows), len(arena)
	prevOff, prevN := uint32(0), uint32(0)
	damaged := func(what string, at int) (int64, int64, bool, error) {
		return 0, 0, false, fmt.Errorf("rollup: damaged segment: %s at entry %d", what, at-start)
	}
	// Each count is at most MaxInt64, so a sum that has not passed it
	// yet takes one more without wrapping.
	var sumH, sumA uint64
	for p := 0; p < len(b); {
		// Path: shared prefix length, rest length, rest. Numbers under
		// 128, nearly all of them, take one byte: read inline.
		var shared, rest uint64
		if p+1 < len(b) && b[p] < 0x80 && b[p+1] < 0x80 {
			shared, rest = uint64(b[p]), uint64(b[p+1])
			p += 2
		} else {
			var n int
			if shared, n = uvarint(b[p:]); n <= 0 {
				return damaged("bad varint", len(rows))
			}
			p += n
			if rest, n = uvarint(b[p:]); n <= 0 {
				return damaged("bad varint", len(rows))
			}
			p += n
		}
		// Paths are non-empty and strictly increasing: the rest is not
		// empty, and if the path does not extend the previous one, its
		// first differing byte is larger.
		switch {
		case shared > uint64(prevN):
			return damaged("shared prefix longer than the previous path", len(rows))
		case rest == 0 || rest > uint64(len(b)-p):
			return damaged("bad path length", len(rows))
		case shared < uint64(prevN) && b[p] <= arena[prevOff+uint32(shared)]:
			return damaged("paths out of order", len(rows))
		}
		off := uint32(len(arena))
		n := int(shared + rest)
		if cap(arena)-len(arena) < n+keep {
			arena = slices.Grow(arena, max(n+keep, len(arena)))
		}
		arena = arena[:int(off)+n+keep]
		copy(arena[off:], arena[prevOff:prevOff+uint32(shared)])
		copy(arena[off+uint32(shared):], b[p:p+int(rest)])
		p += int(rest)
		// Counts.
		var h, a, bot uint64
		if p+2 < len(b) && b[p] < 0x80 && b[p+1] < 0x80 && b[p+2] < 0x80 {
			h, a, bot = uint64(b[p]), uint64(b[p+1]), uint64(b[p+2])
			p += 3
		} else {
			for _, v := range [...]*uint64{&h, &a, &bot} {
				var n int
				if *v, n = uvarint(b[p:]); n <= 0 || *v > math.MaxInt64 {
					return damaged("bad count", len(rows))
				}
				p += n
			}
		}
		if h == 0 && a == 0 && bot == 0 {
			return damaged("no views", len(rows))
		}
		if len(arena) > math.MaxUint32 {
			return damaged("paths longer than the header says", len(rows))
		}
		prevOff, prevN = off, uint32(n)
		if keep > 0 {
			binary.LittleEndian.PutUint64(arena[off+prevN:], bot)
		}
		rows = append(rows, row{off: off, n: prevN, human: int64(h), ai: int64(a)})
		sumH, sumA = min(sumH+h, math.MaxInt64+1), min(sumA+a, math.MaxInt64+1)
	}
	if len(rows)-start != entries || len(arena)-arenaStart != names+keep*entries {
		return damaged("header does not match the entries", len(rows))
	}
	m.arena, m.rows = arena, rows
	m.ends = append(m.ends, len(m.rows))
	return int64(min(sumH, math.MaxInt64)), int64(min(sumA, math.MaxInt64)), sumH <= math.MaxInt64 && sumA <= math.MaxInt64, nil
}

// uvarint is binary.Uvarint with the one-byte case, most of a segment's
// numbers, inlined.
func uvarint(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return binary.Uvarint(b)
}

// addCounts adds normalized counts as one more list.
func (m *merger) addCounts(counts []Count) error {
	for _, c := range counts {
		off := uint32(len(m.arena))
		m.arena = append(m.arena, c.Path...)
		if m.bots {
			m.arena = binary.LittleEndian.AppendUint64(m.arena, uint64(c.Bot))
		}
		m.rows = append(m.rows, row{off: off, n: uint32(len(c.Path)), human: c.Human, ai: c.AI})
	}
	if len(m.arena) > math.MaxUint32 {
		return errors.New("rollup: the merge's paths exceed 4 GiB")
	}
	m.ends = append(m.ends, len(m.rows))
	return nil
}

// lists returns the lists added, as slices of rows.
func (m *merger) lists() [][]row {
	ls := make([][]row, 0, len(m.ends))
	start := 0
	for _, end := range m.ends {
		if end > start {
			ls = append(ls, m.rows[start:end:end])
		}
		start = end
	}
	return ls
}

// merge returns the rows of every list added, the rows of one path added
// up, in path order. Lists are merged two at a time, the two shortest
// first: lists that hold the same paths (the days of a month) shrink as
// they merge, and a long list (a busy day) is merged once, at the end.
func (m *merger) merge() ([]row, error) {
	ls := m.lists()
	switch len(ls) {
	case 0:
		return nil, nil
	case 1:
		return ls[0], nil
	}
	m.setKeys(ls)
	// Longest first: the two shortest are at the end.
	longer := func(a, b []row) int { return cmp.Compare(len(b), len(a)) }
	slices.SortFunc(ls, longer)
	// The merges' outputs are carved from one slab, as large as their
	// lengths add up to at most: merging lengths alone first tells.
	need, lens := 0, make([]int, len(ls))
	for i, l := range ls {
		lens[i] = len(l)
	}
	for len(lens) > 1 {
		n := lens[len(lens)-1] + lens[len(lens)-2]
		need += n
		lens = lens[:len(lens)-2]
		i, _ := slices.BinarySearchFunc(lens, n, func(a, b int) int { return cmp.Compare(b, a) })
		lens = slices.Insert(lens, i, n)
	}
	if cap(m.slab) < need {
		m.slab = make([]row, need)
	}
	slab := m.slab[:need]
	for len(ls) > 1 {
		x, y := ls[len(ls)-1], ls[len(ls)-2]
		merged, err := m.mergeTwo(slab[:0:len(x)+len(y)], x, y)
		if err != nil {
			return nil, err
		}
		slab = slab[len(x)+len(y):]
		ls = ls[:len(ls)-2]
		i, _ := slices.BinarySearchFunc(ls, merged, longer)
		ls = slices.Insert(ls, i, merged)
	}
	return ls[0], nil
}

// setKeys fills in the rows' keys: the eight bytes after the prefix that
// every path shares. The lists are sorted, so that prefix is the one the
// smallest first path and the largest last path share.
func (m *merger) setKeys(ls [][]row) {
	lo, hi := m.path(ls[0][0]), m.path(ls[0][len(ls[0])-1])
	for _, l := range ls[1:] {
		if p := m.path(l[0]); bytes.Compare(p, lo) < 0 {
			lo = p
		}
		if p := m.path(l[len(l)-1]); bytes.Compare(p, hi) > 0 {
			hi = p
		}
	}
	common := 0
	for common < len(lo) && common < len(hi) && lo[common] == hi[common] {
		common++
	}
	arena, c := m.arena, uint32(common)
	for i := range m.rows {
		r := &m.rows[i]
		if r.n >= c+8 {
			r.key = binary.BigEndian.Uint64(arena[r.off+c:])
			continue
		}
		var k [8]byte
		if c < r.n {
			copy(k[:], arena[r.off+c:r.off+r.n])
		}
		r.key = binary.BigEndian.Uint64(k[:])
	}
}

// mergeTwo appends to dst the rows of x and y, both in path order, adding
// up the rows of a path in both.
func (m *merger) mergeTwo(dst, x, y []row) ([]row, error) {
	arena := m.arena
	i, j := 0, 0
	for i < len(x) && j < len(y) {
		a, b := &x[i], &y[j]
		// Keys decide most comparisons, without a branch the interleaving
		// of two lists would make unpredictable; equal keys need the
		// paths.
		if a.key != b.key {
			src, di := b, 0
			if a.key < b.key {
				src, di = a, 1
			}
			dst = append(dst, *src)
			i += di
			j += 1 - di
			continue
		}
		switch c := bytes.Compare(arena[a.off:a.off+a.n], arena[b.off:b.off+b.n]); {
		case c < 0:
			dst = append(dst, *a)
			i++
		case c > 0:
			dst = append(dst, *b)
			j++
		default:
			r := *a
			sum, err := addViews(views{r.human, r.ai, m.bot(*a)}, views{b.human, b.ai, m.bot(*b)})
			if err != nil {
				return nil, err
			}
			r.human, r.ai = sum.human, sum.ai
			if m.bots {
				// a's arena slot is its own: b, merged into it, is
				// dropped.
				m.setBot(r, sum.bot)
			}
			dst = append(dst, r)
			i++
			j++
		}
	}
	dst = append(dst, x[i:]...)
	return append(dst, y[j:]...), nil
}

// encodeRows appends the segment of rows, in path order, to dst.
func (m *merger) encodeRows(dst []byte, rows []row) []byte {
	names := 0
	for _, r := range rows {
		names += int(r.n)
	}
	dst = appendHeader(dst, len(rows), names)
	var prev []byte
	for _, r := range rows {
		p := m.path(r)
		dst = appendEntry(dst, prev, p, views{r.human, r.ai, m.bot(r)})
		prev = p
	}
	return dst
}
