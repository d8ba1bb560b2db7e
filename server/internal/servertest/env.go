// Package servertest is the harness of the server's HTTP tests, which the
// tests of package server and of its features (site, dashboard, ingest)
// share: a Server on a real SQLite file with two projects and a few keys,
// every answer checked against the OpenAPI document, a settable clock,
// the requests of a documentation site's pages, a browser tab, and an
// assistant answering from an index with a fake model (NewAssistant). It
// imports no client: tests that drive the server through the SDK make
// their client themselves.
package servertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/openapitest"
	"github.com/docsapi/docsapi-go/server/internal/sqlitetest"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

// Clock is a settable time source, so expiry and rate limits are tested
// without sleeping.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a Clock at now.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

// Now tells the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Env is a server on a real SQLite file with two projects and a few keys:
// rw and ro for alpha, beta for beta. Every response passes through the
// OpenAPI validator.
type Env struct {
	T       testing.TB
	Server  *server.Server
	Store   store.Store
	DBPath  string // "" on a store not opened by New
	Clock   *Clock
	Handler http.Handler      // the Server behind the OpenAPI validator
	Keys    map[string]string // name → secret
	// Secret is the server's Config.Secret, which a second Server on the
	// same store (a replica, or this one restarted) needs to share its
	// sessions and cursors.
	Secret []byte
}

// New returns an Env on a new SQLite file, its Config changed by mutate.
func New(t testing.TB, mutate ...func(*server.Config)) *Env {
	t.Helper()
	dbPath := sqlitetest.FreshFile(t)
	st, err := sqlite.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	e := NewOn(t, st, mutate...)
	e.DBPath = dbPath
	return e
}

// NewOn is New on the store st, which the caller closes.
func NewOn(t testing.TB, st store.Store, mutate ...func(*server.Config)) *Env {
	t.Helper()
	ctx := context.Background()
	clk := NewClock(time.Date(2026, 8, 14, 9, 0, 0, 0, time.UTC))
	secret := make([]byte, server.SecretBytes)
	rand.Read(secret)
	cfg := server.Config{Store: st, Now: clk.Now, Secret: secret}
	for _, m := range mutate {
		m(&cfg)
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	e := &Env{T: t, Server: srv, Store: st, Clock: clk, Keys: map[string]string{}, Secret: cfg.Secret}
	e.Handler = openapitest.New(t).Handler(t, srv)
	for _, p := range []store.Project{
		{ID: "alpha", Name: "Alpha docs", Repository: "https://git.example.com/alpha/docs.git", Ref: "main", Model: "claude-sonnet-4"},
		// beta names no ref and no model: its jobs start from the default
		// branch and report server.UnnamedModel.
		{ID: "beta", Name: "Beta docs", Repository: "https://git.example.com/beta/docs.git"},
	} {
		if _, err := srv.CreateProject(ctx, p); err != nil {
			t.Fatalf("CreateProject: %v", err)
		}
	}
	e.AddKey("rw", server.KeyParams{Name: "ci", Projects: []string{"alpha"}, Scopes: []store.Scope{store.ScopeWrite}})
	e.AddKey("ro", server.KeyParams{Name: "dashboards", Projects: []string{"alpha"}, Scopes: []store.Scope{store.ScopeRead}})
	e.AddKey("beta", server.KeyParams{Name: "beta team", Projects: []string{"beta"}, Scopes: []store.Scope{store.ScopeRead, store.ScopeWrite}})
	return e
}

// AddKey makes a key, known to Do by name.
func (e *Env) AddKey(name string, p server.KeyParams) server.NewKey {
	e.T.Helper()
	k, err := e.Server.CreateKey(context.Background(), p)
	if err != nil {
		e.T.Fatalf("CreateKey(%s): %v", name, err)
	}
	e.Keys[name] = k.Secret
	return k
}

// Do sends a request as the named key ("" for none), with headers given
// as name, value pairs, and returns the response with its body read.
func (e *Env) Do(key, method, target, body string, header ...string) (*http.Response, []byte) {
	e.T.Helper()
	var r io.Reader
	if body != "" {
		r = bytes.NewBufferString(body)
	}
	req := httptest.NewRequest(method, target, r)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+e.Keys[key])
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	e.Handler.ServeHTTP(rec, req)
	resp := rec.Result()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// GetJSON sends a GET as the named key, wants 200, and decodes the body.
func (e *Env) GetJSON(key, target string, v any) {
	e.T.Helper()
	resp, body := e.Do(key, "GET", target, "")
	if resp.StatusCode != http.StatusOK {
		e.T.Fatalf("GET %s: %d %s", target, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		e.T.Fatalf("GET %s: %v in %s", target, err, body)
	}
}

// Serve starts the server (behind the OpenAPI validator) on a loopback
// listener, mounted under /api as a host application would mount it, and
// returns its URL. The validator sees the paths after the prefix is
// stripped, which are the document's paths.
func (e *Env) Serve() string {
	ts := httptest.NewServer(http.StripPrefix("/api", e.Handler))
	e.T.Cleanup(ts.Close)
	return ts.URL + "/api"
}

// ErrorOf decodes an error body's "error" field.
func ErrorOf(t testing.TB, body []byte) string {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
		t.Fatalf("body %s is not an error body: %v", body, err)
	}
	return e.Error
}

// JobOf decodes a job body into a map, so tests see exactly what was
// sent, nulls included.
func JobOf(t testing.TB, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("body %s is not a job: %v", body, err)
	}
	return m
}
