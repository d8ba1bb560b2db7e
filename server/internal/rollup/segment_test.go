package rollup

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestAbsorbMergesOnlyWhatIsSmall(t *testing.T) {
	for _, tc := range []struct {
		segs []int64
		n    int
		want int
	}{
		{nil, 5, 0},
		{[]int64{1_000_000}, 5000, 0},         // a big day stays as it is
		{[]int64{1_000_000, 5000}, 5000, 1},   // the batch's size merges with the last
		{[]int64{1_000_000, 20_000}, 5000, 1}, // up to absorbFactor times its size
		{[]int64{1_000_000, 20_001}, 5000, 0}, // not more
		{[]int64{150, 20, 10}, 10, 3},         // merges cascade while they stay small
		{[]int64{161, 20, 10}, 10, 2},
	} {
		segs := make([]Segment, len(tc.segs))
		for i, e := range tc.segs {
			segs[i] = Segment{Seq: int64(i + 1), Entries: e}
		}
		if got := Absorb(segs, tc.n); got != tc.want {
			t.Errorf("Absorb(%v, %d) = %d, want %d", tc.segs, tc.n, got, tc.want)
		}
	}
}

// However flushes come, a roll keeps at most log2 of its entries segments,
// and each entry is rewritten a logarithmic number of times.
func TestAbsorbBoundsSegmentsAndRewrites(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, batch := range []func() int{
		func() int { return 1 },
		func() int { return 5000 },
		func() int { return 1 + r.IntN(20_000) },
		func() int { return 1 << r.IntN(15) },
	} {
		var segs []Segment
		var written, rewritten int64
		for range 2000 {
			n := batch()
			k := Absorb(segs, n)
			merged := int64(n)
			for _, s := range segs[len(segs)-k:] {
				merged += s.Entries // new paths each time: nothing adds up
			}
			rewritten += merged
			written += int64(n)
			segs = append(segs[:len(segs)-k], Segment{Entries: merged})
			if limit := bits.Len64(uint64(written)) + 1; len(segs) > limit {
				t.Fatalf("%d segments for %d entries, more than %d", len(segs), written, limit)
			}
		}
		if limit := int64(bits.Len64(uint64(written))+1) * written; rewritten > limit {
			t.Errorf("%d entries rewritten for %d written, more than log2 × written", rewritten, written)
		}
	}
}

func TestAppendWritesANewSegmentOrMergesTheSmallLastOnes(t *testing.T) {
	r := Roll{ProjectID: "p", At: 3600, Counts: []Count{{Path: "/a", Human: 1}, {Path: "/b", Bot: 2}}}
	noRead := func(int64) ([][]byte, error) { t.Fatal("read without a merge"); return nil, nil }

	// An empty roll: the first segment.
	got, err := Append(r, nil, noRead)
	if err != nil || got.Seq != 1 || got.Replaces != 0 || got.Entries != 2 {
		t.Fatalf("Append to an empty roll = %+v, %v", got, err)
	}
	// A large last segment stays: a new one after it.
	big := []Segment{{Seq: 4, Entries: 100}}
	if got, err = Append(r, big, noRead); err != nil || got.Seq != 5 || got.Replaces != 0 {
		t.Fatalf("Append after a large segment = %+v, %v", got, err)
	}
	// Small last segments are merged: read from the first merged on, and
	// replaced.
	small := []Segment{{Seq: 2, Entries: 100}, {Seq: 7, Entries: 3}, {Seq: 9, Entries: 1}}
	var readFrom int64
	got, err = Append(r, small, func(from int64) ([][]byte, error) {
		readFrom = from
		return [][]byte{Encode(nil, []Count{{Path: "/a", Human: 2}, {Path: "/c", AI: 1}}), Encode(nil, []Count{{Path: "/b", Bot: 1}})}, nil
	})
	if err != nil || readFrom != 7 || got.Seq != 10 || got.Replaces != 7 || got.Entries != 3 {
		t.Fatalf("Append after small segments = %+v (read from %d), %v", got, readFrom, err)
	}
	counts, err := Decode(got.Segment)
	if want := []Count{{Path: "/a", Human: 3}, {Path: "/b", Bot: 3}, {Path: "/c", AI: 1}}; err != nil || !slices.Equal(counts, want) {
		t.Fatalf("merged segment %v, %v; want %v", counts, err, want)
	}
}
