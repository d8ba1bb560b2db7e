package pageviews

import (
	"bytes"
	"context"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/hll"
	"github.com/docsapi/docsapi-go/server/traffic"
)

// cacheVisitor is a client of the cache tests: its address (as the proxy
// forwards it, or as the connection's peer) and user agent.
type cacheVisitor struct {
	addr netip.Addr
	ua   string
}

// cacheVisitors returns n distinct clients: IPv4 and IPv6 addresses, some
// shared by two user agents, as behind a NAT.
func cacheVisitors(n int) []cacheVisitor {
	vs := make([]cacheVisitor, n)
	for i := range vs {
		a := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		if i%3 == 1 {
			a = netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 14: byte(i >> 8), 15: byte(i)})
		}
		ua := chromeUA
		if i%5 == 0 {
			ua = fmt.Sprintf("%s visitor/%d", chromeUA, i)
		}
		vs[i] = cacheVisitor{a, ua}
	}
	return vs
}

// visitorRequest is a GET of path by v: from v's address on the port
// given, or through the proxy 10.255.0.1 naming it, when proxied.
func visitorRequest(path string, v cacheVisitor, port int, proxied bool) *http.Request {
	req := httptest.NewRequest("GET", path, nil)
	req.RemoteAddr = netip.AddrPortFrom(v.addr, uint16(port)).String()
	if proxied {
		req.RemoteAddr = fmt.Sprintf("10.255.0.1:%d", port)
		req.Header.Set("X-Forwarded-For", v.addr.String())
	}
	req.Header.Set("User-Agent", v.ua)
	return req
}

// Every value the cache gives is the visitor's SipHash under the day's
// salt: with three times more clients than slots, each seen many times in
// an order that mixes runs of one client with returns after many others,
// from changing ports, directly and behind a proxy. A value of another
// client, or of another day, fails the test.
func TestRequestVisitorIsTheSaltedHash(t *testing.T) {
	for _, proxied := range []bool{false, true} {
		t.Run(fmt.Sprintf("proxied=%v", proxied), func(t *testing.T) {
			r := visitorRecorder(t, newVisitorSink(), func(c *Config) {
				if proxied {
					c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.255.0.0/16")}
				}
			})
			salt := r.salts.Load().find(at)
			vs := cacheVisitors(3 << visitorCacheBits)
			rng := rand.New(rand.NewPCG(1, 2))
			hits := 0
			for round := range 3 {
				for _, i := range rng.Perm(len(vs)) {
					v := vs[i]
					want := salt.Client("docs", v.addr, v.ua)
					for run := range 1 + i%3 {
						req := visitorRequest("/p", v, 40000+round, proxied)
						fp := r.fingerprintOf(req, "docs", v.ua)
						if _, ok := r.visCache.get(fp); ok {
							hits++
						}
						got, ok := r.requestVisitor("docs", at, req, v.ua)
						if !ok || got != want {
							t.Fatalf("round %d, visitor %d, view %d: %#x, %v; want %#x", round, i, run, got, ok, want)
						}
					}
				}
			}
			// The test is meant to use the cache: runs and returns hit.
			if hits == 0 {
				t.Fatal("no request was found in the cache")
			}
			// Another project's visitor is another value.
			v := vs[0]
			got, _ := r.requestVisitor("blog", at, visitorRequest("/p", v, 1, proxied), v.ua)
			if want := salt.Client("blog", v.addr, v.ua); got != want {
				t.Fatalf("another project: %#x, want %#x", got, want)
			}
		})
	}
}

// fingerprintOf is the fingerprint requestVisitor looks up for req.
func (r *Recorder) fingerprintOf(req *http.Request, project, ua string) uint64 {
	ss := r.salts.Load()
	return r.clientFingerprint(ss.seeds[ss.index(at)], project, req, r.proxies.Addr(req), ua)
}

// Across midnight, with both days' salts held, a client seen yesterday is
// today's value at once; yesterday's values are forgotten with its salt.
func TestVisitorCacheFollowsTheDay(t *testing.T) {
	clock := time.Date(2026, 8, 14, 23, 55, 0, 0, time.UTC)
	r := visitorRecorder(t, newVisitorSink(), func(c *Config) { c.Now = func() time.Time { return clock } })
	ss := r.salts.Load()
	today, tomorrow := ss.find(clock), ss.find(clock.Add(time.Hour))
	if today == nil || tomorrow == nil {
		t.Fatal("both days' salts should be held at 23:55")
	}
	vs := cacheVisitors(100)
	check := func(at time.Time, salt interface {
		Client(string, netip.Addr, string) uint64
	}) {
		t.Helper()
		for i, v := range vs {
			got, ok := r.requestVisitor("docs", at, visitorRequest("/", v, 1, false), v.ua)
			if want := salt.Client("docs", v.addr, v.ua); !ok || got != want {
				t.Fatalf("%s, visitor %d: %#x, want %#x", at.Format(time.DateTime), i, got, want)
			}
		}
	}
	check(clock, today)
	check(clock, today) // from the cache
	clock = time.Date(2026, 8, 15, 0, 1, 0, 0, time.UTC)
	check(clock, tomorrow)
	r.refreshSalts(context.Background()) // drops yesterday's salt
	for i := range r.visCache.slots {
		if s := &r.visCache.slots[i]; s.tag.Load() != 0 || s.value.Load() != 0 {
			t.Fatalf("slot %d still holds a value once yesterday's salt is dropped", i)
		}
	}
	check(clock, tomorrow)
}

