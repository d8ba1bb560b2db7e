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

// keyKind is what a key opens. The hosted service issues admin keys
// ("mint_...") for the agent, analytics, deployment and export APIs, and
// assistant keys ("mint_dsc_...") for the Assistant API alone; each API
// refuses the other kind. The zero value is adminKey, so an operation that
// says nothing needs an admin key.
type keyKind uint8

const (
	adminKey keyKind = iota
	assistantKey
)

// assistantKeyPrefix starts every assistant key. Admin keys are "mint_"
// and base62 characters, which never include "_", so no admin key starts
// with it.
const assistantKeyPrefix = "mint_dsc_"

// kindOf reads a key's kind from its prefix.
func kindOf(key string) keyKind {
	if strings.HasPrefix(key, assistantKeyPrefix) {
		return assistantKey
	}
	return adminKey
}

// String names the kind as the hosted service's documents do.
func (k keyKind) String() string {
	if k == assistantKey {
		return "an assistant key (mint_dsc_...)"
	}
	return "an admin API key (mint_...)"
}

// wrongKey is the error of an operation that needs a key of kind needs,
// called with a client whose key is of kind has. Nothing is sent: the
// service would refuse it with a 401 that does not say why. The key is
// not in the message, only its kind.
func wrongKey(needs, has keyKind) error {
	return invalid("apiKey", "is %v; this call needs %v: make a client with NewClient(key) for each kind of key", has, needs)
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
