package retry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// refusedDialError returns the error a real dial gets from a port nobody
// listens on, so the classification is checked against what the kernel and
// the net package actually produce rather than a hand-built imitation.
func refusedDialError(t *testing.T) error {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	conn, err := net.Dial("tcp", addr)
	if err == nil {
		conn.Close()
		t.Fatalf("dial %s succeeded after the listener closed", addr)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s: got %v, want a refused connection", addr, err)
	}
	return err
}

func wrapURL(err error) error {
	return &url.Error{Op: "Get", URL: "https://api.example.test/v2/agent/p/job", Err: err}
}

func TestDecideOnStatus(t *testing.T) {
	tests := []struct {
		status               int
		replayable, onceOnly bool
	}{
		{http.StatusBadRequest, false, false},
		{http.StatusUnauthorized, false, false},
		{http.StatusForbidden, false, false},
		{http.StatusNotFound, false, false},
		{http.StatusRequestTimeout, true, false},
		{http.StatusConflict, false, false},
		{http.StatusUnprocessableEntity, false, false},
		{http.StatusTooManyRequests, true, true},
		{http.StatusInternalServerError, true, false},
		{http.StatusNotImplemented, false, false},
		{http.StatusBadGateway, true, false},
		{http.StatusServiceUnavailable, true, false},
		{http.StatusGatewayTimeout, true, false},
		{http.StatusHTTPVersionNotSupported, false, false},
		{599, true, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			if got := Decide(Replayable, tt.status, nil); got != tt.replayable {
				t.Errorf("Decide(Replayable, %d, nil) = %v, want %v", tt.status, got, tt.replayable)
			}
			if got := Decide(OnceOnly, tt.status, nil); got != tt.onceOnly {
				t.Errorf("Decide(OnceOnly, %d, nil) = %v, want %v", tt.status, got, tt.onceOnly)
			}
		})
	}
}

func TestDecideOnTransportError(t *testing.T) {
	refused := refusedDialError(t)
	dnsErr := &net.DNSError{Err: "no such host", Name: "api.example.test", IsNotFound: true}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}}
	broken := &net.OpError{Op: "write", Net: "tcp", Err: &os.SyscallError{Syscall: "write", Err: syscall.EPIPE}}
	dialTimeout := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("i/o timeout")}
	unknownCA := &x509.UnknownAuthorityError{}
	wrongHost := x509.HostnameError{Certificate: &x509.Certificate{}, Host: "api.example.test"}
	expired := x509.CertificateInvalidError{Cert: &x509.Certificate{}, Reason: x509.Expired}

	tests := []struct {
		name                 string
		err                  error
		replayable, onceOnly bool
	}{
		// Only a context produces Canceled: the call was abandoned.
		{"context canceled", context.Canceled, false, false},
		{"url.Error wrapping context canceled", wrapURL(context.Canceled), false, false},
		// The caller checks its own context before Decide, so a deadline
		// error here is an http.Client timeout: a network failure that may
		// have reached the server.
		{"context deadline exceeded", context.DeadlineExceeded, true, false},
		{"wrapped deadline exceeded", fmt.Errorf("docsapi: GET /x: %w", wrapURL(context.DeadlineExceeded)), true, false},

		// Nothing reached the server: even a create may go again.
		{"refused dial", refused, true, true},
		{"url.Error wrapping refused dial", wrapURL(refused), true, true},
		{"bare ECONNREFUSED", syscall.ECONNREFUSED, true, true},
		{"DNS failure", dnsErr, true, true},
		{"url.Error wrapping DNS failure", wrapURL(dnsErr), true, true},
		{"dial timeout", dialTimeout, true, true},

		// The request may have been processed: only replayable requests go again.
		{"reset while reading", reset, true, false},
		{"url.Error wrapping reset while reading", wrapURL(reset), true, false},
		{"broken pipe while writing", broken, true, false},
		{"unexpected EOF", io.ErrUnexpectedEOF, true, false},
		{"url.Error wrapping EOF", wrapURL(io.EOF), true, false},
		{"anonymous error", errors.New("boom"), true, false},

		// A certificate problem does not heal by asking again.
		{"unknown authority (pointer)", unknownCA, false, false},
		{"url.Error wrapping TLS verification of unknown authority", wrapURL(&tls.CertificateVerificationError{Err: unknownCA}), false, false},
		{"hostname mismatch", wrapURL(&tls.CertificateVerificationError{Err: wrongHost}), false, false},
		{"expired certificate", wrapURL(&tls.CertificateVerificationError{Err: expired}), false, false},

		// A URL that cannot be parsed never will be.
		{"url parse error", &url.Error{Op: "parse", URL: "::", Err: errors.New("missing protocol scheme")}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decide(Replayable, 0, tt.err); got != tt.replayable {
				t.Errorf("Decide(Replayable, 0, %s) = %v, want %v", tt.name, got, tt.replayable)
			}
			if got := Decide(OnceOnly, 0, tt.err); got != tt.onceOnly {
				t.Errorf("Decide(OnceOnly, 0, %s) = %v, want %v", tt.name, got, tt.onceOnly)
			}
		})
	}
}

