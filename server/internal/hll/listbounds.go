package hll

// A merge need not build the union's sorted list to learn whether the
// union is dense: bounds on the list's encoded length, from the union's
// registers and the number of its distinct indexes, settle it for all but
// unions near the threshold, and folding entries into registers or
// counting them costs a fraction of merging sorted runs.
//
// The lower bound. Each register that is not 0 holds at least one entry of the
// list; take the first entry of each (the one of its smallest index).
// These entries are distinct, and each is encoded in at least one byte. A
// register's value v tells more about its entries: while v is at most 10
// it is 1 plus the leading zeros of the largest entry's low 10 index bits,
// and so every entry of the register has low bits of at least 2^(10-v).
// The first entry's gap to the entry before it, which lies in an earlier
// register, is then at least 2^(10-v): at least 128 for v of 3 or less,
// which takes two bytes as a uvarint. And a value above 10 needs an entry
// whose low 10 bits are 0, the first of its register, with its rank byte.
// So the list takes at least one byte per register that is not 0, one more
// for each at 1 to 3 or above 10, and its header and checksum. Registers
// at 1 to 3 are 7 in 8 of those that are not 0, so the bound is about 1.9
// bytes per occupied register, and it proves a union dense from about
// 19,000 items (the list turns dense at about 16,500).

// surelyDense reports whether every list of entries that folds to the
// registers r encodes longer than r does: a merge whose union's registers
// are r then ends dense.
func surelyDense(r *[m]uint8) bool {
	h := histogram(r)
	return surelyDenseHist(&h)
}

// surelyDenseHist is surelyDense of registers whose histogram is h.
func surelyDenseHist(h *[maxRank + 1]float64) bool {
	occupied := m - int(h[0])
	// The format byte, the count of at least occupied entries, the
	// checksum, and a byte an occupied register.
	atLeast := 1 + uvarintLen(uint32(occupied)) + trailerLen + occupied
	for v := 1; v <= maxRank; v++ {
		if v <= 3 || v > extra {
			atLeast += int(h[v])
		}
	}
	return atLeast > denseLenOf(h)
}

// denseLenOf is denseLen of registers whose histogram is h.
func denseLenOf(h *[maxRank + 1]float64) int {
	base := 0
	for base < maxRank && h[base] == 0 {
		base++
	}
	n := minDenseLen
	for v := base + overflow; v <= maxRank; v++ {
		n += int(h[v])
	}
	return n
}

// maxSparseLen is the most bytes a list of n entries, ranked of them with
// a rank byte, can encode to. Each gap takes one byte, a second from 2^7
// on, a third from 2^14 and a fourth from 2^21; and since the gaps add up
// to less than 2^sp, at most 2^(sp-7) of them can take a second byte, and
// so on.
func maxSparseLen(n, ranked int) int {
	l := 1 + uvarintLen(uint32(min(n, 1<<sp))) + trailerLen + n + ranked
	for _, bits := range [...]int{7, 14, 21} {
		l += min(n, 1<<(sp-bits))
	}
	return l
}

// sparseLenRange returns bounds on the encoded length of a list of n
// entries with distinct indexes, ranked of them with a rank byte, whose
// registers are r: tighter than surelyDense's and maxSparseLen, for the
// unions near the threshold, at the price of a pass over the registers.
// Each entry lies within its register's 1,024 indexes, so the first entry
// of a register lies (d-1)*1,024+lo to (d+1)*1,024 past the entry before
// it, d being the distance to the previous register that is not 0 (to
// register -1 for the first) and lo the least low bits the register's
// value allows (see the lower bound above); each other entry of a register
// takes one or two bytes; and an entry with a rank byte is the first of
// its register.
func sparseLenRange(r *[m]uint8, n, ranked int) (least, most int) {
	head := 1 + uvarintLen(uint32(min(n, 1<<sp))) + trailerLen + ranked
	least, most = head, head
	occupied, prev := 0, -1
	for i, v := range r {
		if v == 0 {
			continue
		}
		d := uint32(i - prev)
		lo := uint32(0)
		if v <= extra {
			lo = 1 << (extra - v)
		}
		least += uvarintLen((d-1)<<extra + lo)
		most += uvarintLen((d + 1) << extra)
		occupied++
		prev = i
	}
	return least + n - occupied, most + 2*(n-occupied)
}

// settle decides by bounds whether a union of sparse encodings, whose list
// would hold n distinct indexes, ranked of them with a rank byte, is
// dense, and returns its estimate; ok is false when only merging tells.
// fold returns the union's registers, made only if a bound needs them.
func settle(n, ranked int, fold func() *[m]uint8) (est uint64, dense, ok bool) {
	most := maxSparseLen(n, ranked)
	if most <= minDenseLen {
		return linearCount(n), false, true
	}
	r := fold()
	dl := denseLen(r)
	if most <= dl {
		return linearCount(n), false, true
	}
	h := histogram(r)
	if surelyDenseHist(&h) {
		return estimateHist(&h), true, true
	}
	switch least, most := sparseLenRange(r, n, ranked); {
	case most <= dl:
		return linearCount(n), false, true
	case least > dl:
		return estimateHist(&h), true, true
	}
	return 0, false, false
}
