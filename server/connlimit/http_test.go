package connlimit

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/openapitest"
)

// gate blocks the handler of each request to /block until the test
// releases it, and tells the test each handler that started.
type gate struct {
	entered chan *http.Request
	release chan struct{}
}

func newGate() *gate {
	return &gate{entered: make(chan *http.Request, 16), release: make(chan struct{}, 16)}
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/block") {
		g.entered <- r
		select {
		case <-g.release:
		case <-r.Context().Done():
			return
		}
	}
	io.WriteString(w, "ok")
}

func (g *gate) wait(t *testing.T) *http.Request {
	t.Helper()
	select {
	case r := <-g.entered:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no handler started")
		return nil
	}
}

// served is an http.Server running with a Limiter.
type served struct {
	addr  string
	l     *Limiter
	roots *x509.CertPool // with TLS
	news  chan struct{}  // the test's own ConnState hook saw StateNew
	// reading is how many bytes the server had read from the latest
	// connection when it began its latest read of it (-1 before any).
	reading atomic.Int64
}

// readWatch is a listener whose connections set served.reading, so that a
// test knows when the server has taken in all a client sent: it reads
// again, which it does only once it has handled every byte before.
type readWatch struct {
	net.Listener
	s *served
}

func (w *readWatch) Accept() (net.Conn, error) {
	c, err := w.Listener.Accept()
	if err != nil {
		return nil, err
	}
	w.s.reading.Store(-1)
	return &watchedConn{Conn: c, s: w.s}, nil
}

type watchedConn struct {
	net.Conn
	s    *served
	read atomic.Int64
}

func (c *watchedConn) Read(p []byte) (int, error) {
	c.s.reading.Store(c.read.Load())
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// CloseWrite keeps the TCP half-close that net/http uses before a
// lingering close.
func (c *watchedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// readAll waits until the server has read n bytes from the latest
// connection and waits for more.
func (s *served) readAll(t *testing.T, n int) {
	t.Helper()
	eventually(t, fmt.Sprintf("the server to read the %d bytes sent and wait for more", n), func() bool {
		return s.reading.Load() == int64(n)
	})
}

// serveWith serves h on a loopback port with a Limiter of cfg, over TLS
// (HTTP/1.1 and HTTP/2) when withTLS is set.
func serveWith(t *testing.T, cfg Config, h http.Handler, withTLS bool) *served {
	t.Helper()
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &served{addr: inner.Addr().String(), l: l, news: make(chan struct{}, 16)}
	s.reading.Store(-1)
	inner = &readWatch{Listener: inner, s: s}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: time.Minute, IdleTimeout: time.Minute}
	// A hook set before Install still runs.
	srv.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			select {
			case s.news <- struct{}{}:
			default:
			}
		}
	}
	l.Install(srv)
	ln := l.Listener(inner)
	if withTLS {
		cert, pool := testCert(t)
		s.roots = pool
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
		go srv.ServeTLS(ln, "", "")
	} else {
		go srv.Serve(ln)
	}
	t.Cleanup(func() { srv.Close() })
	return s
}

// eventually waits, for a generous while, until ok.
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("still not so after 10s: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (s *served) counts(t *testing.T, open, waiting int) {
	t.Helper()
	if st := s.l.Stats(); st.Open != open || st.Waiting != waiting {
		t.Fatalf("open %d, waiting %d; want %d, %d", st.Open, st.Waiting, open, waiting)
	}
}

func (s *served) eventuallyCounts(t *testing.T, open, waiting int) {
	t.Helper()
	eventually(t, "the counts of open and waiting connections", func() bool {
		st := s.l.Stats()
		return st.Open == open && st.Waiting == waiting
	})
}

