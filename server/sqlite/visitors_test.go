package sqlite

import (
	"fmt"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// The flushes summarize the days they close, once each, and again a day
// written to after its summary; a query's answer is the same either way
// (the conformance suite's ClosedDays test), so this looks at the table.
func TestFlushesSummarizeClosedVisitorDays(t *testing.T) {
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
	summaries := func() string {
		t.Helper()
		rows, err := db.QueryContext(t.Context(), `SELECT s.day, s.last_seq = (SELECT max(seq) FROM visitor_day_rolls r WHERE r.project_id = s.project_id AND r.day = s.day)
			FROM visitor_day_summaries s WHERE s.project_id = 'p' ORDER BY s.day`)
		must(t, "summaries", err)
		defer rows.Close()
		out := ""
		for rows.Next() {
			var day int64
			var current bool
			must(t, "scan", rows.Scan(&day, &current))
			out += fmt.Sprintf(" %d", (day-day0.Unix())/86400)
			if !current {
				out += "(stale)"
			}
		}
		must(t, "rows", rows.Err())
		return out
	}
	for d := range 5 {
		record(d, 1, uint64(d*10), uint64(d*10+1))
		record(d, 20, uint64(d*10+2))
	}
	// Day 4's flushes closed the days before day 3.
	if got, want := summaries(), " 0 1 2"; got != want {
		t.Fatalf("after days 0-4, summaries of days%s, want%s", got, want)
	}
	record(1, 5, 99) // late
	if got, want := summaries(), " 0 1(stale) 2"; got != want {
		t.Fatalf("after a late write, summaries of days%s, want%s", got, want)
	}
	// This process summarizes once a day: day 5's first flush does it
	// again, with day 3.
	record(4, 22, 98)
	if got, want := summaries(), " 0 1(stale) 2"; got != want {
		t.Fatalf("after another flush of day 4, summaries of days%s, want%s", got, want)
	}
	record(5, 0, 97)
	if got, want := summaries(), " 0 1 2 3"; got != want {
		t.Fatalf("after day 5's flush, summaries of days%s, want%s", got, want)
	}
	res, err := s.QueryVisitors(t.Context(), store.ViewsQuery{ProjectID: "p", Limit: 5})
	must(t, "QueryVisitors", err)
	if want := (store.VisitorTotals{Human: 18, Total: 18}); res.Totals != want {
		t.Errorf("totals %+v, want %+v", res.Totals, want)
	}

	// Weeks: once every day of a closed week is summarized, the week is
	// summed, naming its days' seqs; a late write makes it stale, and the
	// next day's flush sums it again.
	weeks := func() string {
		t.Helper()
		rows, err := db.QueryContext(t.Context(), `SELECT week, days FROM visitor_week_summaries WHERE project_id = 'p' ORDER BY week`)
		must(t, "week summaries", err)
		defer rows.Close()
		out := ""
		for rows.Next() {
			var week int64
			var b []byte
			must(t, "scan", rows.Scan(&week, &b))
			days, err := rollup.ParseVisitorDays(b)
			must(t, "ParseVisitorDays", err)
			current := int64(len(days)) == queryInt(t, db, `SELECT count(DISTINCT day) FROM visitor_day_rolls WHERE project_id = 'p' AND day >= ? AND day < ?`, week, week+rollup.Week)
			for _, d := range days {
				current = current && d.LastSeq == queryInt(t, db, `SELECT max(seq) FROM visitor_day_rolls WHERE project_id = 'p' AND day = ?`, d.Day)
			}
			out += fmt.Sprintf(" %d", (week-day0.Unix())/86400)
			if !current {
				out += "(stale)"
			}
		}
		must(t, "rows", rows.Err())
		return out
	}
	for d := 6; d < 16; d++ {
		record(d, 3, uint64(d*10))
	}
	first := (rollup.WeekOf(day0.Unix()) + rollup.Week - day0.Unix()) / 86400 // the first Monday's day
	// The week before the first Monday holds days 0 to first-1 only.
	if got, want := weeks(), fmt.Sprintf(" %d %d", first-7, first); got != want {
		t.Fatalf("after days 0-15, week summaries of days%s, want%s", got, want)
	}
	record(int(first)+2, 7, 1234)
	if got, want := weeks(), fmt.Sprintf(" %d %d(stale)", first-7, first); got != want {
		t.Fatalf("after a late write, week summaries of days%s, want%s", got, want)
	}
	record(16, 3, 160)
	if got, want := weeks(), fmt.Sprintf(" %d %d", first-7, first); got != want {
		t.Fatalf("after day 16's flush, week summaries of days%s, want%s", got, want)
	}
}
