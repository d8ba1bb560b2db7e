package server_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/store"
)

// readCounter counts the store reads that authentication makes.
type readCounter struct {
	store.Store
	keys, projects atomic.Int64
}

func (c *readCounter) KeyByHash(ctx context.Context, hash []byte) (store.APIKey, error) {
	c.keys.Add(1)
	return c.Store.KeyByHash(ctx, hash)
}

func (c *readCounter) Project(ctx context.Context, id string) (store.Project, error) {
	c.projects.Add(1)
	return c.Store.Project(ctx, id)
}

// authStatus is the status of a request as key that passes authentication
// (a job that does not exist: 404) or not.
func authStatus(e *env, key string) int {
	e.T.Helper()
	resp, _ := e.Do(key, "GET", "/v2/agent/alpha/job/job_missing", "")
	return resp.StatusCode
}

// A verified key and its project cost one store read each per TTL, not
// per request; with the cache off, every request reads both.
func TestKeyCacheSparesStoreReads(t *testing.T) {
	for _, c := range []struct {
		ttl       time.Duration
		perTTL    int64 // reads of each kind for 10 requests within a TTL
		afterNext int64 // and once the TTL has passed, for one more
	}{
		{ttl: 0, perTTL: 1, afterNext: 2},                         // the default, 1 s
		{ttl: time.Minute, perTTL: 1, afterNext: 2},               // configured
		{ttl: -1, perTTL: 10, afterNext: 11},                      // off
		{ttl: server.DefaultKeyCacheTTL, perTTL: 1, afterNext: 2}, // the default, named
	} {
		counter := new(readCounter)
		e := newEnv(t, func(cfg *server.Config) {
			counter.Store = cfg.Store
			cfg.Store = counter
			cfg.KeyCacheTTL = c.ttl
		})
		counter.keys.Store(0)
		counter.projects.Store(0)
		for range 10 {
			if got := authStatus(e, "ro"); got != http.StatusNotFound {
				t.Fatalf("TTL %v: status %d, want 404", c.ttl, got)
			}
		}
		if k, p := counter.keys.Load(), counter.projects.Load(); k != c.perTTL || p != c.perTTL {
			t.Errorf("TTL %v: 10 requests read %d keys and %d projects, want %d of each", c.ttl, k, p, c.perTTL)
		}
		ttl := c.ttl
		if ttl <= 0 {
			ttl = server.DefaultKeyCacheTTL
		}
		e.Clock.Advance(ttl)
		authStatus(e, "ro")
		if k, p := counter.keys.Load(), counter.projects.Load(); k != c.afterNext || p != c.afterNext {
			t.Errorf("TTL %v: after it passed, %d key and %d project reads, want %d", c.ttl, k, p, c.afterNext)
		}
	}
}

// A key revoked through one replica stops working there at once, and on
// another replica sharing the store within the TTL (1 s by default); one
// revoked in the store directly, as the command line does, within the TTL
// on every replica.
func TestRevokedKeyStopsWithinTheTTLOnEveryReplica(t *testing.T) {
	e := newEnv(t)
	replica, err := server.New(server.Config{Store: e.Store, Now: e.Clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	other := &env{&servertest.Env{T: t, Server: replica, Store: e.Store, Clock: e.Clock, Handler: replica, Keys: e.Keys}}
	for _, x := range []*env{e, other} {
		if got := authStatus(x, "rw"); got != http.StatusNotFound {
			t.Fatalf("before revocation: %d, want 404", got)
		}
	}
	keys, err := e.Server.Keys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, k := range keys {
		ids[k.Name] = k.ID
	}
	if err := e.Server.RevokeKey(context.Background(), ids["ci"]); err != nil {
		t.Fatal(err)
	}
	if got := authStatus(e, "rw"); got != http.StatusUnauthorized {
		t.Errorf("revoked through this replica: %d, want 401 at once", got)
	}
	e.Clock.Advance(server.DefaultKeyCacheTTL - time.Millisecond)
	if got := authStatus(other, "rw"); got != http.StatusNotFound {
		t.Errorf("the other replica, within the TTL: %d, want 404 (the key still cached)", got)
	}
	e.Clock.Advance(time.Millisecond)
	if got := authStatus(other, "rw"); got != http.StatusUnauthorized {
		t.Errorf("the other replica, a TTL after the revocation: %d, want 401", got)
	}

	// Revoked in the store, by another process.
	authStatus(e, "ro")
	if err := e.Store.RevokeKey(context.Background(), ids["dashboards"], e.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(server.DefaultKeyCacheTTL)
	for _, x := range []*env{e, other} {
		if got := authStatus(x, "ro"); got != http.StatusUnauthorized {
			t.Errorf("a TTL after a revocation in the store: %d, want 401", got)
		}
	}
}

// A key's expiry is checked on every request, however long the key stays
// cached.
func TestCachedKeyExpiresOnTime(t *testing.T) {
	e := newEnv(t, func(cfg *server.Config) { cfg.KeyCacheTTL = time.Hour })
	e.AddKey("short", server.KeyParams{Name: "short", Projects: []string{"alpha"}, Scopes: []store.Scope{store.ScopeRead}, ExpiresAt: e.Clock.Now().Add(10 * time.Second)})
	if got := authStatus(e, "short"); got != http.StatusNotFound {
		t.Fatalf("before expiry: %d, want 404", got)
	}
	e.Clock.Advance(10 * time.Second)
	if got := authStatus(e, "short"); got != http.StatusUnauthorized {
		t.Errorf("at expiry, cached: %d, want 401", got)
	}
}