// readResponse reads one answer from br and returns its status and body.
func readResponse(t *testing.T, br *bufio.Reader) (int, string) {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// HTTP/1.1: a connection waits until its request's headers are complete,
// even after its first bytes; is in a request while its handler runs and
// its answer is written; waits again between requests; and gives its slot
// back when it closes. (net/http's ConnState is no guide: it documents
// StateActive as "read 1 or more bytes", and calls the hook once the
// headers are read or have failed.)
func TestKeepAliveTransitions(t *testing.T) {
	g := newGate()
	s := serveWith(t, Config{Max: 10}, g, false)
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	s.eventuallyCounts(t, 1, 1)

	select {
	case <-s.news:
	case <-time.After(10 * time.Second):
		t.Fatal("the server's own ConnState hook was not called")
	}
	partial := "GET /block HTTP/1.1\r\nHost: x\r\n"
	io.WriteString(c, partial)
	s.readAll(t, len(partial))
	s.counts(t, 1, 1) // headers incomplete: still waiting

	for i := range 2 {
		if i == 1 {
			io.WriteString(c, "GET /block HTTP/1.1\r\nHost: x\r\n")
		}
		io.WriteString(c, "\r\n")
		g.wait(t)
		s.counts(t, 1, 0)
		g.release <- struct{}{}
		if code, body := readResponse(t, br); code != 200 || body != "ok" {
			t.Fatalf("request %d: %d %q", i+1, code, body)
		}
		s.eventuallyCounts(t, 1, 1) // kept alive, waiting for the next
	}
	c.Close()
	s.eventuallyCounts(t, 0, 0)
	if n := s.l.Stats().Addresses; n != 0 {
		t.Errorf("%d addresses kept after the connection closed", n)
	}
}

// TLS: the handshake is before the headers, so a connection that never
// finishes it, or finishes it and sends nothing, is waiting.
func TestTLSHandshakeIsWaiting(t *testing.T) {
	g := newGate()
	s := serveWith(t, Config{Max: 10}, g, true)
	raw, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	s.eventuallyCounts(t, 1, 1)
	c := tls.Client(raw, &tls.Config{RootCAs: s.roots, ServerName: "127.0.0.1", NextProtos: []string{"http/1.1"}})
	if err := c.HandshakeContext(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.counts(t, 1, 1)
	io.WriteString(c, "GET /block HTTP/1.1\r\nHost: x\r\n\r\n")
	g.wait(t)
	s.counts(t, 1, 0)
	g.release <- struct{}{}
	if code, _ := readResponse(t, bufio.NewReader(c)); code != 200 {
		t.Fatalf("status %d", code)
	}
	s.eventuallyCounts(t, 1, 1)
	c.Close()
	s.eventuallyCounts(t, 0, 0)
}

// HTTP/2: one connection runs several requests at once; it is in a request
// while any handler runs, and waits again once none does, even when the
// client resets a stream while its handler runs.
func TestHTTP2Streams(t *testing.T) {
	g := newGate()
	s := serveWith(t, Config{Max: 10}, g, true)
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: s.roots, ServerName: "127.0.0.1"},
		ForceAttemptHTTP2: true,
	}}
	defer client.CloseIdleConnections()
	get := func(ctx context.Context, done chan<- error) {
		req, _ := http.NewRequestWithContext(ctx, "GET", "https://"+s.addr+"/block", nil)
		resp, err := client.Do(req)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		done <- err
	}
	done := make(chan error, 2)
	go get(t.Context(), done)
	if r := g.wait(t); r.ProtoMajor != 2 {
		t.Fatalf("the request came over HTTP/%d, want 2", r.ProtoMajor)
	}
	go get(t.Context(), done)
	g.wait(t)
	s.counts(t, 1, 0) // one connection, two streams

	g.release <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s.counts(t, 1, 0) // the other handler still runs
	g.release <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s.eventuallyCounts(t, 1, 1)

	// A stream reset while its handler runs.
	ctx, cancel := context.WithCancel(t.Context())
	go get(ctx, done)
	g.wait(t)
	s.counts(t, 1, 0)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled request: %v", err)
	}
	s.eventuallyCounts(t, 1, 1)
}

// A connection going back to waiting past its address's budget is closed
// once its answer is written: the client reads the whole answer, then the
// end of the connection.
func TestOverBudgetIdleConnectionKeepsItsAnswer(t *testing.T) {
	g := newGate()
	s := serveWith(t, Config{Max: 10, WaitingPerAddress: 1}, g, false)
	a, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	io.WriteString(a, "GET /block HTTP/1.1\r\nHost: x\r\n\r\n")
	g.wait(t)
	b, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s.eventuallyCounts(t, 2, 1) // b waits: the address's one

	g.release <- struct{}{}
	br := bufio.NewReader(a)
	if code, body := readResponse(t, br); code != 200 || body != "ok" {
		t.Fatalf("the answer: %d %q, want 200 ok", code, body)
	}
	a.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("after its answer, the connection past the budget: %v, want EOF", err)
	}
	s.eventuallyCounts(t, 1, 1)
	if got := s.l.Stats().Refused[AddressWaiting]; got != 1 {
		t.Errorf("%d refusals for waiting connections, want 1", got)
	}
}

