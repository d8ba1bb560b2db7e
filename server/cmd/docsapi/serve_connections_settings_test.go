package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/docsapi/docsapi-go/server/api"
)

// "connections": the flags over the file over the defaults, printed as
// the file would write them, and refused with the key named when wrong.
func TestServeConnectionsSetting(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "DOCSAPI_DATA": filepath.Join(dir, "data")}
	config := configFile(t, `{"connections": {"perAddress": 10, "waitingPerAddress": 3, "maxPublic": 9, "publicBodyTimeout": "2s",
	    "headerTimeout": "2s", "requestTimeout": "30s", "idleTimeout": "1m"},
	  "trustedProxies": ["10.0.0.0/8"]}`)
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"default", nil, `{"perAddress":128,"waitingPerAddress":64,"maxPublic":256,"publicBodyTimeout":"5s","headerTimeout":"5s","requestTimeout":"1m","idleTimeout":"2m"}`},
		{"maxPublic follows maxConnections", []string{"--max-connections", "40"},
			`{"perAddress":128,"waitingPerAddress":64,"maxPublic":10,"publicBodyTimeout":"5s","headerTimeout":"5s","requestTimeout":"1m","idleTimeout":"2m"}`},
		{"file", []string{"--config", config}, `{"perAddress":10,"waitingPerAddress":3,"maxPublic":9,"publicBodyTimeout":"2s","headerTimeout":"2s","requestTimeout":"30s","idleTimeout":"1m"}`},
		{"flags over file", []string{"--config", config, "--max-connections-per-address", "7", "--max-waiting-per-address", "2"},
			`{"perAddress":7,"waitingPerAddress":2,"maxPublic":9,"publicBodyTimeout":"2s","headerTimeout":"2s","requestTimeout":"30s","idleTimeout":"1m"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var want any
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if got := jsonText(printedConfig(t, env, tt.args...)["connections"]); got != jsonText(want) {
				t.Errorf("connections printed %s, want %s", got, jsonText(want))
			}
		})
	}

	// The settings reach the limiter and the HTTP server.
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	f := &serveFlags{}
	f.register(fs)
	if err := fs.Parse([]string{"--config", config, "--max-connections", "100"}); err != nil {
		t.Fatal(err)
	}
	set, err := f.resolve(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	c := set.connlimitConfig(nil)
	if c.Max != 100 || c.PerAddress != 10 || c.WaitingPerAddress != 3 || c.MaxPublic != 9 || c.PublicBodyTimeout != 2*time.Second ||
		fmt.Sprint(c.TrustedProxies) != "[10.0.0.0/8]" || c.Public == nil {
		t.Errorf("the limiter is given %+v", c)
	}
	srv := newHTTPServer(http.NotFoundHandler(), slog.New(slog.DiscardHandler), set.timeouts)
	if srv.ReadHeaderTimeout != 2*time.Second || srv.ReadTimeout != 30*time.Second || srv.IdleTimeout != time.Minute {
		t.Errorf("the HTTP server's timeouts: header %s, request %s, idle %s", srv.ReadHeaderTimeout, srv.ReadTimeout, srv.IdleTimeout)
	}

	for _, tt := range []struct {
		config string
		args   []string
		msg    string
	}{
		{`{"connections": {"perAddress": -1}}`, nil, "connections.perAddress (from configuration file) must be at least 1, got -1"},
		{`{"connections": {"waitingPerAddress": -2}}`, nil, "connections.waitingPerAddress (from configuration file) must be at least 1, got -2"},
		{`{}`, []string{"--max-connections-per-address", "0"}, "connections.perAddress (from --max-connections-per-address) must be at least 1, got 0"},
		{`{}`, []string{"--max-waiting-per-address", "-1"}, "connections.waitingPerAddress (from --max-waiting-per-address) must be at least 1, got -1"},
		{`{"connections": {"headerTimeout": "-1s"}}`, nil, `connections.headerTimeout: "-1s" is negative`},
		{`{"connections": {"headerTimeout": "2m"}}`, nil, "connections.headerTimeout (2m0s) must not be longer than connections.requestTimeout (1m0s)"},
		{`{"connections": {"maxWaiting": 3}}`, nil, `connections: unknown field "maxWaiting"`},
		{`{"connections": {"maxPublic": -1}}`, nil, "connections.maxPublic must be 0 (the default: a quarter of maxConnections) or more, got -1"},
		{`{"connections": {"maxPublic": 1024}}`, nil, "connections.maxPublic (1024) must be below maxConnections (1024, from default)"},
		{`{"maxConnections": 8, "connections": {"maxPublic": 9}}`, nil, "connections.maxPublic (9) must be below maxConnections (8, from configuration file)"},
		{`{"connections": {"publicBodyTimeout": "-1s"}}`, nil, `connections.publicBodyTimeout: "-1s" is negative`},
	} {
		args := append([]string{"serve", "--print-config", "--config", configFile(t, tt.config)}, tt.args...)
		runCLI(t, env, "", args...).expect(t, exitUsage, tt.msg)
	}
}

// Public requests, which connections.maxPublic bounds, are exactly those
// anyone may send: every operation of the contract without an API key
// but the health check, and none with one; the dashboard's pages are not
// public, and paths no route answers are. Tricks with the path change
// nothing the mux does not redirect.
func TestPublicRequestsAreThoseWithoutAKey(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	fill := strings.NewReplacer("{projectId}", "handbook", "{id}", "job_1", "{feedbackId}", "fb_1", "{threadId}", "th_1")
	seen := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			sec := doc.Security
			if op.Security != nil {
				sec = *op.Security
			}
			keyed := false
			for _, req := range sec {
				if _, ok := req["adminKey"]; ok {
					keyed = true
				}
			}
			want := !keyed && path != "/healthz"
			r := httptest.NewRequest(method, fill.Replace(path), nil)
			if got := isPublicRequest(r); got != want {
				t.Errorf("%s %s: public %t, want %t (API key: %t)", method, path, got, want, keyed)
			}
			seen++
		}
	}
	if seen < 20 {
		t.Fatalf("only %d operations in the contract", seen)
	}
	for _, tt := range []struct {
		method, path string
		want         bool
	}{
		{"GET", "/dashboard/", false},
		{"GET", "/dashboard", false},
		{"POST", "/dashboard/login", false},
		{"GET", "/dashboard/projects/handbook/jobs", false},
		{"GET", "/no/such/path", true},
		{"POST", "/v1/site/handbook/feedback", true},
		{"POST", "/v1//site/handbook/feedback", true},
		{"POST", "/v1/analytics/../site/handbook/feedback", false}, // redirected, body unread
	} {
		if got := isPublicRequest(httptest.NewRequest(tt.method, "http://docsapi.test"+tt.path, nil)); got != tt.want {
			t.Errorf("%s %s: public %t, want %t", tt.method, tt.path, got, tt.want)
		}
	}
}
