package connlimit

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeConn is one end of a pipe that says it comes from addr, and counts
// its closes.
type fakeConn struct {
	net.Conn
	remote net.Addr
	closes atomic.Int32
}

func (c *fakeConn) RemoteAddr() net.Addr { return c.remote }
func (c *fakeConn) Close() error {
	c.closes.Add(1)
	return c.Conn.Close()
}

// closed reports whether c was closed (by the Limiter: the test never
// closes the raw connections itself).
func (c *fakeConn) closed() bool { return c.closes.Load() > 0 }

// fakeListener hands out the connections the test queues, and tells when
// Accept is called.
type fakeListener struct {
	queue  chan net.Conn
	calls  chan struct{}
	closed chan struct{}
	once   sync.Once
}

func newFakeListener() *fakeListener {
	return &fakeListener{queue: make(chan net.Conn, 1024), calls: make(chan struct{}, 1024), closed: make(chan struct{})}
}

func (f *fakeListener) Accept() (net.Conn, error) {
	f.calls <- struct{}{}
	select {
	case c := <-f.queue:
		return c, nil
	case <-f.closed:
		return nil, net.ErrClosed
	}
}
func (f *fakeListener) Close() error   { f.once.Do(func() { close(f.closed) }); return nil }
func (f *fakeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// harness is a Limiter over a fakeListener, accepting one connection at a
// time as the test asks.
type harness struct {
	t    *testing.T
	l    *Limiter
	fake *fakeListener
	ln   net.Listener
	logs *bytes.Buffer
	now  atomic.Pointer[time.Time]
	seen []Refusal
	mu   sync.Mutex
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	h := &harness{t: t, fake: newFakeListener(), logs: &bytes.Buffer{}}
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h.now.Store(&start)
	cfg.Now = func() time.Time { return *h.now.Load() }
	cfg.Logger = slog.New(slog.NewTextHandler(&lockedWriter{w: h.logs, mu: &h.mu}, nil))
	cfg.OnRefuse = func(r Refusal) {
		h.mu.Lock()
		h.seen = append(h.seen, r)
		h.mu.Unlock()
	}
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.l, h.ln = l, l.Listener(h.fake)
	t.Cleanup(func() { h.ln.Close() })
	return h
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

func (h *harness) logText() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.logs.String()
}

// dial admits a connection from addr, as Accept does, and returns it with
// the admitted *conn, or nil if it was refused (then it is closed).
func (h *harness) dial(addr string) (*fakeConn, *conn) {
	h.t.Helper()
	a := netip.MustParseAddr(addr)
	inner, outer := net.Pipe()
	h.t.Cleanup(func() { outer.Close() })
	fc := &fakeConn{Conn: inner, remote: net.TCPAddrFromAddrPort(netip.AddrPortFrom(a, 40000))}
	c, hold := h.l.admit(fc)
	if hold {
		h.t.Fatal("admit held the connection")
	}
	if (c == nil) != fc.closed() {
		h.t.Fatalf("admit returned %v and the connection is closed: %t", c, fc.closed())
	}
	return fc, c
}

// refusals returns the refusals told to OnRefuse so far, and forgets them.
func (h *harness) refusals() []Reason {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Reason
	for _, r := range h.seen {
		out = append(out, r.Reason)
	}
	h.seen = nil
	return out
}

// acceptWaitsForRoom waits until an Accept waits for room, as it must
// while every connection is in a request: from then on only a change of a
// connection's state can let it go on. A connection Accept returns first
// fails the test.
func (h *harness) acceptWaitsForRoom(got <-chan net.Conn) {
	h.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		select {
		case c := <-got:
			h.t.Fatalf("Accept returned %v while every connection was in a request", c)
		default:
		}
		h.l.mu.Lock()
		waits := h.l.wanted
		h.l.mu.Unlock()
		if waits {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatal("Accept neither returned a connection nor waited for room within 10s")
		}
	}
}

func (h *harness) wantRefusals(want ...Reason) {
	h.t.Helper()
	if got := h.refusals(); fmt.Sprint(got) != fmt.Sprint(want) {
		h.t.Errorf("refusals %v, want %v", got, want)
	}
}

func (h *harness) wantStats(open, waiting, closing, addresses int) {
	h.t.Helper()
	s := h.l.Stats()
	if s.Open != open || s.Waiting != waiting || s.Closing != closing || s.Addresses != addresses {
		h.t.Errorf("open %d, waiting %d, closing %d, addresses %d; want %d, %d, %d, %d",
			s.Open, s.Waiting, s.Closing, s.Addresses, open, waiting, closing, addresses)
	}
}

