package rollup

// Segment is what a store knows of one of a roll's stored segments without
// reading it.
type Segment struct {
	Seq     int64 // segments are written in increasing Seq
	Entries int64
}

// absorbFactor is how much larger than what a new segment holds a roll's
// last segment may be and still be merged into it. Larger, a roll has
// fewer segments for a query to merge (log4 of its entries here), and an
// entry is rewritten more times over the roll's life (about 11 times, at
// worst, where 2 would rewrite it about 7 times and leave twice the
// segments).
const absorbFactor = 4

// Absorb returns how many of a roll's last segments (segs, in Seq order) a
// new segment of n entries is merged with before it is stored: those, from
// the newest back, that hold at most absorbFactor times what the merge
// holds so far.
//
// A flush therefore rewrites the small segments its batch lands next to,
// not the day: a batch of paths the day has seen merges with the last
// segment (of about the batch's size) and stays that size, and a day's
// large segment is merged again only once the ones after it add up to a
// quarter of its size, so every entry is rewritten a logarithmic number of
// times. As each stored segment holds more than absorbFactor times the
// next one, a roll has at most log4 of its entries segments, which bounds
// what a query reads.
func Absorb(segs []Segment, n int) int {
	held, k := int64(n), 0
	for ; k < len(segs); k++ {
		last := segs[len(segs)-1-k]
		if last.Entries > absorbFactor*held {
			break
		}
		held += last.Entries
	}
	return k
}

// MergeSegments returns the segment that holds the counts of segs (stored
// segments) and of fresh (normalized counts), and how many entries it has.
func MergeSegments(segs [][]byte, fresh []Count) ([]byte, int, error) {
	m := getMerger()
	defer putMerger(m)
	m.bots = true
	size := 0
	for _, s := range segs {
		if _, _, _, err := m.addSegment(s); err != nil {
			return nil, 0, err
		}
		size += len(s)
	}
	if err := m.addCounts(fresh); err != nil {
		return nil, 0, err
	}
	rows, err := m.merge()
	if err != nil {
		return nil, 0, err
	}
	return m.encodeRows(make([]byte, 0, size+8*len(fresh)+16), rows), len(rows), nil
}

// Appended is what adding a roll's counts to its stored segments writes: a
// new segment, which replaces the segments from Seq Replaces on when
// Replaces is not 0 (they were merged into it).
type Appended struct {
	Seq      int64 // the new segment's: after every stored one
	Entries  int
	Segment  []byte
	Replaces int64
}

// Append decides how r's counts join the roll's stored segments segs (in
// Seq order): as a new segment, merged with the last ones Absorb picks,
// which read returns (those from a Seq on, in Seq order).
func Append(r Roll, segs []Segment, read func(from int64) ([][]byte, error)) (Appended, error) {
	a := Appended{Seq: 1, Entries: len(r.Counts)}
	if len(segs) > 0 {
		a.Seq = segs[len(segs)-1].Seq + 1
	}
	k := Absorb(segs, len(r.Counts))
	if k == 0 {
		a.Segment = Encode(nil, r.Counts)
		return a, nil
	}
	a.Replaces = segs[len(segs)-k].Seq
	old, err := read(a.Replaces)
	if err != nil {
		return Appended{}, err
	}
	if a.Segment, a.Entries, err = MergeSegments(old, r.Counts); err != nil {
		return Appended{}, err
	}
	return a, nil
}
