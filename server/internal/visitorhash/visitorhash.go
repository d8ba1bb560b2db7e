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

// Salt is one UTC day's secret, ready to hash with: the SipHash-2-4 key
// derived from the day's secret, computed once, so that hashing a visitor
// costs only the hash.
type Salt struct {
	day    int64  // unix seconds of the day's UTC midnight
	k0, k1 uint64 // the 128-bit SipHash key, as its two little-endian words
}

// New returns the Salt of the UTC day holding day, made from secret (the
// store's VisitorSalt).
//
// The key is the first 16 bytes of SHA-256(secret), rather than the
// secret's first 16 bytes: it then depends on every byte of the secret,
// whatever its length (the stores' 32 random bytes, or a caller's other
// length), so secrets that agree on a prefix give unrelated keys, and it
// keeps a full 128 bits of the secret's entropy. SHA-256 is one-way, so
// the key tells nothing more of the secret than the values do. It costs
// one SHA-256 a day.
func New(day time.Time, secret []byte) *Salt {
	key := sha256.Sum256(secret)
	return &Salt{
		day: DayOf(day),
		k0:  binary.LittleEndian.Uint64(key[0:8]),
		k1:  binary.LittleEndian.Uint64(key[8:16]),
	}
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

// sum is the one computation of a visitor value: SipHash-2-4, keyed by
// the salt, over the kind and then each field prefixed by its length as
// a uvarint, so that no two different inputs frame to the same message.
// SipHash is a PRF: without the key, its values can neither be computed
// nor linked to their inputs, which is all the privacy asks of it, at a
// fraction of the cost of HMAC-SHA256 (which it replaced). It is written
// as a stream, over the fields where they lie, and allocates nothing.
func (s *Salt) sum(kind byte, project string, addr []byte, text string) uint64 {
	h := newSipHasher(s.k0, s.k1)
	var head [1 + binary.MaxVarintLen64]byte
	head[0] = kind
	sipWrite(&h, binary.AppendUvarint(head[:1], uint64(len(project))))
	sipWrite(&h, project)
	sipWrite(&h, binary.AppendUvarint(head[:0], uint64(len(addr))))
	sipWrite(&h, addr)
	sipWrite(&h, binary.AppendUvarint(head[:0], uint64(len(text))))
	sipWrite(&h, text)
	return h.sum64()
}
