package server_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/openapitest"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

// clock is a settable time source, so expiry and rate limits are tested
// without sleeping.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// env is a server on a real SQLite file with two projects and a few keys:
// rw and ro for alpha, beta for beta. Every response passes through the
// OpenAPI validator.
type env struct {
	t       testing.TB
	srv     *server.Server
	store   store.Store
	dbPath  string // "" on PostgreSQL
	clock   *clock
	handler http.Handler
	keys    map[string]string // name → secret
	// secret is the server's Config.Secret, which a second Server on the
	// same store (a replica, or this one restarted) needs to share its
	// sessions and cursors.
	secret []byte
}

func newEnv(t testing.TB, mutate ...func(*server.Config)) *env {
	t.Helper()
	dbPath := filepath.Join(t.TempDir(), "docs.db")
	st, err := sqlite.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	e := newEnvOn(t, st, mutate...)
	e.dbPath = dbPath
	return e
}

// newEnvOn is newEnv on the store st, which the caller closes.
func newEnvOn(t testing.TB, st store.Store, mutate ...func(*server.Config)) *env {
	t.Helper()
	ctx := context.Background()
	clk := &clock{now: time.Date(2026, 8, 14, 9, 0, 0, 0, time.UTC)}
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
	e := &env{t: t, srv: srv, store: st, clock: clk, keys: map[string]string{}, secret: cfg.Secret}
	e.handler = openapitest.New(t).Handler(t, srv)
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
	e.addKey("rw", server.KeyParams{Name: "ci", Projects: []string{"alpha"}, Scopes: []store.Scope{store.ScopeWrite}})
	e.addKey("ro", server.KeyParams{Name: "dashboards", Projects: []string{"alpha"}, Scopes: []store.Scope{store.ScopeRead}})
	e.addKey("beta", server.KeyParams{Name: "beta team", Projects: []string{"beta"}, Scopes: []store.Scope{store.ScopeRead, store.ScopeWrite}})
	return e
}

func (e *env) addKey(name string, p server.KeyParams) server.NewKey {
	e.t.Helper()
	k, err := e.srv.CreateKey(context.Background(), p)
	if err != nil {
		e.t.Fatalf("CreateKey(%s): %v", name, err)
	}
	e.keys[name] = k.Secret
	return k
}

// do sends a request as the named key ("" for none) and returns the
// response with its body read.
func (e *env) do(key, method, target, body string, header ...string) (*http.Response, []byte) {
	e.t.Helper()
	var r io.Reader
	if body != "" {
		r = bytes.NewBufferString(body)
	}
	req := httptest.NewRequest(method, target, r)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+e.keys[key])
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	resp := rec.Result()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// errorOf decodes an error body's "error" field.
func errorOf(t *testing.T, body []byte) string {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
		t.Fatalf("body %s is not an error body: %v", body, err)
	}
	return e.Error
}

// jobOf decodes a job body into a map, so tests see exactly what was sent,
// nulls included.
func jobOf(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("body %s is not a job: %v", body, err)
	}
	return m
}
