package hll

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/bits"
	"slices"
)

// The encoding. Every sketch starts with a format byte, which names the
// layout and its version (a new layout takes a new value; a reader refuses
// values it does not know rather than misread them), and ends with the
// CRC-32C (Castagnoli) of all bytes before it, 4 bytes little-endian: a
// flipped bit in a register would otherwise shift an estimate silently.
//
// formatSparse (3): the number of entries, a uvarint; then each entry in
// increasing order of its 26-bit index (the hash's top 26 bits): the index
// less the previous entry's index plus 1 (the first entry: the index
// itself), a uvarint; and, only when the index's low 10 bits are zero, one
// byte: the rank, 1 to 39, that is 1 plus the leading zeros of the hash's
// last 38 bits. Indexes are spread evenly, so the gaps between n of them
// average 2^26/n: an entry takes about 3.5 bytes in a sketch of 20, 3 in
// one of 100, 2.8 in one of 1,000 and 2 in one of 10,000.
//
// formatDense (4): the base, the smallest register's value; then 32,768
// bytes holding the 65,536 registers 4 bits each, register 2i in the low
// half of byte i, as their value less the base, or 15 where that is 15 or
// more; then one byte for each 15, in register order: its value. Registers
// of a dense sketch lie within a few values of each other, so 4 bits almost
// always do and a sketch takes 32,774 bytes and a few dozen (the more
// registers, the further the smallest lies below the rest: 2^14 registers
// took a handful).
//
// Formats 1 and 2 were the same layouts for 2^14 registers and 25-bit
// sparse indexes. A sparse one would decode as a valid but wrong sketch
// of 26-bit indexes, which is why the numbers changed with the precision;
// they are refused with errOldFormat, so that a stored sketch of the old
// precision is reported as such rather than as damage.
const (
	formatSparse = 3
	formatDense  = 4

	oldFormatSparse = 1
	oldFormatDense  = 2
)

const (
	trailerLen  = 4                               // the CRC
	nibblesLen  = m / 2                           // the registers of a dense sketch, 4 bits each
	overflow    = 0xf                             // the 4 bits of a register not within 15 of the base
	minDenseLen = 1 + 1 + nibblesLen + trailerLen // a dense encoding with no register at 15 or more
)

var (
	castagnoli = crc32.MakeTable(crc32.Castagnoli)

	errShort     = errors.New("hll: sketch encoding too short")
	errFormat    = errors.New("hll: not a sketch encoding (unknown format byte)")
	errOldFormat = errors.New("hll: sketch encoding of 2^14 registers, which this version does not read")
	errCRC       = errors.New("hll: sketch encoding damaged (checksum mismatch)")
	errCorrupt   = errors.New("hll: sketch encoding damaged")
)

// AppendBinary appends the encoding of s to dst and returns the longer
// slice. A sketch of n items takes 2 to 3.5 bytes an item while sparse
// (up to about 16,500 items) and never more than about 32 KiB.
func (s *Sketch) AppendBinary(dst []byte) []byte {
	s.flush()
	start := len(dst)
	if s.regs != nil {
		dst = appendDense(dst, s.regs)
	} else {
		dst = appendSparse(dst, s.list)
	}
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

// MarshalBinary returns the encoding of s, as AppendBinary does, for
// encoding.BinaryMarshaler. It never fails.
func (s *Sketch) MarshalBinary() ([]byte, error) {
	return s.AppendBinary(nil), nil
}

// EncodedLen returns how many bytes AppendBinary would append, so that a
// store can size a buffer or keep statistics without encoding.
func (s *Sketch) EncodedLen() int {
	s.flush()
	if s.regs != nil {
		return denseLen(s.regs)
	}
	return sparseLen(s.list)
}

// UnmarshalBinary replaces the content of s with the sketch encoded in b.
// It returns an error, and leaves s as it was, if b is not an encoding
// that AppendBinary could have written.
func (s *Sketch) UnmarshalBinary(b []byte) error {
	var t Sketch
	if err := t.MergeBinary(b); err != nil {
		return err
	}
	*s = t
	return nil
}

// MergeBinary merges the sketch encoded in b into s, as Merge does, without
// decoding it into a Sketch first: a query merges thousands of stored
// sketches, and this allocates nothing once s has grown to its size. It
// returns an error, and leaves s as it was, if b is not an encoding that
// AppendBinary could have written.
func (s *Sketch) MergeBinary(b []byte) error {
	body, err := checked(b)
	if err != nil {
		return err
	}
	if body[0] == formatSparse {
		return s.mergeSparse(body[1:])
	}
	return s.mergeDense(body[1:])
}

// checked returns the encoding b without its checksum, or an error if b
// is too short, its format unknown or old, or its checksum wrong.
func checked(b []byte) ([]byte, error) {
	if len(b) < 1+trailerLen {
		return nil, errShort
	}
	switch b[0] {
	case formatSparse, formatDense, oldFormatSparse, oldFormatDense:
	default:
		return nil, errFormat
	}
	body := b[:len(b)-trailerLen]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(body):]) {
		return nil, errCRC
	}
	// Only an intact encoding of the old precision is called one: other
	// bytes that start like one are damage.
	if b[0] == oldFormatSparse || b[0] == oldFormatDense {
		return nil, errOldFormat
	}
	return body, nil
}

