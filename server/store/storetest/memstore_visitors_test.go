package storetest_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/hll"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// TestReferenceVisitorAccuracy runs the accuracy check against the
// reference store.
func TestReferenceVisitorAccuracy(t *testing.T) {
	storetest.RunVisitorAccuracy(t, func(t *testing.T) store.Store { return newMemStore("") })
}

// visitorState is what the reference store keeps for VisitorStore, behind
// memStore's mutex: the merged sketches of each (project, path, hour), the
// straightforward way, and the salts. Its maps are made on first use.
type visitorState struct {
	sketches map[viewKey]*visitorPair
	salts    map[int64][]byte
}

type visitorPair struct{ human, ai hll.Sketch }

// visitorMutants are the reference store's deliberate bugs in the methods
// of this file, and the subtests (area/name) that must fail with each; see
// TestMutantsFail.
var visitorMutants = map[string][]string{
	"visitorsOverwrite":       {"Visitors/MergesCountEachVisitorOnce"},
	"visitorTotalIsSum":       {"Visitors/MergesCountEachVisitorOnce"},
	"visitorTotalsSumRows":    {"Visitors/MergesCountEachVisitorOnce"},
	"visitorsLeakProjects":    {"Visitors/MergesCountEachVisitorOnce"},
	"visitorsToInclusive":     {"Visitors/RangesOfHoursDaysAndWeeksMatchTheHours"},
	"visitorsIgnoreFrom":      {"Visitors/RangesOfHoursDaysAndWeeksMatchTheHours"},
	"visitorsOrderByHuman":    {"Visitors/RowsAreOrderedByTotalThenPathAndPagedExactly"},
	"visitorsHasMoreOffByOne": {"Visitors/RowsAreOrderedByTotalThenPathAndPagedExactly"},
	"visitorsNilRows":         {"Visitors/RowsAreOrderedByTotalThenPathAndPagedExactly"},
	"visitorsIgnoreCap":       {"Visitors/PathsTheDayDoesNotHoldCountUnderOtherPages"},
	"visitorsNonAtomic":       {"Visitors/RefusedBatchStoresNothing"},
	"visitorSketchUnchecked":  {"Visitors/RefusedBatchStoresNothing"},
	"visitorQueryUnchecked":   {"Visitors/RefusedBatchStoresNothing"},
	"saltPerCall":             {"Visitors/SaltIsOnePerDayAndPastDaysAreDeleted", "Visitors/ConcurrentSaltRequestsAgree"},
	"saltsKept":               {"Visitors/SaltIsOnePerDayAndPastDaysAreDeleted"},
	"saltsDroppedEarly":       {"Visitors/SaltIsOnePerDayAndPastDaysAreDeleted"},
	"racySalt":                {"Visitors/ConcurrentSaltRequestsAgree"},
	"visitorsRacy":            {"Visitors/ConcurrentBatchesMergeEveryVisitor"},
}

// held reports whether the project's day holding hour has views of path,
// as the cap sees them; m.mu is held.
func (m *memStore) held(project, path string, hour time.Time) bool {
	day := hour.Unix() - hour.Unix()%86400
	for k, v := range m.views {
		if k.project == project && k.path == path && k.hour-k.hour%86400 == day && v.Human+v.AI+v.Bot > 0 {
			return true
		}
	}
	return false
}

