//go:build linux

package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// keepAliveClient is one connection to serve, plain or TLS, on which
// requests are sent one after another.
type keepAliveClient struct {
	conn net.Conn
	br   *bufio.Reader
}

// dialServe opens a TCP connection to addr from the loopback address from,
// wrapped in TLS when roots is set; the handshake, if any, happens with
// the first request.
func dialServe(t *testing.T, from, addr string, roots *x509.CertPool) *keepAliveClient {
	t.Helper()
	conn, err := dialerFrom(from).Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if roots != nil {
		conn = tls.Client(conn, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1", NextProtos: []string{"http/1.1"}})
	}
	t.Cleanup(func() { conn.Close() })
	return &keepAliveClient{conn: conn, br: bufio.NewReader(conn)}
}

// health sends GET /healthz and waits up to wait for the answer.
func (c *keepAliveClient) health(wait time.Duration) error {
	c.conn.SetDeadline(time.Now().Add(wait))
	if _, err := io.WriteString(c.conn, "GET /healthz HTTP/1.1\r\nHost: docsapi.test\r\n\r\n"); err != nil {
		return err
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || resp.Close {
		return fmt.Errorf("status %d, Connection: close %t; want 200 on a kept connection", resp.StatusCode, resp.Close)
	}
	return nil
}

// refused checks that serve closed c without answering, at once.
func (c *keepAliveClient) refused(t *testing.T, what string) {
	t.Helper()
	err := c.health(10 * time.Second)
	var ne net.Error
	switch {
	case err == nil:
		t.Fatalf("%s was answered, want it closed unanswered", what)
	case errors.As(err, &ne) && ne.Timeout():
		t.Fatalf("%s waits unanswered, want it closed at once", what)
	}
}

const ingestBody = `{"views": [{"path": "/a"}]}`

// beginIngest sends the headers of a page-view ingestion asking for 100
// Continue, and waits for it: the handler is then reading the body, so
// the connection is in a request until endIngest.
func (c *keepAliveClient) beginIngest(t *testing.T, key string) {
	t.Helper()
	c.conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c.conn, "POST /v1/analytics/handbook/views HTTP/1.1\r\nHost: docsapi.test\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", key, len(ingestBody))
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil || resp.StatusCode != http.StatusContinue {
		t.Fatalf("waiting for 100 Continue: %v %v", resp, err)
	}
}

func (c *keepAliveClient) endIngest(t *testing.T) {
	t.Helper()
	c.conn.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c.conn, ingestBody)
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("ingestion: %d, want 202", resp.StatusCode)
	}
}

