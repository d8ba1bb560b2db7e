// Package ratelimit holds the server's token buckets: Limit, the budget of
// an API key or a client address, and PerAddress, the budgets of client
// addresses in bounded memory (the public site endpoints, the dashboard's
// sign-in).
package ratelimit

import (
	"math"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// Limit allows Requests per Per, with bursts up to Requests.
type Limit struct {
	Requests int
	Per      time.Duration
}

// Off reports whether l is the zero Limit, which limits nothing.
func (l Limit) Off() bool { return l.Requests == 0 && l.Per == 0 }

// RetryAfter is the Retry-After of a wait of d: whole seconds, rounded up,
// so that a client that waits as told finds a token.
func RetryAfter(d time.Duration) string {
	return strconv.Itoa(int(math.Ceil(d.Seconds())))
}

// PerAddress is a token bucket per client address, whose memory is bounded whatever the number of addresses: a
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
type PerAddress struct {
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

// NewPerAddress returns budgets of l per address, for up to capacity
// addresses at once.
func NewPerAddress(l Limit, capacity int) *PerAddress {
	half := max(capacity/2, 1)
	return &PerAddress{
		perSecond: float64(l.Requests) / l.Per.Seconds(),
		burst:     float64(l.Requests),
		half:      half,
		cur:       make(map[netip.Prefix]addrBucket),
		old:       make(map[netip.Prefix]addrBucket),
	}
}

// AddrKey is the budget an address draws on: its own for IPv4, its /64
// for IPv6. A request without an address (some tests) shares the zero key.
func AddrKey(a netip.Addr) netip.Prefix {
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

// Take spends a token of addr's budget at now, or reports how long until
// one is free. A refused request spends nothing.
func (l *PerAddress) Take(addr netip.Addr, now time.Time) (time.Duration, bool) {
	key := AddrKey(addr)
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

// Size returns the number of addresses whose budgets are remembered.
func (l *PerAddress) Size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.cur) + len(l.old)
}
