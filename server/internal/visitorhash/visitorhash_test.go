package visitorhash

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"
	"time"
)

var (
	day    = time.Date(2026, 8, 14, 0, 0, 0, 0, time.UTC)
	secret = []byte("0123456789abcdef0123456789abcdef")
	addr4  = netip.MustParseAddr("192.0.2.7")
	addr6  = netip.MustParseAddr("2001:db8::7")
	ua     = "Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0"
)

// reference is HMAC-SHA256 through crypto/hmac over the documented framing.
func reference(key []byte, kind byte, project string, addr []byte, text string) uint64 {
	mac := hmac.New(sha256.New, key)
	msg := []byte{kind}
	msg = binary.AppendUvarint(msg, uint64(len(project)))
	msg = append(msg, project...)
	msg = binary.AppendUvarint(msg, uint64(len(addr)))
	msg = append(msg, addr...)
	msg = binary.AppendUvarint(msg, uint64(len(text)))
	msg = append(msg, text...)
	mac.Write(msg)
	return binary.BigEndian.Uint64(mac.Sum(nil)[:8])
}

func TestSumIsHMAC(t *testing.T) {
	long := strings.Repeat("a long user agent ", 100) // past the stack buffer
	longKey := []byte(strings.Repeat("k", 100))       // past a block: hashed first
	for _, c := range []struct {
		name string
		key  []byte
		got  func(*Salt) uint64
		want func([]byte) uint64
	}{
		{"ipv4", secret, func(s *Salt) uint64 { return s.Client("docs", addr4, ua) },
			func(k []byte) uint64 { return reference(k, kindClient, "docs", addr4.AsSlice(), ua) }},
		{"ipv6", secret, func(s *Salt) uint64 { return s.Client("docs", addr6, ua) },
			func(k []byte) uint64 { return reference(k, kindClient, "docs", addr6.AsSlice(), ua) }},
		{"no address", secret, func(s *Salt) uint64 { return s.Client("docs", netip.Addr{}, ua) },
			func(k []byte) uint64 { return reference(k, kindClient, "docs", nil, ua) }},
		{"long user agent", secret, func(s *Salt) uint64 { return s.Client("docs", addr4, long) },
			func(k []byte) uint64 { return reference(k, kindClient, "docs", addr4.AsSlice(), long) }},
		{"key", secret, func(s *Salt) uint64 { return s.Key("docs", "session-1") },
			func(k []byte) uint64 { return reference(k, kindKey, "docs", nil, "session-1") }},
		{"long secret", longKey, func(s *Salt) uint64 { return s.Key("docs", "session-1") },
			func(k []byte) uint64 { return reference(k, kindKey, "docs", nil, "session-1") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, want := c.got(New(day, c.key)), c.want(c.key); got != want {
				t.Errorf("got %#x, want HMAC-SHA256's %#x", got, want)
			}
		})
	}
}

// Inputs that differ in any field, or only in where one field ends and
// the next begins, give different values; so do salts.
func TestSumSeparatesInputs(t *testing.T) {
	s := New(day, secret)
	seen := map[uint64]string{}
	for name, v := range map[string]uint64{
		"base":                 s.Client("docs", addr4, ua),
		"other project":        s.Client("blog", addr4, ua),
		"other address":        s.Client("docs", netip.MustParseAddr("192.0.2.8"), ua),
		"ipv4 as ipv6":         s.Client("docs", netip.AddrFrom16(addr4.As16()), ua),
		"other user agent":     s.Client("docs", addr4, ua+" "),
		"project eats a byte":  s.Client("docsx", addr4, ua[1:]),
		"key of the same text": s.Key("docs", ua),
		"key":                  s.Key("docs", "a"),
		"key, other project":   s.Key("doc", "sa"),
		"other secret":         New(day, []byte("another secret of thirty-two by")).Client("docs", addr4, ua),
	} {
		if prev, dup := seen[v]; dup {
			t.Errorf("%s and %s give the same value %#x", name, prev, v)
		}
		seen[v] = name
	}
}

func TestDay(t *testing.T) {
	s := New(day.Add(23*time.Hour+59*time.Minute), secret)
	if !s.Day().Equal(day) {
		t.Errorf("Day() = %v, want %v", s.Day(), day)
	}
	for _, c := range []struct {
		at   time.Time
		want bool
	}{
		{day, true},
		{day.Add(24*time.Hour - time.Nanosecond), true},
		{day.Add(24 * time.Hour), false},
		{day.Add(-time.Nanosecond), false},
		{day.In(time.FixedZone("UTC+10", 10*3600)), true},
	} {
		if got := s.For(c.at); got != c.want {
			t.Errorf("For(%v) = %v, want %v", c.at, got, c.want)
		}
	}
	var none *Salt
	if none.For(day) {
		t.Error("a nil Salt is for some day")
	}
	if got, want := DayOf(time.Unix(-1, 0)), int64(-86400); got != want {
		t.Errorf("DayOf(1969-12-31T23:59:59Z) = %d, want %d", got, want)
	}
}

func TestSumAllocatesNothing(t *testing.T) {
	s := New(day, secret)
	if n := testing.AllocsPerRun(100, func() { s.Client("docs", addr6, ua) }); n != 0 {
		t.Errorf("Client allocates %.0f times, want 0", n)
	}
}

func BenchmarkClient(b *testing.B) {
	s := New(day, secret)
	chrome := "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	b.ReportAllocs()
	for b.Loop() {
		s.Client("docs", addr4, chrome)
	}
}