// request moves c into a request, as HTTP/1.x does: net/http says
// StateActive once the headers are read, then the handler starts.
func request(c *conn) {
	c.l.connState(c, true)
	c.l.beginRequest(c)
}

// idle ends c's request and its answer, as HTTP/1.x does: the handler
// returns, then net/http says StateIdle.
func idle(c *conn) {
	c.l.endRequest(c, false)
	c.l.connState(c, false)
}

// closeAfter ends c's request with an answer saying Connection: close, as
// HTTP/1.x does: the handler returns, and net/http, having written the
// answer, reads what is left of the body.
func closeAfter(c *conn) {
	c.l.endRequest(c, true)
	c.l.markClosing(c) // what c.Read does first
}

func TestPerAddressBudgets(t *testing.T) {
	h := newHarness(t, Config{Max: 100, PerAddress: 3, WaitingPerAddress: 2})
	_, a := h.dial("192.0.2.1")
	_, b := h.dial("192.0.2.1")
	if a == nil || b == nil {
		t.Fatal("connections under the budgets were refused")
	}
	// A third waiting one is one too many.
	if _, c := h.dial("192.0.2.1"); c != nil {
		t.Fatal("a third waiting connection of one address was admitted; the budget is 2")
	}
	h.wantRefusals(AddressWaiting)
	// Other addresses are not affected.
	if _, c := h.dial("192.0.2.2"); c == nil {
		t.Fatal("another address was refused")
	}
	// Once one is in a request, another may wait.
	request(a)
	_, c := h.dial("192.0.2.1")
	if c == nil {
		t.Fatal("refused while only one connection of the address was waiting")
	}
	h.wantStats(4, 3, 0, 2)
	// Three open: a fourth is refused, waiting or not.
	request(b)
	if _, d := h.dial("192.0.2.1"); d != nil {
		t.Fatal("a fourth connection of one address was admitted; the budget is 3")
	}
	h.wantRefusals(AddressConnections)

	// A connection going back to waiting past the budget is closed; the
	// others stay.
	request(c)
	h.dial("192.0.2.9")
	idle(a)
	idle(b)
	h.wantStats(5, 4, 0, 3) // a and b waiting again, and 192.0.2.2's and .9's
	idle(c)                 // the address holds 2 waiting: c is closed
	if !c.Conn.(*fakeConn).closed() {
		t.Error("a connection going back to waiting past its address's budget was not closed")
	}
	h.wantRefusals(AddressWaiting)
	h.wantStats(4, 4, 0, 3)
}

// An IPv6 client usually holds a whole /64: its addresses count as one.
// An IPv4 address written as IPv6 is the IPv4 address.
func TestAddressesAreCountedPerSlash64(t *testing.T) {
	for _, tt := range []struct{ a, b string }{
		{"2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:fffe"},
		{"2001:db8:1:2::1", "2001:db8:1:2:8000::9"},
		{"192.0.2.7", "::ffff:192.0.2.7"},
	} {
		if ka, kb := addressKey(netip.MustParseAddr(tt.a).Unmap()), addressKey(netip.MustParseAddr(tt.b).Unmap()); ka != kb {
			t.Errorf("%s and %s count apart (%s, %s), want together", tt.a, tt.b, ka, kb)
		}
	}
	for _, tt := range []struct{ a, b string }{
		{"2001:db8:1:2::1", "2001:db8:1:3::1"},
		{"192.0.2.7", "192.0.2.8"},
		{"::1", "::2:0:0:0:1"},
	} {
		if ka, kb := addressKey(netip.MustParseAddr(tt.a)), addressKey(netip.MustParseAddr(tt.b)); ka == kb {
			t.Errorf("%s and %s count together (%s), want apart", tt.a, tt.b, ka)
		}
	}

	h := newHarness(t, Config{Max: 100, PerAddress: 2, WaitingPerAddress: 2})
	h.dial("2001:db8:1:2::1")
	h.dial("2001:db8:1:2::2")
	if _, c := h.dial("2001:db8:1:2:abcd::3"); c != nil {
		t.Error("a third connection of one /64 was admitted; the budget is 2")
	}
	if _, c := h.dial("2001:db8:1:3::1"); c == nil {
		t.Error("a connection of the next /64 was refused")
	}
	h.wantRefusals(AddressConnections)
	// Through the listener, a TCP address and its IPv4-mapped form count
	// as one (peerAddr unmaps).
	if got := peerAddr(&net.TCPAddr{IP: net.ParseIP("::ffff:192.0.2.7"), Port: 1}); got != netip.MustParseAddr("192.0.2.7") {
		t.Errorf("peerAddr of an IPv4-mapped address = %s", got)
	}
}

