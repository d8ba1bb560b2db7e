package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// ServeMux.Handler reports the path of its redirect to a trailing slash as
// the pattern of a CONNECT request; the route is only ever a pattern
// registered.
func TestRegisteredIgnoresPathsReportedAsPatterns(t *testing.T) {
	mux := newRouteMux()
	mux.HandleFunc("/files/{name}/", func(http.ResponseWriter, *http.Request) {})
	for _, tc := range []struct{ method, path, want string }{
		{"GET", "/files/a/", "/files/{name}/"},
		{"CONNECT", "/files/chosen-by-the-client", ""},
		{"GET", "/files/chosen-by-the-client", "/files/{name}/"}, // redirected to the pattern's route
		{"GET", "/elsewhere", ""},
	} {
		_, pattern := mux.Handler(httptest.NewRequest(tc.method, tc.path, nil))
		if got := mux.registered(pattern); got != tc.want {
			t.Errorf("%s %s: route %q (the mux said %q), want %q", tc.method, tc.path, got, pattern, tc.want)
		}
	}
}
