package rollup

import (
	"slices"

	"github.com/docsapi/docsapi-go/server/store"
)

// HeldPaths is the one question of DayStore that CapVisitors asks.
type HeldPaths interface {
	// Held returns those of paths (sorted, distinct) that the day holds.
	Held(d ProjectDay, paths []string) ([]string, error)
}

// CappedVisitors is what CapVisitors made of a batch.
type CappedVisitors struct {
	// Counts is the batch with the paths its days do not hold renamed
	// store.OtherPagesPath.
	Counts []store.VisitorCount
	// Learned is, per day, paths found held, for DayCache.Add after the
	// commit.
	Learned map[ProjectDay][]string
}

// CapVisitors applies the views' cap to a validated batch of visitor
// counts: a path the count's day holds (the views of the same flush were
// added first) keeps its name, and any other is stored under
// store.OtherPagesPath for its hour. Visitors admit no path: a day holds
// no more paths of visitors than of views. cache answers for the paths it
// knows to be held, so a batch of known paths asks ds nothing.
func CapVisitors(counts []store.VisitorCount, cache *DayCache, ds HeldPaths) (CappedVisitors, error) {
	res := CappedVisitors{Counts: counts, Learned: make(map[ProjectDay][]string)}
	unknownOf := unknownByDay(cache, counts, func(c store.VisitorCount) (ProjectDay, string) {
		return ProjectDay{c.ProjectID, DayOf(c.Hour.Unix())}, c.Path
	})
	folded := make(map[ProjectDay]map[string]struct{})
	for _, d := range sortedDays(unknownOf) {
		unknown := unknownOf[d]
		held, err := ds.Held(d, unknown)
		if err != nil {
			return CappedVisitors{}, err
		}
		res.Learned[d] = held
		isHeld := make(map[string]struct{}, len(held))
		for _, p := range held {
			isHeld[p] = struct{}{}
		}
		for _, p := range unknown {
			if _, ok := isHeld[p]; !ok {
				if folded[d] == nil {
					folded[d] = make(map[string]struct{})
				}
				folded[d][p] = struct{}{}
			}
		}
	}
	if len(folded) == 0 {
		return res, nil
	}
	res.Counts = slices.Clone(counts)
	for i, c := range res.Counts {
		if _, ok := folded[ProjectDay{c.ProjectID, DayOf(c.Hour.Unix())}][c.Path]; ok {
			res.Counts[i].Path = store.OtherPagesPath
		}
	}
	return res, nil
}
