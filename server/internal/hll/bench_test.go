package hll

import (
	"fmt"
	"testing"
)

// BenchmarkInsert inserts distinct items into a sparse sketch (emptied
// every 2,000 items, before it turns dense) and into a dense one.
func BenchmarkInsert(b *testing.B) {
	b.Run("sparse", func(b *testing.B) {
		var s Sketch
		for i := 0; b.Loop(); i++ {
			if i%2_000 == 0 {
				s.Reset()
			}
			s.Insert(item(1, uint64(i)))
		}
	})
	b.Run("dense", func(b *testing.B) {
		s := sketchOf(1, 100_000)
		for i := 0; b.Loop(); i++ {
			s.Insert(item(2, uint64(i)))
		}
	})
}

// BenchmarkEstimate estimates a sparse sketch and a dense one.
func BenchmarkEstimate(b *testing.B) {
	for _, c := range []struct {
		name string
		n    int
	}{{"sparse-1000", 1_000}, {"dense-1M", 1_000_000}} {
		b.Run(c.name, func(b *testing.B) {
			s := sketchOf(3, c.n)
			for b.Loop() {
				s.Estimate()
			}
		})
	}
}

// BenchmarkMergeBinary merges stored sketches into an accumulator, as a
// query does: small sparse ones (20 items, cycling through 1,000 distinct
// ones) into a sparse accumulator (emptied every 100 merges, so it stays
// sparse) and into a dense one, and dense ones into a dense one.
func BenchmarkMergeBinary(b *testing.B) {
	small := make([][]byte, 1_000)
	for i := range small {
		small[i] = sketchOf(uint64(100+i), 20).AppendBinary(nil)
	}
	dense := make([][]byte, 10)
	for i := range dense {
		dense[i] = sketchOf(uint64(10+i), 200_000).AppendBinary(nil)
	}
	b.Run("sparse20-into-sparse", func(b *testing.B) {
		var acc Sketch
		for i := 0; b.Loop(); i++ {
			if i%100 == 0 {
				acc.Reset()
			}
			if err := acc.MergeBinary(small[i%len(small)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sparse20-into-dense", func(b *testing.B) {
		acc := sketchOf(4, 100_000)
		for i := 0; b.Loop(); i++ {
			if err := acc.MergeBinary(small[i%len(small)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("dense-into-dense", func(b *testing.B) {
		acc := sketchOf(4, 100_000)
		for i := 0; b.Loop(); i++ {
			if err := acc.MergeBinary(dense[i%len(dense)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkMerge merges sketches in memory.
func BenchmarkMerge(b *testing.B) {
	b.Run("dense-into-dense", func(b *testing.B) {
		acc, other := sketchOf(5, 100_000), sketchOf(6, 100_000)
		for b.Loop() {
			acc.Merge(other)
		}
	})
	b.Run("sparse20-into-dense", func(b *testing.B) {
		acc, other := sketchOf(5, 100_000), sketchOf(6, 20)
		for b.Loop() {
			acc.Merge(other)
		}
	})
}

// BenchmarkAppendBinary encodes sketches of 20 and 1,000 items (sparse)
// and 1M items (dense).
func BenchmarkAppendBinary(b *testing.B) {
	for _, c := range []struct {
		name string
		n    int
	}{{"sparse-20", 20}, {"sparse-1000", 1_000}, {"dense-1M", 1_000_000}} {
		b.Run(c.name, func(b *testing.B) {
			s := sketchOf(7, c.n)
			buf := s.AppendBinary(nil)
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				buf = s.AppendBinary(buf[:0])
			}
		})
	}
}

// BenchmarkUnmarshalBinary decodes a small sparse sketch into a new one,
// which is what loading one for an update costs.
func BenchmarkUnmarshalBinary(b *testing.B) {
	enc := sketchOf(8, 20).AppendBinary(nil)
	for b.Loop() {
		var s Sketch
		if err := s.UnmarshalBinary(enc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMergeBinarySparse merges stored sparse sketches of n items
// into a sparse accumulator that is estimated and emptied every 10 merges
// (so that it stays sparse: 10 of the largest are about 15,000 items), as
// a query merges a path's day and week sketches. ns/entry is per entry
// merged in.
func BenchmarkMergeBinarySparse(b *testing.B) {
	for _, n := range []int{20, 200, 1_500} {
		b.Run(fmt.Sprintf("sparse%d-into-sparse", n), func(b *testing.B) {
			encs := make([][]byte, 10)
			for i := range encs {
				encs[i] = sketchOf(uint64(200+i), n).AppendBinary(nil)
			}
			var acc Sketch
			for i := 0; b.Loop(); i++ {
				if err := acc.MergeBinary(encs[i%len(encs)]); err != nil {
					b.Fatal(err)
				}
				if i%len(encs) == len(encs)-1 {
					acc.Estimate()
					acc.Reset()
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/entry")
		})
	}
}

// BenchmarkMergeBinaries merges a path's month of stored sketches as a
// query does: 13 sparse ones of n items each into an empty sketch, which
// stays sparse (13 x 1,000) or turns dense (13 x 3,000). ns/entry is per
// entry merged in.
func BenchmarkMergeBinaries(b *testing.B) {
	for _, n := range []int{100, 1_000, 3_000} {
		b.Run(fmt.Sprintf("13x%d", n), func(b *testing.B) {
			encs := make([][]byte, 13)
			for i := range encs {
				encs[i] = sketchOf(uint64(300+i), n).AppendBinary(nil)
			}
			var acc Sketch
			for b.Loop() {
				acc.Reset()
				if err := acc.MergeBinaries(encs); err != nil {
					b.Fatal(err)
				}
				acc.Estimate()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n*len(encs)), "ns/entry")
		})
	}
}

// BenchmarkUnionEstimates estimates a path's three unions over a month of
// stored sketches as a query does, 13 of each side: with UnionEstimator,
// and by merging (MergeBinaries into two sketches, then their union), for
// paths of a few hundred to tens of thousands of human visitors a week, a
// fifth as many AI ones. ns/entry is per entry of the encodings.
func BenchmarkUnionEstimates(b *testing.B) {
	for _, n := range []int{300, 1_000, 3_000, 10_000} {
		var human, ai [][]byte
		for i := range 13 {
			human = append(human, sketchOf(uint64(400+i), n).AppendBinary(nil))
			ai = append(ai, sketchOf(uint64(500+i), n/5).AppendBinary(nil))
		}
		entries := float64(13 * (n + n/5))
		b.Run(fmt.Sprintf("13x%d/estimator", n), func(b *testing.B) {
			var u UnionEstimator
			for b.Loop() {
				if _, _, _, err := u.Estimates(human, ai); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/entries, "ns/entry")
		})
		b.Run(fmt.Sprintf("13x%d/merging", n), func(b *testing.B) {
			var u UnionEstimator
			for b.Loop() {
				if _, _, _, err := u.merged(human, ai); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/entries, "ns/entry")
		})
	}
}
