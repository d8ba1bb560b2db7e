package rollup

import "sync"

// maxCachedPaths bounds a PathCache: about 100 MiB of keys at the most.
// Past it the cache starts over rather than tracking which paths are hot:
// refilling costs one lookup per path, once.
const maxCachedPaths = 1 << 20

// PathCache remembers the IDs a store gave paths, so that a flush of paths
// seen before looks none of them up. A path's ID never changes and is never
// given to another path, so a cached ID is never stale; the only rule is to
// Add IDs after the transaction that assigned them has committed, as a
// rolled-back insert's ID does not exist. The zero PathCache is empty and
// ready to use; it is safe for concurrent use.
type PathCache struct {
	mu  sync.Mutex
	ids map[PathKey]int64
}

// Lookup returns the cached IDs of paths and the paths it does not know.
func (c *PathCache) Lookup(paths []PathKey) (ids map[PathKey]int64, missing []PathKey) {
	ids = make(map[PathKey]int64, len(paths))
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range paths {
		if id, ok := c.ids[p]; ok {
			ids[p] = id
		} else {
			missing = append(missing, p)
		}
	}
	return ids, missing
}

// Add remembers committed IDs.
func (c *PathCache) Add(ids map[PathKey]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids == nil || len(c.ids)+len(ids) > maxCachedPaths {
		c.ids = make(map[PathKey]int64, len(ids))
	}
	for p, id := range ids {
		c.ids[p] = id
	}
}
