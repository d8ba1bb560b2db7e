package pageviews

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/hll"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/traffic"
)

// visitorSink is a memSink that counts visitors too: it merges the
// sketches it is given per project, path, hour and class, as the store
// does, and hands out a salt per day. Views, visitors and salts can each
// be made to fail.
type visitorSink struct {
	memSink
	vmu          sync.Mutex
	sketches     map[string]*hll.Sketch // project, path, hour and class, tab-separated
	visitorCalls int
	failVisitors int // fail this many AddVisitors calls first
	saltDown     bool
	saltCalls    int
	badOrder     []string
}

func newVisitorSink() *visitorSink {
	return &visitorSink{sketches: map[string]*hll.Sketch{}}
}

func (v *visitorSink) AddVisitors(_ context.Context, counts []store.VisitorCount) error {
	views := v.snapshot()
	v.vmu.Lock()
	defer v.vmu.Unlock()
	v.visitorCalls++
	if v.failVisitors > 0 {
		v.failVisitors--
		return errors.New("storage is down")
	}
	if err := store.ValidateVisitorCounts(counts); err != nil {
		return err
	}
	for _, c := range counts {
		hour := c.Hour.Format(time.RFC3339)
		if _, ok := views[c.ProjectID+" "+c.Path+" "+hour]; !ok && c.Path != DefaultOverflowPath {
			v.badOrder = append(v.badOrder, c.Path)
		}
		for class, enc := range map[string][]byte{"human": c.Human, "ai": c.AI} {
			if len(enc) == 0 {
				continue
			}
			k := c.ProjectID + "\t" + c.Path + "\t" + hour + "\t" + class
			s := v.sketches[k]
			if s == nil {
				s = new(hll.Sketch)
				v.sketches[k] = s
			}
			if err := s.MergeBinary(enc); err != nil {
				return err
			}
		}
	}
	return nil
}

func (v *visitorSink) VisitorSalt(_ context.Context, day time.Time) ([]byte, error) {
	v.vmu.Lock()
	defer v.vmu.Unlock()
	v.saltCalls++
	if v.saltDown {
		return nil, errors.New("storage is down")
	}
	// A salt per day, the same on every call, as the store keeps it.
	return []byte(fmt.Sprintf("salt of %s, 32 bytes long", day.UTC().Format(time.DateOnly)))[:32], nil
}

// visitors estimates the distinct visitors stored whose key (project, path,
// hour, class) matches: an empty part matches every value.
func (v *visitorSink) visitors(project, path, class string) uint64 {
	v.vmu.Lock()
	defer v.vmu.Unlock()
	var all hll.Sketch
	for k, s := range v.sketches {
		parts := strings.Split(k, "\t")
		if (project == "" || parts[0] == project) && (path == "" || parts[1] == path) && (class == "" || parts[3] == class) {
			all.Merge(s)
		}
	}
	return all.Estimate()
}

// visitorRecorder is a Recorder on a visitorSink with the salts fetched,
// as the flush goroutine fetches them at Start.
func visitorRecorder(t *testing.T, sink *visitorSink, mutate ...func(*Config)) *Recorder {
	t.Helper()
	r := newRecorder(t, sink, mutate...)
	r.refreshSalts(context.Background())
	return r
}

// get serves a GET of path from addr with the user agent ua.
func get(h http.Handler, path, addr, ua string, header ...string) {
	req := httptest.NewRequest("GET", path, nil)
	req.RemoteAddr = addr + ":50000"
	req.Header.Set("User-Agent", ua)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	h.ServeHTTP(httptest.NewRecorder(), req)
}

func pageSite(r *Recorder, project string) http.Handler {
	mw, err := r.Middleware(MiddlewareConfig{Project: project})
	if err != nil {
		panic(err)
	}
	return mw(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("page")) }))
}

