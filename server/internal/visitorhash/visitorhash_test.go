package visitorhash

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
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

// sipVectors are the SipHash-2-4 test vectors of the paper's appendix (and
// of the authors' reference implementation, vectors.h): vector i is the
// 8-byte output, as bytes, for the key 00 01 .. 0f and the i-byte message
// 00 01 .. i-1.
var sipVectors = [64]string{
	"310e0edd47db6f72", "fd67dc93c539f874", "5a4fa9d909806c0d", "2d7efbd796666785",
	"b7877127e09427cf", "8da699cd64557618", "cee3fe586e46c9cb", "37d1018bf50002ab",
	"6224939a79f5f593", "b0e4a90bdf82009e", "f3b9dd94c5bb5d7a", "a7ad6b22462fb3f4",
	"fbe50e86bc8f1e75", "903d84c02756ea14", "eef27a8e90ca23f7", "e545be4961ca29a1",
	"db9bc2577fcc2a3f", "9447be2cf5e99a69", "9cd38d96f0b3c14b", "bd6179a71dc96dbb",
	"98eea21af25cd6be", "c7673b2eb0cbf2d0", "883ea3e395675393", "c8ce5ccd8c030ca8",
	"94af49f6c650adb8", "eab8858ade92e1bc", "f315bb5bb835d817", "adcf6b0763612e2f",
	"a5c91da7acaa4dde", "716595876650a2a6", "28ef495c53a387ad", "42c341d8fa92d832",
	"ce7cf2722f512771", "e37859f94623f3a7", "381205bb1ab0e012", "ae97a10fd434e015",
	"b4a31508beff4d31", "81396229f0907902", "4d0cf49ee5d4dcca", "5c73336a76d8bf9a",
	"d0a704536ba93e0e", "925958fcd6420cad", "a915c29bc8067318", "952b79f3bc0aa6d4",
	"f21df2e41d4535f9", "87577519048f53a9", "10a56cf5dfcd9adb", "eb75095ccd986cd0",
	"51a9cb9ecba312e6", "96afadfc2ce666c7", "72fe52975a4364ee", "5a1645b276d592a1",
	"b274cb8ebf87870a", "6f9bb4203de7b381", "eaecb2a30b22a87f", "9924a43cc1315724",
	"bd838d3aafbf8db7", "0b1a2a3265d51aea", "135079a3231ce660", "932b2846e4d70666",
	"e1915f5cb1eca46c", "f325965ca16d629f", "575ff28e60381be5", "724506eb4c328a95",
}

// sipVector returns the key's words, the message and the expected value of
// vector i.
func sipVector(t *testing.T, i int) (k0, k1 uint64, msg []byte, want uint64) {
	t.Helper()
	var key [16]byte
	for j := range key {
		key[j] = byte(j)
	}
	msg = make([]byte, i)
	for j := range msg {
		msg[j] = byte(j)
	}
	out, err := hex.DecodeString(sipVectors[i])
	if err != nil || len(out) != 8 {
		t.Fatalf("vector %d: %q is not 8 bytes of hex", i, sipVectors[i])
	}
	return binary.LittleEndian.Uint64(key[:8]), binary.LittleEndian.Uint64(key[8:]),
		msg, binary.LittleEndian.Uint64(out)
}

func TestSipHashVectors(t *testing.T) {
	for i := range sipVectors {
		k0, k1, msg, want := sipVector(t, i)
		h := newSipHasher(k0, k1)
		sipWrite(&h, msg)
		if got := h.sum64(); got != want {
			t.Errorf("vector %d: got %#016x, want %#016x", i, got, want)
		}
	}
}

// The message may come in any pieces, of either type, at any boundaries.
func TestSipHashPieces(t *testing.T) {
	for i := range sipVectors {
		k0, k1, msg, want := sipVector(t, i)
		for a := 0; a <= len(msg); a++ {
			for b := a; b <= len(msg); b++ {
				h := newSipHasher(k0, k1)
				sipWrite(&h, msg[:a])
				sipWrite(&h, string(msg[a:b]))
				sipWrite(&h, msg[b:b]) // an empty piece changes nothing
				sipWrite(&h, msg[b:])
				if got := h.sum64(); got != want {
					t.Fatalf("vector %d in pieces [:%d] [%d:%d] [%d:]: got %#016x, want %#016x",
						i, a, a, b, b, got, want)
				}
			}
		}
	}
}