// Public requests: at most MaxPublic at once, the rest answered 503 with
// the connection closing, while other requests are served; a public body
// must arrive within PublicBodyTimeout.
func TestPublicRequestsAreBounded(t *testing.T) {
	g := newGate()
	bodyErr := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/pub/slow" {
			_, err := io.ReadAll(r.Body)
			bodyErr <- err
			return
		}
		g.ServeHTTP(w, r)
	})
	s := serveWith(t, Config{Max: 10, MaxPublic: 1, PublicBodyTimeout: 200 * time.Millisecond,
		Public: func(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/pub") }}, h, false)

	first, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	io.WriteString(first, "POST /pub/block HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
	g.wait(t)

	second, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	io.WriteString(second, "POST /pub/x HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\nsome of it")
	resp, err := http.ReadResponse(bufio.NewReader(second), nil)
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Error string }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || !resp.Close || resp.Header.Get("Retry-After") == "" || body.Error == "" {
		t.Fatalf("past MaxPublic: %d, Connection: close %t, Retry-After %q, error %q; want 503, closing, Retry-After and an error",
			resp.StatusCode, resp.Close, resp.Header.Get("Retry-After"), body.Error)
	}
	second.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := second.Read(make([]byte, 1)); err == nil {
		t.Fatal("the refused request's connection stays open")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the refused request's connection stays open until the test's deadline")
	}

	// Other requests are served meanwhile.
	resp, err = http.Get("http://" + s.addr + "/other")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("a request that is not public, while the public ones are busy: %v %v", resp, err)
	}
	resp.Body.Close()
	g.release <- struct{}{}
	readResponse(t, bufio.NewReader(first))
	if got := s.l.Stats().Refused[PublicBusy]; got != 1 {
		t.Errorf("%d public requests refused, want 1", got)
	}

	// A body trickled past PublicBodyTimeout fails to arrive.
	slow, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	io.WriteString(slow, "POST /pub/slow HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc")
	select {
	case err := <-bodyErr:
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("reading a trickled public body: %v, want a timeout", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a trickled public body is still being read")
	}
	eventually(t, "the public request is counted out", func() bool { return s.l.Stats().Public == 0 })
}

// An answer saying Connection: close makes its connection one that a
// newcomer may take first, once the answer is written and net/http reads
// what is left of the body (TestStateOrders: not before).
func TestClosingConnections(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusUnauthorized) // the body is not read
	})
	s := serveWith(t, Config{Max: 10}, h, false)

	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nsome")
	if code, _ := readResponse(t, bufio.NewReader(c)); code != http.StatusUnauthorized {
		t.Fatalf("status %d", code)
	}
	// net/http reads the rest of the body until the server's read
	// deadline (a minute here): meanwhile the connection is closing.
	eventually(t, "the connection is closing", func() bool { return s.l.Stats().Closing == 1 })
	c.Close()
	s.eventuallyCounts(t, 0, 0)
}

// testCert returns a self-signed certificate for 127.0.0.1 and a pool
// that trusts it.
func testCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:   time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// The answer to a public request refused is one the API's contract
// describes, for each endpoint without a key, and keeps a caller's sane
// request id.
func TestPublicRefusalFollowsTheContract(t *testing.T) {
	v := openapitest.New(t)
	l, err := New(Config{Max: 4, MaxPublic: 1, Public: func(*http.Request) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	if !l.takePublic() { // one in flight: the next is refused
		t.Fatal("no room for a public request")
	}
	h := l.handler(http.NotFoundHandler())
	for _, op := range []string{
		"POST /v1/site/handbook/feedback", "POST /v1/site/handbook/searches",
		"OPTIONS /v1/site/handbook/feedback", "OPTIONS /v1/site/handbook/searches",
		"GET /v1/site/handbook/docsapi.js", "GET /openapi.yaml",
	} {
		method, path, _ := strings.Cut(op, " ")
		req := httptest.NewRequest(method, path, strings.NewReader(`{"path": "/a", "helpful": true}`))
		req.Header.Set("X-Request-Id", "trace-7")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("X-Request-Id") != "trace-7" {
			t.Fatalf("%s: %d, X-Request-Id %q; want 503 and the caller's id", op, rec.Code, rec.Header().Get("X-Request-Id"))
		}
		v.CheckRecorder(t, req, rec)
	}
	req := httptest.NewRequest("POST", "/v1/site/handbook/feedback", nil)
	req.Header.Set("X-Request-Id", "no spaces allowed")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if id := rec.Header().Get("X-Request-Id"); !strings.HasPrefix(id, "req_") {
		t.Errorf("an insane caller's id gives X-Request-Id %q, want a new one", id)
	}
	v.CheckRecorder(t, req, rec)
}
