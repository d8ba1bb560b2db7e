package rollup

import (
	"cmp"
	"slices"

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
// counts of zero or more, into what it adds to the rolls of each kind
// (indexed by Kind), each sorted by (ProjectID, At) so that stores take
// rolls in one order.
func Group(counts []store.ViewCount) (rolls [kinds][]Roll, err error) {
	type key struct {
		project string
		at      int64
	}
	var by [kinds]map[key][]Count
	for k := range by {
		by[k] = make(map[key][]Count)
	}
	for _, c := range counts {
		if c.Human == 0 && c.AI == 0 && c.Bot == 0 {
			continue
		}
		rc := Count{Path: c.Path, Human: c.Human, AI: c.AI, Bot: c.Bot}
		for k := range Kind(kinds) {
			at := k.Of(c.Hour.Unix())
			by[k][key{c.ProjectID, at}] = append(by[k][key{c.ProjectID, at}], rc)
		}
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
	for k := range rolls {
		if rolls[k], err = flatten(by[k]); err != nil {
			return rolls, err
		}
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
	kinds = iota // how many
)

// Table names the SQL table of k's segments, the same in every store's
// schema.
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
