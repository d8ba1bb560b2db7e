package rollup

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/docsapi/docsapi-go/server/store"
)

// PathKey names a path of a project, the unit a store assigns IDs to.
type PathKey struct {
	ProjectID, Path string
}

// Paths returns the distinct paths of counts that have human or AI views,
// sorted: the paths a store must have IDs for before Group. Sorted, two
// stores inserting new paths at once take their locks in the same order.
func Paths(counts []store.ViewCount) []PathKey {
	seen := make(map[PathKey]struct{})
	var keys []PathKey
	for _, c := range counts {
		if c.Human == 0 && c.AI == 0 {
			continue
		}
		k := PathKey{c.ProjectID, c.Path}
		if _, ok := seen[k]; !ok {
			seen[k] = struct{}{}
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b PathKey) int {
		return cmp.Or(cmp.Compare(a.ProjectID, b.ProjectID), cmp.Compare(a.Path, b.Path))
	})
	return keys
}

// Roll is the counts a batch adds to one roll: the roll of ProjectID that
// starts at At (Unix seconds), an hour or a day.
type Roll struct {
	ProjectID string
	At        int64
	Counts    []Count // normalized
}

// Group turns a batch of counts, already validated as whole hours with
// counts of zero or more, into what it adds to hour rolls and to day rolls,
// each sorted by (ProjectID, At) so that stores lock rolls in one order.
// ids holds the ID of every path Paths returned.
func Group(counts []store.ViewCount, ids map[PathKey]int64) (hours, days []Roll, err error) {
	type key struct {
		project string
		at      int64
	}
	byHour := make(map[key][]Count)
	byDay := make(map[key][]Count)
	for _, c := range counts {
		if c.Human == 0 && c.AI == 0 {
			continue
		}
		id, ok := ids[PathKey{c.ProjectID, c.Path}]
		if !ok {
			return nil, nil, fmt.Errorf("rollup: no ID for path %q of project %q", c.Path, c.ProjectID)
		}
		rc := Count{PathID: id, Human: c.Human, AI: c.AI}
		hour := c.Hour.Unix()
		byHour[key{c.ProjectID, hour}] = append(byHour[key{c.ProjectID, hour}], rc)
		byDay[key{c.ProjectID, DayOf(hour)}] = append(byDay[key{c.ProjectID, DayOf(hour)}], rc)
	}
	flatten := func(m map[key][]Count) ([]Roll, error) {
		rolls := make([]Roll, 0, len(m))
		for k, cs := range m {
			cs, err := Normalize(cs)
			if err != nil {
				return nil, err
			}
			rolls = append(rolls, Roll{ProjectID: k.project, At: k.at, Counts: cs})
		}
		slices.SortFunc(rolls, func(a, b Roll) int {
			return cmp.Or(cmp.Compare(a.ProjectID, b.ProjectID), cmp.Compare(a.At, b.At))
		})
		return rolls, nil
	}
	if hours, err = flatten(byHour); err != nil {
		return nil, nil, err
	}
	if days, err = flatten(byDay); err != nil {
		return nil, nil, err
	}
	return hours, days, nil
}

// Kind tells hour rolls from day rolls.
type Kind int

// The kinds of rolls.
const (
	Hourly Kind = iota
	Daily
)

// Table names the SQL table of k's rolls, the same in every store's schema.
func (k Kind) Table() string {
	if k == Daily {
		return "view_day_rolls"
	}
	return "view_hour_rolls"
}

// Column names the time column of k's table: the Unix time of the roll's
// start.
func (k Kind) Column() string {
	if k == Daily {
		return "day"
	}
	return "hour"
}

// Apply adds validated counts to the rolls through a store's two
// primitives, in the store's transaction: assign returns the IDs of paths,
// giving new ones IDs, and merge adds rolls of one kind to the stored ones.
// Paths cache knows are not passed to assign. Apply returns the IDs assign
// gave, for the store to add to cache once its transaction commits.
func Apply(counts []store.ViewCount, cache *PathCache,
	assign func([]PathKey) (map[PathKey]int64, error),
	merge func(Kind, []Roll) error,
) (fresh map[PathKey]int64, err error) {
	ids, missing := cache.Lookup(Paths(counts))
	if len(missing) > 0 {
		if fresh, err = assign(missing); err != nil {
			return nil, err
		}
		maps.Copy(ids, fresh)
	}
	hours, days, err := Group(counts, ids)
	if err != nil {
		return nil, err
	}
	if err := merge(Hourly, hours); err != nil {
		return nil, err
	}
	if err := merge(Daily, days); err != nil {
		return nil, err
	}
	return fresh, nil
}