func (m *memStore) AddVisitors(_ context.Context, counts []store.VisitorCount) error {
	if m.is("visitorsRacy") {
		// Merges into a copy taken and stored back under separate locks:
		// concurrent batches lose each other's visitors.
		for _, c := range counts {
			m.mu.Lock()
			k := viewKey{c.ProjectID, c.Path, c.Hour.Unix()}
			var p visitorPair
			if old := m.visitors.sketches[k]; old != nil {
				p = visitorPair{human: *old.human.Clone(), ai: *old.ai.Clone()}
			}
			m.mu.Unlock()
			mergeEncoded(&p.human, c.Human)
			mergeEncoded(&p.ai, c.AI)
			runtime.Gosched()
			m.mu.Lock()
			if m.visitors.sketches == nil {
				m.visitors.sketches = map[viewKey]*visitorPair{}
			}
			m.visitors.sketches[k] = &p
			m.mu.Unlock()
		}
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	check := func(c store.VisitorCount) error {
		if m.is("visitorSketchUnchecked") {
			c.Human, c.AI = nil, nil
		}
		return c.Validate()
	}
	if !m.is("visitorsNonAtomic") {
		for _, c := range counts {
			if err := check(c); err != nil {
				return err
			}
		}
	}
	if m.visitors.sketches == nil {
		m.visitors.sketches = map[viewKey]*visitorPair{}
	}
	for _, c := range counts {
		if err := check(c); err != nil {
			return err
		}
		if len(c.Human) == 0 && len(c.AI) == 0 {
			continue
		}
		path := c.Path
		if path != store.OtherPagesPath && !m.held(c.ProjectID, path, c.Hour) && !m.is("visitorsIgnoreCap") {
			path = store.OtherPagesPath
		}
		k := viewKey{c.ProjectID, path, c.Hour.Unix()}
		p := m.visitors.sketches[k]
		if p == nil || m.is("visitorsOverwrite") {
			p = &visitorPair{}
			m.visitors.sketches[k] = p
		}
		mergeEncoded(&p.human, c.Human)
		mergeEncoded(&p.ai, c.AI)
	}
	return nil
}

// mergeEncoded merges an encoded sketch, if any, into s. One that does not
// decode (only a mutant lets one through) adds nothing.
func mergeEncoded(s *hll.Sketch, b []byte) {
	if len(b) > 0 {
		_ = s.MergeBinary(b)
	}
}

func (m *memStore) QueryVisitors(_ context.Context, q store.ViewsQuery) (store.VisitorsResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := q.Validate(); err != nil && !m.is("visitorQueryUnchecked") {
		return store.VisitorsResult{}, err
	}
	var all visitorPair
	per := map[string]*visitorPair{}
	for k, p := range m.visitors.sketches {
		if k.project != q.ProjectID && !m.is("visitorsLeakProjects") {
			continue
		}
		h := time.Unix(k.hour, 0)
		if !q.From.IsZero() && h.Before(q.From) && !m.is("visitorsIgnoreFrom") {
			continue
		}
		if !q.To.IsZero() && h.After(q.To) || !q.To.IsZero() && h.Equal(q.To) && !m.is("visitorsToInclusive") {
			continue
		}
		if per[k.path] == nil {
			per[k.path] = &visitorPair{}
		}
		per[k.path].human.Merge(&p.human)
		per[k.path].ai.Merge(&p.ai)
		all.human.Merge(&p.human)
		all.ai.Merge(&p.ai)
	}
	union := func(p *visitorPair) int64 {
		if m.is("visitorTotalIsSum") {
			return int64(p.human.Estimate() + p.ai.Estimate())
		}
		u := p.human.Clone()
		u.Merge(&p.ai)
		return int64(u.Estimate())
	}
	res := store.VisitorsResult{Totals: store.VisitorTotals{
		Human: int64(all.human.Estimate()), AI: int64(all.ai.Estimate()), Total: union(&all),
	}}
	rows := []store.PathVisitors{}
	for path, p := range per {
		r := store.PathVisitors{Path: path, Human: int64(p.human.Estimate()), AI: int64(p.ai.Estimate()), Total: union(p)}
		if r.Total > 0 {
			rows = append(rows, r)
		}
	}
	if m.is("visitorTotalsSumRows") {
		res.Totals = store.VisitorTotals{}
		for _, r := range rows {
			res.Totals.Human += r.Human
			res.Totals.AI += r.AI
			res.Totals.Total += r.Total
		}
	}
	slices.SortFunc(rows, func(a, b store.PathVisitors) int {
		if m.is("visitorsOrderByHuman") {
			return cmp.Or(cmp.Compare(b.Human, a.Human), cmp.Compare(a.Path, b.Path))
		}
		return cmp.Or(cmp.Compare(b.Total, a.Total), cmp.Compare(a.Path, b.Path))
	})
	start := min(q.Offset, len(rows))
	end := min(start+q.Limit, len(rows))
	res.Rows = rows[start:end]
	res.HasMore = end < len(rows)
	if m.is("visitorsHasMoreOffByOne") {
		res.HasMore = end <= len(rows) && start < len(rows)
	}
	if m.is("visitorsNilRows") && len(res.Rows) == 0 {
		res.Rows = nil
	}
	return res, nil
}

func (m *memStore) VisitorSalt(_ context.Context, day time.Time) ([]byte, error) {
	if err := store.ValidateVisitorSalt(day); err != nil {
		return nil, err
	}
	at := day.Unix() - day.Unix()%86400
	if day.Unix() < 0 && day.Unix()%86400 != 0 {
		at -= 86400
	}
	fresh := func() []byte {
		b := make([]byte, store.VisitorSaltBytes)
		rand.Read(b)
		return b
	}
	if m.is("racySalt") {
		// Looks the day up and stores a fresh salt under separate locks:
		// requests at once each store, and get, their own.
		m.mu.Lock()
		s, ok := m.visitors.salts[at]
		m.mu.Unlock()
		if ok {
			return s, nil
		}
		s = fresh()
		for range 20 {
			runtime.Gosched() // widen the race window
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.visitors.salts == nil {
			m.visitors.salts = map[int64][]byte{}
		}
		for d := range m.visitors.salts {
			if d < at-86400 {
				delete(m.visitors.salts, d)
			}
		}
		m.visitors.salts[at] = s
		return s, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.visitors.salts == nil {
		m.visitors.salts = map[int64][]byte{}
	}
	keep := at - 86400
	if m.is("saltsDroppedEarly") {
		keep = at
	}
	for d := range m.visitors.salts {
		if d < keep && !m.is("saltsKept") {
			delete(m.visitors.salts, d)
		}
	}
	s, ok := m.visitors.salts[at]
	if !ok || m.is("saltPerCall") {
		s = fresh()
		m.visitors.salts[at] = s
	}
	return s, nil
}
