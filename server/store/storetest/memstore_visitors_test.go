package storetest_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"runtime"
	"slices"
	"strings"
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
// memStore's mutex, the straightforward way: the sketches of each open
// (project, day, path) (path "" the project's), the numbers of each closed
// one, which days are closed, the salts and the latest day asked for. Its
// maps are made on first use.
type visitorState struct {
	open    map[dayPath]*visitorPair
	numbers map[dayPath]store.VisitorTotals
	closed  map[dayPath]bool // by (project, day), path ""
	salts   map[int64][]byte
	latest  int64
	salted  bool
	batches int // AddVisitors calls that added their batch

	saltLookups int // the racySalt mutant's lookups of a salt
}

type dayPath struct {
	project string
	day     int64
	path    string
}

type visitorPair struct{ human, ai hll.Sketch }

func (p *visitorPair) totals(totalIsSum bool) store.VisitorTotals {
	h, a := int64(p.human.Estimate()), int64(p.ai.Estimate())
	if totalIsSum {
		return store.VisitorTotals{Human: h, AI: a, Total: h + a}
	}
	var u hll.Sketch
	u.Merge(&p.human)
	u.Merge(&p.ai)
	return store.VisitorTotals{Human: h, AI: a, Total: int64(u.Estimate())}
}

func addTotals(a, b store.VisitorTotals) store.VisitorTotals {
	return store.VisitorTotals{Human: a.Human + b.Human, AI: a.AI + b.AI, Total: a.Total + b.Total}
}

// visitorMutants are the reference store's deliberate bugs in the methods
// of this file, and the subtests (area/name) that must fail with each; see
// TestMutantsFail.
var visitorMutants = map[string][]string{
	"visitorsOverwrite":         {"Visitors/MergesCountEachVisitorOnce"},
	"visitorTotalIsSum":         {"Visitors/MergesCountEachVisitorOnce"},
	"visitorTotalsSumRows":      {"Visitors/MergesCountEachVisitorOnce"},
	"visitorsLeakProjects":      {"Visitors/MergesCountEachVisitorOnce"},
	"visitorsToInclusive":       {"Visitors/RangesCountTheWholeDaysTheyTouch"},
	"visitorsIgnoreFrom":        {"Visitors/RangesCountTheWholeDaysTheyTouch"},
	"visitorsWholeDaysOnly":     {"Visitors/RangesCountTheWholeDaysTheyTouch"},
	"visitorsUnionOfDays":       {"Visitors/EachDayCountsItsVisitors"},
	"visitorsClosedTwice":       {"Visitors/ClosedDaysAddUpAndLateVisitorsAreAdded", "Visitors/EachDayCountsItsVisitors"},
	"visitorsLateLost":          {"Visitors/ClosedDaysAddUpAndLateVisitorsAreAdded", "Visitors/YesterdayStaysOpenUntilTheNextDayEnds"},
	"visitorsCloseYesterday":    {"Visitors/ClosedDaysAddUpAndLateVisitorsAreAdded", "Visitors/YesterdayStaysOpenUntilTheNextDayEnds"},
	"visitorsCloseADayEarly":    {"Visitors/ClosedDaysAddUpAndLateVisitorsAreAdded", "Visitors/YesterdayStaysOpenUntilTheNextDayEnds", "Visitors/YesterdayCountsOnceWhileTomorrowsSaltIsAskedFor"},
	"visitorsNewDayClosedEarly": {"Visitors/YesterdayCountsOnceWhileTomorrowsSaltIsAskedFor"},
	"visitorsNeverClose":        {"Visitors/ClosedDaysAddUpAndLateVisitorsAreAdded", "Visitors/YesterdayStaysOpenUntilTheNextDayEnds"},
	"visitorsCloseRacy":         {"Visitors/ClosingWhileFlushesAddLosesNothing"},
	"visitorsOrderByHuman":      {"Visitors/RowsAreOrderedByTotalThenPathAndPagedExactly"},
	"visitorsHasMoreOffByOne":   {"Visitors/RowsAreOrderedByTotalThenPathAndPagedExactly"},
	"visitorsNilRows":           {"Visitors/RowsAreOrderedByTotalThenPathAndPagedExactly"},
	"visitorsIgnoreCap":         {"Visitors/PathsTheDayDoesNotHoldCountUnderOtherPages"},
	"visitorsNonAtomic":         {"Visitors/RefusedBatchStoresNothing"},
	"visitorSketchUnchecked":    {"Visitors/RefusedBatchStoresNothing"},
	"visitorQueryUnchecked":     {"Visitors/RefusedBatchStoresNothing"},
	"saltPerCall":               {"Visitors/SaltIsOnePerDayAndPastDaysAreDeleted", "Visitors/ConcurrentSaltRequestsAgree"},
	"saltsKept":                 {"Visitors/SaltIsOnePerDayAndPastDaysAreDeleted"},
	"saltsDroppedEarly":         {"Visitors/SaltIsOnePerDayAndPastDaysAreDeleted"},
	"saltsDroppedADayEarly":     {"Visitors/SaltIsOnePerDayAndPastDaysAreDeleted", "Visitors/YesterdayCountsOnceWhileTomorrowsSaltIsAskedFor"},
	"racySalt":                  {"Visitors/ConcurrentSaltRequestsAgree"},
	"visitorsRacy":              {"Visitors/ConcurrentBatchesMergeEveryVisitor"},
}

