package keyauth

import (
	"fmt"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// A key read before a revocation through this Server, and put after it,
// is not cached: the revocation would otherwise be undone for a TTL.
func TestAuthCacheDropsValuesReadBeforeAForget(t *testing.T) {
	c := NewCache[store.APIKey](time.Second)
	now := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	h := Hash("mint_x")
	gen := c.Generation() // a request starts reading the key
	c.Forget()            // the key is revoked meanwhile
	c.PutKey(gen, h, store.APIKey{ID: "key_x"}, now)
	c.PutProject(gen, store.Project{ID: "p"}, now)
	if _, ok := c.Key(h, now); ok {
		t.Error("a key read before the forget was cached")
	}
	if _, ok := c.Project("p", now); ok {
		t.Error("a project read before the forget was cached")
	}
	c.PutKey(c.Generation(), h, store.APIKey{ID: "key_x"}, now)
	if _, ok := c.Key(h, now); !ok {
		t.Error("a key read after the forget was not cached")
	}
	// A clock that goes back does not stretch the TTL.
	if _, ok := c.Key(h, now.Add(-time.Nanosecond)); ok {
		t.Error("a key was fresh before it was read")
	}
}

// The cache holds at most maxCachedAuth keys and projects, however many
// there are.
func TestAuthCacheIsBounded(t *testing.T) {
	c := NewCache[store.APIKey](time.Second)
	now := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	for i := range 3 * maxCachedAuth {
		c.PutKey(c.Generation(), Hash(fmt.Sprint(i)), store.APIKey{}, now)
		c.PutProject(c.Generation(), store.Project{ID: fmt.Sprint(i)}, now)
	}
	if len(c.keys) > maxCachedAuth || len(c.projects) > maxCachedAuth {
		t.Errorf("%d keys and %d projects cached, at most %d each", len(c.keys), len(c.projects), maxCachedAuth)
	}
}