// sparseCount reads the entry count at the start of a sparse encoding's
// entries b and returns it with the entries' bytes.
func sparseCount(b []byte) (int, []byte, error) {
	n, k := binary.Uvarint(b)
	// Every entry takes at least a byte.
	if k <= 0 || k > 1 && b[k-1] == 0 || n > uint64(len(b)-k) {
		return 0, nil, errCorrupt
	}
	return int(n), b[k:], nil
}

// appendSparse appends the format byte and the entries of a sorted list.
func appendSparse(dst []byte, list []uint32) []byte {
	dst = append(dst, formatSparse)
	dst = binary.AppendUvarint(dst, uint64(len(list)))
	next := uint32(0)
	for _, e := range list {
		idx := e >> rankBits
		dst = binary.AppendUvarint(dst, uint64(idx-next))
		if idx&extraMask == 0 {
			dst = append(dst, byte(e&rankMask))
		}
		next = idx + 1
	}
	return dst
}

// sparseLen is the length of the encoding of a sorted list.
func sparseLen(list []uint32) int {
	n := 1 + uvarintLen(uint32(len(list))) + trailerLen
	next := uint32(0)
	for _, e := range list {
		idx := e >> rankBits
		n += uvarintLen(idx - next)
		if idx&extraMask == 0 {
			n++
		}
		next = idx + 1
	}
	return n
}

// uvarintLen is the length of the uvarint of x.
func uvarintLen(x uint32) int {
	return (bits.Len32(x|1) + 6) / 7
}

// appendDense appends the format byte and the registers r.
func appendDense(dst []byte, r *[m]uint8) []byte {
	base := minReg(r)
	dst = append(dst, formatDense, base)
	start := len(dst)
	dst = append(dst, make([]byte, nibblesLen)...)
	nib := dst[start:]
	over := 0
	sub := lsb * uint64(base)
	for i := 0; i < m; i += 8 {
		// 8 registers less the base (no byte borrows: none is below
		// it), those at 15 or more set to 15, then packed 2 a byte:
		// the reverse of the spreading in mergeDense.
		d := binary.LittleEndian.Uint64(r[i:]) - sub
		big := (d + lsb*(0x80-overflow)) & msb
		over += bits.OnesCount64(big)
		mask := big - big>>7 | big
		y := d&^mask | lsb*overflow&mask
		y = (y | y>>4) & 0x00ff00ff00ff00ff
		y = (y | y>>8) & 0x0000ffff0000ffff
		y = (y | y>>16) & 0xffffffff
		binary.LittleEndian.PutUint32(nib[i/2:], uint32(y))
	}
	if over == 0 {
		return dst
	}
	add := lsb * uint64(0x80-overflow-base)
	for i := 0; i < m; i += 8 {
		if (binary.LittleEndian.Uint64(r[i:])+add)&msb == 0 {
			continue
		}
		for _, v := range r[i : i+8] {
			if v-base >= overflow {
				dst = append(dst, v)
			}
		}
	}
	return dst
}