// A connection gives its slot back once however many times it is closed:
// by net/http, through TLS, by the Limiter that took its place, and again.
func TestSlotGivenBackOnce(t *testing.T) {
	h := newHarness(t, Config{Max: 2, PerAddress: 2, WaitingPerAddress: 2})
	_, a := h.dial("192.0.2.1")
	_, b := h.dial("192.0.2.1")
	a.Close()
	a.Close()
	h.wantStats(1, 1, 0, 1)
	// Closed through the TLS connection wrapping it.
	tlsOver := tlsServerConn(b)
	tlsOver.Close()
	b.Close()
	h.wantStats(0, 0, 0, 0)
	// The slots are all free: two more fit, a third does not, and the
	// map holds nothing of the closed ones.
	_, c := h.dial("192.0.2.3")
	_, d := h.dial("192.0.2.3")
	if c == nil || d == nil {
		t.Fatal("slots were not given back")
	}
	h.wantStats(2, 2, 0, 1)

	// A connection taken for a newcomer, then closed by its server, gives
	// nothing back twice: the newcomer's slot stays taken.
	_, e := h.dial("192.0.2.4") // takes c's place (192.0.2.3 holds 2)
	if e == nil || !c.Conn.(*fakeConn).closed() {
		t.Fatalf("the newcomer did not take the waiting connection's place (admitted %v, closed %t)", e, c.Conn.(*fakeConn).closed())
	}
	h.wantRefusals(Evicted)
	h.wantStats(2, 2, 0, 2)
	c.Close() // its server notices and closes it
	c.Close()
	h.wantStats(2, 2, 0, 2)
	if _, f := h.dial("192.0.2.5"); f != nil {
		t.Error("a slot was given back twice: a fifth connection fits in a cap of 2 with no one to give way")
	}
	h.wantRefusals(Full)
	d.Close()
	e.Close()
	h.wantStats(0, 0, 0, 0)
}

// When the cap is full, a newcomer takes the place of a waiting
// connection of the address holding the most, if it holds at least two
// more than the newcomer's; of a closing connection first, whoever holds
// it; and is refused otherwise.
func TestFullCapIsShared(t *testing.T) {
	h := newHarness(t, Config{Max: 5, PerAddress: 10, WaitingPerAddress: 10})
	var attacker []*conn
	for range 4 {
		_, c := h.dial("203.0.113.66")
		attacker = append(attacker, c)
	}
	_, client := h.dial("192.0.2.1")
	h.wantStats(5, 5, 0, 2)
	// The attacker's address holds the most: its newcomer is refused...
	if _, c := h.dial("203.0.113.66"); c != nil {
		t.Fatal("the address holding the most took a place")
	}
	h.wantRefusals(Full)
	// ...and another client's takes the place of its longest waiting.
	_, c2 := h.dial("192.0.2.2")
	if c2 == nil || !attacker[0].Conn.(*fakeConn).closed() {
		t.Fatal("a newcomer did not take the place of the longest waiting connection of the address holding the most")
	}
	h.wantRefusals(Evicted)
	// In a request, a connection keeps its place: only waiting ones give
	// way.
	for _, c := range attacker[1:] {
		request(c)
	}
	if _, c := h.dial("192.0.2.3"); c != nil {
		t.Fatal("a connection in a request was taken")
	}
	h.wantRefusals(Full)
	// The address holding the most, 3, has two more than 192.0.2.1's 1
	// but no waiting connection: the address with waiting ones that holds
	// the most, 192.0.2.1 and .2 with 1 each, does not hold two more than
	// a newcomer from 192.0.2.4 (0 + 2).
	if _, c := h.dial("192.0.2.4"); c != nil {
		t.Fatal("a newcomer took the place of an address holding one connection")
	}
	h.wantRefusals(Full)
	// A connection answered with Connection: close is taken first, even
	// from a newcomer of the address holding the most.
	closeAfter(attacker[1])
	h.wantStats(5, 2, 1, 3)
	if _, c := h.dial("203.0.113.66"); c == nil || !attacker[1].Conn.(*fakeConn).closed() {
		t.Fatal("a newcomer did not take the place of a closing connection")
	}
	h.wantRefusals(Evicted)
	_ = client
}

