package hll

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

const (
	p       = 16     // precision: bits of the hash that pick a register
	m       = 1 << p // registers of a dense sketch
	q       = 64 - p // hash bits left to take a rank from
	maxRank = q + 1  // a register's largest value: the q bits were all zero

	// The sparse list keeps 26 bits of each hash: as many as an entry
	// of 32 bits holds next to its rank, since each bit more halves the
	// items that share an index (about 2 of the 16,500 the list holds
	// before it turns dense, which linear counting corrects for in
	// expectation). Any sp above p converts to the registers exactly.
	sp        = 26           // precision of the sparse list
	extra     = sp - p       // hash bits a sparse entry holds past the register index
	extraMask = 1<<extra - 1 // those bits, in an entry's index
	spMaxRank = 64 - sp + 1  // largest rank a sparse entry stores

	// A sparse entry is its 26-bit index shifted left by rankBits, or'ed
	// with a rank when the extra bits of the index are all zero (else the
	// index alone gives the register's value, and the rank is 0). Entries
	// so sort by index, and of two with one index the larger wins.
	rankBits = 6
	rankMask = 1<<rankBits - 1

	minFlush = 256 // pending entries a sparse sketch buffers at least
)

// Checks at compile time (a constant out of its type's range does not
// compile) that a change of p or sp cannot break silently: an entry must
// fit in a uint32, its rank field must hold the largest rank, a register
// must stay below 0x80 for max8, and the list must keep more bits than a
// register index, or it would be no more exact than the registers.
const (
	_ uint32 = 1<<(sp+rankBits) - 1
	_ uint   = rankMask - spMaxRank
	_ uint   = 0x7f - maxRank
	_ uint   = sp - p - 1
)

// Sketch estimates how many distinct hashes were inserted into it, or into
// any sketch merged into it. The zero Sketch is empty and ready to use.
// It is not safe for concurrent use, not even by readers: Estimate and
// AppendBinary sort pending entries in place. A plain copy of a Sketch
// shares its memory; Clone makes one that does not.
type Sketch struct {
	// regs is the dense form: nil while the sketch is sparse.
	regs *[m]uint8
	// spare is registers kept for reuse, by Reset (so that a reused
	// accumulator turns dense again without allocating) or by a flush that
	// found the list still the smaller.
	spare *[m]uint8

	// The sparse form: list is sorted entries with distinct indexes, buf
	// entries added since, in any order and possibly repeated (sorting on
	// every insert would cost a copy of the list per item), and tmp the
	// space they are merged in. A dense sketch uses buf only to decode a
	// sparse encoding in MergeBinary.
	list, buf, tmp []uint32
}

// Mix64 scrambles x into a well-mixed hash (it is the output function of
// the splitmix64 generator). Insert needs hashes whose bits look random;
// Mix64 makes such a hash from an ID or from a hash with weak bits (FNV,
// CRC). It is a bijection, so distinct inputs never collide, and it never
// changes: stored sketches depend on it.
func Mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// Insert adds an item by its 64-bit hash. Inserting a hash again changes
// nothing. The hash must be well mixed and the same in every process (see
// the package doc); a plain ID must go through Mix64 first.
func (s *Sketch) Insert(hash uint64) {
	if r := s.regs; r != nil {
		// The bit at p-1 caps the leading zeros at q, for a hash whose
		// last q bits are all zero.
		v := uint8(bits.LeadingZeros64(hash<<p|1<<(p-1))) + 1
		if i := hash >> q; v > r[i] {
			r[i] = v
		}
		return
	}
	e := sparseEntry(hash)
	// A visitor's views come in runs: skip a repeat of the last entry
	// before it takes space.
	if n := len(s.buf); n > 0 && s.buf[n-1] == e {
		return
	}
	s.buf = append(s.buf, e)
	if len(s.buf) >= s.flushAt() {
		s.flush()
	}
}

// sparseEntry is the sparse entry of a hash.
func sparseEntry(hash uint64) uint32 {
	idx := uint32(hash >> (64 - sp))
	if idx&extraMask != 0 {
		return idx << rankBits
	}
	r := uint32(bits.LeadingZeros64(hash<<sp|1<<(sp-1))) + 1
	return idx<<rankBits | r
}