// A body that broke off after a 2xx or 429 header still counts as a
// transport failure: the error, not the status, decides.
func TestDecideErrorTakesPrecedenceOverStatus(t *testing.T) {
	tests := []struct {
		name   string
		safety Safety
		status int
		want   bool
	}{
		{"replayable 200 with broken body", Replayable, http.StatusOK, true},
		{"once-only 201 with broken body", OnceOnly, http.StatusCreated, false},
		{"once-only 429 with broken body", OnceOnly, http.StatusTooManyRequests, false},
		{"replayable 404 with broken body", Replayable, http.StatusNotFound, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decide(tt.safety, tt.status, io.ErrUnexpectedEOF); got != tt.want {
				t.Errorf("Decide(%v, %d, ErrUnexpectedEOF) = %v, want %v", tt.safety, tt.status, got, tt.want)
			}
		})
	}
}

// The error crypto/tls really returns for an untrusted server holds an
// x509.UnknownAuthorityError value, not a pointer.
func TestDecideDoesNotRetryARealUnknownAuthorityError(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the failed handshake is the point
	srv.StartTLS()
	defer srv.Close()
	hc := &http.Client{Transport: &http.Transport{}}
	resp, err := hc.Get(srv.URL)
	if err == nil {
		resp.Body.Close()
		t.Fatal("GET of a server with a self-signed certificate succeeded")
	}
	var verr *tls.CertificateVerificationError
	if !errors.As(err, &verr) {
		t.Fatalf("got %v, want a certificate verification error", err)
	}
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"real error from the client", err},
		{"value form", x509.UnknownAuthorityError{}},
	} {
		if Decide(Replayable, 0, tt.err) {
			t.Errorf("%s: Decide(Replayable) = true, want false", tt.name)
		}
	}
}

// The comment in retryableTransportError promises that an http.Client
// timeout is retried like other network failures. net/http's timeout error
// matches context.DeadlineExceeded, so this checks the real error.
func TestDecideRetriesAnHTTPClientTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hang := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			<-req.Context().Done()
			return nil, req.Context().Err()
		})
		hc := &http.Client{Timeout: time.Second, Transport: hang}
		resp, err := hc.Get("https://api.example.test/v2/agent/p/job/j")
		if err == nil {
			resp.Body.Close()
			t.Fatal("GET succeeded, want a client timeout")
		}
		var netErr net.Error
		if !errors.As(err, &netErr) || !netErr.Timeout() {
			t.Fatalf("got %v, want a timeout", err)
		}
		if !Decide(Replayable, 0, err) {
			t.Errorf("Decide(Replayable, 0, %v) = false, want true", err)
		}
		if Decide(OnceOnly, 0, err) {
			t.Errorf("Decide(OnceOnly, 0, %v) = true, want false: the request was sent", err)
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestNotSent(t *testing.T) {
	refused := refusedDialError(t)
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"refused dial", refused, true},
		{"url.Error wrapping refused dial", wrapURL(refused), true},
		{"bare ECONNREFUSED", syscall.ECONNREFUSED, true},
		{"DNS failure", &net.DNSError{Err: "no such host", Name: "x.test", IsNotFound: true}, true},
		{"dial error of any kind", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("network is unreachable")}, true},
		{"reset while reading", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, false},
		{"bare ECONNRESET", syscall.ECONNRESET, false},
		{"unexpected EOF", io.ErrUnexpectedEOF, false},
		{"context canceled", context.Canceled, false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NotSent(tt.err); got != tt.want {
				t.Errorf("NotSent(%s) = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	// Saturday, 1 August 2026, noon UTC.
	now := time.Date(2026, time.August, 1, 12, 0, 0, 0, time.UTC)
	const year = 365 * 24 * time.Hour
	tests := []struct {
		name   string
		value  string
		want   time.Duration
		wantOK bool
	}{
		{"integer seconds", "5", 5 * time.Second, true},
		{"surrounding spaces", "  7  ", 7 * time.Second, true},
		{"surrounding tabs", "\t3\t", 3 * time.Second, true},
		{"fractional seconds", "1.5", 1500 * time.Millisecond, true},
		{"small fraction", "0.25", 250 * time.Millisecond, true},
		{"zero means now", "0", 0, true},
		{"negative means now", "-3", 0, true},
		{"negative fraction means now", "-0.5", 0, true},
		{"exactly the bound", "31536000", year, true},
		{"just over the bound is clamped", "31536001", year, true},
		{"huge is clamped", "99999999999", year, true},
		{"exponent past Duration is clamped", "1e300", year, true},
		{"HTTP date in the future", "Sat, 01 Aug 2026 12:01:30 GMT", 90 * time.Second, true},
		{"RFC 850 date in the future", "Saturday, 01-Aug-26 12:01:30 GMT", 90 * time.Second, true},
		{"asctime date in the future", "Sat Aug  1 12:01:30 2026", 90 * time.Second, true},
		{"HTTP date now", "Sat, 01 Aug 2026 12:00:00 GMT", 0, true},
		{"HTTP date in the past", "Sat, 01 Aug 2026 11:59:00 GMT", 0, true},
		{"HTTP date years ago", "Thu, 01 Jan 2015 00:00:00 GMT", 0, true},
		{"empty", "", 0, false},
		{"only spaces", "   ", 0, false},
		{"garbage", "soon", 0, false},
		{"unit suffix", "5s", 0, false},
		{"decimal comma", "1,5", 0, false},
		{"NaN", "NaN", 0, false},
		{"date without zone", "2026-08-01T12:01:30", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseRetryAfter(tt.value, now)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.value, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
