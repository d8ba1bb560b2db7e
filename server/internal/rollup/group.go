package rollup

import (
	"cmp"
	"slices"
	"strings"

	"github.com/docsapi/docsapi-go/server/store"
)

// Roll is the counts a batch adds to one roll: the roll of ProjectID that
// starts at At (Unix seconds), an hour, a day or a week.
type Roll struct {
	ProjectID string
	At        int64
	Counts    []Count // normalized
}

// Group turns a batch of counts, already validated as whole hours with
// counts of zero or more, into what it adds to the views' rolls of each
// kind (indexed by Kind: the hour, day and week rolls), each
// sorted by (ProjectID, At) so that stores take rolls in one order.
func Group(counts []store.ViewCount) (rolls [Kinds][]Roll, err error) {
	// The batch is sorted by path once, so that every roll's counts come
	// out in path order and Normalize only checks it: sorting each kind's
	// rolls apart would sort the same counts once per kind, on every flush.
	type entry struct {
		project string
		hour    int64
		count   Count
	}
	batch := make([]entry, 0, len(counts))
	for _, c := range counts {
		if c.Human == 0 && c.AI == 0 && c.Bot == 0 {
			continue
		}
		batch = append(batch, entry{c.ProjectID, c.Hour.Unix(), Count{Path: c.Path, Human: c.Human, AI: c.AI, Bot: c.Bot}})
	}
	slices.SortFunc(batch, func(a, b entry) int { return strings.Compare(a.count.Path, b.count.Path) })
	type key struct {
		project string
		at      int64
	}
	place := make([]int, len(batch)) // each count's roll in rolls[k]
	for k := range Kind(Kinds) {
		at := make(map[key]int) // a roll's place in rolls[k]
		// A flush's counts are mostly of one hour: the last roll is
		// nearly always the next count's, found without hashing.
		last, i := key{}, -1
		var sizes []int
		for j, e := range batch {
			if kk := (key{e.project, k.Of(e.hour)}); i < 0 || kk != last {
				n, ok := at[kk]
				if !ok {
					n = len(rolls[k])
					at[kk] = n
					rolls[k] = append(rolls[k], Roll{ProjectID: kk.project, At: kk.at})
					sizes = append(sizes, 0)
				}
				last, i = kk, n
			}
			place[j] = i
			sizes[i]++
		}
		// Each roll's counts are made to size: appended one by one, the
		// few large ones were copied over and over as they grew.
		for n := range rolls[k] {
			rolls[k][n].Counts = make([]Count, 0, sizes[n])
		}
		for j, e := range batch {
			rolls[k][place[j]].Counts = append(rolls[k][place[j]].Counts, e.count)
		}
		for n := range rolls[k] {
			if rolls[k][n].Counts, err = Normalize(rolls[k][n].Counts); err != nil {
				return rolls, err
			}
		}
		slices.SortFunc(rolls[k], func(a, b Roll) int {
			return cmp.Or(cmp.Compare(a.ProjectID, b.ProjectID), cmp.Compare(a.At, b.At))
		})
	}
	return rolls, nil
}

// Kind tells hour rolls from day and week rolls.
type Kind int

// The kinds of rolls.
const (
	Hourly Kind = iota
	Daily
	Weekly
	Kinds = iota // how many
)

// Table names the SQL table of k's views segments, the same in every
// store's schema.
func (k Kind) Table() string {
	return [...]string{"view_hour_rolls", "view_day_rolls", "view_week_rolls"}[k]
}

// Column names the time column of k's table: the Unix time of the roll's
// start.
func (k Kind) Column() string {
	return [...]string{"hour", "day", "week"}[k]
}

// Of returns the start of the roll of kind k that the hour starting at t
// goes to.
func (k Kind) Of(t int64) int64 {
	switch k {
	case Daily:
		return DayOf(t)
	case Weekly:
		return WeekOf(t)
	}
	return t
}