// pathMutants are the reference store's deliberate bugs in the path
// filter of QueryViews and QueryVisitors, and the subtests that must fail
// with each; see TestMutantsFail.
var pathMutants = map[string][]string{
	"viewsIgnorePath":                {"QueryByPath/ViewsOfOnePathAreItsRowAlone"},
	"viewsPathPrefix":                {"QueryByPath/ViewsOfOnePathAreItsRowAlone"},
	"visitorsIgnorePath":             {"QueryByPath/VisitorsOfOnePathCountItsOpenAndClosedDays"},
	"visitorsPathKeepsProjectTotals": {"QueryByPath/VisitorsOfOnePathCountItsOpenAndClosedDays"},
	"visitorsPathOpenDaysOnly":       {"QueryByPath/VisitorsOfOnePathCountItsOpenAndClosedDays"},
}

// pathSelected reports whether a query of path (or of every path, "")
// reads the counts of have, unless the mutant ignoring the path or the
// one taking it as a prefix is on.
func (m *memStore) pathSelected(path, have, ignore, prefix string) bool {
	switch {
	case path == "" || m.is(ignore):
		return true
	case m.is(prefix):
		return strings.HasPrefix(have, path)
	}
	return have == path
}

// held reports whether the project's day holding hour has views of path,
// as the cap sees them; m.mu is held.
func (m *memStore) held(project, path string, hour time.Time) bool {
	day := dayOf(hour)
	for k, v := range m.views {
		if k.project == project && k.path == path && k.hour-k.hour%86400 == day && v.Human+v.AI+v.Bot > 0 {
			return true
		}
	}
	return false
}

// isClosed reports whether a project's day is closed: closed already, or
// with nothing stored and three days or more before the latest salt's (as
// closeDays would have closed it).
func (m *memStore) isClosed(project string, day int64) bool {
	v := &m.visitors
	k := dayPath{project, day, ""}
	if v.closed[k] {
		return true
	}
	_, open := v.open[k]
	behind := int64(2 * 86400)
	if m.is("visitorsNewDayClosedEarly") {
		behind = 86400
	}
	return !open && v.salted && day < v.latest-behind
}