// A visitor is a client's address and user agent: three people (two of
// them behind one address, with different browsers), each reading pages
// several times, and one AI agent; crawlers are no visitors.
func TestMiddlewareCountsVisitors(t *testing.T) {
	sink := newVisitorSink()
	r := visitorRecorder(t, sink)
	h := pageSite(r, "docs")
	firefox := "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0"
	for range 3 {
		get(h, "/guide/", "192.0.2.1", chromeUA)
		get(h, "/guide/", "192.0.2.1", firefox) // another person behind the same address
		get(h, "/guide/", "2001:db8::5", chromeUA)
		get(h, "/api/", "192.0.2.1", chromeUA)
		get(h, "/guide/", "198.51.100.9", agentUA)
		get(h, "/guide/", "198.51.100.10", botUA)
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path, class string
		want        uint64
	}{
		{"/guide", "human", 3},
		{"/api", "human", 1},
		{"", "human", 3}, // the same visitor on two pages is one visitor
		{"/guide", "ai", 1},
		{"", "", 4},
	} {
		if got := sink.visitors("docs", c.path, c.class); got != c.want {
			t.Errorf("visitors of %q, class %q: %d, want %d", c.path, c.class, got, c.want)
		}
	}
	if st := r.Stats(); st.Recorded != 18 || st.NoSalt != 0 || st.VisitorsOverflowed != 0 {
		t.Errorf("stats = %+v", st)
	}
	// A visitor of another project is another visitor.
	get(pageSite(r, "blog"), "/guide/", "192.0.2.1", chromeUA)
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := sink.visitors("", "/guide", "human"); got != 4 {
		t.Errorf("visitors of /guide over both projects: %d, want 4", got)
	}
	if len(sink.badOrder) > 0 {
		t.Errorf("visitors written before their views: %v", sink.badOrder)
	}
}

// Without a salt for the day (the store is down since before it began),
// views are counted and their visitors are not; that is counted and
// logged once for the whole outage, and visitors count again once the
// salt comes.
func TestNoSaltCountsViewsWithoutVisitors(t *testing.T) {
	sink := newVisitorSink()
	sink.saltDown = true
	var log bytes.Buffer
	r := visitorRecorder(t, sink, func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(&log, nil)) })
	h := pageSite(r, "docs")
	for i := range 3 {
		get(h, "/guide/", fmt.Sprintf("192.0.2.%d", i+1), chromeUA)
		get(h, "/guide/", "198.51.100.10", botUA) // no visitor to miss
		r.refreshSalts(context.Background())
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := r.Stats(); st.Recorded != 6 || st.Flushed != 6 || st.NoSalt != 3 {
		t.Fatalf("stats = %+v; want 6 views stored, 3 without their visitor", st)
	}
	if got := sink.visitors("docs", "", ""); got != 0 {
		t.Fatalf("%d visitors stored without a salt", got)
	}
	if n := strings.Count(log.String(), "without their visitors: no salt"); n != 1 {
		t.Fatalf("%d warnings of views without visitors, want 1:\n%s", n, log.String())
	}
	if n := strings.Count(log.String(), "cannot get a day's visitor salt"); n != 1 {
		t.Fatalf("%d warnings of the failing salt, want 1:\n%s", n, log.String())
	}
	sink.vmu.Lock()
	sink.saltDown = false
	sink.vmu.Unlock()
	r.refreshSalts(context.Background())
	get(h, "/guide/", "192.0.2.1", chromeUA)
	r.refreshSalts(context.Background()) // a quiet interval ends the burst
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := sink.visitors("docs", "/guide", "human"); got != 1 {
		t.Fatalf("%d visitors once the salt came, want 1", got)
	}
	// A new outage is a new burst: logged again.
	r.salts.Store(&saltSet{})
	get(h, "/guide/", "192.0.2.1", chromeUA)
	r.refreshSalts(context.Background())
	if n := strings.Count(log.String(), "without their visitors: no salt"); n != 2 {
		t.Fatalf("%d warnings after a second burst, want 2:\n%s", n, log.String())
	}
}

// The next day's salt is fetched ahead of midnight, so the first requests
// of a day need no store; the day before's is dropped once it is over.
func TestSaltRotatesAtMidnight(t *testing.T) {
	sink := newVisitorSink()
	clock := time.Date(2026, 8, 14, 12, 0, 0, 0, time.UTC)
	r := visitorRecorder(t, sink, func(c *Config) { c.Now = func() time.Time { return clock } })
	if sink.saltCalls != 1 {
		t.Fatalf("%d salt fetches at noon, want 1 (today's)", sink.saltCalls)
	}
	clock = time.Date(2026, 8, 14, 23, 55, 0, 0, time.UTC)
	r.refreshSalts(context.Background())
	if sink.saltCalls != 2 {
		t.Fatalf("%d salt fetches at 23:55, want 2 (and tomorrow's)", sink.saltCalls)
	}
	r.refreshSalts(context.Background())
	if sink.saltCalls != 2 {
		t.Fatalf("salts fetched again: %d calls", sink.saltCalls)
	}
	sink.vmu.Lock()
	sink.saltDown = true // the store goes down before midnight
	sink.vmu.Unlock()
	h := pageSite(r, "docs")
	get(h, "/guide/", "192.0.2.1", chromeUA)
	clock = time.Date(2026, 8, 15, 0, 1, 0, 0, time.UTC)
	get(h, "/guide/", "192.0.2.1", chromeUA)
	if st := r.Stats(); st.NoSalt != 0 {
		t.Fatalf("NoSalt = %d after midnight: the day's salt was not ready", st.NoSalt)
	}
	r.refreshSalts(context.Background())
	if s := r.salts.Load(); s.find(time.Date(2026, 8, 14, 23, 0, 0, 0, time.UTC)) != nil {
		t.Fatal("yesterday's salt is still held after midnight")
	}
	sink.vmu.Lock()
	sink.saltDown = false
	sink.vmu.Unlock()
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// One person, one visitor a day: yesterday's and today's hashes differ.
	if got := sink.visitors("docs", "/guide", "human"); got != 2 {
		t.Fatalf("%d visitors over the two days, want 2", got)
	}
}

