package rollup

import (
	"bytes"
	"cmp"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/docsapi/docsapi-go/server/internal/hll"
	"github.com/docsapi/docsapi-go/server/store"
)

// A day's visitors, as the stores keep them (see the package doc):
//
//   - every day: a segment of its paths' numbers (Count: human, AI and
//     total visitors) and the project's three numbers, which are not the
//     sum of the paths' (a visitor of two pages is one visitor of the
//     project);
//   - while the day is open: each path's sketches and the project's, from
//     which every flush of the day makes the numbers of the paths it
//     touches anew (MergeDay);
//   - once the day is closed (its salt is gone, so no new hash of it can
//     be made): its segment is added to its week's roll, and its sketches
//     are deleted. Visitors a late flush brings to a closed day are added
//     to its numbers (sqlstore's addDay): none is lost, though one also counted
//     before the day closed counts twice.
//
// A range's visitors are so the sum of its days', each day read once:
// from its week's roll if the day is closed and the whole week is in the
// range, else from its own segment.

// ProjectKey is the path under which a store keeps the project's own
// sketches of an open day beside its paths': no path is empty.
const ProjectKey = ""

// DayVisitors is what a batch adds to one project's day: the sketches of
// each path, in path order, and of the project (human, then AI).
type DayVisitors struct {
	ProjectID string
	Day       int64 // Unix time of the UTC day's start
	Paths     []string
	Sketches  [][2]hll.Sketch // by index of Paths
	Project   [2]hll.Sketch
}

// GroupVisitors turns a validated batch, the cap applied, into what it adds
// to each project's day, sorted by project, then day. Counts of the same
// path and day (several hours) are merged.
func GroupVisitors(counts []store.VisitorCount) ([]DayVisitors, error) {
	type key struct {
		project string
		day     int64
	}
	at := map[key]int{}
	var days []DayVisitors
	paths := map[key]map[string]*[2]hll.Sketch{}
	for _, c := range counts {
		if len(c.Human) == 0 && len(c.AI) == 0 {
			continue
		}
		k := key{c.ProjectID, DayOf(c.Hour.Unix())}
		i, ok := at[k]
		if !ok {
			i = len(days)
			at[k] = i
			days = append(days, DayVisitors{ProjectID: k.project, Day: k.day})
			paths[k] = map[string]*[2]hll.Sketch{}
		}
		sk := paths[k][c.Path]
		if sk == nil {
			sk = new([2]hll.Sketch)
			paths[k][c.Path] = sk
		}
		for class, b := range [2][]byte{c.Human, c.AI} {
			if len(b) == 0 {
				continue
			}
			if err := sk[class].MergeBinary(b); err != nil {
				return nil, err
			}
			if err := days[i].Project[class].MergeBinary(b); err != nil {
				return nil, err
			}
		}
	}
	for i := range days {
		d := &days[i]
		byPath := paths[key{d.ProjectID, d.Day}]
		d.Paths = slices.Sorted(maps.Keys(byPath))
		d.Sketches = make([][2]hll.Sketch, len(d.Paths))
		for j, p := range d.Paths {
			d.Sketches[j] = *byPath[p]
		}
	}
	slices.SortFunc(days, func(a, b DayVisitors) int {
		return cmp.Or(strings.Compare(a.ProjectID, b.ProjectID), cmp.Compare(a.Day, b.Day))
	})
	return days, nil
}

// Numbers returns the visitors of d's sketches: each path's with a visitor
// (in path order), and the project's.
func (d *DayVisitors) Numbers() (paths []Count, project store.VisitorTotals) {
	paths = make([]Count, 0, len(d.Paths))
	for i, p := range d.Paths {
		c := numbers(&d.Sketches[i])
		if c.Bot > 0 {
			c.Path = p
			paths = append(paths, c)
		}
	}
	c := numbers(&d.Project)
	return paths, store.VisitorTotals{Human: c.Human, AI: c.AI, Total: c.Bot}
}

// numbers returns the human, AI and total visitors of a pair of sketches,
// the total in Bot.
func numbers(s *[2]hll.Sketch) Count {
	h, a := int64(s[0].Estimate()), int64(s[1].Estimate())
	total := max(h, a)
	if h > 0 && a > 0 {
		var u hll.Sketch
		u.Merge(&s[0])
		u.Merge(&s[1])
		total = int64(u.Estimate())
	}
	return Count{Human: h, AI: a, Bot: total}
}

// MergeDay merges stored, the sketches an open day holds of d's paths
// (by index of Paths; nil for none) and of the project, into d's, which
// then hold the day's.
func (d *DayVisitors) MergeDay(stored [][2][]byte, project [2][]byte) error {
	if len(stored) != len(d.Paths) {
		return errors.New("rollup: stored sketches do not match the day's paths")
	}
	for i := range stored {
		if err := mergeStored(&d.Sketches[i], stored[i]); err != nil {
			return err
		}
	}
	return mergeStored(&d.Project, project)
}

func mergeStored(s *[2]hll.Sketch, b [2][]byte) error {
	for class := range b {
		if len(b[class]) > 0 {
			if err := s[class].MergeBinary(b[class]); err != nil {
				return err
			}
		}
	}
	return nil
}

// Encoded returns the encodings of a pair of sketches, nil for an empty
// one, as a store keeps them.
func Encoded(s *[2]hll.Sketch) [2][]byte {
	var out [2][]byte
	for class := range s {
		if s[class].Estimate() > 0 {
			out[class] = s[class].AppendBinary(nil)
		}
	}
	return out
}

// ReplaceCounts returns the segment of an open day whose segment was seg
// (nil: none yet) once fresh (normalized numbers of some of its paths)
// replace those paths' numbers, and its entries.
func ReplaceCounts(seg []byte, fresh []Count) ([]byte, int, error) {
	m := getMerger()
	defer putMerger(m)
	m.bots = true
	if len(seg) > 0 {
		if _, _, _, err := m.addSegment(seg); err != nil {
			return nil, 0, err
		}
	}
	old := m.rows
	if err := m.addCounts(fresh); err != nil {
		return nil, 0, err
	}
	old, updates := m.rows[:len(old)], m.rows[len(old):]
	rows := make([]row, 0, len(old)+len(updates))
	for len(old) > 0 || len(updates) > 0 {
		switch {
		case len(updates) == 0:
			rows, old = append(rows, old...), nil
		case len(old) == 0:
			rows, updates = append(rows, updates...), nil
		default:
			switch c := bytes.Compare(m.path(old[0]), m.path(updates[0])); {
			case c < 0:
				rows, old = append(rows, old[0]), old[1:]
			case c > 0:
				rows, updates = append(rows, updates[0]), updates[1:]
			default:
				rows, old, updates = append(rows, updates[0]), old[1:], updates[1:]
			}
		}
	}
	return m.encodeRows(make([]byte, 0, len(seg)+16*len(fresh)+16), rows), len(rows), nil
}

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
// store.OtherPagesPath. Visitors admit no path: a day holds no more paths
// of visitors than of views. cache answers for the paths it knows to be
// held, so a batch of known paths asks ds nothing.
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