// checkConnectionCap checks serve, listening on addr with a cap of 2
// connections: at the cap, a newcomer of the address holding both is
// refused at once, and one of another address takes the place of one of
// them; while both are in requests, a newcomer waits unanswered, and is
// served once one closes.
func checkConnectionCap(t *testing.T, addr, key string, roots *x509.CertPool, logs *syncBuffer) {
	t.Helper()
	first := []*keepAliveClient{dialServe(t, "127.0.0.1", addr, roots), dialServe(t, "127.0.0.1", addr, roots)}
	for i, c := range first {
		if err := c.health(5 * time.Second); err != nil {
			t.Fatalf("connection %d, under the cap: %v", i+1, err)
		}
	}
	dialServe(t, "127.0.0.1", addr, roots).refused(t, "a third connection of the address holding the 2 open")
	other := dialServe(t, "127.0.0.2", addr, roots)
	if err := other.health(5 * time.Second); err != nil {
		t.Fatalf("a connection of another address, at the cap: %v", err)
	}
	// One of the first two (the longest waiting: which one depends on
	// when serve saw each answer written) gave way.
	var kept *keepAliveClient
	for _, c := range first {
		if c.health(5*time.Second) == nil {
			if kept != nil {
				t.Fatal("both connections of the address still work after another address took the place of one")
			}
			kept = c
		}
	}
	if kept == nil {
		t.Fatal("neither connection of the address works after another took the place of one")
	}

	// Both in a request: a newcomer waits, whatever its address. serve
	// says so the first time it holds one, once it has taken it from the
	// backlog: from then on, only a change of the other two lets it in.
	const holds = "connlimit: every connection is in a request"
	if strings.Contains(logs.String(), holds) {
		t.Fatalf("serve held a connection before both of the cap were in requests:\n%s", logs)
	}
	kept.beginIngest(t, key)
	other.beginIngest(t, key)
	answered := make(chan error, 1)
	late := dialServe(t, "127.0.0.3", addr, roots)
	go func() { answered <- late.health(20 * time.Second) }()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(logs.String(), holds); time.Sleep(5 * time.Millisecond) {
		select {
		case err := <-answered:
			t.Fatalf("a connection was answered (%v) while the 2 of the cap were in requests:\n%s", err, logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not hold the newcomer while the 2 of the cap were in requests:\n%s", logs)
		}
	}
	select {
	case err := <-answered:
		t.Fatalf("a connection was answered (%v) while the 2 of the cap were in requests:\n%s", err, logs)
	default:
	}
	// The client gives up its request; serve closes the connection.
	kept.conn.Close()
	if err := <-answered; err != nil {
		t.Fatalf("the waiting connection, once one closed: %v", err)
	}
	other.endIngest(t)
	if got := strings.Count(logs.String(), "connection limit reached"); got != 1 {
		t.Errorf("the cap's warning was logged %d times, want once:\n%s", got, logs)
	}
}

// serve caps the connections it holds open, and shares them: one client
// (or many) cannot hold every connection the process can open, nor keep
// others out by holding them.
func TestServeCapsConnections(t *testing.T) {
	setup := func(t *testing.T) (dir string, env map[string]string, key string) {
		dir = t.TempDir()
		env = map[string]string{"HOME": dir, "DOCSAPI_DATA": filepath.Join(dir, "data")}
		runCLI(t, env, "", "project", "create", "--id", "handbook", "--repository", "https://git.example.com/handbook.git").expect(t, exitOK)
		r := runCLI(t, env, "", "key", "create", "--project", "handbook", "--scope", "write")
		r.expect(t, exitOK)
		return dir, env, strings.TrimSpace(r.stdout)
	}
	t.Run("flag", func(t *testing.T) {
		_, env, key := setup(t)
		addr, logs, stop := serveInProcess(t, env, "--max-connections", "2")
		checkConnectionCap(t, addr, key, nil, logs)
		if code := stop(); code != exitOK {
			t.Fatalf("exit %d:\n%s", code, logs)
		}
	})
	t.Run("configuration file", func(t *testing.T) {
		_, env, key := setup(t)
		addr, logs, stop := serveInProcess(t, env, "--config", configFile(t, `{"maxConnections": 2}`))
		checkConnectionCap(t, addr, key, nil, logs)
		if code := stop(); code != exitOK {
			t.Fatalf("exit %d:\n%s", code, logs)
		}
	})
	t.Run("TLS", func(t *testing.T) {
		// The cap counts TCP connections, so connections still in their
		// TLS handshake count too, as waiting.
		dir, env, key := setup(t)
		certPEM, keyPEM := selfSignedCert(t)
		cert := writeFile(t, filepath.Join(dir, "cert.pem"), string(certPEM))
		keyFile := writeFile(t, filepath.Join(dir, "key.pem"), string(keyPEM))
		addr, logs, stop := serveInProcess(t, env, "--tls-cert", cert, "--tls-key", keyFile, "--max-connections", "2")
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(certPEM)
		checkConnectionCap(t, addr, key, roots, logs)
		if code := stop(); code != exitOK {
			t.Fatalf("exit %d:\n%s", code, logs)
		}
	})
}

// Through serve: one address holds at most connections.perAddress
// connections, at most connections.waitingPerAddress of them waiting; a
// connection past either is closed at once, unanswered, and counted by
// reason. A trusted proxy's connections are exempt.
func TestServePerAddressBudgets(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "DOCSAPI_DATA": filepath.Join(dir, "data")}
	runCLI(t, env, "", "project", "create", "--id", "handbook", "--repository", "https://git.example.com/handbook.git").expect(t, exitOK)
	r := runCLI(t, env, "", "key", "create", "--project", "handbook", "--scope", "write")
	r.expect(t, exitOK)
	key := strings.TrimSpace(r.stdout)
	// A header timeout of a minute, so that the connections held without
	// a byte are not closed by it while the test runs.
	config := configFile(t, `{"metricsListen": "127.0.0.1:0", "trustedProxies": ["127.0.0.4"],
	  "connections": {"perAddress": 3, "waitingPerAddress": 2, "headerTimeout": "1m"}}`)
	addr, logs, stop := serveInProcess(t, env, "--config", config)
	defer func() {
		if code := stop(); code != exitOK {
			t.Errorf("exit %d:\n%s", code, logs)
		}
	}()
	m := metricsListeningRE.FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("no metrics address:\n%s", logs)
	}
	tg := &attackTarget{metricsAddr: m[1]}

	const from = "127.0.0.3"
	a, b := dialServe(t, from, addr, nil), dialServe(t, from, addr, nil)
	dialServe(t, from, addr, nil).refused(t, "a third connection waiting from one address, with a budget of 2")
	a.beginIngest(t, key) // a is in a request: one more may wait
	c := dialServe(t, from, addr, nil)
	dialServe(t, from, addr, nil).refused(t, "a fourth connection from one address, with a budget of 3")
	a.endIngest(t)
	for i, k := range []*keepAliveClient{b, c} {
		if err := k.health(5 * time.Second); err != nil {
			t.Fatalf("connection %d under the budgets: %v", i+2, err)
		}
	}
	// Another address is not affected.
	if err := dialServe(t, honestAddr, addr, nil).health(5 * time.Second); err != nil {
		t.Fatalf("another address: %v", err)
	}
	// A trusted proxy holds as many as its clients need.
	var proxied []*keepAliveClient
	for range 6 {
		proxied = append(proxied, dialServe(t, "127.0.0.4", addr, nil))
	}
	for i, k := range proxied {
		if err := k.health(5 * time.Second); err != nil {
			t.Fatalf("the trusted proxy's connection %d: %v", i+1, err)
		}
	}

	got := tg.refusals(t)
	if got["address_waiting"] < 1 || got["address_connections"] < 1 {
		t.Errorf("refusals counted %v, want address_waiting and address_connections", got)
	}
	for _, reason := range []string{"address_connections", "address_waiting", "full", "evicted", "public_busy"} {
		if _, ok := got[reason]; !ok {
			t.Errorf("no series for the reason %s: %v", reason, got)
		}
	}
}
