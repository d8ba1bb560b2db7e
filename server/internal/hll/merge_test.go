package hll

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestMergeRunsMatchUnion checks the one-pass merges of sparse sketches
// (addRun, from Merge and MergeBinary) against the list that sorting all
// the entries gives, as merging did before by appending them to the
// pending entries: over random sequences of sketches of random sizes,
// with entries that share an index and differ in rank, merged from bytes
// and in memory into accumulators that also take inserts, the result must
// hold exactly the canonical list of the union's entries while sparse and
// the registers that list folds to once dense.
func TestMergeRunsMatchUnion(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	// hash returns a random hash, often one that shares its 26-bit index
	// with an earlier one, with the extra index bits zero so that the
	// entry holds a rank: two entries of one index, the larger must win.
	var seen []uint64
	hash := func() uint64 {
		h := rng.Uint64()
		switch rng.IntN(8) {
		case 0:
			h &^= extraMask << (64 - sp)
		case 1:
			if len(seen) > 0 {
				h = seen[rng.IntN(len(seen))]&^(extraMask<<(64-sp)|1<<(64-sp)-1) | h>>rng.IntN(64)>>sp
			}
		}
		seen = append(seen, h)
		return h
	}
	sizes := []int{0, 1, 5, 20, 100, 300, 1_000, 3_000, 8_000, 15_000}
	trials := 60
	if testing.Short() {
		trials = 15
	}
	for trial := range trials {
		seen = seen[:0]
		var acc Sketch
		var entries []uint32
		var regs [m]uint8
		add := func(s *Sketch, h uint64) {
			s.Insert(h)
			entries = append(entries, sparseEntry(h))
			i, v := denseOf(sparseEntry(h))
			regs[i] = max(regs[i], v)
		}
		for step := range 2 + rng.IntN(12) {
			if rng.IntN(4) == 0 {
				// Inserts into the accumulator, left pending.
				for range rng.IntN(50) {
					add(&acc, hash())
				}
			}
			var in Sketch
			for range sizes[rng.IntN(len(sizes))] {
				add(&in, hash())
			}
			switch rng.IntN(3) {
			case 0:
				if err := acc.MergeBinary(in.AppendBinary(nil)); err != nil {
					t.Fatal(err)
				}
			case 1:
				in.flush()
				acc.Merge(&in)
			default:
				acc.Merge(&in) // with in's entries pending
			}
			acc.flush()
			if acc.regs != nil {
				if *acc.regs != regs {
					t.Fatalf("trial %d, step %d: registers differ from the union's", trial, step)
				}
				continue
			}
			want := canonical(entries)
			if len(acc.list) != len(want) {
				t.Fatalf("trial %d, step %d: %d entries, the union has %d", trial, step, len(acc.list), len(want))
			}
			for i := range want {
				if acc.list[i] != want[i] {
					t.Fatalf("trial %d, step %d: entry %d is %#x, the union's %#x", trial, step, i, acc.list[i], want[i])
				}
			}
			if sparse, dense := sparseLen(want), denseLen(&regs); sparse > dense {
				t.Fatalf("trial %d, step %d: sparse in %d bytes, dense would take %d", trial, step, sparse, dense)
			}
		}
	}
}

// TestMergeBinariesMatchesOneByOne checks MergeBinaries against merging
// the same encodings one at a time, into accumulators empty, sparse with
// pending entries and dense: the sketches must encode the same bytes. And
// that a damaged encoding among good ones leaves the accumulator as it was.
func TestMergeBinariesMatchesOneByOne(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 12))
	sizes := []int{0, 1, 7, 60, 400, 2_000, 6_000, 12_000, 40_000}
	trials := 120
	if testing.Short() {
		trials = 30
	}
	// Unions on both sides of where a list turns dense (about 16,500
	// items), split into a few sketches or many, from separate sets or
	// one: where stopping early at the wrong length would show.
	for _, items := range []int{8_000, 15_000, 16_000, 16_500, 17_000, 20_000} {
		for _, parts := range []int{2, 3, 8, 13} {
			for _, shared := range []bool{false, true} {
				var bs [][]byte
				for p := range parts {
					set := uint64(200 + p)
					if shared {
						set = 200
					}
					// With one set, the parts overlap by half.
					from := uint64(p * items / parts)
					if shared {
						from /= 2
					}
					var s Sketch
					for i := range uint64(items / parts * 3 / 2) {
						s.Insert(item(set, from+i))
					}
					bs = append(bs, s.AppendBinary(nil))
				}
				var one, many Sketch
				for _, b := range bs {
					if err := one.MergeBinary(b); err != nil {
						t.Fatal(err)
					}
				}
				if err := many.MergeBinaries(bs); err != nil {
					t.Fatal(err)
				}
				if a, b := one.AppendBinary(nil), many.AppendBinary(nil); !bytes.Equal(a, b) {
					t.Errorf("%d items in %d parts (shared %v): merged together (%d bytes) differ from one by one (%d bytes)", items, parts, shared, len(b), len(a))
				}
			}
		}
	}
	for trial := range trials {
		var bs [][]byte
		for range rng.IntN(14) {
			set := uint64(rng.IntN(6)) // shared sets: repeated items
			s := sketchOf(set, sizes[rng.IntN(len(sizes))])
			bs = append(bs, s.AppendBinary(nil))
		}
		var start *Sketch
		switch rng.IntN(3) {
		case 0:
			start = new(Sketch)
		case 1:
			start = sketchOf(100, rng.IntN(300))
			start.Insert(item(101, 1)) // pending
		default:
			start = sketchOf(102, 50_000)
		}
		one, many := start.Clone(), start.Clone()
		for _, b := range bs {
			if err := one.MergeBinary(b); err != nil {
				t.Fatal(err)
			}
		}
		if err := many.MergeBinaries(bs); err != nil {
			t.Fatal(err)
		}
		if a, b := one.AppendBinary(nil), many.AppendBinary(nil); !bytes.Equal(a, b) {
			t.Fatalf("trial %d: %d sketches merged together differ from one by one (%d and %d bytes)", trial, len(bs), len(b), len(a))
		}
		if len(bs) > 0 {
			bad := badEncodings()
			i := rng.IntN(len(bs))
			damaged := append(append(append([][]byte{}, bs[:i]...), bad[rng.IntN(len(bad))].b), bs[i:]...)
			before := start.Clone()
			if err := start.MergeBinaries(damaged); err == nil {
				t.Fatalf("trial %d: a damaged encoding among %d was merged", trial, len(damaged))
			}
			if err := sameSketch(start, before); err != nil {
				t.Fatalf("trial %d: a refused merge changed the sketch: %v", trial, err)
			}
		}
	}
}
