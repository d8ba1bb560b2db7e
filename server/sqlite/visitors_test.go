package sqlite

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// Sketches exist for the days still open only: once a day closes, its
// sketches are deleted and its visitors are numbers, in its own row and
// its week's roll; a late flush to a closed day brings no sketch back. A
// query's answer is the same either way (the conformance suite's
// ClosedDays test), so this looks at the tables.
func TestClosingADayDeletesItsSketches(t *testing.T) {
	path := dbPath(t)
	s := open(t, path)
	db := rawOpen(t, path)
	day0 := t0.Truncate(24 * time.Hour)
	record := func(d, hr int, ids ...uint64) {
		t.Helper()
		hour := day0.Add(time.Duration(d*24+hr) * time.Hour)
		must(t, "AddViews", s.AddViews(t.Context(), []store.ViewCount{{ProjectID: "p", Path: "/a", Hour: hour, Human: 1}}))
		must(t, "AddVisitors", s.AddVisitors(t.Context(), []store.VisitorCount{{ProjectID: "p", Path: "/a", Hour: hour, Human: storetest.VisitorSketch(ids...)}}))
	}
	state := func() string {
		t.Helper()
		out := ""
		for d := range 5 {
			at := day0.Unix() + int64(d)*86400
			open := queryInt(t, db, `SELECT coalesce(max(open), -1) FROM visitor_days WHERE project_id = 'p' AND day = ?`, at)
			sketches := queryInt(t, db, `SELECT count(*) FROM visitor_sketches WHERE project_id = 'p' AND day = ?`, at)
			out += fmt.Sprintf(" %d:%d/%d", d, open, sketches)
		}
		return out
	}
	for d := range 5 {
		_, err := s.VisitorSalt(t.Context(), day0.Add(time.Duration(d)*24*time.Hour))
		must(t, "VisitorSalt", err)
		record(d, 1, uint64(d*10), uint64(d*10+1))
		record(d, 20, uint64(d*10+2))
	}
	// Day 4's salt closed the days before day 2: open days hold the
	// path's sketches and the project's.
	if got, want := state(), " 0:0/0 1:0/0 2:1/2 3:1/2 4:1/2"; got != want {
		t.Fatalf("after days 0-4, days (open/sketches)%s, want%s", got, want)
	}
	record(1, 5, 99) // late
	if got, want := state(), " 0:0/0 1:0/0 2:1/2 3:1/2 4:1/2"; got != want {
		t.Fatalf("after a late write, days (open/sketches)%s, want%s", got, want)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM visitor_week_rolls WHERE project_id = 'p'`); n == 0 {
		t.Error("no week roll holds the closed days")
	}
	res, err := s.QueryVisitors(t.Context(), store.ViewsQuery{ProjectID: "p", Limit: 5})
	must(t, "QueryVisitors", err)
	if want := (store.VisitorTotals{Human: 16, Total: 16}); res.Totals != want {
		t.Errorf("totals %+v, want %+v", res.Totals, want)
	}
}

// A visitors query reads the rows of its own days and weeks through the
// primary keys, never every day of the project: with a path, it reads the
// same rows as without, so their number is what it costs.
func TestVisitorQueryPlanReadsOnlyItsRanges(t *testing.T) {
	s := open(t, dbPath(t))
	rows, err := s.r.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+queryVisitorSegments, "p", 0, 1, 0, 1, 0, 1)
	must(t, "EXPLAIN", err)
	defer rows.Close()
	searches := 0
	for rows.Next() {
		var id, parent, notused int
		var detail string
		must(t, "scan plan", rows.Scan(&id, &parent, &notused, &detail))
		if strings.HasPrefix(detail, "SCAN") || strings.HasPrefix(detail, "SEARCH") {
			searches++
			if !strings.Contains(detail, "(project_id=? AND day>? AND day<?)") && !strings.Contains(detail, "(project_id=? AND week>? AND week<?)") {
				t.Errorf("plan step %q reads beyond the query's days and weeks", detail)
			}
		}
	}
	must(t, "plan rows", rows.Err())
	if searches != 4 {
		t.Errorf("plan has %d reads of a table, want 4 (weeks, two ranges of days, the weeks' open days)", searches)
	}
}
