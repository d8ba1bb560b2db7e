package hll

import "slices"

// MergeBinaries merges the sketches encoded in bs into s, as MergeBinary
// on each in turn would, in about the time of decoding them. A query
// merges a path's sketches of a month, a dozen or more, and merging them
// one at a time passes over the growing list once for each: a dozen runs
// of a few thousand entries cost a dozen passes over tens of thousands.
// Here the sparse encodings are decoded as sorted runs and merged two by
// two, as merge sort does, so an entry is copied about log2 of their
// number times; when one of them is dense, so is the result, and every
// entry goes straight to the registers. It returns an error, and leaves s
// as it was, if any of bs is not an encoding that AppendBinary could have
// written.
func (s *Sketch) MergeBinaries(bs [][]byte) error {
	dense := s.regs != nil
	total := 0
	for _, b := range bs {
		body, err := checked(b)
		if err != nil {
			return err
		}
		if body[0] == formatDense {
			if err := checkDense(body[1:]); err != nil {
				return err
			}
			dense = true
			continue
		}
		n, _, err := sparseCount(body[1:])
		if err != nil {
			return err
		}
		total += n
	}
	// Decode every sparse encoding, which checks it, before s changes:
	// after the pending entries, one sorted run each.
	mark := len(s.buf)
	s.buf = slices.Grow(s.buf, total)
	ends := make([]int, 0, len(bs))
	for _, b := range bs {
		if b[0] != formatSparse {
			continue
		}
		n, entries, _ := sparseCount(b[1 : len(b)-trailerLen])
		var err error
		if s.buf, err = appendEntries(s.buf, entries, n); err != nil {
			s.buf = s.buf[:mark]
			return err
		}
		ends = append(ends, len(s.buf)-mark)
	}
	if dense {
		// The decoded runs stay where they are while s turns dense: a
		// flush of the pending entries before them writes only to
		// its own buffers.
		decoded := s.buf[mark:]
		s.buf = s.buf[:mark]
		s.toDense()
		for _, b := range bs {
			if b[0] == formatDense {
				s.foldDense(b[1 : len(b)-trailerLen])
			}
		}
		foldList(s.regs, decoded)
		return nil
	}
	// An empty sketch, as a query's is, may learn early that the union
	// is dense (see earlyDense); others take the usual rule, in addRun.
	var early *earlyDense
	if mark == 0 && len(s.list) == 0 {
		early = s.newEarlyDense(bs)
	}
	if early != nil && (early.longest > early.regsLen || surelyDense(early.regs)) || s.mergeRunsPairwise(mark, ends, early) {
		s.buf = s.buf[:0]
		s.useDense(early.regs)
		return nil
	}
	if early != nil {
		s.spare = early.regs
	}
	s.addRun(mark)
	return nil
}

// earlyDense is what MergeBinaries needs to turn an empty sketch dense
// before it has merged all the runs, for a union sure to encode longer
// than its registers. A path's month of sketches is most often far past
// that, and folding entries into registers costs a fraction of merging
// them into a list only to throw it away. A list encodes no shorter than
// any list it contains, so once one of them (the longest encoding merged,
// or a run of a pass of the merge) is longer than the union's registers,
// so is the union, and the sketch is dense, as merging one at a time
// would leave it.
type earlyDense struct {
	regs             *[m]uint8 // the union's registers
	regsLen, longest int       // their encoding's length; the longest sparse encoding's
}

// newEarlyDense folds the decoded runs in s.buf into registers, or
// returns nil if the encodings bs are too short in all for their union to
// be dense: their lengths add up to more than the union's list encodes.
func (s *Sketch) newEarlyDense(bs [][]byte) *earlyDense {
	sum, longest := 0, 0
	for _, b := range bs {
		sum += len(b)
		if b[0] == formatSparse {
			longest = max(longest, len(b))
		}
	}
	if sum <= minDenseLen {
		return nil
	}
	r := s.spare
	if r == nil {
		r = new([m]uint8)
	} else {
		clear(r[:])
	}
	foldList(r, s.buf)
	return &earlyDense{regs: r, regsLen: denseLen(r), longest: longest}
}

// mergeRunsPairwise merges the sorted runs that end at ends (counted from
// mark) in s.buf[mark:] two by two until one is left there. The passes go
// back and forth between that space and s.tmp: a merge drops repeated
// indexes, so a pass never needs more room than its input. With early, it
// stops after a pass whose longest run encodes longer than early's
// registers, and reports it.
func (s *Sketch) mergeRunsPairwise(mark int, ends []int, early *earlyDense) bool {
	runs, inBuf := s.buf[mark:], true
	for len(ends) > 1 {
		out := s.buf[mark:mark]
		if inBuf {
			out = s.tmp[:0]
		}
		start, kept := 0, 0
		var longest []uint32
		for i := 0; i < len(ends); i += 2 {
			end := ends[i]
			from := len(out)
			if i+1 < len(ends) {
				out = mergeRuns(out, runs[start:end], runs[end:ends[i+1]])
				end = ends[i+1]
			} else {
				out = append(out, runs[start:end]...)
			}
			if len(out)-from > len(longest) {
				longest = out[from:]
			}
			start = end
			ends[kept] = len(out)
			kept++
		}
		ends = ends[:kept]
		if inBuf {
			s.tmp = out
		}
		// The run of the most entries most likely encodes the longest:
		// measuring it alone spares a pass over the others.
		if early != nil && sparseLen(longest) > early.regsLen {
			return true
		}
		runs, inBuf = out, !inBuf
	}
	s.buf = append(s.buf[:mark], runs...)
	return false
}