// A flush whose views fail writes no visitors; one whose visitors fail
// keeps them: after recovery each visitor is stored, once.
func TestVisitorsSurviveFailedFlushes(t *testing.T) {
	sink := newVisitorSink()
	r := visitorRecorder(t, sink)
	h := pageSite(r, "docs")
	ctx := context.Background()
	sink.fail = 1
	for i := range 5 {
		get(h, "/a/", fmt.Sprintf("192.0.2.%d", i), chromeUA)
	}
	if err := r.Flush(ctx); err == nil || sink.visitorCalls != 0 {
		t.Fatalf("flush with the views failing: %v, %d AddVisitors calls; want an error and none", err, sink.visitorCalls)
	}
	sink.failVisitors = 2
	for i := range 5 {
		get(h, "/b/", fmt.Sprintf("192.0.2.%d", i), agentUA)
	}
	if err := r.Flush(ctx); err == nil || sink.visitorCalls != 2 {
		t.Fatalf("flush with the visitors failing: %v, %d AddVisitors calls; want an error and 2", err, sink.visitorCalls)
	}
	if st := r.Stats(); st.Flushed != 10 || st.VisitorFlushErrors != 2 {
		t.Fatalf("stats = %+v; want every view written and 2 visitor errors", st)
	}
	get(h, "/a/", "192.0.2.0", chromeUA) // a visitor already kept
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if a, b := sink.visitors("docs", "/a", "human"), sink.visitors("docs", "/b", "ai"); a != 5 || b != 5 {
		t.Fatalf("visitors after recovery: /a %d, /b %d; want 5 and 5", a, b)
	}
	if n := len(r.pendingVis.m); n != 0 || r.visBytes.Load() != 0 {
		t.Fatalf("%d pending sketches, %d bytes charged after recovery; want none", n, r.visBytes.Load())
	}
	if len(sink.badOrder) > 0 {
		t.Errorf("visitors written before their views: %v", sink.badOrder)
	}
}

