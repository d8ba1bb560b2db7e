package sqlite

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/internal/sqlstore"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
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
	if bots := storedBots(t, s); bots != int64(len(counts)-72) {
		t.Errorf("the hour rolls hold %d bot views, want the rows' %d", bots, len(counts)-72)
	}
	if n := queryInt(t, s.r, "SELECT count(*) FROM sqlite_schema WHERE name = 'page_views'"); n != 0 {
		t.Error("page_views is still there: the hour rolls are the record")
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

// A database at version 4 holds rolls without bot views (format 2), rows
// in page_views and the cap's bookkeeping. Opening it rebuilds the rolls
// from the rows, bots included, keeps what the cap recorded, and drops the
// rows.
func TestUpgradeFromVersion4CountsBotsAndKeepsDays(t *testing.T) {
	path := dbPath(t)
	ms, err := loadMigrations(migrationFiles)
	must(t, "loadMigrations", err)
	db := rawOpen(t, path)
	must(t, "migrate to version 4", migrate(t.Context(), db, ms[:4]))
	hour := time.Date(2026, 5, 1, 3, 0, 0, 0, time.UTC)
	day := hour.Truncate(24 * time.Hour).Unix()
	for _, q := range []string{
		`INSERT INTO page_views (project_id, path, hour, human, ai, bot) VALUES ('p', '/a', ` + fmt.Sprint(hour.Unix()) + `, 2, 1, 0)`,
		`INSERT INTO page_views (project_id, path, hour, human, ai, bot) VALUES ('p', '/crawled', ` + fmt.Sprint(hour.Unix()) + `, 0, 0, 5)`,
		// What version 4 wrote: a segment of format 2, which this
		// program cannot read, and the cap's counts of the day.
		`INSERT INTO view_hour_rolls (project_id, hour, seq, entries, counts) VALUES ('p', ` + fmt.Sprint(hour.Unix()) + `, 1, 1, x'02010200022f610201')`,
		`INSERT INTO view_days (project_id, day, paths, folded_counts, folded_views) VALUES ('p', ` + fmt.Sprint(day) + `, 2, 3, 9)`,
		`INSERT INTO view_day_paths (project_id, day, path) VALUES ('p', ` + fmt.Sprint(day) + `, '/a'), ('p', ` + fmt.Sprint(day) + `, '/crawled')`,
	} {
		_, err := db.ExecContext(t.Context(), q)
		must(t, q, err)
	}
	must(t, "close", db.Close())

	s := open(t, path)
	res, err := s.QueryViews(t.Context(), store.ViewsQuery{ProjectID: "p", Limit: 10})
	must(t, "QueryViews", err)
	if want := (store.ViewsResult{Totals: store.Counts{Human: 2, AI: 1}, Rows: []store.PathCounts{{Path: "/a", Counts: store.Counts{Human: 2, AI: 1}}}}); !reflect.DeepEqual(res, want) {
		t.Errorf("after the upgrade: %+v, want %+v", res, want)
	}
	if bots := storedBots(t, s); bots != 5 {
		t.Errorf("the hour rolls hold %d bot views, want 5", bots)
	}
	if n := queryInt(t, s.r, "SELECT paths * 100 + folded_counts * 10 + folded_views FROM view_days"); n != 239 {
		t.Errorf("view_days row reads %d, want 2 paths, 3 counts and 9 views folded kept", n)
	}
}

// A database at version 10 holds hour, day and week rolls, some of several
// segments. Opening it builds the four-week rolls from the week rolls, so
// that ranges of months answer what the counts add up to, and flushes after
// the upgrade add to them.
func TestUpgradeBuildsFourWeekRollsFromWeekRolls(t *testing.T) {
	path := dbPath(t)
	ms, err := loadMigrations(migrationFiles)
	must(t, "loadMigrations", err)
	db := rawOpen(t, path)
	must(t, "migrate to version 10", migrate(t.Context(), db, ms[:10]))

	u := storetest.NewFourWeekUpgrade()
	tx, err := db.BeginTx(t.Context(), nil)
	must(t, "begin", err)
	must(t, "write the rolls as version 10 did", u.WriteAsVersion10(func(kind rollup.Kind, r rollup.Roll, seq int, seg []byte) error {
		_, err := tx.ExecContext(t.Context(), `INSERT INTO `+kind.Table()+` (project_id, `+kind.Column()+`, seq, entries, counts) VALUES (?, ?, ?, ?, ?)`,
			r.ProjectID, r.At, seq, len(r.Counts), seg)
		return err
	}))
	must(t, "commit", tx.Commit())
	must(t, "close", db.Close())

	s := open(t, path)
	if n := queryInt(t, s.r, "SELECT count(*) FROM view_four_week_rolls WHERE seq = 1"); n != int64(u.FourWeekRolls()) {
		t.Errorf("%d four-week rolls, want %d", n, u.FourWeekRolls())
	}
	counts := u.Counts()
	check := func(what string) {
		t.Helper()
		for _, q := range u.Queries {
			got, err := s.QueryViews(t.Context(), q)
			must(t, "QueryViews", err)
			if want := sumRows(counts, q); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("QueryViews(%+v) %s:\n got %v\nwant %v", q, what, got, want)
			}
		}
	}
	check("after the upgrade")
	must(t, "AddViews", s.AddViews(t.Context(), u.Late))
	counts = append(counts, u.Late...)
	check("after a flush")
}

