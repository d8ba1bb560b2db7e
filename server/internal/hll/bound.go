package hll

import "math"

// Bound is an upper bound on the estimate of the union of some sketches,
// read from their encodings without decoding their entries. A query that
// ranks thousands of paths by visitors merges the sketches of only those
// whose bound can reach its page: the rest cannot, whatever their merge
// would say. The zero Bound bounds the empty union.
//
// The bound holds while every sketch added is sparse and their union is
// certain to stay sparse. Then the union's list has at most as many
// entries as the sketches have in all, so its estimate, linear counting
// over those entries, is at most linearCount of that sum; and it stays
// sparse because its encoding is no longer than the sketches' entries
// encoded apart: each entry of the union keeps its rank byte and its gap
// to the entry before it can only be shorter, since that entry is at
// least the one before it in its own sketch. A sketch turns dense only
// when its list encodes longer than minDenseLen (see denseIfSmaller), so
// entries that encode no longer than that in all never make one. Past
// that, or with a dense sketch among them, only merging tells.
type Bound struct {
	entries int  // the sparse sketches' entries, in all
	bytes   int  // the bytes encoding those entries, without headers
	dense   bool // a dense sketch was added
}

// AddBinary adds the sketch encoded in b. It checks what MergeBinary
// checks first (the length, the format byte, the checksum), a dense
// encoding's length and a sparse one's entry count against its length,
// with the same errors, so that damage is reported whether or not the
// sketch is merged later; the entries and registers themselves are
// checked only by a merge.
func (u *Bound) AddBinary(b []byte) error {
	body, err := checked(b)
	if err != nil {
		return err
	}
	if body[0] == formatDense {
		if len(body) < minDenseLen-trailerLen {
			return errShort
		}
		u.dense = true
		return nil
	}
	n, entries, err := sparseCount(body[1:])
	if err != nil {
		return err
	}
	u.entries += n
	u.bytes += len(entries)
	return nil
}

// Add adds the sketches that o bounds.
func (u *Bound) Add(o Bound) {
	u.entries += o.entries
	u.bytes += o.bytes
	u.dense = u.dense || o.dense
}

// Max returns the largest estimate that merging the sketches added could
// give, and true; or false when the union may be dense, which only
// merging tells.
func (u Bound) Max() (uint64, bool) {
	if u.dense || u.entries > math.MaxUint32 ||
		1+uvarintLen(uint32(u.entries))+u.bytes+trailerLen > minDenseLen {
		return 0, false
	}
	return linearCount(u.entries), true
}
