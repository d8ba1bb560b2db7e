package rollup

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// format is the first byte of every roll. A store that meets another value
// refuses the roll rather than misread it: a newer program wrote it.
const format = 1

// A roll is the format byte, then one entry per path in increasing PathID
// order: the PathID's distance from the previous entry's (from 0 for the
// first), Human and AI, each as a uvarint. Distances instead of IDs keep a
// dense project's entries to three or four bytes.

// errOverflow is returned when a sum leaves int64. The rows of the same
// counts overflow too, so no roll is ever asked to hold such a sum.
var errOverflow = errors.New("rollup: count overflows int64")

// Normalize sorts counts by PathID, adds up the counts of the same PathID
// and drops those with no human or AI views, in place; it returns the
// shortened slice. Encode and Merge need normalized counts.
func Normalize(counts []Count) ([]Count, error) {
	slices.SortFunc(counts, func(a, b Count) int { return cmp.Compare(a.PathID, b.PathID) })
	out := counts[:0]
	for _, c := range counts {
		if c.PathID < 1 || c.Human < 0 || c.AI < 0 {
			return nil, fmt.Errorf("rollup: invalid count %+v", c)
		}
		if c.Human == 0 && c.AI == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].PathID == c.PathID {
			var err error
			if out[n-1], err = add(out[n-1], c); err != nil {
				return nil, err
			}
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// add sums two counts of the same path.
func add(a, b Count) (Count, error) {
	if a.Human > math.MaxInt64-b.Human || a.AI > math.MaxInt64-b.AI {
		return Count{}, errOverflow
	}
	return Count{PathID: a.PathID, Human: a.Human + b.Human, AI: a.AI + b.AI}, nil
}

// Encode appends the roll of normalized counts to dst.
func Encode(dst []byte, counts []Count) []byte {
	dst = append(dst, format)
	var prev int64
	for _, c := range counts {
		dst = binary.AppendUvarint(dst, uint64(c.PathID-prev))
		dst = binary.AppendUvarint(dst, uint64(c.Human))
		dst = binary.AppendUvarint(dst, uint64(c.AI))
		prev = c.PathID
	}
	return dst
}

// Decode appends the counts of roll to dst, in PathID order. It refuses a
// roll it cannot read whole: a store must never answer from a damaged one.
func Decode(dst []Count, roll []byte) ([]Count, error) {
	if len(roll) == 0 {
		return nil, errors.New("rollup: empty roll")
	}
	if roll[0] != format {
		return nil, fmt.Errorf("rollup: roll format %d, this program reads %d", roll[0], format)
	}
	b := roll[1:]
	var prev int64
	for len(b) > 0 {
		var v [3]uint64
		for i := range v {
			n := 0
			v[i], n = binary.Uvarint(b)
			if n <= 0 || v[i] > math.MaxInt64 {
				return nil, fmt.Errorf("rollup: damaged roll at byte %d", len(roll)-len(b))
			}
			b = b[n:]
		}
		if v[0] == 0 || v[0] > uint64(math.MaxInt64-prev) {
			return nil, fmt.Errorf("rollup: damaged roll: path IDs out of order after %d", prev)
		}
		prev += int64(v[0])
		dst = append(dst, Count{PathID: prev, Human: int64(v[1]), AI: int64(v[2])})
	}
	return dst, nil
}

// Merge returns the roll of the counts of roll plus the normalized counts
// in more. A nil roll is the empty one, for an hour or day not yet stored.
func Merge(roll []byte, more []Count) ([]byte, error) {
	var have []Count
	if roll != nil {
		var err error
		if have, err = Decode(make([]Count, 0, len(roll)/3), roll); err != nil {
			return nil, err
		}
	}
	sum, err := mergeSorted(make([]Count, 0, len(have)+len(more)), have, more)
	if err != nil {
		return nil, err
	}
	return Encode(make([]byte, 0, len(roll)+4*len(more)+1), sum), nil
}

// mergeSorted appends to dst the union of a and b, both sorted by PathID,
// adding the counts of a path in both.
func mergeSorted(dst, a, b []Count) ([]Count, error) {
	for len(a) > 0 && len(b) > 0 {
		switch {
		case a[0].PathID < b[0].PathID:
			dst, a = append(dst, a[0]), a[1:]
		case a[0].PathID > b[0].PathID:
			dst, b = append(dst, b[0]), b[1:]
		default:
			c, err := add(a[0], b[0])
			if err != nil {
				return nil, err
			}
			dst, a, b = append(dst, c), a[1:], b[1:]
		}
	}
	dst = append(dst, a...)
	return append(dst, b...), nil
}
