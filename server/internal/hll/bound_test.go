package hll

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestBoundHolds merges random groups of sketches of random sizes, some
// sharing items, and checks that whenever the Bound of their encodings
// gives a maximum, the merge stays sparse and estimates no more than it;
// and that a group holding a dense sketch gives none.
func TestBoundHolds(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 10))
	sizes := []int{1, 3, 20, 200, 1_000, 2_500, 5_000, 9_000, 14_000, 30_000}
	trials := 300
	if testing.Short() {
		trials = 60
	}
	bounded, unbounded := 0, 0
	for trial := range trials {
		var u Bound
		var acc Sketch
		hasDense := false
		for range 1 + rng.IntN(8) {
			// A set of items, overlapping others' a tenth of the time.
			set := uint64(trial*16 + rng.IntN(16))
			if rng.IntN(10) > 0 {
				set = uint64(1_000_000 + trial*16 + rng.IntN(16))
			}
			s := sketchOf(set, sizes[rng.IntN(len(sizes))])
			enc := s.AppendBinary(nil)
			hasDense = hasDense || enc[0] == formatDense
			if err := u.AddBinary(enc); err != nil {
				t.Fatal(err)
			}
			if err := acc.MergeBinary(enc); err != nil {
				t.Fatal(err)
			}
		}
		max, ok := u.Max()
		if hasDense && ok {
			t.Fatalf("trial %d: a bound over a dense sketch", trial)
		}
		if !ok {
			unbounded++
			continue
		}
		bounded++
		if est := acc.Estimate(); acc.regs != nil || est > max {
			t.Fatalf("trial %d: bound %d, but the merge is dense %v with estimate %d", trial, max, acc.regs != nil, est)
		}
	}
	if bounded < trials/10 || unbounded < trials/10 {
		t.Fatalf("the trials hardly test both sides: %d bounded, %d not", bounded, unbounded)
	}
}

// TestBoundIsTight checks that a bound is the union's estimate when the
// sketches share no item, the common case of one path's days, so that a
// query ranking by bounds merges little more than its page.
func TestBoundIsTight(t *testing.T) {
	var u Bound
	var acc Sketch
	for set := range uint64(6) {
		enc := sketchOf(set, 500).AppendBinary(nil)
		if err := u.AddBinary(enc); err != nil {
			t.Fatal(err)
		}
		if err := acc.MergeBinary(enc); err != nil {
			t.Fatal(err)
		}
	}
	var v Bound
	v.Add(u)
	max, ok := v.Max()
	if !ok || max != acc.Estimate() || max != linearCount(3000) {
		t.Fatalf("bound %d (%v), estimate %d", max, ok, acc.Estimate())
	}
	if max, ok := (Bound{}).Max(); !ok || max != 0 {
		t.Fatalf("the empty bound: %d, %v", max, ok)
	}
}

// TestBoundRefuses checks that AddBinary refuses what fails MergeBinary's
// checks of length, format and checksum, with the same error, and leaves
// the bound as it was.
func TestBoundRefuses(t *testing.T) {
	for _, c := range badEncodings() {
		var s Sketch
		want := s.MergeBinary(c.b)
		sealed := len(c.b) > trailerLen && bytes.Equal(reseal(c.b), c.b)
		var u Bound
		err := u.AddBinary(c.b)
		switch {
		case !sealed || want == errOldFormat || want == errFormat || want == errShort:
			if err != want {
				t.Errorf("%s: AddBinary says %v, MergeBinary %v", c.name, err, want)
			}
		case err != nil && err != want:
			t.Errorf("%s: AddBinary says %v, MergeBinary %v", c.name, err, want)
		}
		if err != nil && u != (Bound{}) {
			t.Errorf("%s: a refused encoding changed the bound", c.name)
		}
	}
}
