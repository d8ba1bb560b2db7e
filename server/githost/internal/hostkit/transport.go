package hostkit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-cleanhttp"
)

// credentialHeaders are the headers that carry a token to GitHub or GitLab.
// Go's client drops Authorization on a redirect to another host, but not
// GitLab's PRIVATE-TOKEN, so the transport removes them all itself.
var credentialHeaders = []string{"Authorization", "Private-Token", "Job-Token"}

// Transport is the http.RoundTripper under each host's client. It adds the
// credential only to requests for the API's own scheme and host, and strips
// every credential header from any other request (a redirect elsewhere, or
// to plain HTTP), so a token never leaves for a host it was not meant for. It
// also logs each request at debug level, with metadata only.
type Transport struct {
	// Base sends the requests.
	Base http.RoundTripper
	// API is the API's base URL; its scheme and host decide which requests
	// carry the credential.
	API *url.URL
	// Auth, when not nil, sets the credential on a request to the API.
	// Calling it per request lets short-lived tokens be renewed.
	Auth func(ctx context.Context, h http.Header) error
	// Logger receives one debug record per request.
	Logger *slog.Logger
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	// A RoundTripper must not change the caller's request.
	out := req.Clone(req.Context())
	if t.forAPI(req.URL) {
		if t.Auth != nil {
			if err := t.Auth(req.Context(), out.Header); err != nil {
				if req.Body != nil {
					_ = req.Body.Close()
				}
				return nil, err
			}
		}
	} else {
		for _, h := range credentialHeaders {
			out.Header.Del(h)
		}
	}
	start := time.Now()
	resp, err := t.Base.RoundTrip(out)
	if t.Logger != nil && t.Logger.Enabled(req.Context(), slog.LevelDebug) {
		// The path only: queries can hold branch names, never tokens, but
		// the headers are never logged at all.
		attrs := []slog.Attr{
			slog.String("method", req.Method),
			slog.String("host", req.URL.Host),
			slog.String("path", req.URL.EscapedPath()),
			slog.Duration("duration", time.Since(start)),
		}
		if err != nil {
			attrs = append(attrs, slog.String("error", err.Error()))
		} else {
			attrs = append(attrs, slog.Int("status", resp.StatusCode))
		}
		t.Logger.LogAttrs(req.Context(), slog.LevelDebug, "githost: request", attrs...)
	}
	return resp, err
}

func (t *Transport) forAPI(u *url.URL) bool {
	return strings.EqualFold(u.Scheme, t.API.Scheme) && strings.EqualFold(hostPort(u), hostPort(t.API))
}

// hostPort is u's host with the scheme's default port made explicit, so
// that "host" and "host:443" compare equal over HTTPS.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return u.Host + ":443"
	case "http":
		return u.Host + ":80"
	}
	return u.Host
}

// HTTPClient returns a copy of c (or of a pooled client with a timeout when c
// is nil) whose transport is t with c's transport as its Base. The caller's
// client is never modified: it may be shared with other code.
func HTTPClient(c *http.Client, t *Transport) *http.Client {
	var out http.Client
	if c != nil {
		out = *c
	} else {
		out = http.Client{Timeout: 60 * time.Second}
	}
	t.Base = out.Transport
	if t.Base == nil {
		if c != nil {
			t.Base = http.DefaultTransport
		} else {
			t.Base = cleanhttp.DefaultPooledTransport()
		}
	}
	out.Transport = t
	return &out
}

// ParseBaseURL checks an API base URL given in a host's configuration.
func ParseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("the base URL %q is not a valid URL", Redact(raw))
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("the base URL %q must be an absolute http or https URL", Redact(raw))
	}
	if u.User != nil {
		return nil, errors.New("the base URL must not hold user information; give the token separately")
	}
	return u, nil
}

// ErrEmptyToken is returned when a token function gives an empty token: a
// request without credentials could only be refused, and the refusal would
// hide the cause.
var ErrEmptyToken = errors.New("the token function returned an empty token")

// TokenSource merges the two ways a host's configuration can give its token,
// a fixed string or a function called before every request, into the
// function. Exactly one must be set.
func TokenSource(token string, fn func(context.Context) (string, error)) (func(context.Context) (string, error), error) {
	switch {
	case token != "" && fn != nil:
		return nil, errors.New("set Token or TokenFunc, not both")
	case fn != nil:
		return func(ctx context.Context) (string, error) {
			tok, err := fn(ctx)
			if err != nil {
				return "", fmt.Errorf("getting the token: %w", err)
			}
			if tok == "" {
				return "", ErrEmptyToken
			}
			return tok, nil
		}, nil
	case token != "":
		return func(context.Context) (string, error) { return token, nil }, nil
	}
	return nil, errors.New("a token is required: set Token or TokenFunc")
}
