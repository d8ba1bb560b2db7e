package site

import (
	"net/netip"
	"testing"
	"time"
)

func testShares(capacity int) *shares {
	return newShares(Limits{MaxAddresses: capacity,
		MaxFeedbackPerAddress: 2, MaxFeedbackPerNetwork: 5, MaxQueriesPerAddress: 2, MaxQueriesPerNetwork: 5})
}

// A flood of distinct addresses, each in a network of its own (the worst
// case: forged IPv6 /48s behind a proxy, or a botnet), never holds more
// than the tables' capacity in memory, and past it the addresses share
// one allowance: they gain one network's share in all, not one each.
func TestSiteSharesMemoryIsBoundedAndPooled(t *testing.T) {
	const capacity = 1000
	s := testShares(capacity)
	now := time.Date(2026, 8, 14, 9, 0, 0, 0, time.UTC)
	var b [16]byte
	b[0], b[1] = 0x20, 0x01
	taken := 0
	for i := range 200_000 {
		b[2], b[3], b[4], b[5] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
		if _, refused := s.take("p", shareFeedback, netip.AddrFrom16(b), now); refused == shareTaken {
			taken++
		}
		if n := s.size(); n > 2*capacity {
			t.Fatalf("after %d addresses the shares hold %d entries; the bound is %d", i+1, n, 2*capacity)
		}
	}
	// capacity addresses of their own networks took a unit each (the
	// network table fills with them); the rest share the overflow
	// network's allowance, and within it one address's.
	if want := capacity + 2; taken != want {
		t.Errorf("the flood took %d units, want %d", taken, want)
	}
}

// A unit given back is as if never taken, and an entry back at zero is
// dropped; a hold of yesterday is not given back to today.
func TestSiteSharesRelease(t *testing.T) {
	s := testShares(10)
	now := time.Date(2026, 8, 14, 9, 0, 0, 0, time.UTC)
	a := netip.MustParseAddr("192.0.2.1")
	h1, r1 := s.take("p", shareSearches, a, now)
	h2, r2 := s.take("p", shareSearches, a, now)
	if r1 != shareTaken || r2 != shareTaken {
		t.Fatal(r1, r2)
	}
	if _, r := s.take("p", shareSearches, a, now); r != shareAddress {
		t.Fatalf("a third unit: %v, want the address's share", r)
	}
	s.release(h2)
	if _, r := s.take("p", shareSearches, a, now); r != shareTaken {
		t.Fatalf("after giving one back: %v, want taken", r)
	}
	s.release(h1)
	if n := s.size(); n != 2 {
		t.Fatalf("%d entries, want the address's and its network's", n)
	}
	// Kinds and projects have shares of their own.
	if _, r := s.take("p", shareFeedback, a, now); r != shareTaken {
		t.Errorf("feedback: %v", r)
	}
	if _, r := s.take("q", shareSearches, a, now); r != shareTaken {
		t.Errorf("another project: %v", r)
	}
	h, _ := s.take("r", shareSearches, a, now)
	s.release(h)
	if n := s.size(); n != 6 {
		t.Errorf("%d entries, want 6: a unit given back leaves none", n)
	}
	// Tomorrow starts from zero, and yesterday's holds are gone with it.
	tomorrow := now.Add(15 * time.Hour)
	if _, r := s.take("p", shareSearches, a, tomorrow); r != shareTaken {
		t.Errorf("tomorrow's first unit: %v", r)
	}
	s.release(h1)
	if _, r := s.take("p", shareSearches, a, tomorrow); r != shareTaken {
		t.Errorf("tomorrow's second unit: %v", r)
	}
	if _, r := s.take("p", shareSearches, a, tomorrow); r != shareAddress {
		t.Errorf("tomorrow's third unit: %v, want refused (yesterday's release must not count)", r)
	}
}

// The network of an address is its /24 or /48, IPv4 written as IPv6
// included.
func TestNetKey(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"192.0.2.1", "192.0.2.254"},
		{"192.0.2.1", "::ffff:192.0.2.9"},
		{"2001:db8:1:2::1", "2001:db8:1:ffff::1"},
	} {
		if netKey(netip.MustParseAddr(tc.a)) != netKey(netip.MustParseAddr(tc.b)) {
			t.Errorf("%s and %s are in different networks", tc.a, tc.b)
		}
	}
	for _, tc := range []struct{ a, b string }{
		{"192.0.2.1", "192.0.3.1"},
		{"2001:db8:1::1", "2001:db8:2::1"},
	} {
		if netKey(netip.MustParseAddr(tc.a)) == netKey(netip.MustParseAddr(tc.b)) {
			t.Errorf("%s and %s are in one network", tc.a, tc.b)
		}
	}
}
