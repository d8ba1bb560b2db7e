package rollup

import (
	"maps"
	"slices"

	"github.com/docsapi/docsapi-go/server/store"
)

// Rebuilder turns rows of counts, read in (project, hour) order, into one
// segment per hour, day and week roll, and the paths each day holds: what
// a migration that changes the rolls' layout rebuilds them with. Memory
// holds one week of one project.
type Rebuilder struct {
	// Write stores a roll of one segment; Day, if set, stores the paths a
	// day holds (sorted, store.OtherPagesPath aside).
	Write func(kind Kind, project string, at int64, counts []Count) error
	Day   func(project string, day int64, paths []string) error

	project         string
	hour, day, week int64
	hourRows        []Count // the hour's
	dayRows         []Count // the day's, hour after hour
	weekRows        []Count // the week's, day after day
	dayPaths        map[string]struct{}
}

// Add takes the next row. A row with no views counts as a path of its
// day but is in no roll.
func (b *Rebuilder) Add(c store.ViewCount) error {
	at := c.Hour.Unix()
	if c.ProjectID != b.project || at != b.hour {
		if err := b.endHour(); err != nil {
			return err
		}
		if day := DayOf(at); c.ProjectID != b.project || day != b.day {
			if err := b.endDay(); err != nil {
				return err
			}
			b.day = day
		}
		if week := WeekOf(at); c.ProjectID != b.project || week != b.week {
			if err := b.endWeek(); err != nil {
				return err
			}
			b.week = week
		}
		b.project, b.hour = c.ProjectID, at
	}
	if b.Day != nil && c.Path != store.OtherPagesPath {
		if b.dayPaths == nil {
			b.dayPaths = make(map[string]struct{})
		}
		b.dayPaths[c.Path] = struct{}{}
	}
	if c.Human > 0 || c.AI > 0 || c.Bot > 0 {
		b.hourRows = append(b.hourRows, Count{Path: c.Path, Human: c.Human, AI: c.AI, Bot: c.Bot})
	}
	return nil
}

// end writes the roll of kind of rows, which it empties, adding its counts
// to next, the rows of the roll of the next kind up, if any.
func (b *Rebuilder) end(kind Kind, at int64, rows *[]Count, next *[]Count) error {
	if len(*rows) == 0 {
		return nil
	}
	counts, err := Normalize(*rows) // sorts them, if not sorted already
	if err != nil {
		return err
	}
	if err := b.Write(kind, b.project, at, counts); err != nil {
		return err
	}
	if next != nil {
		*next = append(*next, counts...)
	}
	*rows = (*rows)[:0]
	return nil
}

func (b *Rebuilder) endHour() error { return b.end(Hourly, b.hour, &b.hourRows, &b.dayRows) }

func (b *Rebuilder) endDay() error {
	if len(b.dayPaths) > 0 {
		if err := b.Day(b.project, b.day, slices.Sorted(maps.Keys(b.dayPaths))); err != nil {
			return err
		}
		clear(b.dayPaths)
	}
	return b.end(Daily, b.day, &b.dayRows, &b.weekRows)
}

func (b *Rebuilder) endWeek() error { return b.end(Weekly, b.week, &b.weekRows, nil) }

// Flush ends the last hour, day and week.
func (b *Rebuilder) Flush() error {
	if err := b.endHour(); err != nil {
		return err
	}
	if err := b.endDay(); err != nil {
		return err
	}
	return b.endWeek()
}