func (m *memStore) AddVisitors(_ context.Context, counts []store.VisitorCount) error {
	if m.is("visitorsRacy") {
		// Merges into a copy taken and stored back under separate locks:
		// concurrent batches lose each other's visitors.
		for _, c := range counts {
			m.mu.Lock()
			k := dayPath{c.ProjectID, dayOf(c.Hour), c.Path}
			var p visitorPair
			if old := m.visitors.open[k]; old != nil {
				p.human.Merge(&old.human)
				p.ai.Merge(&old.ai)
			}
			m.mu.Unlock()
			mergeEncoded(&p.human, c.Human)
			mergeEncoded(&p.ai, c.AI)
			runtime.Gosched()
			m.mu.Lock()
			m.visitors.init()
			m.visitors.open[k] = &p
			m.visitors.open[dayPath{c.ProjectID, k.day, ""}] = &visitorPair{}
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
	m.visitors.init()
	// The batch's visitors per project, day and path (and per project and
	// day, path ""), first: a closed day gets the numbers of what the
	// batch brings. The non-atomic mutant applies each count as it goes.
	batch := map[dayPath]*visitorPair{}
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
		for _, k := range []dayPath{{c.ProjectID, dayOf(c.Hour), path}, {c.ProjectID, dayOf(c.Hour), ""}} {
			if batch[k] == nil {
				batch[k] = &visitorPair{}
			}
			mergeEncoded(&batch[k].human, c.Human)
			mergeEncoded(&batch[k].ai, c.AI)
		}
		if m.is("visitorsNonAtomic") {
			m.addVisitorBatch(batch)
			batch = map[dayPath]*visitorPair{}
		}
	}
	m.addVisitorBatch(batch)
	m.visitors.batches++
	return nil
}

// addVisitorBatch adds a batch's visitors per (project, day, path): merged
// into an open day's sketches, added to a closed day's numbers.
func (m *memStore) addVisitorBatch(batch map[dayPath]*visitorPair) {
	for k, p := range batch {
		if m.isClosed(k.project, k.day) {
			if !m.is("visitorsLateLost") {
				m.visitors.numbers[k] = addTotals(m.visitors.numbers[k], p.totals(false))
			}
			m.visitors.closed[dayPath{k.project, k.day, ""}] = true
			continue
		}
		have := m.visitors.open[k]
		if have == nil || m.is("visitorsOverwrite") {
			have = &visitorPair{}
			m.visitors.open[k] = have
		}
		have.human.Merge(&p.human)
		have.ai.Merge(&p.ai)
	}
}

func (v *visitorState) init() {
	if v.open == nil {
		v.open, v.numbers, v.closed, v.salts = map[dayPath]*visitorPair{}, map[dayPath]store.VisitorTotals{}, map[dayPath]bool{}, map[int64][]byte{}
	}
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
	from, to := store.VisitorDays(q)
	if m.is("visitorsWholeDaysOnly") {
		// Only the days wholly inside the range.
		from, to = q.From, q.To
		if !from.IsZero() && !from.Equal(from.Truncate(24*time.Hour)) {
			from = from.Truncate(24 * time.Hour).Add(24 * time.Hour)
		}
		if !to.IsZero() {
			to = to.Truncate(24 * time.Hour)
		}
	}
	if m.is("visitorsIgnoreFrom") {
		from = time.Time{}
	}
	in := func(k dayPath) bool {
		if k.project != q.ProjectID && !m.is("visitorsLeakProjects") {
			return false
		}
		d := time.Unix(k.day, 0)
		if !from.IsZero() && d.Before(from) {
			return false
		}
		return to.IsZero() || d.Before(to) || m.is("visitorsToInclusive") && d.Equal(to)
	}
	var all store.VisitorTotals
	per := map[string]store.VisitorTotals{}
	add := func(path string, t store.VisitorTotals) {
		if path == "" {
			all = addTotals(all, t)
		} else {
			per[path] = addTotals(per[path], t)
		}
	}
	union := map[string]*visitorPair{} // by path, for visitorsUnionOfDays
	for k, p := range m.visitors.open {
		if !in(k) {
			continue
		}
		if m.is("visitorsUnionOfDays") {
			if union[k.path] == nil {
				union[k.path] = &visitorPair{}
			}
			union[k.path].human.Merge(&p.human)
			union[k.path].ai.Merge(&p.ai)
			continue
		}
		add(k.path, p.totals(m.is("visitorTotalIsSum")))
	}
	for path, p := range union {
		add(path, p.totals(false))
	}
	for k, t := range m.visitors.numbers {
		if in(k) && !(q.Path != "" && m.is("visitorsPathOpenDaysOnly")) {
			add(k.path, t)
		}
	}
	if q.Path != "" && !m.is("visitorsIgnorePath") {
		// One path's visitors are its row's: the project's, under path
		// "", are every path's.
		if !m.is("visitorsPathKeepsProjectTotals") {
			all = per[q.Path]
		}
		for path := range per {
			if path != q.Path {
				delete(per, path)
			}
		}
	}
	res := store.VisitorsResult{Totals: all}
	rows := []store.PathVisitors{}
	for path, t := range per {
		if t.Total > 0 {
			rows = append(rows, store.PathVisitors{Path: path, Human: t.Human, AI: t.AI, Total: t.Total})
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

// closeDays closes the open days three or more before the latest salt's:
// their sketches become numbers; m.mu is held, and with visitorsCloseRacy
// released while the numbers are made.
func (m *memStore) closeDays() {
	if m.is("visitorsNeverClose") || !m.visitors.salted {
		return
	}
	before := m.visitors.latest - 2*86400
	switch {
	case m.is("visitorsCloseYesterday"):
		before = m.visitors.latest
	case m.is("visitorsCloseADayEarly"):
		// Closes the day before the day before the latest salt's, still
		// yesterday to a server once that salt is asked for ahead of
		// midnight.
		before = m.visitors.latest - 86400
	}
	var closing []dayPath
	for k := range m.visitors.open {
		if k.day < before {
			closing = append(closing, k)
		}
	}
	made := map[dayPath]store.VisitorTotals{}
	for _, k := range closing {
		made[k] = m.visitors.open[k].totals(false)
	}
	if m.is("visitorsCloseRacy") && len(closing) > 0 {
		// Makes the numbers, then stores them under another lock:
		// what a batch merged meanwhile is lost. It waits a while for
		// a batch to be merged, so that the suite sees the loss
		// whenever a batch comes during the closing, not only when the
		// scheduler happens to run one.
		batches := m.visitors.batches
		m.mu.Unlock()
		for deadline := time.Now().Add(100 * time.Millisecond); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			m.mu.Lock()
			merged := m.visitors.batches != batches
			m.mu.Unlock()
			if merged {
				break
			}
		}
		m.mu.Lock()
	}
	for _, k := range closing {
		m.visitors.numbers[k] = addTotals(m.visitors.numbers[k], made[k])
		m.visitors.closed[dayPath{k.project, k.day, ""}] = true
		if !m.is("visitorsClosedTwice") {
			delete(m.visitors.open, k)
		}
	}
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
		m.visitors.saltLookups++
		lookups := m.visitors.saltLookups
		m.mu.Unlock()
		if ok {
			return s, nil
		}
		s = fresh()
		// Widens the race window: waits a while for another request to
		// look the day up too, so that the suite sees two salts whenever
		// requests come at once, not only when the scheduler interleaves
		// them.
		for deadline := time.Now().Add(100 * time.Millisecond); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			m.mu.Lock()
			other := m.visitors.saltLookups != lookups
			m.mu.Unlock()
			if other {
				break
			}
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		m.visitors.init()
		for d := range m.visitors.salts {
			if d < at-2*86400 {
				delete(m.visitors.salts, d)
			}
		}
		m.visitors.salts[at] = s
		return s, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.visitors.init()
	if !m.visitors.salted || at > m.visitors.latest {
		m.visitors.latest, m.visitors.salted = at, true
	}
	defer m.closeDays()
	keep := at - 2*86400
	switch {
	case m.is("saltsDroppedEarly"):
		keep = at
	case m.is("saltsDroppedADayEarly"):
		keep = at - 86400
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
