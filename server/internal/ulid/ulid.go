// Package ulid makes and checks ULIDs: 26 characters of Crockford's base 32
// holding a millisecond time and 80 random bits. The assistant exports name
// conversations and threads by them, as the hosted service does; IDs made
// later sort after earlier ones as strings, which is what the exports'
// cursors rely on.
package ulid

import (
	"crypto/rand"
	"time"
)

// Length is a ULID's length in characters.
const Length = 26

// alphabet is Crockford's base 32: no I, L, O or U.
const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// New returns a ULID for time t with random bits from crypto/rand. Two IDs
// of the same millisecond are ordered by chance, not by call: exports order
// by ID, so such a pair may list in either order, as the hosted ones may.
func New(t time.Time) string {
	var b [16]byte
	ms := uint64(t.UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	rand.Read(b[6:]) // never fails (crypto/rand's contract since Go 1.24)
	return encode(b)
}

// encode writes the 128 bits of b as 26 characters, five bits each, the
// first character holding the top three.
func encode(b [16]byte) string {
	var out [Length]byte
	// hi holds bits 127..64, lo bits 63..0.
	var hi, lo uint64
	for i := 0; i < 8; i++ {
		hi = hi<<8 | uint64(b[i])
		lo = lo<<8 | uint64(b[8+i])
	}
	for i := Length - 1; i >= 0; i-- {
		out[i] = alphabet[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

// Valid reports whether s is a ULID as New writes them: 26 characters of
// the upper-case alphabet, the first at most '7' (the time's top bits).
// Lower case is refused rather than folded so that one ULID has one
// spelling, and the exports' cursors compare as strings.
func Valid(s string) bool {
	if len(s) != Length || s[0] > '7' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if indexOf(s[i]) < 0 {
			return false
		}
	}
	return true
}

// Time returns the millisecond time a valid ULID holds.
func Time(s string) time.Time {
	var ms int64
	for i := 0; i < 10; i++ {
		ms = ms<<5 | int64(indexOf(s[i]))
	}
	return time.UnixMilli(ms).UTC()
}

func indexOf(c byte) int {
	for i := 0; i < len(alphabet); i++ {
		if alphabet[i] == c {
			return i
		}
	}
	return -1
}
