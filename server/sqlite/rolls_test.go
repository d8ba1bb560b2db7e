package sqlite

import (
	"reflect"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/internal/sqlstore"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// A roll the program cannot read makes the query fail, not answer wrong.
func TestDamagedRollFailsTheQuery(t *testing.T) {
	s := open(t, dbPath(t))
	hour := time.Date(2026, 5, 1, 3, 0, 0, 0, time.UTC)
	must(t, "AddViews", s.AddViews(t.Context(), []store.ViewCount{{ProjectID: "p", Path: "/a", Hour: hour, Human: 1}}))
	tables := []string{"view_hour_rolls", "view_day_rolls", "view_week_rolls"}
	for _, table := range tables {
		_, err := s.w.ExecContext(t.Context(), `UPDATE `+table+` SET counts = x'02'`)
		must(t, "damage the rolls", err)
	}
	monday := time.Unix(rollup.WeekOf(hour.Unix()), 0)
	for _, q := range []store.ViewsQuery{
		{ProjectID: "p", Limit: 10}, // the weeks' rolls
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
