//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// echoServer listens on the loopback interface and echoes each connection
// until its client stops sending.
func echoServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return l.Addr().String()
}

// syncBuffer is a log destination the proxy's goroutines may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startProxy starts a proxy allowing allow, with limit tunnels, and
// returns it, its socket and its logs. The tests' hosts listen on the
// loopback interface, which the proxy dials only where AllowAddresses says
// so: the proxy allows 127.0.0.1.
func startProxy(t *testing.T, limit int, allow ...string) (*proxy, string, *syncBuffer) {
	t.Helper()
	return startProxyWith(t, proxyTest{limit: limit, hosts: allow, addresses: []string{"127.0.0.1"}})
}

// proxyTest describes a proxy for startProxyWith.
type proxyTest struct {
	limit            int
	hosts, addresses []string // AllowHosts, AllowAddresses
	resolve          resolver // nil: the system's
	// dial, if not nil, replaces the proxy's dialing of an address.
	dial func(ctx context.Context, address string) (net.Conn, error)
}

// startProxyWith starts the proxy pt describes, and returns it, its socket
// and its logs.
func startProxyWith(t *testing.T, pt proxyTest) (*proxy, string, *syncBuffer) {
	t.Helper()
	list, err := parseAllowlist(pt.hosts)
	if err != nil {
		t.Fatal(err)
	}
	if list.addrs, err = parseAllowAddresses(pt.addresses); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "proxy.sock")
	logs := &syncBuffer{}
	p, err := newProxy(sock, list, pt.limit, slog.New(slog.NewTextHandler(logs, nil)), "job_7")
	if err != nil {
		t.Fatal(err)
	}
	if pt.resolve != nil {
		p.resolve = pt.resolve
	}
	if pt.dial != nil {
		p.dial = pt.dial
	}
	p.start()
	t.Cleanup(func() { p.Close() })
	return p, sock, logs
}

// request sends raw to the proxy and returns the connection and the
// response's head.
func request(t *testing.T, sock, raw string) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	_ = c.SetDeadline(time.Time{})
	return c, br, resp
}

func connect(target string) string {
	return fmt.Sprintf("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
}

func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestProxyRefusesOtherMethods(t *testing.T) {
	_, sock, logs := startProxy(t, 4, "example.com:80")
	_, _, resp := request(t, sock, "GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n")
	if resp.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(body(t, resp), "only CONNECT") {
		t.Errorf("GET = %s, want 405", resp.Status)
	}
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "job_id=job_7") || !strings.Contains(l, "method=GET") {
		t.Errorf("logs:\n%s", l)
	}
}

func TestProxyRefusesHosts(t *testing.T) {
	addr := echoServer(t)
	_, port, _ := net.SplitHostPort(addr)
	_, sock, logs := startProxy(t, 4, "127.0.0.1:1", "*.example.com")
	for _, target := range []string{addr, "localhost:" + port, "example.com:443", "[::1]:" + port} {
		_, _, resp := request(t, sock, connect(target))
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body(t, resp), "not among the allowed hosts") {
			t.Errorf("CONNECT %s = %s, want 403", target, resp.Status)
		}
		if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "job_id=job_7") || !strings.Contains(l, "target="+target) {
			t.Errorf("the refusal of %s is not logged:\n%s", target, l)
		}
	}
	_, _, resp := request(t, sock, "NOT HTTP\r\n\r\n")
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("garbage = %s, want 400", resp.Status)
	}
}

func TestProxyUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	_, sock, _ := startProxy(t, 4, addr)
	_, _, resp := request(t, sock, connect(addr))
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("CONNECT = %s, want 502", resp.Status)
	}
}

func TestProxyTunnel(t *testing.T) {
	addr := echoServer(t)
	_, sock, _ := startProxy(t, 4, addr)
	// The first bytes of the tunnel come with the request, as a TLS hello
	// may: the proxy must pass them on, not lose them in its buffer.
	c, br, resp := request(t, sock, connect(addr)+"early\n")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT = %s", resp.Status)
	}
	if _, err := io.WriteString(c, "late\n"); err != nil {
		t.Fatal(err)
	}
	// The end of the client's input reaches the server, whose answer still
	// comes back.
	if err := c.(*net.UnixConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(br)
	if err != nil || string(got) != "early\nlate\n" {
		t.Errorf("through the tunnel: %q, %v", got, err)
	}
}

func TestProxyLimit(t *testing.T) {
	addr := echoServer(t)
	_, sock, logs := startProxy(t, 2, addr)
	first, _, resp := request(t, sock, connect(addr))
	if resp.StatusCode != http.StatusOK {
		t.Fatal(resp.Status)
	}
	request(t, sock, connect(addr))

	third, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	if _, err := io.WriteString(third, connect(addr)); err != nil {
		t.Fatal(err)
	}
	_ = third.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	br := bufio.NewReader(third)
	if _, err := br.Peek(1); err == nil {
		t.Fatal("a third tunnel was served while two were open")
	}
	if !strings.Contains(logs.String(), "the most tunnels allowed") {
		t.Errorf("the limit is not logged:\n%s", logs.String())
	}
	first.Close()
	_ = third.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err = http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the third tunnel after one closed: %v %v", resp, err)
	}
}

func TestProxyClose(t *testing.T) {
	addr := echoServer(t)
	p, sock, _ := startProxy(t, 4, addr)
	c, br, resp := request(t, sock, connect(addr))
	if resp.StatusCode != http.StatusOK {
		t.Fatal(resp.Status)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("reading a tunnel after Close: %v, want EOF", err)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("the socket is left: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}
