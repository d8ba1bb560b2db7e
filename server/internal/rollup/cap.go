package rollup

import (
	"cmp"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/docsapi/docsapi-go/server/store"
)

// ProjectDay is a project's UTC day: what the cap on distinct paths counts in.
type ProjectDay struct {
	ProjectID string
	At        int64 // Unix time of the day's start
}

// DayStore is what Cap needs of a store, in the transaction that adds the
// batch, before the batch's counts are written.
type DayStore interface {
	// Held returns those of paths (sorted, distinct) that the day holds:
	// that have views of any kind in one of its hours.
	Held(d ProjectDay, paths []string) ([]string, error)
	// Paths returns how many distinct paths the day holds, not counting
	// store.OtherPagesPath.
	Paths(d ProjectDay) (int64, error)
	// Record adds admitted (sorted, none held) to the paths the day
	// holds, and folds to its counts of folds.
	Record(d ProjectDay, admitted []string, folds store.ViewFolds) error
}

// Capped is what Cap made of a batch.
type Capped struct {
	// Counts is the batch with the paths folded renamed
	// store.OtherPagesPath; counts with no views at all are dropped.
	Counts []store.ViewCount
	// Learned is, per day, paths the day holds once the batch commits,
	// for DayCache.Add after the commit.
	Learned map[ProjectDay][]string
	// Folds counts what was folded.
	Folds store.ViewFolds
}

// Cap applies the cap of limit distinct paths per project and UTC day to a
// validated batch. A path the day holds already (views of any kind in any
// hour of the day) keeps counting; a new one is admitted while the day
// holds fewer than limit paths, and past that its counts go to
// store.OtherPagesPath for their hour. Within a batch, new paths are
// admitted in byte order. OtherPagesPath itself is never folded and does
// not count. cache answers for the paths it knows to be held, so a batch of
// known paths asks ds nothing.
func Cap(counts []store.ViewCount, limit int64, cache *DayCache, ds DayStore) (Capped, error) {
	kept := make([]store.ViewCount, 0, len(counts))
	for _, c := range counts {
		if c.Human == 0 && c.AI == 0 && c.Bot == 0 {
			continue // adds nothing
		}
		kept = append(kept, c)
	}
	res := Capped{Counts: kept, Learned: make(map[ProjectDay][]string)}
	unknown := unknownByDay(cache, kept, func(c store.ViewCount) (ProjectDay, string) {
		return ProjectDay{c.ProjectID, DayOf(c.Hour.Unix())}, c.Path
	})
	days := sortedDays(unknown)
	folded := make(map[ProjectDay]map[string]struct{})
	admitted := make(map[ProjectDay][]string)
	for _, d := range days {
		held, err := ds.Held(d, unknown[d])
		if err != nil {
			return Capped{}, err
		}
		isHeld := make(map[string]bool, len(held))
		for _, p := range held {
			isHeld[p] = true
		}
		learned := held
		var fresh []string
		for _, p := range unknown[d] {
			if !isHeld[p] {
				fresh = append(fresh, p)
			}
		}
		if len(fresh) > 0 {
			stored, err := ds.Paths(d)
			if err != nil {
				return Capped{}, err
			}
			room := int(min(max(limit-stored, 0), int64(len(fresh))))
			learned = append(learned, fresh[:room]...)
			admitted[d] = fresh[:room]
			if room < len(fresh) {
				folded[d] = make(map[string]struct{}, len(fresh)-room)
				for _, p := range fresh[room:] {
					folded[d][p] = struct{}{}
				}
			}
		}
		res.Learned[d] = learned
	}
	dayFolds := make(map[ProjectDay]store.ViewFolds)
	for i, c := range res.Counts {
		d := ProjectDay{c.ProjectID, DayOf(c.Hour.Unix())}
		if _, ok := folded[d][c.Path]; !ok {
			continue
		}
		res.Counts[i].Path = store.OtherPagesPath
		f := dayFolds[d]
		f.Counts++
		f.Views = saturatingAdd(f.Views, c.Human, c.AI, c.Bot)
		dayFolds[d] = f
	}
	for _, d := range days {
		f := dayFolds[d]
		if len(admitted[d]) == 0 && f.Counts == 0 {
			continue
		}
		if err := ds.Record(d, admitted[d], f); err != nil {
			return Capped{}, err
		}
		res.Folds.Counts += f.Counts
		res.Folds.Views = saturatingAdd(res.Folds.Views, f.Views)
	}
	return res, nil
}

// saturatingAdd adds non-negative numbers, stopping at MaxInt64: the count
// of views folded is a report, not a total anyone adds to.
func saturatingAdd(sum int64, more ...int64) int64 {
	for _, v := range more {
		if sum > 1<<63-1-v {
			return 1<<63 - 1
		}
		sum += v
	}
	return sum
}

