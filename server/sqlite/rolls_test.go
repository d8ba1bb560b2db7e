package sqlite

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// A database written before rolls existed has page_views and no rolls.
// Opening it with this program fills the rolls from the rows, so the views
// query answers exactly what it answered before the upgrade.
func TestUpgradeFillsRollsFromRows(t *testing.T) {
	path := dbPath(t)
	ms, err := loadMigrations(migrationFiles)
	must(t, "loadMigrations", err)
	db := rawOpen(t, path)
	must(t, "migrate to version 1", migrate(t.Context(), db, ms[:1]))

	// Three days of rows for two projects, more than one rebuild batch,
	// written as version 1 wrote them: rows only.
	day := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	var counts []store.ViewCount
	for h := range 72 {
		for i := range rebuildBatch/72 + 40 {
			c := store.ViewCount{ProjectID: "docs", Path: fmt.Sprintf("/p%04d", i), Hour: day.Add(time.Duration(h) * time.Hour),
				Human: int64(i%5 + h%3), AI: int64(i % 2), Bot: 1}
			counts = append(counts, c)
		}
		counts = append(counts, store.ViewCount{ProjectID: "other", Path: "/x", Hour: day.Add(time.Duration(h) * time.Hour), AI: 2})
	}
	tx, err := db.BeginTx(t.Context(), nil)
	must(t, "begin", err)
	for _, c := range counts {
		_, err := tx.ExecContext(t.Context(), `INSERT INTO page_views (project_id, path, hour, human, ai, bot) VALUES (?, ?, ?, ?, ?, ?)`,
			c.ProjectID, c.Path, c.Hour.Unix(), c.Human, c.AI, c.Bot)
		must(t, "insert row", err)
	}
	must(t, "commit", tx.Commit())
	must(t, "close", db.Close())

	s := open(t, path)
	if n := queryInt(t, s.r, "SELECT count(*) FROM view_day_rolls"); n != 6 {
		t.Errorf("%d day rolls, want 3 days × 2 projects", n)
	}
	for _, q := range []store.ViewsQuery{
		{ProjectID: "docs", Limit: 7},
		{ProjectID: "docs", From: day.Add(5 * time.Hour), To: day.Add(50 * time.Hour), Limit: 20, Offset: 100},
		{ProjectID: "docs", From: day.Add(24 * time.Hour), To: day.Add(48 * time.Hour), Limit: 250, Offset: rebuildBatch/72 - 100},
		{ProjectID: "other", From: day.Add(70 * time.Hour), Limit: 5},
	} {
		got, err := s.QueryViews(t.Context(), q)
		must(t, "QueryViews", err)
		if want := sumRows(counts, q); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("QueryViews(%+v) after the upgrade:\n got %v\nwant %v", q, got, want)
		}
	}
}

// sumRows answers q from counts hour by hour.
func sumRows(counts []store.ViewCount, q store.ViewsQuery) store.ViewsResult {
	type sum struct{ h, a int64 }
	sums := map[string]sum{}
	res := store.ViewsResult{Rows: []store.PathCounts{}}
	for _, c := range counts {
		if c.ProjectID != q.ProjectID || (!q.From.IsZero() && c.Hour.Before(q.From)) || (!q.To.IsZero() && !c.Hour.Before(q.To)) {
			continue
		}
		s := sums[c.Path]
		sums[c.Path] = sum{s.h + c.Human, s.a + c.AI}
		res.Totals.Human += c.Human
		res.Totals.AI += c.AI
	}
	var rows []store.PathCounts
	for p, s := range sums {
		if s.h+s.a > 0 {
			rows = append(rows, store.PathCounts{Path: p, Counts: store.Counts{Human: s.h, AI: s.a}})
		}
	}
	sortRows(rows)
	if q.Offset < len(rows) {
		res.Rows = append(res.Rows, rows[q.Offset:min(len(rows), q.Offset+q.Limit)]...)
	}
	res.HasMore = q.Offset+q.Limit < len(rows)
	return res
}

func sortRows(rows []store.PathCounts) {
	slices.SortFunc(rows, func(a, b store.PathCounts) int {
		return cmp.Or(cmp.Compare(b.Human+b.AI, a.Human+a.AI), strings.Compare(a.Path, b.Path))
	})
}

// A roll the program cannot read makes the query fail, not answer wrong.
func TestDamagedRollFailsTheQuery(t *testing.T) {
	s := open(t, dbPath(t))
	hour := time.Date(2026, 5, 1, 3, 0, 0, 0, time.UTC)
	must(t, "AddViews", s.AddViews(t.Context(), []store.ViewCount{{ProjectID: "p", Path: "/a", Hour: hour, Human: 1}}))
	_, err := s.w.ExecContext(t.Context(), `UPDATE view_day_rolls SET counts = x'02'`)
	must(t, "damage the roll", err)
	if _, err := s.QueryViews(t.Context(), store.ViewsQuery{ProjectID: "p", Limit: 10}); err == nil {
		t.Fatal("QueryViews over a damaged roll: no error")
	}
	// And a flush into it fails whole: the row is not added either.
	if err := s.AddViews(t.Context(), []store.ViewCount{{ProjectID: "p", Path: "/a", Hour: hour, Human: 1}}); err == nil {
		t.Fatal("AddViews into a damaged roll: no error")
	}
	if n := queryInt(t, s.r, "SELECT human FROM page_views"); n != 1 {
		t.Fatalf("row holds %d human views, want 1: the failed batch must not be stored", n)
	}
}

// A failed flush's new paths are not remembered: their IDs were rolled back
// and may go to other paths, which must not receive the first path's views.
func TestFailedFlushLeavesNoPathIDsBehind(t *testing.T) {
	s := open(t, dbPath(t))
	hour := time.Date(2026, 5, 1, 3, 0, 0, 0, time.UTC)
	add := func(path string, human int64) error {
		return s.AddViews(t.Context(), []store.ViewCount{{ProjectID: "p", Path: path, Hour: hour, Human: human}})
	}
	must(t, "AddViews /a", add("/a", 1))
	// Damage the day roll, so the next flush fails after /new got an ID.
	_, err := s.w.ExecContext(t.Context(), `UPDATE view_day_rolls SET counts = x'02'`)
	must(t, "damage the roll", err)
	if err := add("/new", 5); err == nil {
		t.Fatal("AddViews into a damaged roll: no error")
	}
	_, err = s.w.ExecContext(t.Context(), `DELETE FROM view_day_rolls`)
	must(t, "drop the damaged roll", err)
	_, err = s.w.ExecContext(t.Context(), `DELETE FROM view_hour_rolls`)
	must(t, "drop the hour roll", err)

	must(t, "AddViews /other", add("/other", 2)) // may take the ID /new had
	must(t, "AddViews /new", add("/new", 7))
	got, err := s.QueryViews(t.Context(), store.ViewsQuery{ProjectID: "p", Limit: 10})
	must(t, "QueryViews", err)
	want := []store.PathCounts{
		{Path: "/new", Counts: store.Counts{Human: 7}},
		{Path: "/other", Counts: store.Counts{Human: 2}},
	}
	if !reflect.DeepEqual(got.Rows, want) {
		t.Fatalf("rows %+v, want %+v", got.Rows, want)
	}
}