// denseLen is the length of the encoding of the registers r.
func denseLen(r *[m]uint8) int {
	base := minReg(r)
	n := minDenseLen
	add := lsb * uint64(0x80-overflow-base)
	for i := 0; i < m; i += 8 {
		// A byte's top bit: the register is at least base+15.
		n += bits.OnesCount64((binary.LittleEndian.Uint64(r[i:]) + add) & msb)
	}
	return n
}

// minReg is the smallest value in r.
func minReg(r *[m]uint8) uint8 {
	// 8 at a time, min(a, b) being a^b^max(a, b), in 4 chains that do
	// not wait on each other.
	var low [4]uint64
	for j := range low {
		low[j] = binary.LittleEndian.Uint64(r[8*j:])
	}
	for i := 32; i < m; i += 32 {
		for j := range low {
			x := binary.LittleEndian.Uint64(r[i+8*j:])
			low[j] ^= x ^ max8(low[j], x)
		}
	}
	v := uint8(maxRank)
	for _, w := range low {
		for j := 0; j < 64; j += 8 {
			v = min(v, uint8(w>>j))
		}
	}
	return v
}

// sparseReader reads the entries of a sparse encoding.
type sparseReader struct {
	b    []byte
	next uint32 // the smallest index the next entry can have
}

// read returns the next entry.
func (rd *sparseReader) read() (uint32, error) {
	gap, k := uvarint4(rd.b)
	if k == 0 || gap >= 1<<sp-rd.next {
		return 0, errCorrupt
	}
	rd.b = rd.b[k:]
	idx := rd.next + gap
	rd.next = idx + 1
	e := idx << rankBits
	if idx&extraMask == 0 {
		if len(rd.b) == 0 || rd.b[0] == 0 || rd.b[0] > spMaxRank {
			return 0, errCorrupt
		}
		e |= uint32(rd.b[0])
		rd.b = rd.b[1:]
	}
	return e, nil
}

// uvarint4 decodes a uvarint of at most 4 bytes (28 bits, enough for any
// gap between 26-bit indexes) written as AppendUvarint writes it: no
// longer than needed. It returns the value and its length, or a length of
// 0 for anything else. Unlike binary.Uvarint it does not loop, byte by
// byte, on lengths that vary from entry to entry: that loop was most of
// the time of merging a small sketch.
func uvarint4(b []byte) (uint32, int) {
	var w uint64
	if len(b) >= 8 {
		w = binary.LittleEndian.Uint64(b)
	} else {
		for i, c := range b {
			w |= uint64(c) << (8 * i)
		}
	}
	// When b is short, the zeros after it end the uvarint there, and k is
	// checked against len(b).
	gap, k := uvarintWord(w)
	if k > len(b) {
		return 0, 0
	}
	return gap, k
}

// uvarintWord decodes the uvarint at the start of w, the next 8 bytes of
// an encoding (little-endian), as uvarint4 does. It is small enough for
// the compiler to inline into the decoding loops.
func uvarintWord(w uint64) (uint32, int) {
	// The length: up to the first byte without the continuation bit.
	k := bits.TrailingZeros64(^w&msb)/8 + 1
	w &= 1<<(8*k) - 1
	if k > 4 || k > 1 && w>>(8*(k-1)) == 0 {
		return 0, 0
	}
	return uint32(w&0x7f | w>>1&0x3f80 | w>>2&0x1fc000 | w>>3&0xfe00000), k
}

// mergeSparse merges the sparse encoding b, without the format byte and
// the checksum, into s.
func (s *Sketch) mergeSparse(b []byte) error {
	n, b, err := sparseCount(b)
	if err != nil {
		return err
	}
	// Decode it all before s changes: into the pending entries, which
	// are dropped again if b turns out damaged, and which a dense sketch
	// has no other use for.
	mark := len(s.buf)
	if s.buf, err = appendEntries(slices.Grow(s.buf, n), b, n); err != nil {
		s.buf = s.buf[:mark]
		return err
	}
	if s.regs != nil {
		foldList(s.regs, s.buf)
		s.buf = s.buf[:0]
		return nil
	}
	// The entries are a sorted run with one entry an index: the reader
	// takes only increasing indexes.
	s.addRun(mark)
	return nil
}