// maxCachedDayPaths bounds a DayCache: about 100 MiB of paths at the most.
// Past it the cache starts over: refilling costs one lookup per path and
// day, once.
const maxCachedDayPaths = 1 << 20

// DayCache remembers paths that days are known to hold, so that a flush of
// paths seen before asks the database nothing. A day never stops holding a
// path, so an entry is never stale; the only rule is to Add after the
// transaction that stored the counts has committed. The zero DayCache is
// empty and ready to use; it is safe for concurrent use.
type DayCache struct {
	mu   sync.Mutex
	days map[ProjectDay]map[string]struct{}
	n    int
}

// unknownByDay returns, for each day of a batch, the distinct paths of its
// counts (store.OtherPagesPath aside) that the cache does not know the day
// holds, sorted; of returns a count's day and path. Days whose paths are
// all known are left out: a batch of known paths, a flush's usual, builds
// no set and sorts nothing.
func unknownByDay[T any](c *DayCache, counts []T, of func(T) (ProjectDay, string)) map[ProjectDay][]string {
	sets := make(map[ProjectDay]map[string]struct{})
	c.mu.Lock()
	var (
		last   ProjectDay
		known  map[string]struct{}
		looked bool
	)
	for _, count := range counts {
		d, path := of(count)
		if path == store.OtherPagesPath {
			continue
		}
		// A flush's counts are mostly of one day: its set is looked up
		// once for the run of counts that share it.
		if !looked || d != last {
			last, known, looked = d, c.days[d], true
		}
		if _, ok := known[path]; ok {
			continue
		}
		if sets[d] == nil {
			sets[d] = make(map[string]struct{})
		}
		sets[d][path] = struct{}{}
	}
	c.mu.Unlock()
	unknown := make(map[ProjectDay][]string, len(sets))
	for d, set := range sets {
		unknown[d] = slices.Sorted(maps.Keys(set))
	}
	return unknown
}

// sortedDays returns the days of byDay in the order stores take them.
func sortedDays[V any](byDay map[ProjectDay]V) []ProjectDay {
	return slices.SortedFunc(maps.Keys(byDay), func(a, b ProjectDay) int {
		return cmp.Or(cmp.Compare(a.ProjectID, b.ProjectID), cmp.Compare(a.At, b.At))
	})
}

// Add remembers paths that days hold, once committed.
func (c *DayCache) Add(learned map[ProjectDay][]string) {
	n := 0
	for _, ps := range learned {
		n += len(ps)
	}
	if n == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.days == nil || c.n+n > maxCachedDayPaths {
		c.days, c.n = make(map[ProjectDay]map[string]struct{}), 0
	}
	for d, ps := range learned {
		set := c.days[d]
		if set == nil {
			set = make(map[string]struct{}, len(ps))
			c.days[d] = set
		}
		for _, p := range ps {
			if _, ok := set[p]; !ok {
				set[p] = struct{}{}
				c.n++
			}
		}
	}
}

// FoldCounter adds up what Cap folded, for store.ViewFolder. The zero
// FoldCounter is zero and ready to use; it is safe for concurrent use.
type FoldCounter struct {
	counts, views atomic.Int64
}

// Add adds f, once the transaction that folded it has committed.
func (c *FoldCounter) Add(f store.ViewFolds) {
	if f.Counts == 0 && f.Views == 0 {
		return
	}
	c.counts.Add(f.Counts)
	for {
		old := c.views.Load()
		if c.views.CompareAndSwap(old, saturatingAdd(old, f.Views)) {
			return
		}
	}
}

// Load returns the sums so far.
func (c *FoldCounter) Load() store.ViewFolds {
	return store.ViewFolds{Counts: c.counts.Load(), Views: c.views.Load()}
}

// Capper is what a store keeps in memory for the cap: the limit, the paths
// days are known to hold and the folds counted. The zero Capper has no
// room; set Limit. It is safe for concurrent use.
type Capper struct {
	Limit int64
	days  DayCache
	folds FoldCounter
}

// Cap applies the cap to a batch inside the store's transaction (see Cap).
func (c *Capper) Cap(counts []store.ViewCount, ds DayStore) (Capped, error) {
	return Cap(counts, c.Limit, &c.days, ds)
}

// Committed records what a batch capped by c taught once its transaction
// has committed: the paths its days hold, and its folds. A batch that did
// not commit is forgotten.
func (c *Capper) Committed(capped Capped) {
	c.days.Add(capped.Learned)
	c.folds.Add(capped.Folds)
}

// Folds returns what the batches committed so far folded.
func (c *Capper) Folds() store.ViewFolds { return c.folds.Load() }
