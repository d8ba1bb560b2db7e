package hll

// A query that ranks paths by visitors needs, of each candidate path, three
// numbers: the estimates of the union of its human sketches of the range,
// of its AI ones, and of both. Merging builds each union's sorted list, a
// merge of a dozen runs of thousands of entries, to read only its length;
// and whether the union is dense, the one thing that needs the list, is
// most often settled by bounds. So UnionEstimator decodes the entries
// once, folds them into registers and counts their distinct indexes in a
// hash set, and decides from bounds: the list is surely sparse if even its
// longest possible encoding (maxSparseLen) is no longer than the
// registers', surely dense if its shortest (surelyDense) is longer. Only a
// union between the two, a few thousand items wide around 16,500, is
// merged as Sketch.MergeBinaries would, which also makes every answer the
// same as merging.

// UnionEstimator estimates unions of encoded sketches without building
// them. The zero UnionEstimator is ready to use; it keeps its memory from
// one call to the next. It is not safe for concurrent use.
type UnionEstimator struct {
	sides  [2]unionSide
	both   *[m]uint8 // the registers of the two sides' union
	exact  [3]Sketch // the unions, merged, when bounds do not settle them
	all    [][]byte  // both sides' encodings, to merge their union
	merges int       // unions merged
}

// unionSide is what a UnionEstimator knows of one side's union.
type unionSide struct {
	entries []uint32  // the sparse encodings' entries, run after run
	dense   bool      // the union is dense: a dense encoding among its sketches, or proven
	regs    *[m]uint8 // the union's registers
	started bool      // regs is cleared for this union
	ready   bool      // regs holds the union, entries folded in
	set     indexSet  // the union's distinct indexes
	counted bool      // set holds them
}

// Estimates returns the estimates of the union of the sketches encoded in
// first, of those in second, and of all of them: what merging first into
// an empty Sketch, second into another, and the two into a third would
// give, each read with Estimate. It returns an error if any encoding is
// not one AppendBinary could have written (see MergeBinary).
func (u *UnionEstimator) Estimates(first, second [][]byte) (a, b, both uint64, err error) {
	sides := [2][][]byte{first, second}
	for i, bs := range sides {
		if err := u.sides[i].load(bs); err != nil {
			return 0, 0, 0, err
		}
	}
	var est [2]uint64
	for i, bs := range sides {
		sd := &u.sides[i]
		e, ok := sd.estimate()
		if !ok {
			// Only merging tells whether this union is dense.
			if e, err = u.merge(&u.exact[i], bs); err != nil {
				return 0, 0, 0, err
			}
			sd.dense = u.exact[i].regs != nil
		}
		est[i] = e
	}
	x, y := &u.sides[0], &u.sides[1]
	if x.dense || y.dense {
		return est[0], est[1], estimateDense(u.foldBoth()), nil
	}
	if x.counted && y.counted {
		// Both sparse: the union's list holds the indexes of both, once
		// each.
		shared, sharedRanked := x.set.overlap(&y.set)
		n := x.set.len() + y.set.len() - shared
		ranked := x.set.ranked + y.set.ranked - sharedRanked
		if e, _, ok := settle(n, ranked, u.foldBoth); ok {
			return est[0], est[1], e, nil
		}
	}
	// Two sparse unions whose union only merging tells: as merged
	// sketches, their union is the one of all their entries.
	u.all = append(append(u.all[:0], first...), second...)
	both, err = u.merge(&u.exact[2], u.all)
	clear(u.all) // the encodings are the caller's
	return est[0], est[1], both, err
}

// merge merges bs into s, emptied first, and returns its estimate.
func (u *UnionEstimator) merge(s *Sketch, bs [][]byte) (uint64, error) {
	u.merges++
	s.Reset()
	if err := s.MergeBinaries(bs); err != nil {
		return 0, err
	}
	return s.Estimate(), nil
}

// foldBoth returns the registers of the union of both sides. It starts
// from a side's registers, and folds the other's entries in directly when
// that side has no registers yet: it then has no dense sketch (estimate
// folds those), and its own registers would be a pass to clear and one to
// take the maximum for nothing.
func (u *UnionEstimator) foldBoth() *[m]uint8 {
	if u.both == nil {
		u.both = new([m]uint8)
	}
	x, y := &u.sides[0], &u.sides[1]
	if !x.ready && y.ready {
		x, y = y, x
	}
	*u.both = *x.fold()
	if y.ready {
		maxRegs(u.both, y.regs)
	} else {
		foldList(u.both, y.entries)
	}
	return u.both
}

// merged returns the estimates by merging, as Estimates documents them.
func (u *UnionEstimator) merged(first, second [][]byte) (a, b, both uint64, err error) {
	x, y, xy := &u.exact[0], &u.exact[1], &u.exact[2]
	for i := range u.exact {
		u.exact[i].Reset()
	}
	if err := x.MergeBinaries(first); err != nil {
		return 0, 0, 0, err
	}
	if err := y.MergeBinaries(second); err != nil {
		return 0, 0, 0, err
	}
	xy.Merge(x)
	xy.EncodedLen() // one sorted run at a time, as a query merges them
	xy.Merge(y)
	return x.Estimate(), y.Estimate(), xy.Estimate(), nil
}

// load checks the encodings bs and takes in their entries: the sparse
// ones decoded, the dense ones folded.
func (sd *unionSide) load(bs [][]byte) error {
	sd.entries, sd.dense, sd.started, sd.ready, sd.counted = sd.entries[:0], false, false, false, false
	for _, b := range bs {
		body, err := checked(b)
		if err != nil {
			return err
		}
		if body[0] == formatDense {
			if err := checkDense(body[1:]); err != nil {
				return err
			}
			sd.start()
			foldDenseRegs(sd.regs, body[1:])
			sd.dense = true
			continue
		}
		n, entries, err := sparseCount(body[1:])
		if err != nil {
			return err
		}
		if sd.entries, err = appendEntries(sd.entries, entries, n); err != nil {
			return err
		}
	}
	return nil
}

// start clears the registers, once per union.
func (sd *unionSide) start() {
	if sd.started {
		return
	}
	if sd.regs == nil {
		sd.regs = new([m]uint8)
	} else {
		clear(sd.regs[:])
	}
	sd.started = true
}

// fold returns the union's registers, folding the sparse entries into
// them the first time.
func (sd *unionSide) fold() *[m]uint8 {
	sd.start()
	if !sd.ready {
		foldList(sd.regs, sd.entries)
		sd.ready = true
	}
	return sd.regs
}

// foldFirst is how many entries make a side fold before it counts: a
// union of that many is most often dense, which the registers alone prove,
// and then counting its indexes would be wasted.
const foldFirst = 16_000

// estimate returns the estimate of the side's union, or false when only
// merging tells whether the union is dense.
func (sd *unionSide) estimate() (uint64, bool) {
	if sd.dense {
		return estimateDense(sd.fold()), true
	}
	if len(sd.entries) > foldFirst {
		h := histogram(sd.fold())
		if surelyDenseHist(&h) {
			sd.dense = true
			return estimateHist(&h), true
		}
	}
	if sd.counted = sd.set.count(sd.entries); !sd.counted {
		return 0, false
	}
	e, dense, ok := settle(sd.set.len(), sd.set.ranked, sd.fold)
	sd.dense = dense
	return e, ok
}
