package hll

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"slices"
	"testing"
)

// sketchOf is a sketch of items 0 to n-1 of a set.
func sketchOf(set uint64, n int) *Sketch {
	s := new(Sketch)
	for i := range n {
		s.Insert(item(set, uint64(i)))
	}
	return s
}

// edgeSketch is a sparse sketch whose entries need rank bytes, of every
// rank, and sit at both ends of the index range.
func edgeSketch() *Sketch {
	s := new(Sketch)
	for r := range spMaxRank {
		// Register r with the extra index bits zero, then r zeros and a
		// one (none for the largest rank).
		h := uint64(r) << (64 - p)
		if r < spMaxRank-1 {
			h |= 1 << (63 - sp - r)
		}
		s.Insert(h)
	}
	s.Insert(0)
	s.Insert(^uint64(0))
	s.Insert(1 << (64 - sp)) // the smallest index with an extra bit set
	return s
}

// seal appends the checksum to body, to build encodings that pass it.
func seal(body []byte) []byte {
	return binary.LittleEndian.AppendUint32(body, crc32.Checksum(body, castagnoli))
}

// reseal replaces the last 4 bytes of b by the checksum of the rest.
func reseal(b []byte) []byte {
	if len(b) < trailerLen {
		return b
	}
	return seal(bytes.Clone(b[:len(b)-trailerLen]))
}

