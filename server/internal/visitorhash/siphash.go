package visitorhash

import "math/bits"

// SipHash-2-4, written from its specification (Aumasson and Bernstein,
// "SipHash: a fast short-input PRF", 2012): a PRF keyed by 128 bits,
// made for exactly this, hashing short inputs under a secret key. The
// standard library has none. It is written here as a stream, so that the
// fields of a visitor need not be copied into one buffer first.

// sipState is SipHash's four words of internal state; four words, so that
// the compiler keeps them in registers.
type sipState struct{ v0, v1, v2, v3 uint64 }

// newSipState initialises the state from the key k0 || k1, each word read
// little-endian from the 16 key bytes.
func newSipState(k0, k1 uint64) sipState {
	return sipState{
		v0: k0 ^ 0x736f6d6570736575, // "somepseu"
		v1: k1 ^ 0x646f72616e646f6d, // "dorandom"
		v2: k0 ^ 0x6c7967656e657261, // "lygenera"
		v3: k1 ^ 0x7465646279746573, // "tedbytes"
	}
}

// sipRound is one SipRound.
func sipRound(v0, v1, v2, v3 uint64) (uint64, uint64, uint64, uint64) {
	v0 += v1
	v1 = bits.RotateLeft64(v1, 13)
	v1 ^= v0
	v0 = bits.RotateLeft64(v0, 32)
	v2 += v3
	v3 = bits.RotateLeft64(v3, 16)
	v3 ^= v2
	v0 += v3
	v3 = bits.RotateLeft64(v3, 21)
	v3 ^= v0
	v2 += v1
	v1 = bits.RotateLeft64(v1, 17)
	v1 ^= v2
	v2 = bits.RotateLeft64(v2, 32)
	return v0, v1, v2, v3
}

// sipCompress takes in the message word m with two SipRounds (the "2" of
// SipHash-2-4).
func sipCompress(s sipState, m uint64) sipState {
	v0, v1, v2, v3 := s.v0, s.v1, s.v2, s.v3^m
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	return sipState{v0 ^ m, v1, v2, v3}
}

// sipBlocks compresses each whole 8-byte word of p, read little-endian,
// and returns the bytes left over: sipCompress written out in the loop,
// so that the state stays in registers.
func sipBlocks[T string | []byte](s sipState, p T) (sipState, T) {
	v0, v1, v2, v3 := s.v0, s.v1, s.v2, s.v3
	for len(p) >= 8 {
		m := uint64(p[0]) | uint64(p[1])<<8 | uint64(p[2])<<16 | uint64(p[3])<<24 |
			uint64(p[4])<<32 | uint64(p[5])<<40 | uint64(p[6])<<48 | uint64(p[7])<<56
		v3 ^= m
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
		v0 ^= m
		p = p[8:]
	}
	return sipState{v0, v1, v2, v3}, p
}

// sipHasher is SipHash-2-4 over a message written in pieces.
type sipHasher struct {
	s     sipState
	tail  uint64 // the bytes not yet in a whole word, the first lowest
	ntail uint   // how many: 0 to 7
	n     uint64 // the message's length so far
}

func newSipHasher(k0, k1 uint64) sipHasher {
	return sipHasher{s: newSipState(k0, k1)}
}

// sipWrite appends p to the message.
func sipWrite[T string | []byte](h *sipHasher, p T) {
	h.n += uint64(len(p))
	if h.ntail > 0 {
		for len(p) > 0 && h.ntail < 8 {
			h.tail |= uint64(p[0]) << (8 * h.ntail)
			h.ntail++
			p = p[1:]
		}
		if h.ntail < 8 {
			return
		}
		h.s = sipCompress(h.s, h.tail)
		h.tail, h.ntail = 0, 0
	}
	h.s, p = sipBlocks(h.s, p)
	for i := range len(p) {
		h.tail |= uint64(p[i]) << (8 * uint(i))
	}
	h.ntail = uint(len(p))
}

// sum64 returns SipHash-2-4 of the message written: the last word holds
// the bytes left over and, in its top byte, the length modulo 256; then
// four SipRounds (the "4") after v2 ^= 0xff. The eight bytes the
// specification outputs are the result, little-endian.
func (h *sipHasher) sum64() uint64 {
	s := sipCompress(h.s, h.tail|h.n<<56)
	v0, v1, v2, v3 := s.v0, s.v1, s.v2^0xff, s.v3
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	return v0 ^ v1 ^ v2 ^ v3
}
