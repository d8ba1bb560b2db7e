package hll

import (
	"math/rand/v2"
	"testing"
)

// TestUnionEstimatorMatchesMerging checks UnionEstimator against merging
// the same encodings: each side into an empty sketch with MergeBinaries,
// the two into a third, each read with Estimate. The estimates must be
// equal, on unions on both sides of where a list turns dense, from parts
// that overlap or not, with dense parts and empty sides, and with an
// estimator reused from one call to the next. And the bounds must settle
// most of them: a test whose every union fell back to merging would
// prove nothing.
func TestUnionEstimatorMatchesMerging(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 22))
	sizes := []int{0, 1, 30, 500, 2_000, 5_000, 9_000, 14_000, 17_000, 25_000, 60_000}
	trials := 150
	if testing.Short() {
		trials = 40
	}
	var u UnionEstimator
	settled := 0
	for trial := range trials {
		// Every trial a set of its own: items of set 0 in one trial are
		// not those of another, so overlaps are the trial's choice.
		side := func() [][]byte {
			var bs [][]byte
			for range rng.IntN(14) {
				set := uint64(trial*8 + rng.IntN(3)) // shared sets: repeated items
				n := sizes[rng.IntN(len(sizes))] / (1 + rng.IntN(4))
				bs = append(bs, sketchOf(set, n).AppendBinary(nil))
			}
			return bs
		}
		first, second := side(), side()
		if rng.IntN(3) == 0 {
			// The AI side of a path shares the human side's sets:
			// overlapping unions.
			second = append(second, first[:len(first)/2]...)
		}
		merges := u.merges
		a, b, both, err := u.Estimates(first, second)
		if err != nil {
			t.Fatal(err)
		}
		var ref UnionEstimator
		wa, wb, wboth, err := ref.merged(first, second)
		if err != nil {
			t.Fatal(err)
		}
		if a != wa || b != wb || both != wboth {
			t.Fatalf("trial %d: estimates %d, %d, %d; merging gives %d, %d, %d", trial, a, b, both, wa, wb, wboth)
		}
		if u.merges == merges {
			settled++
		}
	}
	if settled < trials*3/4 {
		t.Errorf("bounds settled %d of %d unions: the rest were merged", settled, trials)
	}
}

// TestUnionEstimatorRefusesDamage checks that a damaged encoding on either
// side is an error, not an estimate.
func TestUnionEstimatorRefusesDamage(t *testing.T) {
	t.Parallel()
	good := [][]byte{sketchOf(50, 3_000).AppendBinary(nil), sketchOf(51, 20_000).AppendBinary(nil)}
	var u UnionEstimator
	for _, bad := range badEncodings() {
		for side := range 2 {
			bs := [2][][]byte{good, good}
			bs[side] = append(append([][]byte{}, good...), bad.b)
			if _, _, _, err := u.Estimates(bs[0], bs[1]); err == nil {
				t.Errorf("%s on side %d: no error", bad.name, side)
			}
		}
	}
	// And the estimator still answers right afterwards.
	a, b, both, err := u.Estimates(good, good[:1])
	if err != nil {
		t.Fatal(err)
	}
	wa, wb, wboth, _ := new(UnionEstimator).merged(good, good[:1])
	if a != wa || b != wb || both != wboth {
		t.Fatalf("after refusals: %d, %d, %d; merging gives %d, %d, %d", a, b, both, wa, wb, wboth)
	}
}

// TestIndexSetGivesUpOnChosenIndexes checks that entries whose indexes
// were chosen to probe one long run make count give up, within its
// budget, rather than take time quadratic in their number.
func TestIndexSetGivesUpOnChosenIndexes(t *testing.T) {
	t.Parallel()
	var s indexSet
	// Indexes that all hash to one home slot in a table of 2^15 slots:
	// multiples of 2^32 / gcd... found by search, as an attacker would.
	var entries []uint32
	probe := indexSet{shift: 32 - 15}
	target := probe.home(1)
	for idx := uint32(1); len(entries) < 10_000 && idx < 1<<sp; idx++ {
		if probe.home(idx) == target {
			entries = append(entries, idx<<rankBits)
		}
	}
	if len(entries) < 2_000 {
		t.Skipf("only %d colliding indexes found", len(entries))
	}
	if s.count(entries) {
		t.Fatalf("%d colliding indexes counted", len(entries))
	}
	// Distinct random indexes are counted, exactly.
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[uint32]bool{}
	entries = entries[:0]
	for range 20_000 {
		idx := rng.Uint32N(1 << sp)
		seen[idx] = true
		entries = append(entries, idx<<rankBits)
	}
	if !s.count(entries) || s.len() != len(seen) {
		t.Fatalf("counted %d of %d distinct indexes", s.len(), len(seen))
	}
}

