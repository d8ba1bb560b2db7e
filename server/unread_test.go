package server_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/store"
)

// serveLikeServe runs h on a loopback listener with the timeouts of
// `docsapi serve`, so that a connection the server keeps reading stays open
// for the whole minute of the read timeout: a test that waits a few seconds
// for the server to close fails by its own deadline, not by a timing guess.
func serveLikeServe(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      time.Minute,
		IdleTimeout:       2 * time.Minute,
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// slowRequest is what a client sending a body a few bytes at a time saw.
type slowRequest struct {
	resp    *http.Response
	body    string
	closed  bool          // the server closed the connection after answering
	after   time.Duration // from the request's head to the close
	readErr error         // what the read after the response returned
}

// sendSlowly sends the head of a request declaring a body of contentLength
// bytes (chunked when it is -1), then trickles the body, 4 bytes every 50 ms,
// as a client holding connections open would. It reads the response and
// then waits, at most wait, for the server to close the connection.
func sendSlowly(t *testing.T, addr, method, target, key string, contentLength int, wait time.Duration) slowRequest {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: docsapi.test\r\nContent-Type: application/json\r\n", method, target)
	if key != "" {
		head += "Authorization: Bearer " + key + "\r\n"
	}
	if contentLength >= 0 {
		head += fmt.Sprintf("Content-Length: %d\r\n", contentLength)
	} else {
		head += "Transfer-Encoding: chunked\r\n"
	}
	start := time.Now()
	if _, err := io.WriteString(conn, head+"\r\n"); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	wrote := make(chan struct{})
	defer func() { close(stop); <-wrote }()
	go func() {
		defer close(wrote)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		chunk := "    "
		if contentLength < 0 {
			chunk = "4\r\n    \r\n"
		}
		for sent := 0; contentLength < 0 || sent+4 <= contentLength; sent += 4 {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if _, err := io.WriteString(conn, chunk); err != nil {
				return // the server closed the connection
			}
		}
	}()

	conn.SetReadDeadline(start.Add(wait))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("%s %s: no response within %s: %v", method, target, wait, err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the response body: %v", method, target, err)
	}
	got := slowRequest{resp: resp, body: string(b)}
	_, got.readErr = br.ReadByte()
	got.after = time.Since(start)
	// EOF is the server's FIN. A reset also means the server let go of the
	// connection (it closed with bytes of ours unread); only a timeout means
	// it is still holding it.
	got.closed = errors.Is(got.readErr, io.EOF) || errors.Is(got.readErr, syscall.ECONNRESET)
	return got
}

// A request the API refuses before reading its body must not let the
// client hold the connection by sending that body slowly: the answer comes
// at once and the connection closes right after it, long before the read
// timeout. Otherwise net/http reads (up to 256 KiB of) the unread body to
// reuse the connection, at whatever pace the client sends it.
func TestRefusedRequestsCloseTheConnectionInsteadOfReadingTheBody(t *testing.T) {
	e := newEnv(t, func(c *server.Config) {
		c.RateLimits = server.RateLimits{Agent: server.Limit{Requests: 1, Per: time.Hour}}
	})
	addr := serveLikeServe(t, e.Server)
	// The same keys and projects, but the project beta is gone: its key
	// gets 404.
	noBeta, err := server.New(server.Config{Store: withoutProject{e.Store, "beta"}})
	if err != nil {
		t.Fatal(err)
	}
	noBetaAddr := serveLikeServe(t, noBeta)
	// Spend the agent budget of the key "rw", for the 429 below.
	if resp, body := e.Do("rw", "GET", "/v2/agent/alpha/job/job_x", ""); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("spending the budget: %d %s", resp.StatusCode, body)
	}

	const wait = 5 * time.Second // the read timeout is 60 s
	for _, tt := range []struct {
		name, addr, target, key string
		contentLength           int
		status                  int
	}{
		{"bad key", addr, "/v1/analytics/alpha/views", "mint_" + strings.Repeat("x", 43), 262144, http.StatusUnauthorized},
		{"no key, small body", addr, "/v2/agent/alpha/job", "", 4096, http.StatusUnauthorized},
		{"no key, chunked body", addr, "/v2/agent/alpha/job", "", -1, http.StatusUnauthorized},
		{"key for another project", addr, "/v1/analytics/alpha/views", e.Keys["beta"], 262144, http.StatusForbidden},
		{"read-only key", addr, "/v2/agent/alpha/job", e.Keys["ro"], 262144, http.StatusForbidden},
		{"project gone", noBetaAddr, "/v1/analytics/beta/views", e.Keys["beta"], 262144, http.StatusNotFound},
		{"rate limited", addr, "/v2/agent/alpha/job", e.Keys["rw"], 262144, http.StatusTooManyRequests},
		{"unknown route", addr, "/v2/agent/alpha/nope", "", 262144, http.StatusNotFound},
		{"declared body over the bound", addr, "/v1/analytics/alpha/views", e.Keys["rw"], 2 << 20, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := sendSlowly(t, tt.addr, "POST", tt.target, tt.key, tt.contentLength, wait)
			if r.resp.StatusCode != tt.status {
				t.Fatalf("status %d %s, want %d", r.resp.StatusCode, r.body, tt.status)
			}
			if !r.closed {
				t.Fatalf("the connection was still open %s after the request (Connection: close %t; read: %v): the server is reading the body it refused",
					r.after.Round(time.Millisecond), r.resp.Close, r.readErr)
			}
			if !r.resp.Close {
				t.Errorf("the %d does not say Connection: close", r.resp.StatusCode)
			}
			t.Logf("closed %s after the request (%v)", r.after.Round(time.Millisecond), r.readErr)
		})
	}
}

// withoutProject is a store in which one project does not exist.
type withoutProject struct {
	store.Store
	id string
}

func (w withoutProject) Project(ctx context.Context, id string) (store.Project, error) {
	if id == w.id {
		return store.Project{}, store.ErrNotFound
	}
	return w.Store.Project(ctx, id)
}

// Connections whose request was read whole stay open, whatever the answer:
// closing is for bodies the server did not read.
func TestConnectionsStayOpenWhenTheBodyWasRead(t *testing.T) {
	e := newEnv(t)
	addr := serveLikeServe(t, e.Server)
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(conn)
	views := `{"views": [{"path": "/a"}]}`
	for i, req := range []struct {
		method, target, key, body string
		status                    int
	}{
		{"POST", "/v1/analytics/alpha/views", e.Keys["rw"], views, http.StatusAccepted},
		{"GET", "/v1/analytics/alpha/views", "mint_" + strings.Repeat("x", 43), "", http.StatusUnauthorized},
		{"POST", "/v1/analytics/alpha/views", e.Keys["rw"], `{"views": []}`, http.StatusBadRequest},
		{"GET", "/v1/analytics/alpha/views", e.Keys["ro"], "", http.StatusOK},
	} {
		msg := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: docsapi.test\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s",
			req.method, req.target, req.key, len(req.body), req.body)
		if _, err := io.WriteString(conn, msg); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d on the same connection: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != req.status || resp.Close {
			t.Fatalf("request %d: %d %s (Connection: close %t), want %d on a connection kept open",
				i, resp.StatusCode, b, resp.Close, req.status)
		}
	}
}