// A slot holds one value under its fingerprint only: an empty slot, and
// one torn by two writes at once (its tag of one, its value of the other)
// match nothing.
func TestVisitorCacheSlots(t *testing.T) {
	var c visitorCache
	seed := maphash.MakeSeed()
	fp1 := fingerprint(seed, "docs", 1, chromeUA)
	fp2 := fingerprint(seed, "docs", 2, chromeUA)
	if fp1&1 == 0 || fp2&1 == 0 {
		t.Fatal("a fingerprint with its bottom bit clear matches an empty slot")
	}
	if _, ok := c.get(fp1); ok {
		t.Fatal("an empty cache found a value")
	}
	// Two fingerprints of one slot.
	for i := uint64(3); c.slot(fp2) != c.slot(fp1); i++ {
		fp2 = fingerprint(seed, "docs", i, chromeUA)
	}
	c.put(fp1, 0xaaaa)
	if v, ok := c.get(fp1); !ok || v != 0xaaaa {
		t.Fatalf("get = %#x, %v; want the value put", v, ok)
	}
	c.put(fp2, 0xbbbb) // evicts fp1
	if _, ok := c.get(fp1); ok {
		t.Fatal("an evicted value was found")
	}
	s := c.slot(fp1)
	s.tag.Store(fp1 ^ 0xaaaa) // fp1's tag, fp2's value
	for _, fp := range []uint64{fp1, fp2} {
		if v, ok := c.get(fp); ok {
			t.Fatalf("a torn slot gave %#x", v)
		}
	}
}

// The cache changes no count: the sketches a flush writes are exactly
// those of the visitors' salted hashes, through the middleware, with
// clients returning after the cache has forgotten them and goroutines
// recording at once.
func TestMiddlewareVisitorsExactWithCache(t *testing.T) {
	sink := newVisitorSink()
	r := visitorRecorder(t, sink)
	h := pageSite(r, "docs")
	salt := r.salts.Load().find(at)
	vs := cacheVisitors(2 << visitorCacheBits)
	paths := []string{"/", "/guide", "/api"}
	want := map[string]*hll.Sketch{}
	for _, p := range paths {
		want[p] = new(hll.Sketch)
	}
	const goroutines = 4
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			w := &nopWriter{h: http.Header{}}
			for range 2 {
				for _, i := range rng.Perm(len(vs)) {
					path := paths[i%len(paths)]
					for range 1 + i%2 {
						h.ServeHTTP(w, visitorRequest(path+"/", vs[i], 1000+g, false))
					}
				}
			}
		})
	}
	for i, v := range vs {
		want[paths[i%len(paths)]].Insert(salt.Client("docs", v.addr, v.ua))
	}
	wg.Wait()
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	hour := at.Truncate(time.Hour).Format(time.RFC3339)
	for _, p := range paths {
		got := sink.sketches["docs\t"+p+"\t"+hour+"\thuman"]
		if got == nil {
			t.Fatalf("no sketch of %s", p)
		}
		g, w := got.AppendBinary(nil), want[p].AppendBinary(nil)
		if !bytes.Equal(g, w) {
			t.Errorf("%s: the sketch stored (%d visitors) is not that of the visitors (%d)", p, got.Estimate(), want[p].Estimate())
		}
	}
	if st := r.Stats(); st.Recorded != int64(goroutines*2*(len(vs)+len(vs)/2)) {
		t.Errorf("%d views recorded", st.Recorded)
	}
}

// A flush takes the counters a shard found last: the views and visitors
// recorded after it go to new counters and sketches, not to those taken,
// so each flush writes exactly what came since the one before.
func TestRecordAfterFlushStartsAfresh(t *testing.T) {
	sink := newVisitorSink()
	r := visitorRecorder(t, sink)
	salt := r.salts.Load().find(at)
	v := salt.Client("docs", netip.MustParseAddr("192.0.2.1"), chromeUA)
	ctx := context.Background()
	for flush := 1; flush <= 3; flush++ {
		for range 2 {
			r.record("docs", "/a", traffic.Human, at, 1, v, true)
		}
		if err := r.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if got := sink.snapshot()["docs /a "+at.Truncate(time.Hour).Format(time.RFC3339)]; got.Human != int64(2*flush) {
			t.Fatalf("after flush %d: %d views stored, want %d", flush, got.Human, 2*flush)
		}
		sink.vmu.Lock()
		calls := sink.visitorCalls
		sink.vmu.Unlock()
		if calls != flush {
			t.Fatalf("after flush %d: %d visitor writes, want one a flush", flush, calls)
		}
	}
	if got := sink.visitors("docs", "/a", "human"); got != 1 {
		t.Fatalf("%d visitors, want 1", got)
	}
}

// NormalizePath's shortcut (paths ending in no suffix's last letter) gives
// what the full comparison gives.
func TestNormalizePathShortcut(t *testing.T) {
	// The full comparison: every suffix tried, whatever the last letter.
	full := func(path string) string {
		if path == "" {
			return "/"
		}
		path = trimPageSuffix(path)
		for len(path) > 1 && path[len(path)-1] == '/' {
			path = path[:len(path)-1]
		}
		return path
	}
	parts := []string{"", "/", "//", "a", "index", ".", "html", "htm", "md", "mdx", "x", "l", "d", "m", "txt", "/index.html", ".md"}
	var paths []string
	for _, a := range parts {
		for _, b := range parts {
			for _, c := range parts {
				paths = append(paths, a+b+c, "/"+a+b+c)
			}
		}
	}
	for _, p := range paths {
		if got, want := NormalizePath(p), full(p); got != want {
			t.Errorf("NormalizePath(%q) = %q, want %q", p, got, want)
		}
	}
}