// appendEntries appends the n entries of a sparse encoding's entries b
// to dst, checking them, and returns the longer slice; on an error, dst
// may hold some of them. A query decodes millions of entries: the loop is
// sparseReader.read written out, with uvarintWord inlined, which takes
// about 40% less time than calling the reader, until the last few bytes,
// which an 8-byte read would overrun and the reader takes.
func appendEntries(dst []uint32, b []byte, n int) ([]uint32, error) {
	dst = slices.Grow(dst, n)
	next := uint32(0)
	for ; n > 0 && len(b) >= 8; n-- {
		gap, k := uvarintWord(binary.LittleEndian.Uint64(b))
		if k == 0 || gap >= 1<<sp-next {
			return dst, errCorrupt
		}
		b = b[k:]
		idx := next + gap
		next = idx + 1
		e := idx << rankBits
		if idx&extraMask == 0 {
			// b still holds at least 4 bytes.
			if b[0] == 0 || b[0] > spMaxRank {
				return dst, errCorrupt
			}
			e |= uint32(b[0])
			b = b[1:]
		}
		dst = append(dst, e)
	}
	rd := sparseReader{b: b, next: next}
	for range n {
		e, err := rd.read()
		if err != nil {
			return dst, err
		}
		dst = append(dst, e)
	}
	if len(rd.b) != 0 {
		return dst, errCorrupt
	}
	return dst, nil
}

// mergeDense merges the dense encoding b, without the format byte and the
// checksum, into s.
func (s *Sketch) mergeDense(b []byte) error {
	if err := checkDense(b); err != nil {
		return err
	}
	s.foldDense(b)
	return nil
}

// checkDense checks the dense encoding b, without the format byte and the
// checksum.
func checkDense(b []byte) error {
	if len(b) < 1+nibblesLen {
		return errShort
	}
	base, nib, over := b[0], b[1:1+nibblesLen], b[1+nibblesLen:]
	if base > maxRank {
		return errCorrupt
	}
	// Count the 15s, 16 registers at a time: a nibble's low bit survives
	// the ands only if all its 4 bits are set.
	n := 0
	for i := 0; i < nibblesLen; i += 8 {
		w := binary.LittleEndian.Uint64(nib[i:])
		n += bits.OnesCount64(w & (w >> 1) & (w >> 2) & (w >> 3) & (lsb * 0x11))
	}
	if n != len(over) {
		return errCorrupt
	}
	for _, v := range over {
		if v < base+overflow || v > maxRank {
			return errCorrupt
		}
	}
	if base > maxRank-(overflow-1) {
		// Only here can base plus 4 bits exceed a register's largest value.
		for _, x := range nib {
			if lo, hi := x&0xf, x>>4; lo != overflow && base+lo > maxRank || hi != overflow && base+hi > maxRank {
				return errCorrupt
			}
		}
	}
	return nil
}

// foldDense raises the registers of s, which it turns dense, to those of
// the dense encoding b, which checkDense accepted.
func (s *Sketch) foldDense(b []byte) {
	s.toDense()
	foldDenseRegs(s.regs, b)
}

// foldDenseRegs raises the registers r to those of the dense encoding b,
// which checkDense accepted.
func foldDenseRegs(r *[m]uint8, b []byte) {
	base, nib, over := b[0], b[1:1+nibblesLen], b[1+nibblesLen:]
	add := lsb * uint64(base)
	for i := 0; i < nibblesLen; i += 4 {
		// Spread 8 nibbles to 8 bytes in register order: each byte to
		// 16 bits, then its high nibble to the upper byte.
		y := uint64(binary.LittleEndian.Uint32(nib[i:]))
		y = (y | y<<16) & 0x0000ffff0000ffff
		y = (y | y<<8) & 0x00ff00ff00ff00ff
		y = (y | y<<4) & 0x0f0f0f0f0f0f0f0f
		if t := y ^ 0x0f0f0f0f0f0f0f0f; (t-lsb)&^t&msb != 0 {
			// One of the 8 is 15: its value is in over.
			for j := range 8 {
				v := uint8(y>>(8*j)) & 0xf
				if v == overflow {
					v, over = over[0], over[1:]
				} else {
					v += base
				}
				r[2*i+j] = max(r[2*i+j], v)
			}
			continue
		}
		a := binary.LittleEndian.Uint64(r[2*i:])
		binary.LittleEndian.PutUint64(r[2*i:], max8(a, y+add))
	}
}