// TestRoundTrip checks that decoding gives back the sketch, and encoding
// it again the same bytes.
func TestRoundTrip(t *testing.T) {
	sketches := map[string]*Sketch{"edges": edgeSketch()}
	// Around the switch to dense at about 16,500 items too.
	for _, n := range []int{0, 1, 2, 20, 100, 1_000, 10_000, 16_000, 17_000, 20_000, 100_000, 3_000_000} {
		sketches[fmt.Sprint(n)] = sketchOf(9, n)
	}
	// A dense sketch whose registers are far apart, for the bytes after
	// the 4-bit ones.
	wide := sketchOf(9, 50_000)
	for r := range q - 6 {
		// Register r at rank 7+r, up to the largest but one.
		wide.Insert(uint64(r)<<q | 1<<(q-7-r))
	}
	wide.Insert(0)
	sketches["wide"] = wide
	for name, s := range sketches {
		enc := s.AppendBinary(nil)
		if n := s.EncodedLen(); n != len(enc) {
			t.Errorf("%s: EncodedLen %d, encoding %d bytes", name, n, len(enc))
		}
		if m, _ := s.MarshalBinary(); !bytes.Equal(m, enc) {
			t.Errorf("%s: MarshalBinary differs from AppendBinary", name)
		}
		prefix := []byte("prefix")
		if got := s.AppendBinary(prefix); !bytes.Equal(got[:6], prefix) || !bytes.Equal(got[6:], enc) {
			t.Errorf("%s: AppendBinary to a prefix differs", name)
		}
		var d Sketch
		if err := d.UnmarshalBinary(enc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := sameSketch(s, &d); err != nil {
			t.Errorf("%s: decoded sketch differs: %v", name, err)
		}
		if s.Estimate() != d.Estimate() {
			t.Errorf("%s: estimates %d, decoded %d", name, s.Estimate(), d.Estimate())
		}
		if again := d.AppendBinary(nil); !bytes.Equal(again, enc) {
			t.Errorf("%s: encoding differs after a round trip", name)
		}
	}
	if wide.regs == nil || len(wide.AppendBinary(nil)) <= minDenseLen {
		t.Error("wide sketch has no register beyond 4 bits")
	}
}

// TestEncodedSizes logs the sizes of sketches of common counts and checks
// the sparse form's bytes per item and the dense form's overflow bytes.
func TestEncodedSizes(t *testing.T) {
	for _, n := range []int{0, 1, 20, 100, 1_000, 10_000, 16_000, 17_000, 100_000, 1_000_000, 10_000_000} {
		if testing.Short() && n > 1_000_000 {
			continue
		}
		s := sketchOf(11, n)
		size := s.EncodedLen()
		form := "sparse"
		if s.regs != nil {
			form = "dense"
		}
		t.Logf("%10d items: %5d bytes, %s", n, size, form)
		switch {
		case s.regs == nil && size > 6+4*n+n/500+1:
			t.Errorf("%d items: %d bytes, more than 4 bytes an item", n, size)
		case s.regs != nil && size > minDenseLen+m/512:
			// Registers of 15 or more above the smallest: up to 56
			// over 40 sets of up to 10 million items, measured.
			t.Errorf("%d items: %d bytes dense", n, size)
		}
	}
}

// TestSmallerForm grows sketches and checks at each step that each is in
// the form that encodes smaller.
func TestSmallerForm(t *testing.T) {
	t.Parallel()
	for seed := range uint64(3) {
		var s Sketch
		var all, fresh []uint32
		switched := 0
		for n := 1; n <= 20_000; n++ {
			h := item(20+seed, uint64(n))
			s.Insert(h)
			fresh = append(fresh, sparseEntry(h))
			// Every 7th item around the switch, now and then elsewhere.
			if n%7 != 0 || (n < 16_000 || n > 17_000) && n%1001 != 0 {
				continue
			}
			all, fresh = canonicalAdd(all, fresh), fresh[:0]
			got := s.EncodedLen()
			sparse, dense := sparseLen(all), denseLen(registers(&s))
			switch {
			case s.regs == nil && (got != sparse || sparse > dense):
				t.Fatalf("%d items sparse: %d bytes; sparse %d, dense %d", n, got, sparse, dense)
			case s.regs != nil && (got != dense || dense >= sparse):
				t.Fatalf("%d items dense: %d bytes; sparse %d, dense %d", n, got, sparse, dense)
			case s.regs != nil && switched == 0:
				switched = n
				t.Logf("seed %d: dense from %d items (%d bytes, sparse %d)", seed, n, got, sparse)
			}
		}
		if switched == 0 {
			t.Errorf("seed %d: never turned dense", seed)
		}
	}
}

// canonical is entries sorted, with the largest of each index only: the
// list a sparse sketch of them holds.
func canonical(entries []uint32) []uint32 {
	l := slices.Clone(entries)
	slices.Sort(l)
	out := l[:0]
	for i, e := range l {
		if i+1 < len(l) && l[i+1]>>rankBits == e>>rankBits {
			continue
		}
		out = append(out, e)
	}
	return out
}

// canonicalAdd is the canonical list of the entries of the canonical list
// l and of more: more made canonical on its own and merged in, which is
// much faster than sorting all again for a test that grows l a few entries
// at a time.
func canonicalAdd(l, more []uint32) []uint32 {
	more = canonical(more)
	out := make([]uint32, 0, len(l)+len(more))
	for len(l) > 0 && len(more) > 0 {
		switch a, b := l[0], more[0]; {
		case a>>rankBits < b>>rankBits:
			out, l = append(out, a), l[1:]
		case a>>rankBits > b>>rankBits:
			out, more = append(out, b), more[1:]
		default:
			out, l, more = append(out, max(a, b)), l[1:], more[1:]
		}
	}
	out = append(out, l...)
	return append(out, more...)
}

// bad is an encoding that MergeBinary must refuse.
type bad struct {
	name string
	b    []byte
}

// badEncodings are damaged and foreign encodings: each with a valid
// checksum where the damage is to the structure, so that the structure
// checks, not only the checksum, are what refuses them.
func badEncodings() []bad {
	sparse := sketchOf(40, 20).AppendBinary(nil)
	dense := sketchOf(40, 50_000).AppendBinary(nil)
	entries := sparse[2 : len(sparse)-trailerLen]
	denseBody := dense[:len(dense)-trailerLen]
	withNibble := func(i int, nib byte) []byte {
		b := bytes.Clone(denseBody)
		b[2+i/2] = b[2+i/2]&^(0xf<<(4*(i%2))) | nib<<(4*(i%2))
		return seal(b)
	}
	cases := []bad{
		{"empty", nil},
		{"format only", []byte{formatSparse}},
		{"four bytes", []byte{1, 0, 0, 0}},
		{"unknown format", seal([]byte{5, 0})},
		{"format 255", seal([]byte{0xff, 0})},
		{"format zero", seal([]byte{0, 0})},
		{"json", []byte(`{"visitors": 12}`)},
		{"zeros", make([]byte, 64)},
		{"dense-sized zeros", make([]byte, len(dense))},
		{"trailing byte", append(bytes.Clone(sparse), 0)},
		{"sparse without count", seal([]byte{formatSparse})},
		{"sparse count too big", seal(append([]byte{formatSparse, 21}, entries...))},
		{"sparse count too small", seal(append([]byte{formatSparse, 19}, entries...))},
		{"sparse count beyond the bytes", seal([]byte{formatSparse, 0xff, 0xff, 0xff, 0xff, 0x0f})},
		{"sparse truncated uvarint", seal([]byte{formatSparse, 1, 0x80})},
		{"sparse overlong uvarint", seal([]byte{formatSparse, 1, 0x81, 0x00})},
		{"sparse overlong count", seal([]byte{formatSparse, 0x80, 0x00})},
		{"sparse index too big", seal([]byte{formatSparse, 1, 0x80, 0x80, 0x80, 0x20})},              // 2^26
		{"sparse index beyond the end", seal([]byte{formatSparse, 2, 0xfe, 0xff, 0xff, 0x1f, 0x01})}, // 2^26-2, then 2^26
		{"sparse rank missing", seal([]byte{formatSparse, 1, 0})},
		{"sparse rank zero", seal([]byte{formatSparse, 1, 0, 0})},
		{"sparse rank too big", seal([]byte{formatSparse, 1, 0, spMaxRank + 1})},
		{"sparse rank on an index that has none", seal([]byte{formatSparse, 1, 1, 1})},
		{"sparse uvarint overflow", seal([]byte{formatSparse, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})},
		{"dense short", seal(bytes.Clone(denseBody[:len(denseBody)-1]))},
		{"dense no registers", seal([]byte{formatDense, 0})},
		{"dense base too big", seal(append([]byte{formatDense, maxRank + 1}, denseBody[2:]...))},
		{"dense register too big", seal(append([]byte{formatDense, 40}, bytes.Repeat([]byte{0xee}, nibblesLen)...))},
		{"dense 15 without its byte", withNibble(7, overflow)},
		{"dense extra byte", seal(append(bytes.Clone(denseBody), maxRank))},
		{"dense overflow byte too small", seal(append(bytes.Clone(withNibble(7, overflow)[:len(dense)-trailerLen]), 14))},
		{"dense overflow byte too big", seal(append(bytes.Clone(withNibble(7, overflow)[:len(dense)-trailerLen]), maxRank+1))},
	}
	for _, enc := range oldEncodings() {
		cases = append(cases, bad{fmt.Sprintf("2^14 registers, format %d, %d bytes", enc[0], len(enc)), enc})
	}
	// Every truncation and every flipped bit of real encodings.
	for _, enc := range [][]byte{sparse, edgeSketch().AppendBinary(nil)} {
		for n := range len(enc) {
			cases = append(cases, bad{fmt.Sprintf("truncated to %d", n), enc[:n]})
		}
		for i := range 8 * len(enc) {
			b := bytes.Clone(enc)
			b[i/8] ^= 1 << (i % 8)
			cases = append(cases, bad{fmt.Sprintf("bit %d flipped", i), b})
		}
	}
	for _, n := range []int{1, 2, 100, 4097, len(dense) - 1} {
		cases = append(cases, bad{fmt.Sprintf("dense truncated to %d", n), dense[:n]})
	}
	for i := 0; i < 8*len(dense); i += 331 {
		b := bytes.Clone(dense)
		b[i/8] ^= 1 << (i % 8)
		cases = append(cases, bad{fmt.Sprintf("dense bit %d flipped", i), b})
	}
	return cases
}

// oldEncodings are encodings of 2^14 registers: sparse ones of items 0 to
// 2 and 0 to 19 of set 11, as the package wrote them before the precision
// went to 16, and a dense one built to its layout (the base, then 8,192
// bytes of 4-bit registers).
func oldEncodings() [][]byte {
	var encs [][]byte
	for _, h := range []string{
		"010388e15991aa9b05e4a8aa06db31090e",
		"011488e159d481d201cd8fa001e4f5488af1af01f1e1088cd027d78a79f2fc8801c28a6bdfb48301afe318ad8717be8c13abed548bd0549bdd4b85d00195e1a6028acd40ac6a009f",
	} {
		b, err := hex.DecodeString(h)
		if err != nil {
			panic(err)
		}
		encs = append(encs, b)
	}
	dense := []byte{oldFormatDense, 9}
	for i := range 8_192 {
		dense = append(dense, byte(i*7%15)|byte(i*11%15)<<4)
	}
	return append(encs, seal(dense))
}

// TestRefusesOldPrecision checks that an intact encoding of 2^14 registers
// is refused as one, and why the format numbers had to change: with the
// new number, the old sparse bytes would decode without an error.
func TestRefusesOldPrecision(t *testing.T) {
	for _, enc := range oldEncodings() {
		var s Sketch
		if err := s.MergeBinary(enc); err != errOldFormat {
			t.Errorf("format %d, %d bytes: got %v, want errOldFormat", enc[0], len(enc), err)
		}
		damaged := bytes.Clone(enc)
		damaged[len(damaged)/2] ^= 0x10
		if err := s.MergeBinary(damaged); err != errCRC {
			t.Errorf("format %d, %d bytes, damaged: got %v, want errCRC", enc[0], len(enc), err)
		}
		if enc[0] != oldFormatSparse {
			continue
		}
		relabeled := bytes.Clone(enc)
		relabeled[0] = formatSparse
		if err := s.UnmarshalBinary(reseal(relabeled)); err != nil {
			t.Errorf("%d bytes relabeled: %v; the test no longer shows the misreading", len(enc), err)
		}
	}
}

// TestRefuses checks that damaged and foreign encodings are refused, and
// leave the sketch merged into as it was.
func TestRefuses(t *testing.T) {
	pending := sketchOf(41, 300)
	pending.flush()
	pending.Insert(item(42, 1)) // must survive a refused merge too
	receivers := map[string]*Sketch{
		"zero":           new(Sketch),
		"sparse":         sketchOf(41, 300),
		"sparse pending": pending,
		"dense":          sketchOf(41, 100_000),
	}
	if receivers["dense"].flush(); receivers["dense"].regs == nil {
		t.Fatal("dense receiver is sparse")
	}
	for _, c := range badEncodings() {
		for name, r := range receivers {
			s, ref := r.Clone(), r.Clone()
			err := s.MergeBinary(c.b)
			if err == nil {
				t.Errorf("%s into %s: no error", c.name, name)
				continue
			}
			// Where b passes the checksum, a structure check must be
			// what refuses it.
			if sealed := len(c.b) > trailerLen && bytes.Equal(reseal(c.b), c.b); sealed && err == errCRC {
				t.Errorf("%s: refused by the checksum, which it should pass", c.name)
			}
			if err := sameSketch(s, ref); err != nil {
				t.Errorf("%s into %s: refused merge changed the sketch: %v", c.name, name, err)
			}
			if err := s.UnmarshalBinary(c.b); err == nil {
				t.Errorf("%s: UnmarshalBinary: no error", c.name)
			}
			if err := sameSketch(s, ref); err != nil {
				t.Errorf("%s into %s: refused UnmarshalBinary changed the sketch: %v", c.name, name, err)
			}
		}
	}
}

// TestMergeBinaryAllocs checks that merging stored sketches into an
// accumulator that has grown allocates nothing.
func TestMergeBinaryAllocs(t *testing.T) {
	small := sketchOf(50, 20).AppendBinary(nil)
	dense := sketchOf(50, 100_000).AppendBinary(nil)
	sparseAcc := sketchOf(51, 1_000)
	denseAcc := sketchOf(51, 100_000)
	for name, c := range map[string]struct {
		acc *Sketch
		b   []byte
	}{
		"sparse into sparse": {sparseAcc, small},
		"sparse into dense":  {denseAcc, small},
		"dense into dense":   {denseAcc, dense},
	} {
		if err := c.acc.MergeBinary(c.b); err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(200, func() {
			if err := c.acc.MergeBinary(c.b); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations a merge", name, allocs)
		}
	}
}

// FuzzDecodeSketch checks that decoding any bytes returns an error or a
// sketch that encodes and merges consistently, and never panics. Each
// input is tried as is and with its checksum fixed, so that mutations
// reach the structure checks behind the checksum.
func FuzzDecodeSketch(f *testing.F) {
	for _, n := range []int{0, 1, 2, 20, 300, 3_000, 50_000} {
		f.Add(sketchOf(60, n).AppendBinary(nil))
	}
	f.Add(edgeSketch().AppendBinary(nil))
	f.Add([]byte{})
	f.Add([]byte{formatSparse})
	f.Add([]byte{formatDense, 0, 0, 0, 0})
	f.Add([]byte{formatSparse, 2, 0, 1, 5, 0, 0, 0, 0})
	f.Add([]byte("not a sketch at all"))
	for _, enc := range oldEncodings() {
		f.Add(enc)
	}
	sparse, dense := sketchOf(61, 10), sketchOf(61, 100_000)
	dense.flush()
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecode(t, b, sparse, dense)
		checkDecode(t, reseal(b), sparse, dense)
	})
}