// denseOf is the register and the value in it of a sparse entry: the same
// as inserting the entry's hash into a dense sketch.
func denseOf(e uint32) (i uint32, v uint8) {
	idx := e >> rankBits
	if low := idx & extraMask; low != 0 {
		return idx >> extra, uint8(bits.LeadingZeros32(low)-(32-extra)) + 1
	}
	return idx >> extra, extra + uint8(e&rankMask)
}

// flushAt is how many pending entries trigger a flush: as many as the list
// holds (but at least minFlush), so each entry is sorted and copied a
// bounded number of times on average.
func (s *Sketch) flushAt() int {
	return max(minFlush, len(s.list))
}

// flush sorts the pending entries into the list and turns the sketch dense
// if that encodes smaller.
func (s *Sketch) flush() {
	if len(s.buf) == 0 {
		return
	}
	run := sortRun(s.buf)
	if len(s.list) == 0 {
		s.list, s.buf = run, s.list[:0]
	} else {
		s.tmp = mergeRuns(s.tmp[:0], s.list, run)
		s.list, s.tmp = s.tmp, s.list
		s.buf = s.buf[:0]
	}
	s.denseIfSmaller()
}

// sortRun sorts entries in place and returns them with the largest of
// each index only (a prefix of entries): a run that mergeRuns takes.
func sortRun(entries []uint32) []uint32 {
	slices.Sort(entries)
	run := entries[:0]
	for i, e := range entries {
		// Of entries with one index the last is the largest.
		if i+1 < len(entries) && entries[i+1]>>rankBits == e>>rankBits {
			continue
		}
		run = append(run, e)
	}
	return run
}

// shortRun is how many times longer than a run the list must be for
// addRun to leave the run pending rather than merge it at once. Merging
// passes over the whole list, about 1 ns an entry, where a pending entry
// costs about 10 ns to sort at the next flush, which also merges all the
// pending entries into the list in one pass: so a run much shorter than
// the list is cheaper sorted later with the others, and a longer one is
// cheaper merged now, without sorting what is already sorted.
const shortRun = 8

// addRun merges into the sparse sketch the entries buf[mark:], a run
// sorted by index with one entry an index (a decoded sparse encoding or
// another sketch's list), appended after the pending entries buf[:mark].
// A run of a size near the list's or larger, such as a day's or a week's
// sketch of a path merged by a query, is merged in one pass over the list
// and the run, with the result of the same max-per-index rule as a flush;
// its buffers are the sketch's, so a sketch that has grown merges without
// allocating. A short run waits with the pending entries (see shortRun).
// Either way the sketch turns dense when that encodes smaller, as a flush
// does.
func (s *Sketch) addRun(mark int) {
	run := s.buf[mark:]
	switch {
	case len(run) == 0:
		return
	case len(run)*shortRun < len(s.list):
		if len(s.buf) >= s.flushAt() {
			s.flush()
		}
		return
	}
	if mark > 0 {
		// Pending entries, unsorted: sorted on their own and merged
		// with the run first, into tmp, which then holds the run; buf's
		// memory becomes the scratch space.
		s.tmp = mergeRuns(s.tmp[:0], sortRun(s.buf[:mark]), run)
		run, s.tmp = s.tmp, s.buf[:0]
	}
	if len(s.list) == 0 {
		s.list, s.buf = run, s.list[:0]
	} else {
		s.tmp = mergeRuns(s.tmp[:0], s.list, run)
		s.list, s.tmp, s.buf = s.tmp, s.list[:0], run[:0]
	}
	s.denseIfSmaller()
}

// mergeRuns appends to dst the union of the sorted runs a and b, keeping
// one entry, the larger, of each index.
func mergeRuns(dst, a, b []uint32) []uint32 {
	dst = slices.Grow(dst, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		x, y := a[i], b[j]
		switch xi, yi := x>>rankBits, y>>rankBits; {
		case xi < yi:
			dst = append(dst, x)
			i++
		case xi > yi:
			dst = append(dst, y)
			j++
		default:
			dst = append(dst, max(x, y))
			i++
			j++
		}
	}
	dst = append(dst, a[i:]...)
	return append(dst, b[j:]...)
}

