package hll

import "math"

// Estimate returns the estimated number of distinct hashes in the sketch.
// While the sketch is sparse (up to about 16,500 items) it is exact but for
// an item or so; once dense its relative standard error is about 0.41%, so
// about 1 estimate in a million is more than 2% off.
func (s *Sketch) Estimate() uint64 {
	if s.regs == nil {
		s.flush()
	}
	if s.regs == nil {
		return linearCount(len(s.list))
	}
	return estimateDense(s.regs)
}

// linearCount estimates the items that left n of 2^sp buckets occupied.
// The list holds the buckets of the 26-bit indexes, and at the sizes it is
// kept (at most about 16,500 entries of 67 million buckets, where 2 items
// share a bucket on average) the correction below is a few items at most,
// and exact in expectation.
func linearCount(n int) uint64 {
	const buckets = 1 << sp
	if n <= 0 {
		return 0
	}
	n = min(n, buckets-1) // unreachable: the list turns dense long before
	return uint64(math.Round(-buckets * math.Log1p(-float64(n)/buckets)))
}

// estimateDense is Ertl's improved estimator (Algorithm 6 of "New
// cardinality estimation algorithms for HyperLogLog sketches"): the raw
// HyperLogLog estimate, with the registers still at 0 and those at the
// largest value each corrected by a series, so that it needs neither linear
// counting at small counts nor a bias table.
func estimateDense(r *[m]uint8) uint64 {
	h := histogram(r)
	return estimateHist(&h)
}

// estimateHist is estimateDense of registers whose histogram is h.
func estimateHist(h *[maxRank + 1]float64) uint64 {
	if h[0] == m {
		return 0
	}
	z := m * tau(1-h[maxRank]/m)
	for k := q; k >= 1; k-- {
		z = 0.5 * (z + h[k])
	}
	z += m * sigma(h[0]/m)
	est := m * m / (2 * math.Ln2) / z
	if est >= math.MaxUint64 || math.IsNaN(est) {
		// Every register at the largest value: more items than 64-bit
		// hashes can tell apart.
		return math.MaxUint64
	}
	return uint64(math.Round(est))
}

// histogram counts the registers of r at each value.
func histogram(r *[m]uint8) [maxRank + 1]float64 {
	// Four histograms, so that runs of equal registers do not wait on
	// one counter.
	var c [4][maxRank + 1]int32
	for i := 0; i < m; i += 4 {
		c[0][r[i]]++
		c[1][r[i+1]]++
		c[2][r[i+2]]++
		c[3][r[i+3]]++
	}
	var h [maxRank + 1]float64
	for k := range h {
		h[k] = float64(c[0][k] + c[1][k] + c[2][k] + c[3][k])
	}
	return h
}

// sigma is x + Σ_{k≥1} x^(2^k)·2^(k-1), for the registers still at 0: the
// term that makes small counts come out as linear counting would.
func sigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		prev := z
		z += x * y
		y += y
		if z == prev {
			return z
		}
	}
}

// tau is (1 - x - Σ_{k≥1} (1 - x^(2^-k))²·2^-k) / 3, for the registers at
// the largest value: it matters only near 2^64 items.
func tau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		prev := z
		y *= 0.5
		z -= (1 - x) * (1 - x) * y
		if z == prev {
			return z / 3
		}
	}
}