// checkDecode decodes b and, if that works, checks the sketch against
// merging b straight from the bytes into copies of a sparse and a dense
// sketch, and against encoding it again.
func checkDecode(t *testing.T, b []byte, sparse, dense *Sketch) {
	var s Sketch
	err := s.UnmarshalBinary(b)
	sparse, dense = sparse.Clone(), dense.Clone()
	sparseRef, denseRef := sparse.Clone(), dense.Clone()
	errSparse, errDense := sparse.MergeBinary(b), dense.MergeBinary(b)
	if (err == nil) != (errSparse == nil) || (err == nil) != (errDense == nil) {
		t.Fatalf("UnmarshalBinary: %v; MergeBinary into sparse: %v, into dense: %v", err, errSparse, errDense)
	}
	if err != nil {
		if sameSketch(sparse, sparseRef) != nil || sameSketch(dense, denseRef) != nil {
			t.Fatal("refused merge changed the sketch")
		}
		return
	}
	est := s.Estimate()
	enc := s.AppendBinary(nil)
	var d Sketch
	if err := d.UnmarshalBinary(enc); err != nil {
		t.Fatalf("re-encoding does not decode: %v", err)
	}
	if err := sameSketch(&s, &d); err != nil {
		t.Fatalf("re-encoded sketch differs: %v", err)
	}
	if d.Estimate() != est {
		t.Fatalf("estimates %d, re-encoded %d", est, d.Estimate())
	}
	sparseRef.Merge(&s)
	denseRef.Merge(&s)
	if *registers(sparse) != *registers(sparseRef) || *registers(dense) != *registers(denseRef) {
		t.Fatal("MergeBinary differs from Merge of the decoded sketch")
	}
}