// Connections from trusted proxies are exempt from the per-address
// bounds, and a proxy's newcomer at the cap takes the place of any waiting
// connection, its own too; a direct client still gets a place.
func TestTrustedProxiesAreExempt(t *testing.T) {
	h := newHarness(t, Config{Max: 4, PerAddress: 1, WaitingPerAddress: 1, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	var proxied []*conn
	for range 4 {
		_, c := h.dial("10.1.2.3")
		if c == nil {
			t.Fatal("a trusted proxy's connection was refused under the cap")
		}
		proxied = append(proxied, c)
	}
	h.wantRefusals()
	if _, c := h.dial("10.1.2.3"); c == nil || !proxied[0].Conn.(*fakeConn).closed() {
		t.Fatal("a trusted proxy's newcomer at the cap did not take its own longest-waiting connection's place")
	}
	h.wantRefusals(Evicted)
	if _, c := h.dial("192.0.2.1"); c == nil {
		t.Fatal("a direct client got no place beside a proxy holding every connection")
	}
	h.wantRefusals(Evicted)
}

// A flood of distinct addresses costs nothing once it ends, and never more
// than an entry per open connection while it lasts: refused connections
// leave nothing behind.
func TestAddressFloodIsBounded(t *testing.T) {
	const maxConns = 64
	h := newHarness(t, Config{Max: maxConns, PerAddress: 4, WaitingPerAddress: 4})
	var open []*conn
	for i := range 20000 {
		var addr string
		if i%2 == 0 {
			addr = netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}).String()
		} else {
			addr = fmt.Sprintf("2001:db8:%x:%x::1", i>>16, i&0xffff)
		}
		_, c := h.dial(addr)
		if c != nil {
			open = append(open, c)
		}
		// Some are served, some stop.
		switch i % 3 {
		case 0:
			if c != nil {
				request(c)
			}
		case 1:
			if len(open) > 0 {
				open[0].Close()
				open = open[1:]
			}
		}
		h.l.mu.Lock()
		n := len(h.l.addrs)
		h.l.mu.Unlock()
		if n > maxConns {
			t.Fatalf("after %d connections, %d addresses are kept for %d connections at most", i+1, n, maxConns)
		}
	}
	for _, c := range open {
		c.Close()
	}
	h.wantStats(0, 0, 0, 0)
	h.l.mu.Lock()
	defer h.l.mu.Unlock()
	if len(h.l.addrs) != 0 || h.l.closing.Len() != 0 {
		t.Errorf("after the flood, %d addresses and %d closing connections are kept", len(h.l.addrs), h.l.closing.Len())
	}
}

// The log says what was refused the first time, then at most once a
// minute for each reason, with how many were not logged.
func TestRefusalsLogAtAPace(t *testing.T) {
	h := newHarness(t, Config{Max: 100, PerAddress: 10, WaitingPerAddress: 1})
	h.dial("192.0.2.1")
	for range 1000 {
		h.dial("192.0.2.1")
	}
	if got := strings.Count(h.logText(), "reason=address_waiting"); got != 1 {
		t.Fatalf("1000 refusals at once logged %d lines, want 1:\n%s", got, h.logText())
	}
	later := h.now.Load().Add(logEvery)
	h.now.Store(&later)
	h.dial("192.0.2.1")
	logs := h.logText()
	if got := strings.Count(logs, "reason=address_waiting"); got != 2 || !strings.Contains(logs, "not_logged=999") {
		t.Fatalf("a minute later: %d lines, want 2, the second saying 999 were not logged:\n%s", got, logs)
	}
	if got := h.l.Stats().Refused[AddressWaiting]; got != 1001 {
		t.Errorf("Stats counts %d refusals, want 1001", got)
	}
	if got := len(h.refusals()); got != 1001 {
		t.Errorf("OnRefuse was told of %d refusals, want 1001", got)
	}
}

