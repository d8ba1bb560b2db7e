// Package retry decides whether a failed HTTP attempt may be tried again and
// how long the server asked the client to wait. It holds no state and does no
// I/O, so each rule is a row in a table test.
package retry

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Safety says what a retry of a request could do on the server.
type Safety int

const (
	// Replayable requests can be sent again without a second effect: GETs,
	// and writes that carry an idempotency key the server honours.
	Replayable Safety = iota
	// OnceOnly requests must not be repeated if the server may have seen them,
	// such as creating an agent job without an idempotency key: a duplicate
	// would start a second agent and open a second pull request.
	OnceOnly
)

// Decide reports whether an attempt that ended with the given HTTP status
// (0 when no response arrived) or transport error should be retried. The
// caller checks its own context first: Decide cannot tell a cancelled call
// from a timed-out connection.
func Decide(safety Safety, status int, err error) bool {
	if err != nil {
		return retryableTransportError(safety, err)
	}
	switch {
	case status == http.StatusTooManyRequests:
		// A rate-limited request was refused before any work was done, so
		// even a once-only request is safe to send again.
		return true
	case safety == OnceOnly:
		// A 5xx after a write leaves its outcome unknown: the job may have
		// been created before the failure. Only the caller can decide, e.g.
		// by listing jobs; retrying blindly could open two pull requests.
		return false
	case status == http.StatusRequestTimeout:
		return true
	case status >= 500 && status != http.StatusNotImplemented && status != http.StatusHTTPVersionNotSupported:
		return true
	}
	return false
}

func retryableTransportError(safety Safety, err error) bool {
	if errors.Is(err, context.Canceled) {
		return false // only a context produces it: the call was abandoned
	}
	// The caller checks its own context before calling Decide, so an error
	// matching context.DeadlineExceeded here is an http.Client.Timeout: a
	// network failure like any other.
	var authorityErr x509.UnknownAuthorityError
	var authorityPtrErr *x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalidErr x509.CertificateInvalidError
	if errors.As(err, &authorityErr) || errors.As(err, &authorityPtrErr) ||
		errors.As(err, &hostErr) || errors.As(err, &invalidErr) {
		return false // a misconfigured or hostile endpoint does not heal
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) && urlErr.Op == "parse" {
		return false
	}
	if safety == Replayable {
		return true
	}
	return NotSent(err)
}

// NotSent reports whether err proves the request never reached the server:
// the connection was never established (refused, unreachable, DNS failure).
// Errors after the connection opened, such as a reset while reading the
// response, prove nothing: the server may have acted on the request.
func NotSent(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return true
	}
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "dial"
}

// ParseRetryAfter reads a Retry-After header value: either a number of
// seconds or an HTTP date, which is measured from now. It reports false when
// the header is absent or malformed. A date in the past, or a negative number
// of seconds, means "retry now" and yields zero.
func ParseRetryAfter(value string, now time.Time) (time.Duration, bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(value, 64); err == nil {
		// RFC 9110 allows only whole seconds, but fractional values are seen
		// in the wild and their meaning is plain.
		switch {
		case secs != secs: // NaN
			return 0, false
		case secs <= 0:
			return 0, true
		case secs > float64(maxRetryAfter/time.Second):
			return maxRetryAfter, true
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	when, err := http.ParseTime(value)
	if err != nil {
		return 0, false
	}
	if d := when.Sub(now); d > 0 {
		return d, true
	}
	return 0, true
}

// maxRetryAfter bounds parsed values so that absurd headers cannot overflow a
// time.Duration; the client applies its own, much smaller, cap on top.
const maxRetryAfter = 365 * 24 * time.Hour