// denseIfSmaller turns a flushed sparse sketch dense when the registers
// encode to fewer bytes than the list.
func (s *Sketch) denseIfSmaller() {
	// An entry takes at most 5 bytes (a gap below 2^26 in 4, a rank in
	// 1): a list short enough is smaller without measuring it, which
	// spares a pass over it to addRun's merges of small lists.
	if 1+uvarintLen(uint32(len(s.list)))+5*len(s.list)+trailerLen <= minDenseLen {
		return
	}
	n := sparseLen(s.list)
	if n <= minDenseLen {
		return
	}
	r := s.spare
	if r == nil {
		r = new([m]uint8)
	} else {
		clear(r[:])
	}
	foldList(r, s.list)
	if denseLen(r) >= n {
		s.spare = r
		return
	}
	s.useDense(r)
}

// toDense turns the sketch dense, whatever the sizes: to merge registers.
func (s *Sketch) toDense() {
	if s.regs != nil {
		return
	}
	s.flush()
	if s.regs != nil {
		return
	}
	r := s.spare
	if r == nil {
		r = new([m]uint8)
	} else {
		clear(r[:])
	}
	foldList(r, s.list)
	s.useDense(r)
}

// useDense makes r, which holds the list, the sketch's registers, and lets
// the sparse buffers go: a dense sketch never needs them again, and an
// ingester holds many sketches.
func (s *Sketch) useDense(r *[m]uint8) {
	s.regs, s.spare = r, nil
	s.list, s.buf, s.tmp = nil, nil, nil
}

// foldList raises the registers r to hold the entries of list.
func foldList(r *[m]uint8, list []uint32) {
	for _, e := range list {
		i, v := denseOf(e)
		r[i] = max(r[i], v)
	}
}

// Merge adds the items of other to s, as if every hash inserted into other
// had been inserted into s. It leaves other as it was.
func (s *Sketch) Merge(other *Sketch) {
	switch {
	case other == nil || other == s:
	case other.regs != nil:
		s.toDense()
		maxRegs(s.regs, other.regs)
	case s.regs != nil:
		foldList(s.regs, other.list)
		foldList(s.regs, other.buf)
	default:
		// other's list as a run, merged in one pass if it is not short
		// (see addRun); its pending entries as pending entries.
		mark := len(s.buf)
		s.buf = append(s.buf, other.list...)
		s.addRun(mark)
		if s.regs != nil {
			foldList(s.regs, other.buf)
			return
		}
		s.buf = append(s.buf, other.buf...)
		if len(s.buf) >= s.flushAt() {
			s.flush()
		}
	}
}

// Byte masks for working on 8 registers at a time.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// maxRegs raises each register of dst to the one of src.
func maxRegs(dst, src *[m]uint8) {
	for i := 0; i < m; i += 8 {
		a := binary.LittleEndian.Uint64(dst[i:])
		b := binary.LittleEndian.Uint64(src[i:])
		binary.LittleEndian.PutUint64(dst[i:], max8(a, b))
	}
}

// max8 is the bytewise maximum of a and b, whose bytes are all below 0x80
// (register values are at most 49): in (a|0x80)-b no byte borrows from the
// next, and a byte keeps its top bit where a's is at least b's.
func max8(a, b uint64) uint64 {
	ge := ((a | msb) - b) & msb
	mask := ge - ge>>7 | ge
	return a&mask | b&^mask
}

// Reset empties the sketch. It keeps the memory it has, for a sketch that
// is reused as an accumulator query after query.
func (s *Sketch) Reset() {
	if s.regs != nil {
		clear(s.regs[:])
		s.spare, s.regs = s.regs, nil
	}
	s.list, s.buf, s.tmp = s.list[:0], s.buf[:0], s.tmp[:0]
}

// Clone returns a copy of s that shares no memory with it.
func (s *Sketch) Clone() *Sketch {
	c := &Sketch{
		list: slices.Clone(s.list),
		buf:  slices.Clone(s.buf),
	}
	if s.regs != nil {
		r := *s.regs
		c.regs = &r
	}
	return c
}
