package hll

// indexSet counts the distinct 26-bit indexes of a union's entries, and
// those of them whose entry holds a rank byte (low 10 bits zero): the two
// numbers the length of the union's list depends on, short of its gaps.
// It is an open-addressed table of index+1 (0: empty) with linear
// probing, sized to at most half full, that remembers which slots it
// used, so that emptying it costs what filling it did.
type indexSet struct {
	slots  []uint32 // the table, len a power of 2; slots[:mask+1] in use
	mask   uint32
	shift  uint32   // 32 less the bits of mask
	used   []uint32 // the slots filled, in order
	ranked int
}

// maxProbes bounds the slots count looks at, per entry on average. Indexes
// are hash bits, so probes average about 1.5 at half full; sketches made
// from chosen hashes could make every entry probe the same long run, and
// then count gives up (the caller merges instead, in n log n).
const maxProbes = 8

// count empties the set and adds the indexes of entries, and reports
// false, the set incomplete, if that took more than maxProbes probes an
// entry on average.
func (s *indexSet) count(entries []uint32) bool {
	for _, i := range s.used {
		s.slots[i] = 0
	}
	s.used, s.ranked = s.used[:0], 0
	bits := uint32(4)
	for 1<<bits < 2*len(entries) {
		bits++
	}
	if len(s.slots) < 1<<bits {
		s.slots = make([]uint32, 1<<bits)
	}
	s.mask, s.shift = 1<<bits-1, 32-bits
	budget := maxProbes * len(entries)
	for _, e := range entries {
		idx := e >> rankBits
		i := s.home(idx)
		for {
			budget--
			v := s.slots[i]
			if v == idx+1 {
				break
			}
			if v == 0 {
				s.slots[i] = idx + 1
				s.used = append(s.used, i)
				if idx&extraMask == 0 {
					s.ranked++
				}
				break
			}
			i = (i + 1) & s.mask
		}
		if budget < 0 {
			return false
		}
	}
	return true
}

// home is the slot where idx's probe starts: Fibonacci hashing, the top
// bits of a product with 2^32 over the golden ratio. An index's own bits
// are random for hashes made as the package asks, but not for chosen ones.
func (s *indexSet) home(idx uint32) uint32 { return idx * 0x9e3779b9 >> s.shift }

// len is the number of distinct indexes counted.
func (s *indexSet) len() int { return len(s.used) }

// has reports whether idx is in the set.
func (s *indexSet) has(idx uint32) bool {
	i := s.home(idx)
	for {
		switch s.slots[i] {
		case idx + 1:
			return true
		case 0:
			return false
		}
		i = (i + 1) & s.mask
	}
}

// overlap returns how many indexes s and o share, and how many of those
// have a rank byte, probing the larger set for each index of the smaller.
func (s *indexSet) overlap(o *indexSet) (shared, ranked int) {
	small, large := s, o
	if small.len() > large.len() {
		small, large = large, small
	}
	for _, i := range small.used {
		idx := small.slots[i] - 1
		if large.has(idx) {
			shared++
			if idx&extraMask == 0 {
				ranked++
			}
		}
	}
	return shared, ranked
}
