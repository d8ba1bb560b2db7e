//go:build linux

package sandbox

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeResolver answers each name with the next of its answers, the last
// one again once they run out, and counts the lookups: a DNS server that
// an attacker controls, rebinding a name between two lookups.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][][]string
	lookups map[string]int
}

func (r *fakeResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if network != "ip" {
		return nil, errors.New("fake resolver: network " + network)
	}
	answers, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	n := r.lookups[host]
	r.lookups[host]++
	var out []netip.Addr
	for _, s := range answers[min(n, len(answers)-1)] {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

func (r *fakeResolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lookups[host]
}

// recordingDialer stands for the network: it records the addresses the
// proxy dials and connects each to the echo server at echo.
type recordingDialer struct {
	echo   string
	mu     sync.Mutex
	dialed []string
}

func (d *recordingDialer) dial(ctx context.Context, address string) (net.Conn, error) {
	d.mu.Lock()
	d.dialed = append(d.dialed, address)
	d.mu.Unlock()
	var nd net.Dialer
	return nd.DialContext(ctx, "tcp", d.echo)
}

func (d *recordingDialer) addresses() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.dialed...)
}

// TestProxyRefusesAddresses: an allowed name that resolves to the host's
// own machine, its networks or a metadata service gets 403, logged at Warn
// with the job, and nothing is dialed; a public address is dialed, as the
// very address the proxy checked.
func TestProxyRefusesAddresses(t *testing.T) {
	const public = "93.184.215.14"
	res := &fakeResolver{lookups: map[string]int{}, answers: map[string][][]string{
		"loopback.example.com": {{"127.0.0.1"}},
		"private.example.com":  {{"10.0.0.1"}},
		"v6loop.example.com":   {{"::1"}},
		"mapped.example.com":   {{"::ffff:127.0.0.1"}},
		"metadata.example.com": {{"169.254.169.254"}},
		"nat64.example.com":    {{"64:ff9b::a9fe:a9fe"}},
		"ula.example.com":      {{"fd00:ec2::254"}},
		"public.example.com":   {{public}},
		"public6.example.com":  {{"2606:4700:4700::1111"}},
	}}
	d := &recordingDialer{echo: echoServer(t)}
	_, sock, logs := startProxyWith(t, proxyTest{limit: 4, hosts: []string{"*.example.com"}, resolve: res, dial: d.dial})
	for _, name := range []string{"loopback", "private", "v6loop", "mapped", "metadata", "nat64", "ula"} {
		target := name + ".example.com:443"
		_, _, resp := request(t, sock, connect(target))
		if b := body(t, resp); resp.StatusCode != http.StatusForbidden || !strings.Contains(b, "refuses") {
			t.Errorf("CONNECT %s = %s %q, want 403", target, resp.Status, b)
		}
		if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "job_id=job_7") || !strings.Contains(l, "target="+target) {
			t.Errorf("the refusal of %s is not logged at Warn with the job:\n%s", target, l)
		}
	}
	if got := d.addresses(); len(got) != 0 {
		t.Fatalf("the proxy dialed %q for names of refused addresses", got)
	}
	if l := logs.String(); !strings.Contains(l, "169.254.169.254 is a cloud metadata address") || !strings.Contains(l, "127.0.0.1 is a loopback address") {
		t.Errorf("the log does not say which address was refused, and why:\n%s", l)
	}
	for _, tt := range []struct{ target, dialed string }{
		{"public.example.com:443", public + ":443"},
		{"public6.example.com:8443", "[2606:4700:4700::1111]:8443"},
	} {
		list := []string{"*.example.com", "*.example.com:8443"}
		_, sock, _ := startProxyWith(t, proxyTest{limit: 4, hosts: list, resolve: res, dial: d.dial})
		_, _, resp := request(t, sock, connect(tt.target))
		if resp.StatusCode != http.StatusOK {
			t.Errorf("CONNECT %s = %s, want 200", tt.target, resp.Status)
		}
		if got := d.addresses(); len(got) == 0 || got[len(got)-1] != tt.dialed {
			t.Errorf("CONNECT %s dialed %q, want %s", tt.target, got, tt.dialed)
		}
	}
}

