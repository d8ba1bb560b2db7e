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

// Cache remembers verified keys of one kind (K: store.APIKey here,
// store.AssistantKey in package assistantauth), by the hash of their
// secret, and projects, by ID, each with the time it was read from the
// Store. Without it every request cost two store reads before its own
// work; with it, a busy key costs two a TTL. The price is staleness,
// bounded by the TTL: a key revoked by another replica or by the command
// line, or a project changed there, is seen within it (a key revoked
// through this process, at once: Forget). A key's expiry needs no read and
// is checked on every request.
type Cache[K any] struct {
	ttl      time.Duration // 0: off
	mu       sync.RWMutex
	keys     map[[32]byte]cached[K]
	projects map[string]cached[store.Project]
	// gen counts forgets. A value read from the Store is kept only if no
	// forget came since the read began: otherwise a request that read a
	// key just before its revocation could put it back just after.
	gen uint64
}

type cached[V any] struct {
	v  V
	at time.Time
}

// NewCache returns a cache whose values may be used for ttl after their
// read; a ttl of 0 or less keeps nothing.
func NewCache[K any](ttl time.Duration) *Cache[K] {
	return &Cache[K]{ttl: ttl, keys: map[[32]byte]cached[K]{}, projects: map[string]cached[store.Project]{}}
}

// fresh reports whether a value read at "at" may still be used at now. A
// clock that went back counts as stale.
func (c *Cache[K]) fresh(at, now time.Time) bool {
	age := now.Sub(at)
	return c.ttl > 0 && age >= 0 && age < c.ttl
}

func lookup[K, V any, M comparable](c *Cache[K], m map[M]cached[V], k M, now time.Time) (V, bool) {
	c.mu.RLock()
	e, ok := m[k]
	c.mu.RUnlock()
	if !ok || !c.fresh(e.at, now) {
		var zero V
		return zero, false
	}
	return e.v, true
}

// Key returns the key whose secret hashes to hash, if it is cached and
// fresh.
func (c *Cache[K]) Key(hash [32]byte, now time.Time) (K, bool) {
	return lookup(c, c.keys, hash, now)
}

// Project returns the project id, if it is cached and fresh.
func (c *Cache[K]) Project(id string, now time.Time) (store.Project, bool) {
	return lookup(c, c.projects, id, now)
}

// Generation returns the count of forgets, to pass to a Put once the
// value is read.
func (c *Cache[K]) Generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// PutKey remembers a key read at "at", unless a forget came after gen.
func (c *Cache[K]) PutKey(gen uint64, hash [32]byte, k K, at time.Time) {
	put(c, gen, c.keys, hash, cached[K]{k, at})
}

// PutProject remembers a project read at "at", unless a forget came
// after gen.
func (c *Cache[K]) PutProject(gen uint64, p store.Project, at time.Time) {
	put(c, gen, c.projects, p.ID, cached[store.Project]{p, at})
}

// put stores v under k in m, one of c's maps, unless the cache is off or a
// forget came after gen; a full map starts afresh.
func put[K any, M comparable, V any](c *Cache[K], gen uint64, m map[M]V, k M, v V) {
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

// Forget drops everything, for a change made through this process: it
// then takes effect at once here, not a TTL later.
func (c *Cache[K]) Forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.keys)
	clear(c.projects)
}