// While every connection is in a request, Accept takes no new one: it
// stays in the backlog until a connection is done. Closing the listener
// ends the wait.
func TestAcceptWaitsWhileEveryConnectionIsInARequest(t *testing.T) {
	h := newHarness(t, Config{Max: 2})
	_, a := h.dial("192.0.2.1")
	_, b := h.dial("192.0.2.2")
	request(a)
	request(b)
	next := &fakeConn{Conn: nopConn{}, remote: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 3), Port: 1}}
	h.fake.queue <- next
	got := make(chan net.Conn, 1)
	go func() {
		c, _ := h.ln.Accept()
		got <- c
	}()
	h.acceptWaitsForRoom(got)
	if len(h.fake.queue) != 1 {
		t.Fatal("the waiting connection was taken from the backlog")
	}
	a.Close() // its request is done, and its connection closed
	var accepted *conn
	select {
	case c := <-got:
		if c == nil || c.(*conn).Conn != net.Conn(next) {
			t.Fatalf("Accept returned %v once a connection closed, want the one waiting in the backlog", c)
		}
		accepted = c.(*conn)
	case <-time.After(10 * time.Second):
		t.Fatal("Accept still waits once a connection closed")
	}

	// A connection that arrives once every connection is in a request
	// (they went in while Accept waited in the kernel) is held, not
	// refused, and admitted once there is room.
	idle(b)
	for len(h.fake.calls) > 0 {
		<-h.fake.calls
	}
	go func() {
		c, _ := h.ln.Accept()
		got <- c
	}()
	<-h.fake.calls // Accept waits in the "kernel"
	request(b)
	request(accepted)
	late := &fakeConn{Conn: nopConn{}, remote: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 5), Port: 1}}
	h.fake.queue <- late
	h.acceptWaitsForRoom(got)
	if late.closed() {
		t.Fatal("a connection arriving while every connection was in a request was refused, not held")
	}
	b.Close()
	select {
	case c := <-got:
		if c == nil || c.(*conn).Conn != net.Conn(late) {
			t.Fatalf("Accept returned %v once a connection closed, want the one held", c)
		}
		request(c.(*conn))
	case <-time.After(10 * time.Second):
		t.Fatal("Accept still holds the connection once a connection closed")
	}
	h.wantRefusals()

	// Held, it is refused if, when a connection waits again, no address
	// holds enough to give one up.
	held := &fakeConn{Conn: nopConn{}, remote: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 6), Port: 1}}
	if c, hold := h.l.admit(held); c != nil || !hold || held.closed() {
		t.Fatalf("admit while every connection is in a request: %v, hold %t, closed %t; want it held", c, hold, held.closed())
	}
	idle(accepted) // 192.0.2.3 holds one, waiting: not enough to give it up
	if c, hold := h.l.admit(held); c != nil || hold || !held.closed() {
		t.Fatalf("admit once a connection waits, of an address holding one: %v, hold %t, closed %t; want it refused", c, hold, held.closed())
	}
	h.wantRefusals(Full)
	request(accepted)

	// Closing the listener ends an Accept waiting for room.
	go func() {
		c, err := h.ln.Accept()
		if c != nil || !errors.Is(err, net.ErrClosed) {
			got <- c
			return
		}
		got <- nil
	}()
	h.ln.Close()
	select {
	case c := <-got:
		if c != nil {
			t.Fatal("Accept returned a connection after Close")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Accept still waits for room after the listener was closed")
	}
}

type nopConn struct{ net.Conn }

func (nopConn) Close() error { return nil }

// tlsServerConn wraps c in TLS, as http.Server.ServeTLS does.
func tlsServerConn(c net.Conn) *tls.Conn { return tls.Server(c, &tls.Config{}) }

