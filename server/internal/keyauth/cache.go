package keyauth

import (
	"sync"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// maxCachedAuth bounds each of the cache's maps. Only keys that verified
// and projects a verified key may use are kept, so an attacker cannot fill
// it with made-up values; the bound is for deployments with very many
// keys, whose cache then starts afresh rather than grow.
const maxCachedAuth = 10_000

// authCache remembers verified keys, by the hash of their secret, and
// projects, by ID, each with the time it was read from the Store. Without
// it every request cost two store reads before its own work; with it, a
// busy key costs two a TTL. The price is staleness, bounded by the TTL: a
// key revoked by another replica or by the command line, or a project
// changed there, is seen within it (a key revoked through this process,
// at once). A key's expiry needs no read and is checked on every request.
type authCache struct {
	ttl      time.Duration // 0: off
	mu       sync.RWMutex
	keys     map[[32]byte]cachedKey
	projects map[string]cachedProject
	// gen counts forgets. A value read from the Store is kept only if no
	// forget came since the read began: otherwise a request that read a
	// key just before its revocation could put it back just after.
	gen uint64
}

type cachedKey struct {
	key store.APIKey
	at  time.Time
}

type cachedProject struct {
	project store.Project
	at      time.Time
}

func newAuthCache(ttl time.Duration) *authCache {
	return &authCache{ttl: ttl, keys: map[[32]byte]cachedKey{}, projects: map[string]cachedProject{}}
}

// fresh reports whether a value read at "at" may still be used at now. A
// clock that went back counts as stale.
func (c *authCache) fresh(at, now time.Time) bool {
	age := now.Sub(at)
	return c.ttl > 0 && age >= 0 && age < c.ttl
}

// key returns the key whose secret hashes to hash, if it is cached and
// fresh.
func (c *authCache) key(hash [32]byte, now time.Time) (store.APIKey, bool) {
	c.mu.RLock()
	e, ok := c.keys[hash]
	c.mu.RUnlock()
	if !ok || !c.fresh(e.at, now) {
		return store.APIKey{}, false
	}
	return e.key, true
}

// project returns the project id, if it is cached and fresh.
func (c *authCache) project(id string, now time.Time) (store.Project, bool) {
	c.mu.RLock()
	e, ok := c.projects[id]
	c.mu.RUnlock()
	if !ok || !c.fresh(e.at, now) {
		return store.Project{}, false
	}
	return e.project, true
}

// generation returns the count of forgets, to pass to put once the
// value is read.
func (c *authCache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// putKey remembers a key read at "at", unless a forget came after gen.
func (c *authCache) putKey(gen uint64, hash [32]byte, k store.APIKey, at time.Time) {
	put(c, gen, c.keys, hash, cachedKey{key: k, at: at})
}

// putProject remembers a project read at "at", unless a forget came
// after gen.
func (c *authCache) putProject(gen uint64, p store.Project, at time.Time) {
	put(c, gen, c.projects, p.ID, cachedProject{project: p, at: at})
}

// put stores v under k in m, one of c's maps, unless the cache is off or a
// forget came after gen; a full map starts afresh.
func put[K comparable, V any](c *authCache, gen uint64, m map[K]V, k K, v V) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if len(m) >= maxCachedAuth {
		clear(m)
	}
	m[k] = v
}

// forget drops everything, for a change made through this process: it
// then takes effect at once here, not a TTL later.
func (c *authCache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.keys)
	clear(c.projects)
}
