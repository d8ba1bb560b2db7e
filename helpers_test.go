package docsapi

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/jarcoal/httpmock"
)

// testKey is a sentinel: no error string, log line or printed value may
// contain it, or any long part of it.
const testKey = "mint_SENTINEL7f3a9cKEYdoNotLeak"

const testBaseURL = "https://api.example.test"

// newTestClient returns a client whose requests go to a fresh httpmock
// transport (never the global one), with the project "proj" as default and
// jitter fixed at 0, so that delays are exactly the lower bound of each
// backoff window.
func newTestClient(t *testing.T, opts ...Option) (*Client, *httpmock.MockTransport) {
	t.Helper()
	mt := httpmock.NewMockTransport()
	base := []Option{
		WithHTTPClient(&http.Client{Transport: mt}),
		WithBaseURL(testBaseURL),
		WithProjectID("proj"),
	}
	c, err := NewClient(testKey, append(base, opts...)...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	c.cfg.jitter = func() float64 { return 0 }
	return c, mt
}

// fixture returns the contents of testdata/name.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return b
}