// The orders in which a connection's handlers and net/http's word may
// come: each leaves the connection waiting exactly when it serves
// nothing.
func TestStateOrders(t *testing.T) {
	h := newHarness(t, Config{Max: 10})
	step := func(c *conn, what string, f func(), waiting int) {
		t.Helper()
		f()
		if got := h.l.Stats().Waiting; got != waiting {
			t.Fatalf("after %s: %d waiting, want %d", what, got, waiting)
		}
	}
	_, c := h.dial("192.0.2.1")
	l := h.l
	// HTTP/1.x: headers read, handler, answer written.
	step(c, "StateActive", func() { l.connState(c, true) }, 0)
	step(c, "the handler's start", func() { l.beginRequest(c) }, 0)
	step(c, "the handler's end, its answer not yet written", func() { l.endRequest(c, false) }, 0)
	step(c, "StateIdle", func() { l.connState(c, false) }, 1)
	// HTTP/2: two streams; the handlers end before the streams close.
	step(c, "a stream opens", func() { l.connState(c, true) }, 0)
	step(c, "its handler starts", func() { l.beginRequest(c) }, 0)
	step(c, "a second handler starts", func() { l.beginRequest(c) }, 0)
	step(c, "one ends", func() { l.endRequest(c, false) }, 0)
	step(c, "the other ends", func() { l.endRequest(c, false) }, 0)
	step(c, "the last stream closes", func() { l.connState(c, false) }, 1)
	// HTTP/2: a stream reset before its handler starts, so that net/http
	// says StateIdle first.
	step(c, "a stream opens", func() { l.connState(c, true) }, 0)
	step(c, "it is reset: no stream is open", func() { l.connState(c, false) }, 1)
	step(c, "its handler starts anyway", func() { l.beginRequest(c) }, 0)
	step(c, "and ends", func() { l.endRequest(c, false) }, 1)
	// HTTP/1.x answering Connection: close: not closing (not to be taken)
	// until net/http reads after the answer.
	step(c, "StateActive", func() { l.connState(c, true) }, 0)
	step(c, "the handler's start", func() { l.beginRequest(c) }, 0)
	step(c, "its end, saying Connection: close", func() { l.endRequest(c, true) }, 0)
	if got := l.Stats().Closing; got != 0 {
		t.Fatalf("closing before the answer is written: %d", got)
	}
	step(c, "net/http reads the rest of the body", func() { l.markClosing(c) }, 0)
	if got := l.Stats().Closing; got != 1 {
		t.Fatalf("%d closing once net/http drains the body, want 1", got)
	}
	c.Close()
	h.wantStats(0, 0, 0, 0)
}

// A peer without an IP address (a Unix socket's) is exempt from the
// per-address bounds, as a trusted proxy is.
func TestPeersWithoutAnAddressAreExempt(t *testing.T) {
	h := newHarness(t, Config{Max: 10, PerAddress: 1, WaitingPerAddress: 1})
	for i := range 3 {
		inner, outer := net.Pipe()
		t.Cleanup(func() { outer.Close() })
		fc := &fakeConn{Conn: inner, remote: &net.UnixAddr{Name: "@docsapi", Net: "unix"}}
		if c, _ := h.l.admit(fc); c == nil {
			t.Fatalf("connection %d of a Unix socket refused", i+1)
		}
	}
	h.wantRefusals()
}

// A trusted proxy's newcomer that takes the place of the proxy's only
// connection is counted in the proxy's group, which the map still holds.
func TestProxyTakingItsOwnPlace(t *testing.T) {
	h := newHarness(t, Config{Max: 1, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	_, first := h.dial("10.0.0.1")
	_, second := h.dial("10.0.0.1")
	if second == nil || !first.Conn.(*fakeConn).closed() {
		t.Fatal("the proxy's newcomer did not take its own connection's place")
	}
	h.wantStats(1, 1, 0, 1)
	_, third := h.dial("10.0.0.1")
	if third == nil {
		t.Fatal("the proxy's third connection was refused")
	}
	h.wantStats(1, 1, 0, 1)
	third.Close()
	h.wantStats(0, 0, 0, 0)
	second.Close()
	h.wantStats(0, 0, 0, 0)
}

// Only an answer that closes its connection with the request's body left
// unread makes the connection closing, at net/http's next read (which
// drains the body once the answer is written). A request whose body was
// read, or that had none, is not: net/http reads such a connection in the
// background, and that read may come after the handler but before the
// answer is flushed; a newcomer taking the connection's place then cut the
// answer (an honest client under attack saw EOF).
func TestOnlyAnUnreadBodyMakesAConnectionClosing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		body    string
		read    bool
		closing int
	}{
		{"no body", "", false, 0},
		{"a body read to the end", "some body", true, 0},
		{"a body left unread", "some body", false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{Max: 10})
			_, c := h.dial("192.0.2.1")
			serve := h.l.handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.read {
					io.Copy(io.Discard, r.Body)
				}
				w.Header().Set("Connection", "close")
			}))
			var body io.Reader = http.NoBody
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			req := httptest.NewRequest("POST", "/x", body)
			req = req.WithContext(context.WithValue(req.Context(), connKey{}, c))
			c.l.connState(c, true)
			serve.ServeHTTP(httptest.NewRecorder(), req)
			// net/http's next read, whatever it is for (the pipe holds
			// nothing: the read ends at its deadline).
			c.SetReadDeadline(time.Now())
			c.Read(make([]byte, 1))
			if got := h.l.Stats().Closing; got != tc.closing {
				t.Errorf("%d closing after the next read, want %d", got, tc.closing)
			}
		})
	}
}