// TestUvarint4 checks the fast uvarint reader against encoding/binary, at
// every length and with bytes after the uvarint or none.
func TestUvarint4(t *testing.T) {
	values := []uint64{0, 1, 127, 128, 16_383, 16_384, 1<<21 - 1, 1 << 21, 1<<25 - 1, 1<<28 - 1}
	for v := uint64(1); v < 1<<28; v = v*3 + 1 {
		values = append(values, v)
	}
	for _, v := range values {
		enc := binary.AppendUvarint(nil, v)
		for _, tail := range [][]byte{nil, {0xff}, bytes.Repeat([]byte{0x80}, 9)} {
			b := append(bytes.Clone(enc), tail...)
			got, k := uvarint4(b)
			if uint64(got) != v || k != len(enc) {
				t.Errorf("%x: got %d, %d bytes; want %d, %d", b, got, k, v, len(enc))
			}
		}
	}
	for _, b := range [][]byte{
		nil, {0x80}, {0xff, 0xff}, {0x80, 0x00}, {0x81, 0x80, 0x00},
		{0x80, 0x80, 0x80, 0x80, 0x01}, binary.AppendUvarint(nil, 1<<28),
		{0x80, 0x80, 0x80, 0x80, 0x01, 0, 0, 0, 0}, {0x80, 0x00, 0, 0, 0, 0, 0, 0, 0},
	} {
		if v, k := uvarint4(b); k != 0 {
			t.Errorf("%x: accepted as %d, %d bytes", b, v, k)
		}
	}
}

// TestMinReg checks the smallest register against a plain loop, with the
// smallest at every position of a word.
func TestMinReg(t *testing.T) {
	var r [m]uint8
	for i := range r {
		r[i] = uint8(5 + i%40)
	}
	for _, at := range []int{0, 1, 7, 8, 31, 32, 33, 1_000, m - 9, m - 1} {
		for _, v := range []uint8{0, 1, 4} {
			old := r[at]
			r[at] = v
			if got := minReg(&r); got != v {
				t.Errorf("smallest %d at %d: got %d", v, at, got)
			}
			r[at] = old
		}
	}
	if got := minReg(&r); got != 5 {
		t.Errorf("got %d, want 5", got)
	}
}
