package storetest

import (
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// day is the length of a daily series' point.
const day = 24 * time.Hour

// Day returns the start of the n-th UTC day after the one that holds At(0).
func Day(n int) time.Time {
	return base.Truncate(day).Add(time.Duration(n) * day)
}

// point builds an expected point of a series.
func point(at time.Time, human, ai, bot int64) store.SeriesPoint {
	return store.SeriesPoint{At: at, Human: human, AI: ai, Bot: bot}
}

// mustSeries runs a series query that must succeed.
func mustSeries(t *testing.T, s store.Store, q store.SeriesQuery) []store.SeriesPoint {
	t.Helper()
	points, err := s.ViewSeries(t.Context(), q)
	must(t, "ViewSeries", err)
	if points == nil {
		t.Errorf("ViewSeries: nil, want a non-nil slice")
	}
	for _, p := range points {
		checkTimes(t, "ViewSeries", p.At)
	}
	return points
}

func testViewSeries(t *testing.T, open opener) {
	// The views of the tests: p1 on the first three days (the second has
	// none), across a midnight, bots included; p2 beside them.
	fill := func(t *testing.T, s store.Store) {
		t.Helper()
		mustProject(t, s, "p1")
		mustProject(t, s, "p2")
		d0, d2 := Day(0), Day(2)
		must(t, "AddViews", s.AddViews(t.Context(), []store.ViewCount{
			{ProjectID: "p1", Path: "/a", Hour: d0, Human: 1, AI: 2, Bot: 3},
			{ProjectID: "p1", Path: "/b", Hour: d0.Add(23 * time.Hour), Human: 10},
			{ProjectID: "p1", Path: "/a", Hour: d2, Human: 100, Bot: 1},
			{ProjectID: "p1", Path: "/b", Hour: d2.Add(time.Hour), AI: 1000},
			{ProjectID: "p2", Path: "/a", Hour: d0, Human: 7, AI: 7, Bot: 7},
		}))
		// A second batch adds to the same hours and days.
		must(t, "AddViews", s.AddViews(t.Context(), []store.ViewCount{
			{ProjectID: "p1", Path: "/b", Hour: d0.Add(23 * time.Hour), Human: 5, Bot: 5},
		}))
	}
	runAll(t, open, []subtest{
		{"DailyPointsAddUpEveryPathBotsIncludedAndEmptyDaysAreZero", func(t *testing.T, s store.Store) {
			fill(t, s)
			got := mustSeries(t, s, store.SeriesQuery{ProjectID: "p1", From: Day(-1), To: Day(4), Interval: day})
			diff(t, "daily series", []store.SeriesPoint{
				point(Day(-1), 0, 0, 0),
				point(Day(0), 16, 2, 8),
				point(Day(1), 0, 0, 0),
				point(Day(2), 100, 1000, 1),
				point(Day(3), 0, 0, 0),
			}, got)
		}},
		{"HourlyPointsCrossMidnight", func(t *testing.T, s store.Store) {
			fill(t, s)
			from := Day(0).Add(22 * time.Hour)
			got := mustSeries(t, s, store.SeriesQuery{ProjectID: "p1", From: from, To: from.Add(5 * time.Hour), Interval: time.Hour})
			diff(t, "hourly series", []store.SeriesPoint{
				point(from, 0, 0, 0),
				point(from.Add(time.Hour), 15, 0, 5),
				point(Day(1), 0, 0, 0),
				point(Day(1).Add(time.Hour), 0, 0, 0),
				point(Day(1).Add(2*time.Hour), 0, 0, 0),
			}, got)
			got = mustSeries(t, s, store.SeriesQuery{ProjectID: "p1", From: Day(2), To: Day(2).Add(2 * time.Hour), Interval: time.Hour})
			diff(t, "hourly series of day 2", []store.SeriesPoint{point(Day(2), 100, 0, 1), point(Day(2).Add(time.Hour), 0, 1000, 0)}, got)
		}},
		{"RangeIsHalfOpen", func(t *testing.T, s store.Store) {
			fill(t, s)
			diff(t, "days 0 to 2, day 2 left out", []store.SeriesPoint{point(Day(0), 16, 2, 8), point(Day(1), 0, 0, 0)},
				mustSeries(t, s, store.SeriesQuery{ProjectID: "p1", From: Day(0), To: Day(2), Interval: day}))
			diff(t, "an empty range", []store.SeriesPoint{},
				mustSeries(t, s, store.SeriesQuery{ProjectID: "p1", From: Day(2), To: Day(2), Interval: day}))
		}},
		{"PathSelectsOnePathAndProjectsNeverLeak", func(t *testing.T, s store.Store) {
			fill(t, s)
			q := store.SeriesQuery{ProjectID: "p1", From: Day(0), To: Day(3), Interval: day, Path: "/b"}
			diff(t, "/b", []store.SeriesPoint{point(Day(0), 15, 0, 5), point(Day(1), 0, 0, 0), point(Day(2), 0, 1000, 0)}, mustSeries(t, s, q))
			q.Path = "/"
			diff(t, "a prefix of the paths", []store.SeriesPoint{point(Day(0), 0, 0, 0), point(Day(1), 0, 0, 0), point(Day(2), 0, 0, 0)}, mustSeries(t, s, q))
			q.Path = "/bb"
			diff(t, "a path the project does not have", []store.SeriesPoint{point(Day(0), 0, 0, 0), point(Day(1), 0, 0, 0), point(Day(2), 0, 0, 0)}, mustSeries(t, s, q))
			q.Path = ""
			q.ProjectID = "p2"
			diff(t, "p2", []store.SeriesPoint{point(Day(0), 7, 7, 7), point(Day(1), 0, 0, 0), point(Day(2), 0, 0, 0)}, mustSeries(t, s, q))
			q.ProjectID = "p3"
			diff(t, "unknown project", []store.SeriesPoint{point(Day(0), 0, 0, 0), point(Day(1), 0, 0, 0), point(Day(2), 0, 0, 0)}, mustSeries(t, s, q))
		}},
		{"InvalidQueryIsRefused", func(t *testing.T, s store.Store) {
			fill(t, s)
			ok := store.SeriesQuery{ProjectID: "p1", From: Day(0), To: Day(3), Interval: day}
			for name, change := range map[string]func(q *store.SeriesQuery){
				"no project":          func(q *store.SeriesQuery) { q.ProjectID = "" },
				"a two-hour interval": func(q *store.SeriesQuery) { q.Interval = 2 * time.Hour },
				"no interval":         func(q *store.SeriesQuery) { q.Interval = 0 },
				"no from":             func(q *store.SeriesQuery) { q.From = time.Time{} },
				"no to":               func(q *store.SeriesQuery) { q.To = time.Time{} },
				"from within a day":   func(q *store.SeriesQuery) { q.From = q.From.Add(time.Hour) },
				"to within a day":     func(q *store.SeriesQuery) { q.To = q.To.Add(time.Hour) },
				"to before from":      func(q *store.SeriesQuery) { q.From, q.To = q.To, q.From },
				"one point too many":  func(q *store.SeriesQuery) { q.To = q.From.Add((store.MaxSeriesPoints + 1) * day) },
				"hours past the bound": func(q *store.SeriesQuery) {
					q.Interval, q.To = time.Hour, q.From.Add((store.MaxSeriesPoints+1)*time.Hour)
				},
				"from within an hour":   func(q *store.SeriesQuery) { q.Interval, q.From = time.Hour, q.From.Add(time.Minute) },
				"from not whole second": func(q *store.SeriesQuery) { q.From = q.From.Add(time.Nanosecond) },
			} {
				q := ok
				change(&q)
				_, err := s.ViewSeries(t.Context(), q)
				wantErr(t, "ViewSeries with "+name, err, store.ErrInvalid)
			}
			q := ok
			q.To = q.From.Add(store.MaxSeriesPoints * day)
			if n := len(mustSeries(t, s, q)); n != store.MaxSeriesPoints {
				t.Errorf("the most points a series may have: got %d points, want %d", n, store.MaxSeriesPoints)
			}
		}},
	})
}