// entryAt is the entry of a 26-bit index: with a rank byte of 1 when the
// index's low 10 bits are 0, as a stored entry needs.
func entryAt(idx uint32) uint32 {
	if idx&extraMask == 0 {
		return idx<<rankBits | 1
	}
	return idx << rankBits
}

// TestSparseLenBounds checks the two bounds on a list's encoded length
// that UnionEstimator decides by, on lists made to press against them:
// random ones; ones of one entry per register alternating between the
// largest low bits and the smallest that still encode their gap in a
// byte, which make surelyDense's bound exact; and evenly spread ones with
// a rank byte each, which make maxSparseLen's nearly exact. The bounds
// must hold, and be tight where they should be: a bound loosened would
// settle fewer unions, one tightened past the truth would misreport
// sparse unions as dense or dense as sparse.
func TestSparseLenBounds(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(31, 32))
	check := func(name string, list []uint32) {
		t.Helper()
		list = canonical(list)
		var r [m]uint8
		foldList(&r, list)
		ranked := 0
		for _, e := range list {
			if e>>rankBits&extraMask == 0 {
				ranked++
			}
		}
		got := sparseLen(list)
		if most := maxSparseLen(len(list), ranked); got > most {
			t.Errorf("%s, %d entries: encodes in %d bytes, maxSparseLen says at most %d", name, len(list), got, most)
		}
		if surelyDense(&r) && got <= denseLen(&r) {
			t.Errorf("%s, %d entries: surelyDense, yet the list (%d bytes) is no longer than the registers (%d)", name, len(list), got, denseLen(&r))
		}
		if least, most := sparseLenRange(&r, len(list), ranked); got < least || got > most {
			t.Errorf("%s, %d entries: encodes in %d bytes, sparseLenRange says %d to %d", name, len(list), got, least, most)
		}
	}
	for _, n := range []int{1_000, 10_000, 16_000, 18_000, 20_000, 25_000, 40_000} {
		var random []uint32
		for range n {
			random = append(random, entryAt(rng.Uint32N(1<<sp)))
		}
		check("random", random)
	}
	// One entry a register, adjacent registers, low bits 1023 (value 1:
	// two bytes by the bound) then 64 (value 4: one byte, its gap from
	// 1023 in the register before being 64): the list takes exactly what
	// surelyDense counts, 1.5 bytes a register.
	tight := func(regs int) []uint32 {
		var l []uint32
		for i := range uint32(regs) {
			low := uint32(1023)
			if i%2 == 1 {
				low = 64
			}
			l = append(l, entryAt(i<<extra|low))
		}
		return l
	}
	for _, regs := range []int{20_000, 21_700, 21_900, 22_500, 30_000} {
		check("tight", tight(regs))
	}
	// sparseLenRange's lower bound is exact on such a list too, and with
	// a second entry in some registers (one byte each, their gap from the
	// first under 128).
	l2 := canonical(tight(10_000))
	for i := uint32(0); i < 10_000; i += 2 {
		l2 = append(l2, entryAt(i<<extra|1023-100))
	}
	for _, l := range [][]uint32{canonical(tight(10_000)), canonical(l2)} {
		var r [m]uint8
		foldList(&r, l)
		if least, _ := sparseLenRange(&r, len(l), 0); least != sparseLen(l) {
			t.Errorf("list of %d entries in %d bytes: sparseLenRange's least %d", len(l), sparseLen(l), least)
		}
	}
	l := canonical(tight(22_000))
	var r [m]uint8
	foldList(&r, l)
	if sparseLen(l) <= denseLen(&r) || !surelyDense(&r) {
		// 22,000 registers: 33,000 bytes and a few, past the registers'
		// 32,774: the bound must see it, being exact here.
		t.Errorf("tight list of %d bytes, registers %d: surelyDense %v", sparseLen(l), denseLen(&r), surelyDense(&r))
	}
	// Evenly spread indexes with rank bytes: gaps as large as n entries
	// allow, each with its byte.
	for _, n := range []int{100, 4_096, 10_000, 14_000} {
		var even []uint32
		step := uint32(1<<sp) / uint32(n) &^ extraMask
		for i := range uint32(n) {
			even = append(even, entryAt(i*step))
		}
		check("even", even)
		// Gaps of 2^14 and more (fewer than 4,096 entries) take a third
		// byte the bound counts for as many as 4,096 gaps: it is tight
		// only past that.
		if got, most := sparseLen(canonical(even)), maxSparseLen(n, n); n >= 10_000 && most-got > most/8 {
			t.Errorf("even, %d entries: %d bytes, maxSparseLen %d: the bound is loose", n, got, most)
		}
	}
}