// reference is SipHash-2-4 over the documented framing, built whole and
// hashed at once, keyed by the first 16 bytes of SHA-256(secret).
func reference(secret []byte, kind byte, project string, addr []byte, text string) uint64 {
	key := sha256.Sum256(secret)
	msg := []byte{kind}
	msg = binary.AppendUvarint(msg, uint64(len(project)))
	msg = append(msg, project...)
	msg = binary.AppendUvarint(msg, uint64(len(addr)))
	msg = append(msg, addr...)
	msg = binary.AppendUvarint(msg, uint64(len(text)))
	msg = append(msg, text...)
	h := newSipHasher(binary.LittleEndian.Uint64(key[:8]), binary.LittleEndian.Uint64(key[8:16]))
	sipWrite(&h, msg)
	return h.sum64()
}

func TestSumIsSipHashOfFraming(t *testing.T) {
	long := strings.Repeat("a long user agent ", 100) // a length of two uvarint bytes
	longKey := []byte(strings.Repeat("k", 100))
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
		{"empty fields", secret, func(s *Salt) uint64 { return s.Client("", netip.Addr{}, "") },
			func(k []byte) uint64 { return reference(k, kindClient, "", nil, "") }},
		{"key", secret, func(s *Salt) uint64 { return s.Key("docs", "session-1") },
			func(k []byte) uint64 { return reference(k, kindKey, "docs", nil, "session-1") }},
		{"long secret", longKey, func(s *Salt) uint64 { return s.Key("docs", "session-1") },
			func(k []byte) uint64 { return reference(k, kindKey, "docs", nil, "session-1") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, want := c.got(New(day, c.key)), c.want(c.key); got != want {
				t.Errorf("got %#x, want SipHash-2-4's %#x", got, want)
			}
		})
	}
}

// The same input under the same salt gives the same value, from a Salt
// made again from the same secret, at any time of the day.
func TestSumIsDeterministic(t *testing.T) {
	a, b := New(day, secret), New(day.Add(23*time.Hour), append([]byte(nil), secret...))
	if x, y := a.Client("docs", addr4, ua), b.Client("docs", addr4, ua); x != y {
		t.Errorf("Client: %#x, then %#x", x, y)
	}
	if x, y := a.Key("docs", "session-1"), b.Key("docs", "session-1"); x != y {
		t.Errorf("Key: %#x, then %#x", x, y)
	}
}

// Inputs that differ in any field, or only in where one field ends and
// the next begins, give different values; so do salts, including those
// that share their first 16 bytes.
func TestSumSeparatesInputs(t *testing.T) {
	s := New(day, secret)
	seen := map[uint64]string{}
	for name, v := range map[string]uint64{
		"base":                 s.Client("docs", addr4, ua),
		"other project":        s.Client("blog", addr4, ua),
		"other address":        s.Client("docs", netip.MustParseAddr("192.0.2.8"), ua),
		"ipv4 as ipv6":         s.Client("docs", netip.AddrFrom16(addr4.As16()), ua),
		"no address":           s.Client("docs", netip.Addr{}, ua),
		"other user agent":     s.Client("docs", addr4, ua+" "),
		"project eats a byte":  s.Client("docsx", addr4, ua[1:]),
		"key of the same text": s.Key("docs", ua),
		"key":                  s.Key("docs", "a"),
		"key, other project":   s.Key("doc", "sa"),
		"other secret":         New(day, []byte("another secret of thirty-two by")).Client("docs", addr4, ua),
		"secret, same prefix":  New(day, []byte("0123456789abcdef0123456789abcdeX")).Client("docs", addr4, ua),
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

// BenchmarkClient is the hash alone, as the middleware uses it: a Chrome
// user agent behind an IPv4 address. The hashes allocate nothing (the
// middleware must not): the benchmarks report it rather than a test
// asserting it, since a Go release may change it.
func BenchmarkClient(b *testing.B) {
	s := New(day, secret)
	chrome := "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	b.ReportAllocs()
	for b.Loop() {
		s.Client("docs", addr4, chrome)
	}
}

// BenchmarkClientIPv6 is BenchmarkClient behind an IPv6 address.
func BenchmarkClientIPv6(b *testing.B) {
	s := New(day, secret)
	b.ReportAllocs()
	for b.Loop() {
		s.Client("docs", addr6, ua)
	}
}

// BenchmarkClientLongUserAgent is BenchmarkClient with a user agent of
// 1,800 bytes, which the hash reads where it lies, as a short one.
func BenchmarkClientLongUserAgent(b *testing.B) {
	s := New(day, secret)
	long := strings.Repeat("a long user agent ", 100)
	b.ReportAllocs()
	for b.Loop() {
		s.Client("docs", addr4, long)
	}
}

// BenchmarkKey is the hash of an ingested visitor key.
func BenchmarkKey(b *testing.B) {
	s := New(day, secret)
	b.ReportAllocs()
	for b.Loop() {
		s.Key("docs", "3f1c9a7e5b2d4f60")
	}
}
