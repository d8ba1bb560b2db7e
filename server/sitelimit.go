package server

import (
	"math"
	"net/netip"
	"sync"
	"time"
)

// addrLimiter is a token bucket per client address for the public site
// endpoints, whose memory is bounded whatever the number of addresses: a
// flood from a botnet, or of forged IPv6 addresses, must not grow it.
//
// Buckets live in two generations of at most capacity/2 each. A bucket is
// looked up in the current one, then in the old one (and moved to the
// current); when the current one is full it becomes the old one, and the
// previous old one is dropped. An address is thus forgotten only once
// capacity/2 other addresses came after its last request, and a forgotten
// address starts again with a full budget, which is what a new reader
// gets anyway. That costs O(1) a request, with no list to keep in order.
//
// IPv6 clients are limited per /64, the block a single subscriber
// usually holds, so that one client cannot pick a fresh address for each
// request.
type addrLimiter struct {
	perSecond float64
	burst     float64
	half      int // the most buckets of a generation

	mu       sync.Mutex
	cur, old map[netip.Prefix]addrBucket
}

// addrBucket is the budget of one address: tokens left as of at.
type addrBucket struct {
	tokens float64
	at     time.Time
}

func newAddrLimiter(l Limit, capacity int) *addrLimiter {
	half := max(capacity/2, 1)
	return &addrLimiter{
		perSecond: float64(l.Requests) / l.Per.Seconds(),
		burst:     float64(l.Requests),
		half:      half,
		cur:       make(map[netip.Prefix]addrBucket),
		old:       make(map[netip.Prefix]addrBucket),
	}
}

// addrKey is the budget an address draws on: its own for IPv4, its /64
// for IPv6. A request without an address (some tests) shares the zero key.
func addrKey(a netip.Addr) netip.Prefix {
	a = a.Unmap()
	switch {
	case a.Is4():
		return netip.PrefixFrom(a, 32)
	case a.Is6():
		p, _ := a.Prefix(64)
		return p
	}
	return netip.Prefix{}
}

// take spends a token of addr's budget at now, or reports how long until
// one is free. A refused request spends nothing.
func (l *addrLimiter) take(addr netip.Addr, now time.Time) (time.Duration, bool) {
	key := addrKey(addr)
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.cur[key]
	if !ok {
		if b, ok = l.old[key]; ok {
			delete(l.old, key)
		} else {
			b = addrBucket{tokens: l.burst, at: now}
		}
		if len(l.cur) >= l.half {
			l.old, l.cur = l.cur, make(map[netip.Prefix]addrBucket, l.half)
		}
	}
	if elapsed := now.Sub(b.at); elapsed > 0 {
		b.tokens = math.Min(l.burst, b.tokens+elapsed.Seconds()*l.perSecond)
		b.at = now
	}
	if b.tokens < 1 {
		l.cur[key] = b
		return time.Duration((1 - b.tokens) / l.perSecond * float64(time.Second)), true
	}
	b.tokens--
	l.cur[key] = b
	return 0, false
}

// size returns the number of addresses whose budgets are remembered.
func (l *addrLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.cur) + len(l.old)
}
