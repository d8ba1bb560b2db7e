package ratelimit

import (
	"net/netip"
	"testing"
	"time"
)

// A flood of distinct addresses never holds more than the limiter's
// capacity in memory, however long it goes on, and the addresses of the
// flood still meet their budget while they are remembered.
func TestPerAddressMemoryIsBounded(t *testing.T) {
	const capacity = 1000
	l := NewPerAddress(Limit{Requests: 1, Per: time.Hour}, capacity)
	now := time.Date(2026, 8, 14, 9, 0, 0, 0, time.UTC)
	var b [16]byte
	b[0], b[1] = 0x20, 0x01
	for i := range 200_000 {
		// Every address in a /64 of its own: the worst case.
		b[4], b[5], b[6], b[7] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
		addr := netip.AddrFrom16(b)
		if _, limited := l.Take(addr, now); limited {
			t.Fatalf("address %d refused on its first request", i)
		}
		if _, limited := l.Take(addr, now); !limited {
			t.Fatalf("address %d not refused on its second request", i)
		}
		if n := l.Size(); n > capacity {
			t.Fatalf("after %d addresses the limiter holds %d; its capacity is %d", i+1, n, capacity)
		}
	}
}

// Addresses of one IPv6 /64 share a budget; IPv4 addresses and IPv4
// addresses written as IPv6 are one each.
func TestAddrKey(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff"},
		{"192.0.2.1", "::ffff:192.0.2.1"},
	} {
		if AddrKey(netip.MustParseAddr(tc.a)) != AddrKey(netip.MustParseAddr(tc.b)) {
			t.Errorf("%s and %s draw on different budgets", tc.a, tc.b)
		}
	}
	for _, tc := range []struct{ a, b string }{
		{"2001:db8:1:2::1", "2001:db8:1:3::1"},
		{"192.0.2.1", "192.0.2.2"},
	} {
		if AddrKey(netip.MustParseAddr(tc.a)) == AddrKey(netip.MustParseAddr(tc.b)) {
			t.Errorf("%s and %s share a budget", tc.a, tc.b)
		}
	}
}
