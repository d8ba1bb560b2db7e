// Package visitorhash computes the value a unique visitor is counted by,
// without cookies and without keeping the visitor's address: a keyed hash
// of the client (address and user agent, or a key a site sends for it)
// under a secret salt that changes every UTC day.
//
// The salt is the whole of the privacy: with it, anyone holding an address
// and a user agent could test whether they visited; without it, a value
// says nothing. The store deletes a day's salt once the day is over, so
// the visitors of past days can no longer be re-identified, even by the
// operator. The value itself lives only in memory, on its way into a
// HyperLogLog sketch; a sketch keeps a few bits of it, never the value.
package visitorhash

import (
	"crypto/sha256"
	"encoding/binary"
	"net/netip"
	"time"
)

// Salt is one UTC day's secret, ready to hash with: HMAC-SHA256's padded
// keys, computed once, so that hashing a visitor needs no allocation.
type Salt struct {
	day          int64 // unix seconds of the day's UTC midnight
	inner, outer [sha256.BlockSize]byte
}

// New returns the Salt of the UTC day holding day, made from secret (the
// store's VisitorSalt).
func New(day time.Time, secret []byte) *Salt {
	s := &Salt{day: DayOf(day)}
	key := secret
	if len(key) > sha256.BlockSize {
		sum := sha256.Sum256(key) // as HMAC treats a long key
		key = sum[:]
	}
	copy(s.inner[:], key)
	copy(s.outer[:], key)
	for i := range s.inner {
		s.inner[i] ^= 0x36
		s.outer[i] ^= 0x5c
	}
	return s
}

// Day returns the start of the salt's UTC day.
func (s *Salt) Day() time.Time { return time.Unix(s.day, 0).UTC() }

// For reports whether the salt is the one of t's UTC day.
func (s *Salt) For(t time.Time) bool { return s != nil && s.day == DayOf(t) }

// DayOf returns the unix seconds of the start of t's UTC day.
func DayOf(t time.Time) int64 {
	u := t.Unix()
	d := u - u%86400
	if u < 0 && u%86400 != 0 {
		d -= 86400
	}
	return d
}

// Client returns the visitor value of a client of project seen with the
// address addr and the user agent userAgent.
func (s *Salt) Client(project string, addr netip.Addr, userAgent string) uint64 {
	a16 := addr.As16()
	a := a16[:0] // an invalid address: no bytes
	switch {
	case addr.Is4():
		a = a16[12:]
	case addr.Is6():
		a = a16[:]
	}
	return s.sum(kindClient, project, a, userAgent)
}

// Key returns the visitor value of a client of project that a site names
// by key (its own session or hashed address).
func (s *Salt) Key(project, key string) uint64 {
	return s.sum(kindKey, project, nil, key)
}

// The kinds of input, hashed first, so that a key can never be taken for
// an address and user agent that frame to the same bytes.
const (
	kindClient = 'c'
	kindKey    = 'k'
)

// stackMessage is what a message may take without leaving the stack: the
// inner key, the framing, a project, an address and a long user agent.
const stackMessage = 1024

// sum is the one computation of a visitor value: the first 8 bytes of
// HMAC-SHA256, keyed by the salt, over the kind and each field prefixed
// by its length. It is HMAC written out over precomputed padded keys,
// because crypto/hmac allocates its hashes on every use.
func (s *Salt) sum(kind byte, project string, addr []byte, text string) uint64 {
	var buf [stackMessage]byte
	msg := append(buf[:0], s.inner[:]...)
	msg = append(msg, kind)
	msg = binary.AppendUvarint(msg, uint64(len(project)))
	msg = append(msg, project...)
	msg = binary.AppendUvarint(msg, uint64(len(addr)))
	msg = append(msg, addr...)
	msg = binary.AppendUvarint(msg, uint64(len(text)))
	msg = append(msg, text...)
	inner := sha256.Sum256(msg)
	var out [sha256.BlockSize + sha256.Size]byte
	copy(out[:], s.outer[:])
	copy(out[sha256.BlockSize:], inner[:])
	sum := sha256.Sum256(out[:])
	return binary.BigEndian.Uint64(sum[:8])
}