// Past MaxVisitorBytes, a page's new visitors go to the overflow path's
// sketch: none is lost, and no new sketch is made for them.
func TestVisitorsOverflowPastTheCap(t *testing.T) {
	sink := newVisitorSink()
	r := visitorRecorder(t, sink, func(c *Config) { c.MaxVisitorBytes = 3 * (visitorPairCost + visitorEntryCost) })
	h := pageSite(r, "docs")
	for i := range 10 {
		get(h, fmt.Sprintf("/p%d/", i), "192.0.2.1", chromeUA)
	}
	get(h, "/p0/", "192.0.2.2", chromeUA) // a second visitor of a page with a sketch: no room
	if got := r.visBytes.Load(); got > r.cfg.MaxVisitorBytes {
		t.Fatalf("%d bytes charged, past the cap of %d", got, r.cfg.MaxVisitorBytes)
	}
	if st := r.Stats(); st.VisitorsOverflowed != 8 {
		t.Fatalf("VisitorsOverflowed = %d, want 8", st.VisitorsOverflowed)
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := sink.visitors("docs", DefaultOverflowPath, "human"); got != 2 {
		t.Errorf("%d visitors in the overflow sketch, want 2", got)
	}
	if got := sink.visitors("docs", "", "human"); got != 2 {
		t.Errorf("%d visitors in all, want 2", got)
	}
	if got := sink.visitors("docs", "/p1", "human"); got != 1 {
		t.Errorf("%d visitors of /p1, want 1", got)
	}
	if r.visBytes.Load() != 0 {
		t.Errorf("%d bytes charged after the flush, want 0", r.visBytes.Load())
	}
}

// The attack: a client makes every request a new page and a new visitor
// (a new user agent each time), while the store is down for many flush
// intervals. The views' memory is bounded as before; the sketches' stays
// within MaxVisitorBytes (plus the overflow sketches, a few per project);
// after recovery, every visitor is stored, within the sketches' error.
func TestVisitorMemoryStaysBoundedWhileStoreIsDown(t *testing.T) {
	const (
		intervals  = 15
		perFlush   = 5_000
		maxKeys    = perFlush
		maxPending = perFlush / 2 // so that both bounds of pending sketches are met
		maxVisitor = 1 << 20
	)
	// The views' own bound (400 bytes per counter, as in
	// TestPendingStaysBoundedWhileStoreIsDown), plus MaxVisitorBytes, plus
	// the overflow sketches: one per project, hour and class, live and
	// pending, each at most a dense sketch, which 64 KiB bounds at any
	// precision package hll could choose. Without the cap, the sketches
	// alone would grow well past this bound by the end.
	const heapBound = (maxPending+perFlush)*400 + maxVisitor + 2*2*4*(64<<10)

	clock := at
	sink := newVisitorSink()
	sink.fail, sink.failVisitors = 1<<30, 1<<30
	r := visitorRecorder(t, sink, func(c *Config) {
		c.MaxKeys, c.MaxPendingKeys = maxKeys, maxPending
		c.MaxVisitorBytes = maxVisitor
		c.Now = func() time.Time { return clock }
	})
	ctx := context.Background()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak int64
	visitorsSent := 0
	record := func(i int) {
		// What the middleware does, without the HTTP requests: the test
		// is about what the recorder keeps.
		for j := range perFlush {
			addr := netip.AddrFrom4([4]byte{10, byte(j >> 8), byte(j), byte(i)})
			v, ok := r.visitorOf("docs", clock, addr, fmt.Sprintf("%s flood/%d.%d", chromeUA, i, j))
			if !ok {
				t.Fatal("no salt")
			}
			r.record("docs", fmt.Sprintf("/made-up/%d/%d", i, j), traffic.Human, "", clock, 1, v, true)
			visitorsSent++
		}
	}
	for i := range intervals {
		record(i)
		if err := r.Flush(ctx); err == nil {
			t.Fatalf("interval %d: a flush into a failing store reported success", i)
		}
		if got := r.visBytes.Load(); got > maxVisitor+4*(64<<10) {
			t.Fatalf("after failed flush %d: %d bytes of sketches charged, want at most about %d", i+1, got, maxVisitor)
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		grown := int64(ms.HeapAlloc) - int64(base)
		peak = max(peak, grown)
		if grown > heapBound {
			t.Fatalf("after failed flush %d: the heap grew by %.1f MiB, want at most %.1f MiB",
				i+1, float64(grown)/(1<<20), float64(heapBound)/(1<<20))
		}
		clock = clock.Add(10 * time.Minute)
	}
	t.Logf("the heap grew by %.1f MiB at most (bound %.1f MiB)", float64(peak)/(1<<20), float64(heapBound)/(1<<20))
	st := r.Stats()
	if st.VisitorsOverflowed == 0 || st.VisitorsFolded == 0 {
		t.Errorf("stats = %+v: the flood was meant to pass both visitor bounds", st)
	}

	sink.mu.Lock()
	sink.fail = 0
	sink.mu.Unlock()
	sink.vmu.Lock()
	sink.failVisitors = 0
	sink.vmu.Unlock()
	if err := r.Flush(ctx); err != nil {
		t.Fatalf("flush after recovery: %v", err)
	}
	got := sink.visitors("docs", "", "human")
	if diff := math.Abs(float64(got)-float64(visitorsSent)) / float64(visitorsSent); diff > 0.03 {
		t.Errorf("%d visitors stored, %d sent: off by %.1f%%, more than the sketches' error", got, visitorsSent, 100*diff)
	}
	if n := len(r.pendingVis.m); n != 0 || r.visBytes.Load() != 0 {
		t.Errorf("%d pending sketches, %d bytes charged after recovery; want none", n, r.visBytes.Load())
	}
}

// The client is the connection's peer, unless that is a trusted proxy:
// then the address it forwards for. Two clients behind a trusted proxy
// are two visitors; two forged headers from an untrusted peer are one.
func TestVisitorsBehindTrustedProxies(t *testing.T) {
	sink := newVisitorSink()
	r := visitorRecorder(t, sink, func(c *Config) {
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	})
	h := pageSite(r, "docs")
	get(h, "/via-proxy/", "10.0.0.1", chromeUA, "X-Forwarded-For", "192.0.2.1")
	get(h, "/via-proxy/", "10.0.0.1", chromeUA, "X-Forwarded-For", "192.0.2.2")
	get(h, "/via-proxy/", "10.0.0.2", chromeUA, "X-Forwarded-For", "192.0.2.2") // another proxy, the same client
	get(h, "/direct/", "203.0.113.1", chromeUA, "X-Forwarded-For", "192.0.2.1")
	get(h, "/direct/", "203.0.113.1", chromeUA, "X-Forwarded-For", "192.0.2.2")
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := sink.visitors("docs", "/via-proxy", "human"); got != 2 {
		t.Errorf("%d visitors through the trusted proxies, want 2", got)
	}
	if got := sink.visitors("docs", "/direct", "human"); got != 1 {
		t.Errorf("%d visitors from an untrusted peer forging headers, want 1", got)
	}
	// The forwarded client through the proxy is the same visitor as the
	// one connecting directly.
	if got := sink.visitors("docs", "", "human"); got != 3 {
		t.Errorf("%d visitors in all, want 3 (192.0.2.1, 192.0.2.2, 203.0.113.1)", got)
	}
}

func TestNewRefusesNegativeVisitorBytes(t *testing.T) {
	if _, err := New(Config{Sink: newVisitorSink(), MaxVisitorBytes: -1}); err == nil {
		t.Fatal("a negative MaxVisitorBytes was accepted")
	}
}

// A recorder whose Sink keeps no visitors counts views as before.
func TestSinkWithoutVisitors(t *testing.T) {
	sink := &memSink{}
	r := newRecorder(t, sink)
	r.refreshSalts(context.Background())
	get(pageSite(r, "docs"), "/guide/", "192.0.2.1", chromeUA)
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := r.Stats(); st.Flushed != 1 || st.NoSalt != 0 {
		t.Fatalf("stats = %+v", st)
	}
}

// The charge is an upper bound of what sketches take, so that the cap on
// it bounds memory: live sketches of many visitors each, then the same
// kept pending by a failed flush. What they take is the heap of a
// recorder with visitors less that of one without, fed the same views.
func TestVisitorChargeCoversMemory(t *testing.T) {
	const paths, perPath = 2000, 60
	heap := func() int64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	// run feeds a recorder with the store down and returns how much the
	// heap grew after recording and after the failed flush.
	run := func(sink Sink) (r *Recorder, live, pending, charged int64) {
		r = newRecorder(t, sink, func(c *Config) { c.MaxVisitorBytes = 1 << 40 })
		r.refreshSalts(context.Background())
		salt := r.salts.Load().find(at)
		names := make([]string, paths)
		for p := range names {
			names[p] = fmt.Sprintf("/page/%d", p)
		}
		base := heap()
		for p, path := range names {
			for v := range perPath {
				var h uint64
				if salt != nil {
					h = salt.Key("docs", fmt.Sprint(p*perPath+v))
				}
				r.record("docs", path, traffic.Human, "", at, 1, h, salt != nil)
			}
		}
		live = heap() - base
		charged = r.visBytes.Load()
		if err := r.Flush(context.Background()); err == nil {
			t.Fatal("a flush into a failing store reported success")
		}
		pending = heap() - base
		runtime.KeepAlive(names)
		return r, live, pending, charged
	}
	r0, live0, pending0, _ := run(&memSink{fail: 1 << 30})
	runtime.KeepAlive(r0)
	r0 = nil
	vs := newVisitorSink()
	vs.fail = 1 << 30
	r, live, pending, charged := run(vs)
	live -= live0
	pending -= pending0
	t.Logf("live: %d sketches of %d visitors take %.0f bytes each; charged %.0f", paths, perPath, float64(live)/paths, float64(charged)/paths)
	if charged == 0 || live > charged {
		t.Errorf("live sketches take %d bytes, more than the %d charged", live, charged)
	}
	charged = r.visBytes.Load()
	t.Logf("pending: %.0f bytes each; charged %.0f", float64(pending)/paths, float64(charged)/paths)
	if pending > charged {
		t.Errorf("pending sketches take %d bytes, more than the %d charged", pending, charged)
	}
}
