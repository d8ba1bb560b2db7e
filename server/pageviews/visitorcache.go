package pageviews

import (
	"hash/maphash"
	"net/http"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/hll"
)

// The visitor cache spares a returning visitor its SipHash-2-4.
//
// A page view's visitor is SipHash-2-4, under the day's salt, of the
// project, the client's address and its user agent: about 100 ns for a
// browser's user agent (110 bytes), which was the largest part of counting
// a view. The value must stay that hash: it is what the sketches of every
// process and every release hold for the day, so any other function of
// the same visitor would count them twice, once per function, on a day a
// deployment or a mixed fleet runs both. What can be cheaper is finding
// the value again: a reader's views come in runs (the pages of a visit),
// so the cache keeps the values last computed, each under a fingerprint
// of its inputs that the runtime's string hash (maphash, over ten times
// faster than SipHash on a user agent) computes.
//
// The fingerprint is keyed, like the value: by a seed drawn at random for
// each day's salt (saltSet.seeds), never stored nor sent, and dropped
// with the salt, when the cache is cleared too (refreshSalts). So the cache
// holds nothing that identifies a client that the process does not
// already hold, the salt itself, and once a day's salt is gone nothing
// that a client can be tested against (a request in flight may write one
// more entry of that day, under the seed and salt dropped).
// Clients cannot make fingerprints collide without the seed; a lookup
// finds another input's value with a chance of 2^-63 (a fingerprint has 63
// random bits), and then one view's visitor is counted as another's, an
// error far below the sketches' own.
//
// It is a direct-mapped table, each slot holding one value and a tag,
// written and read with atomics and no lock: the tag is the fingerprint
// xor the value, so that a slot read half-written (its tag of one write,
// its value of another) matches no fingerprint, but with the same chance,
// rather than pairing a fingerprint with another's value. Its memory is
// fixed: 16 bytes a slot, 64 KiB.
type visitorCache struct {
	slots [1 << visitorCacheBits]visitorSlot
}

// visitorCacheBits sizes the cache: 4,096 slots, so that a client's next
// view finds its value unless thousands of other clients came in between
// (minutes of a busy documentation site), and clearing it once a day
// takes microseconds.
const visitorCacheBits = 12

type visitorSlot struct{ tag, value atomic.Uint64 }

// slot returns the slot of fingerprint fp: by its top bits, since the
// bottom one is always set (see fingerprint).
func (c *visitorCache) slot(fp uint64) *visitorSlot {
	return &c.slots[fp>>(64-visitorCacheBits)]
}

// get returns the value cached for fp, if any.
func (c *visitorCache) get(fp uint64) (uint64, bool) {
	s := c.slot(fp)
	v := s.value.Load()
	return v, s.tag.Load()^v == fp
}

// put caches v as the value of fp, in place of what its slot held.
func (c *visitorCache) put(fp, v uint64) {
	s := c.slot(fp)
	s.tag.Store(fp ^ v)
	s.value.Store(v)
}

// clear forgets every value.
func (c *visitorCache) clear() {
	for i := range c.slots {
		c.slots[i].tag.Store(0)
		c.slots[i].value.Store(0)
	}
}

// fingerprint identifies a visitor's inputs under the seed of a day's
// salt: the project, the client (clientHash, a hash under the same seed)
// and the user agent. Each input is hashed apart, and the hashes chained
// through a bijective mixer, so that inputs differing in one part give
// different fingerprints but by a collision of the seeded hash. The bottom
// bit is set: an empty slot (tag and value 0) matches no fingerprint.
func fingerprint(seed maphash.Seed, project string, clientHash uint64, userAgent string) uint64 {
	h := hll.Mix64(maphash.String(seed, project))
	h = hll.Mix64(h ^ clientHash)
	return (h ^ maphash.String(seed, userAgent)) | 1
}

// requestVisitor returns the visitor value of req's client, seen with the
// user agent userAgent, of project at the time at; false when no salt is
// held for at's day (counted in Stats.NoSalt). It is visitorOf of the
// client's address, found in the cache when the client was seen lately.
//
// When no proxy is trusted, the client's address is a function of
// req.RemoteAddr alone, so the raw string is fingerprinted and parsed
// only on a miss: a visitor reading on one connection is found without
// parsing. Behind trusted proxies, the address must be found first
// (clientip reads the forwarding headers); its bytes are fingerprinted.
func (r *Recorder) requestVisitor(project string, at time.Time, req *http.Request, userAgent string) (uint64, bool) {
	ss := r.salts.Load()
	i := ss.index(at)
	if i < 0 {
		r.stats.noSalt.Add(1)
		return 0, false
	}
	var addr netip.Addr
	if r.proxied {
		addr = r.proxies.Addr(req)
	}
	fp := r.clientFingerprint(ss.seeds[i], project, req, addr, userAgent)
	if v, ok := r.visCache.get(fp); ok {
		return v, true
	}
	if !r.proxied {
		addr = r.proxies.Addr(req)
	}
	v := ss.salts[i].Client(project, addr, userAgent)
	r.visCache.put(fp, v)
	return v, true
}

// clientFingerprint is the fingerprint of req's client under seed: of its
// RemoteAddr when no proxy is trusted, else of addr, the address found
// behind the proxies (its bytes and its length: an IPv4 address and the
// same one mapped into IPv6 are two values to visitorhash).
func (r *Recorder) clientFingerprint(seed maphash.Seed, project string, req *http.Request, addr netip.Addr, userAgent string) uint64 {
	if !r.proxied {
		return fingerprint(seed, project, maphash.String(seed, req.RemoteAddr), userAgent)
	}
	var b [17]byte
	a := addr.As16()
	copy(b[:], a[:])
	b[16] = byte(addr.BitLen() >> 5) // 0, 1 or 4: none, IPv4, IPv6
	return fingerprint(seed, project, maphash.Bytes(seed, b[:]), userAgent)
}