// storedBots returns the bot views that s's hour rolls hold.
func storedBots(t *testing.T, s *Store) int64 {
	t.Helper()
	rows, err := s.r.QueryContext(t.Context(), "SELECT counts FROM view_hour_rolls")
	must(t, "read the hour rolls", err)
	defer rows.Close()
	var bots int64
	for rows.Next() {
		var seg []byte
		must(t, "scan", rows.Scan(&seg))
		counts, err := rollup.Decode(seg)
		must(t, "decode an hour roll", err)
		for _, c := range counts {
			bots += c.Bot
		}
	}
	must(t, "read the hour rolls", rows.Err())
	return bots
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
	tables := []string{"view_hour_rolls", "view_day_rolls", "view_week_rolls", "view_four_week_rolls"}
	for _, table := range tables {
		_, err := s.w.ExecContext(t.Context(), `UPDATE `+table+` SET counts = x'02'`)
		must(t, "damage the rolls", err)
	}
	monday := time.Unix(rollup.WeekOf(hour.Unix()), 0)
	for _, q := range []store.ViewsQuery{
		{ProjectID: "p", Limit: 10}, // the four weeks' roll
		{ProjectID: "p", From: monday, To: monday.Add(7 * 24 * time.Hour), Limit: 10},                                           // the week's
		{ProjectID: "p", From: hour.Truncate(24 * time.Hour), To: hour.Truncate(24 * time.Hour).Add(24 * time.Hour), Limit: 10}, // the day's
		{ProjectID: "p", From: hour, To: hour.Add(time.Hour), Limit: 10},                                                        // the hour's
	} {
		if _, err := s.QueryViews(t.Context(), q); err == nil {
			t.Fatalf("QueryViews(%+v) over a damaged roll: no error", q)
		}
	}
	// And a flush into it fails whole: no roll takes a new segment.
	if err := s.AddViews(t.Context(), []store.ViewCount{{ProjectID: "p", Path: "/a", Hour: hour, Human: 1}}); err == nil {
		t.Fatal("AddViews into a damaged roll: no error")
	}
	for _, table := range tables {
		if n := queryInt(t, s.r, `SELECT count(*) FROM `+table+` WHERE counts <> x'02'`); n != 0 {
			t.Fatalf("%s holds %d segments besides the damaged one: the failed batch must not be stored", table, n)
		}
	}
}

// A failed flush leaves nothing of its new paths behind: not their rows,
// not the day's count of paths, not the store's memory of the paths the day
// holds. Otherwise the cap would count a path that is not there, or let a
// path in as known that never was.
func TestFailedFlushLeavesNoPathsBehind(t *testing.T) {
	s := open(t, dbPath(t), WithDailyPathCap(2))
	hour := time.Date(2026, 5, 1, 3, 0, 0, 0, time.UTC)
	add := func(path string, human int64) error {
		return s.AddViews(t.Context(), []store.ViewCount{{ProjectID: "p", Path: path, Hour: hour, Human: human}})
	}
	must(t, "AddViews /a", add("/a", 1))
	// Damage the week roll, so the next flush fails at its last step,
	// after /new was counted as a path of the day.
	_, err := s.w.ExecContext(t.Context(), `UPDATE view_week_rolls SET counts = x'02'`)
	must(t, "damage the roll", err)
	if err := add("/new", 5); err == nil {
		t.Fatal("AddViews into a damaged roll: no error")
	}
	if n := queryInt(t, s.r, "SELECT count(*) FROM view_day_paths"); n != 1 {
		t.Fatalf("%d paths of the day after the failed flush, want 1", n)
	}
	if n := queryInt(t, s.r, "SELECT paths FROM view_days"); n != 1 {
		t.Fatalf("the day counts %d paths after the failed flush, want 1", n)
	}
	_, err = s.w.ExecContext(t.Context(), `DELETE FROM view_week_rolls`)
	must(t, "drop the damaged roll", err)

	// The cap of 2 has room for one more path: /new, again; /other is the
	// third.
	must(t, "AddViews /new", add("/new", 7))
	must(t, "AddViews /other", add("/other", 2))
	day := hour.Truncate(24 * time.Hour)
	got, err := s.QueryViews(t.Context(), store.ViewsQuery{ProjectID: "p", From: day, To: day.Add(24 * time.Hour), Limit: 10})
	must(t, "QueryViews", err)
	want := []store.PathCounts{
		{Path: "/new", Counts: store.Counts{Human: 7}},
		{Path: store.OtherPagesPath, Counts: store.Counts{Human: 2}},
		{Path: "/a", Counts: store.Counts{Human: 1}},
	}
	if !reflect.DeepEqual(got.Rows, want) {
		t.Fatalf("rows %+v, want %+v", got.Rows, want)
	}
}

// A page costs work bounded by the page (see storetest.CheckPageWork).
func TestPageWorkIsBoundedByThePage(t *testing.T) {
	s := open(t, dbPath(t))
	var stats []rollup.Stats
	sqlstore.SetQueryHook(s.viewMethods, func(st rollup.Stats) { stats = append(stats, st) })
	storetest.CheckPageWork(t, s, func() rollup.Stats { return stats[len(stats)-1] })
}
