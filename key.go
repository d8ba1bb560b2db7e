package docsapi

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
)

// secret holds the API key. Its printed forms are redacted, so a key that
// reaches a log line or a %#v through some path nobody foresaw still does not
// leak; the only way out is headerValues, used when a request is built.
type secret struct {
	value string
	// auth is the Authorization header's value, built once. Every request
	// shares it (see Client.send), so nothing may change its element.
	auth []string
}

func newSecret(key string) *secret {
	// The literal's capacity is its length, 1: a transport that appended to
	// the header would copy the slice, not write into the shared array.
	return &secret{value: key, auth: []string{"Bearer " + key}}
}

// redacted keeps the key's type prefix ("mint_"), which helps to tell an
// admin key from an assistant key in a bug report, and nothing else.
func (s secret) redacted() string {
	if i := strings.IndexByte(s.value, '_'); i > 0 && i <= 8 {
		return s.value[:i+1] + "[REDACTED]"
	}
	return "[REDACTED]"
}

func (s *secret) headerValues() []string { return s.auth }

// scrub replaces the key in b with its redacted form. A server or proxy that
// echoes the request (some debugging proxies quote the Authorization header
// in their error pages) would otherwise put the key into an APIError and,
// through its message, into logs.
func (s secret) scrub(b []byte) []byte {
	if !bytes.Contains(b, []byte(s.value)) {
		return b
	}
	return bytes.ReplaceAll(b, []byte(s.value), []byte(s.redacted()))
}

func (s secret) String() string               { return s.redacted() }
func (s secret) GoString() string             { return `"` + s.redacted() + `"` }
func (s secret) LogValue() slog.Value         { return slog.StringValue(s.redacted()) }
func (s secret) MarshalText() ([]byte, error) { return []byte(s.redacted()), nil }

// Format covers every verb, including %x and %q, which would otherwise
// print the raw string.
func (s secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, s.GoString())
		return
	}
	fmt.Fprint(f, s.redacted())
}