// TestProxyDialsTheAddressItChecked: a name that answers a public address
// to the proxy's check and loopback after (DNS rebinding) is dialed at
// the public address, and looked up once; of a name with mixed answers,
// only the public address is dialed.
func TestProxyDialsTheAddressItChecked(t *testing.T) {
	const public = "93.184.215.14"
	res := &fakeResolver{lookups: map[string]int{}, answers: map[string][][]string{
		"rebind.example.com": {{public}, {"127.0.0.1"}},
		"mixed.example.com":  {{"127.0.0.1", "10.1.1.1", public, "::1"}},
	}}
	d := &recordingDialer{echo: echoServer(t)}
	_, sock, logs := startProxyWith(t, proxyTest{limit: 4, hosts: []string{"*.example.com"}, resolve: res, dial: d.dial})
	_, _, resp := request(t, sock, connect("rebind.example.com:443"))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT = %s", resp.Status)
	}
	if got := d.addresses(); len(got) != 1 || got[0] != public+":443" {
		t.Errorf("dialed %q, want only %s:443, the address checked", got, public)
	}
	if n := res.count("rebind.example.com"); n != 1 {
		t.Errorf("the name was looked up %d times for one tunnel, want once", n)
	}
	// The next tunnel gets the new answer, and is refused.
	_, _, resp = request(t, sock, connect("rebind.example.com:443"))
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("CONNECT after the rebinding = %s, want 403", resp.Status)
	}

	_, _, resp = request(t, sock, connect("mixed.example.com:443"))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT mixed = %s", resp.Status)
	}
	if got := d.addresses(); len(got) != 2 || got[1] != public+":443" {
		t.Errorf("dialed %q, want only %s:443 for the mixed name", got, public)
	}
	if l := logs.String(); !strings.Contains(l, "skipped addresses") || !strings.Contains(l, "10.1.1.1 is a private address") {
		t.Errorf("the skipped addresses are not logged:\n%s", l)
	}
}

// TestProxyRefusesLocalhost runs the proxy with the system's resolver and
// dialer: an allowed name that leads to the loopback interface, where a
// server listens, is refused, and the server sees no connection.
func TestProxyRefusesLocalhost(t *testing.T) {
	port, accepted := countingServer(t)
	_, sock, _ := startProxyWith(t, proxyTest{limit: 4, hosts: []string{"localhost:" + port}})
	_, _, resp := request(t, sock, connect("localhost:"+port))
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("CONNECT localhost:%s = %s, want 403", port, resp.Status)
	}
	// A literal address in CONNECT is checked the same.
	_, sock, _ = startProxyWith(t, proxyTest{limit: 4, hosts: []string{"127.0.0.1:" + port}})
	_, _, resp = request(t, sock, connect("127.0.0.1:"+port))
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("CONNECT 127.0.0.1:%s = %s, want 403", port, resp.Status)
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("the server on the loopback interface got %d connections through the proxy", n)
	}
}

// TestDialAddressChecksTheSocket: the proxy's dialer checks the address of
// the socket it connects, whatever its caller checked before.
func TestDialAddressChecksTheSocket(t *testing.T) {
	port, accepted := countingServer(t)
	_, err := dialAddress(t.Context(), "127.0.0.1:"+port, &addressPolicy{})
	if !errors.Is(err, errRefusedAddress) {
		t.Errorf("dialAddress(127.0.0.1) = %v, want it refused", err)
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("the refused dial reached the server (%d connections)", n)
	}
	allow, err := parseAllowAddresses([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := dialAddress(t.Context(), "127.0.0.1:"+port, allow)
	if err != nil {
		t.Fatalf("dialAddress with 127.0.0.1 allowed: %v", err)
	}
	c.Close()
}

// countingServer listens on 127.0.0.1 and counts the connections it
// accepts; it returns its port.
func countingServer(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port, &n
}
