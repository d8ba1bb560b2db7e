// Package hll counts distinct visitors with HyperLogLog sketches: those of
// github.com/axiomhq/hyperloglog, at one precision for every sketch the
// server makes, stores or reads.
//
// A sketch of 2^16 registers has a relative standard error of 1.04/√65536,
// about 0.41%: within 2% (almost five standard errors) for every count
// from 100 to 10 million. Below about 40,000 items the library keeps a
// sparse list that counts nearly exactly, in a few bytes an item; past it,
// 64 KiB of registers.
//
// Callers insert 64-bit hashes that must be well mixed and stable: a
// stored sketch is merged with those of other processes and releases. A
// weak hash or a plain ID goes through Mix64 first.
//
// The library's zero Sketch takes another precision on its first insert,
// and sketches of two precisions do not merge: this package's Sketch makes
// each one at its precision, and refuses encodings of another.
package hll

import (
	"fmt"

	"github.com/axiomhq/hyperloglog"
)

// precision is the log2 of a dense sketch's registers.
const precision = 16

// Sketch is a HyperLogLog sketch of precision 16. The zero Sketch is empty
// and ready to use. It is not safe for concurrent use: even Estimate
// reorganizes its buffers.
type Sketch struct{ s *hyperloglog.Sketch }

func (s *Sketch) sketch() *hyperloglog.Sketch {
	if s.s == nil {
		s.s = hyperloglog.New16()
	}
	return s.s
}

// Insert adds a hash.
func (s *Sketch) Insert(hash uint64) { s.sketch().InsertHash(hash) }

// Merge adds the items of o.
func (s *Sketch) Merge(o *Sketch) {
	if o.s != nil {
		// Both are of one precision: the library fails only across two.
		_ = s.sketch().Merge(o.s)
	}
}

// MergeBinary adds the items of an encoded sketch.
func (s *Sketch) MergeBinary(b []byte) error {
	var o Sketch
	if err := o.UnmarshalBinary(b); err != nil {
		return err
	}
	s.Merge(&o)
	return nil
}

// UnmarshalBinary replaces s with an encoded sketch, which it refuses
// unless whole and of this package's precision.
func (s *Sketch) UnmarshalBinary(b []byte) error {
	if len(b) >= 2 && b[1] != precision {
		return fmt.Errorf("hll: a sketch of precision %d, not %d", b[1], precision)
	}
	var d hyperloglog.Sketch
	if err := d.UnmarshalBinary(b); err != nil {
		return fmt.Errorf("hll: %w", err)
	}
	s.s = &d
	return nil
}

// AppendBinary appends the encoding of s to dst. The sparse list is
// compacted first, which makes the encoding its smallest.
func (s *Sketch) AppendBinary(dst []byte) []byte {
	sk := s.sketch()
	sk.Estimate()
	// The precision is valid: the library fails only on another.
	out, _ := sk.AppendBinary(dst)
	return out
}

// Estimate returns the estimated number of distinct hashes inserted.
func (s *Sketch) Estimate() uint64 {
	if s.s == nil {
		return 0
	}
	return s.s.Estimate()
}

// Mix64 scrambles x into a well-mixed hash (the output function of the
// splitmix64 generator), for an ID or a weak hash (FNV, a CRC). It is a
// bijection and never changes: stored sketches depend on it.
func Mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
