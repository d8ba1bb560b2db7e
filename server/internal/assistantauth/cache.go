package assistantauth

import (
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/docsapi/docsapi-go/server/internal/ratelimit"
	"github.com/docsapi/docsapi-go/server/store"
)

// maxCached bounds each of the cache's maps. Only keys that verified and
// their projects are kept, so an attacker cannot fill it with made-up
// values; the bound is for deployments with very many keys, whose cache
// then starts afresh rather than grow.
const maxCached = 10_000

// cache remembers verified assistant keys, by the hash of their secret,
// and projects, by ID, each with the time it was read from the Store, as
// package keyauth's cache does admin keys: a busy key costs two store
// reads a TTL, and a key revoked elsewhere is seen within the TTL.
type cache struct {
	ttl      time.Duration // 0: off
	mu       sync.RWMutex
	keys     map[[32]byte]cached[store.AssistantKey]
	projects map[string]cached[store.Project]
	// gen counts forgets. A value read from the Store is kept only if no
	// forget came since the read began: otherwise a request that read a
	// key just before its revocation could put it back just after.
	gen uint64
}

type cached[T any] struct {
	v  T
	at time.Time
}

func newCache(ttl time.Duration) *cache {
	return &cache{ttl: ttl, keys: map[[32]byte]cached[store.AssistantKey]{}, projects: map[string]cached[store.Project]{}}
}

// fresh reports whether a value read at "at" may still be used at now. A
// clock that went back counts as stale.
func (c *cache) fresh(at, now time.Time) bool {
	age := now.Sub(at)
	return c.ttl > 0 && age >= 0 && age < c.ttl
}

func lookup[K comparable, V any](c *cache, m map[K]cached[V], k K, now time.Time) (V, bool) {
	c.mu.RLock()
	e, ok := m[k]
	c.mu.RUnlock()
	if !ok || !c.fresh(e.at, now) {
		var zero V
		return zero, false
	}
	return e.v, true
}

func (c *cache) key(hash [32]byte, now time.Time) (store.AssistantKey, bool) {
	return lookup(c, c.keys, hash, now)
}

func (c *cache) project(id string, now time.Time) (store.Project, bool) {
	return lookup(c, c.projects, id, now)
}

// generation returns the count of forgets, to pass to a put once the
// value is read.
func (c *cache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

func (c *cache) putKey(gen uint64, hash [32]byte, k store.AssistantKey, at time.Time) {
	put(c, gen, c.keys, hash, cached[store.AssistantKey]{k, at})
}

func (c *cache) putProject(gen uint64, p store.Project, at time.Time) {
	put(c, gen, c.projects, p.ID, cached[store.Project]{p, at})
}

// put stores v under k in m, one of c's maps, unless the cache is off or a
// forget came after gen; a full map starts afresh.
func put[K comparable, V any](c *cache, gen uint64, m map[K]V, k K, v V) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if len(m) >= maxCached {
		clear(m)
	}
	m[k] = v
}

// forget drops everything, for a change made through this process.
func (c *cache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.keys)
	clear(c.projects)
}

// projectLimiter holds one token bucket per project. Only projects whose
// key verified get one, so the map grows with the projects, not with what
// clients send.
type projectLimiter struct {
	limit   ratelimit.Limit
	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

func newProjectLimiter(l ratelimit.Limit) *projectLimiter {
	return &projectLimiter{limit: l, buckets: map[string]*rate.Limiter{}}
}

// take spends a token of the project's budget, or reports how long until
// one is free.
func (p *projectLimiter) take(project string, now time.Time) (time.Duration, bool) {
	if p.limit.Off() {
		return 0, false
	}
	p.mu.Lock()
	b, ok := p.buckets[project]
	if !ok {
		b = rate.NewLimiter(rate.Limit(float64(p.limit.Requests)/p.limit.Per.Seconds()), p.limit.Requests)
		p.buckets[project] = b
	}
	p.mu.Unlock()
	res := b.ReserveN(now, 1)
	if wait := res.DelayFrom(now); wait > 0 {
		res.CancelAt(now) // a refused request must not spend the budget
		return wait, true
	}
	return 0, false
}
