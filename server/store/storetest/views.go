package storetest

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// Hour returns the n-th whole UTC hour after the one that holds At(0).
func Hour(n int) time.Time {
	return base.Truncate(time.Hour).Add(time.Duration(n) * time.Hour)
}

// row builds an expected result row.
func row(path string, human, ai int64) store.PathCounts {
	return store.PathCounts{Path: path, Counts: store.Counts{Human: human, AI: ai}}
}

// mustQuery runs a query that must succeed.
func mustQuery(t *testing.T, s store.Store, q store.ViewsQuery) store.ViewsResult {
	t.Helper()
	res, err := s.QueryViews(t.Context(), q)
	must(t, "QueryViews", err)
	return res
}

// all is a query for every hour of a project, on one large page.
func all(projectID string) store.ViewsQuery {
	return store.ViewsQuery{ProjectID: projectID, Limit: 1000}
}

// wantResult compares a query's result, Rows included even when empty.
func wantResult(t *testing.T, what string, want, got store.ViewsResult) {
	t.Helper()
	diff(t, what, want, got)
	if got.Rows == nil {
		// The server encodes Rows as the JSON array "views", which the
		// contract requires: nil would become null.
		t.Errorf("%s: Rows is nil, want an empty, non-nil slice", what)
	}
}

func testViews(t *testing.T, open opener) {
	// Views name projects; every test creates them first, so that a
	// backend that ties counts to existing projects passes too.
	withProjects := func(t *testing.T, s store.Store) {
		t.Helper()
		mustProject(t, s, "p1")
		mustProject(t, s, "p2")
	}
	add := func(t *testing.T, s store.Store, counts ...store.ViewCount) {
		t.Helper()
		must(t, "AddViews", s.AddViews(t.Context(), counts))
	}
	runAll(t, open, []subtest{
		{"AddViewsSumsBatchesAndNeverOverwrites", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			add(t, s, store.ViewCount{ProjectID: "p1", Path: "/a", Hour: Hour(0), Human: 1, AI: 2, Bot: 3})
			add(t, s, store.ViewCount{ProjectID: "p1", Path: "/a", Hour: Hour(0), Human: 10, AI: 20, Bot: 30})
			// The same key twice in one batch adds both.
			add(t, s,
				store.ViewCount{ProjectID: "p1", Path: "/a", Hour: Hour(0), Human: 100},
				store.ViewCount{ProjectID: "p1", Path: "/a", Hour: Hour(0), AI: 200})
			wantResult(t, "QueryViews", store.ViewsResult{
				Totals: store.Counts{Human: 111, AI: 222},
				Rows:   []store.PathCounts{row("/a", 111, 222)},
			}, mustQuery(t, s, all("p1")))
		}},
		{"CountsBeyond32BitsAddUp", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			big := int64(3_000_000_000)
			add(t, s, store.ViewCount{ProjectID: "p1", Path: "/a", Hour: Hour(0), Human: big, AI: big})
			add(t, s, store.ViewCount{ProjectID: "p1", Path: "/a", Hour: Hour(1), Human: big, AI: 1})
			wantResult(t, "QueryViews", store.ViewsResult{
				Totals: store.Counts{Human: 2 * big, AI: big + 1},
				Rows:   []store.PathCounts{row("/a", 2*big, big+1)},
			}, mustQuery(t, s, all("p1")))
		}},
		{"EmptyBatchIsAccepted", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			must(t, "AddViews(nil)", s.AddViews(t.Context(), nil))
			must(t, "AddViews(empty)", s.AddViews(t.Context(), []store.ViewCount{}))
			wantResult(t, "QueryViews", store.ViewsResult{Rows: []store.PathCounts{}}, mustQuery(t, s, all("p1")))
		}},
		{"BotViewsAreNeverCounted", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			add(t, s,
				store.ViewCount{ProjectID: "p1", Path: "/a", Hour: Hour(0), Human: 1, AI: 1, Bot: 100},
				store.ViewCount{ProjectID: "p1", Path: "/bots-only", Hour: Hour(0), Bot: 50},
				store.ViewCount{ProjectID: "p1", Path: "/nothing", Hour: Hour(0)},
				store.ViewCount{ProjectID: "p1", Path: "/ai-only", Hour: Hour(1), AI: 1, Bot: 7})
			wantResult(t, "QueryViews", store.ViewsResult{
				Totals: store.Counts{Human: 1, AI: 2},
				Rows:   []store.PathCounts{row("/a", 1, 1), row("/ai-only", 0, 1)},
			}, mustQuery(t, s, all("p1")))
		}},
		{"RangeIsHalfOpenOnWholeHours", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			// /a has 1, 10, 100, 1000 human views in hours 0..3; /b has
			// AI views in hour 3 only.
			for h, n := range []int64{1, 10, 100, 1000} {
				add(t, s, store.ViewCount{ProjectID: "p1", Path: "/a", Hour: Hour(h), Human: n})
			}
			add(t, s, store.ViewCount{ProjectID: "p1", Path: "/b", Hour: Hour(3), AI: 5000})
			for _, tc := range []struct {
				name     string
				from, to time.Time
				want     store.ViewsResult
			}{
				{"[1,3)", Hour(1), Hour(3), store.ViewsResult{
					Totals: store.Counts{Human: 110}, Rows: []store.PathCounts{row("/a", 110, 0)}}},
				{"[open,2)", time.Time{}, Hour(2), store.ViewsResult{
					Totals: store.Counts{Human: 11}, Rows: []store.PathCounts{row("/a", 11, 0)}}},
				{"[2,open)", Hour(2), time.Time{}, store.ViewsResult{
					Totals: store.Counts{Human: 1100, AI: 5000}, Rows: []store.PathCounts{row("/b", 0, 5000), row("/a", 1100, 0)}}},
				{"[open,open)", time.Time{}, time.Time{}, store.ViewsResult{
					Totals: store.Counts{Human: 1111, AI: 5000}, Rows: []store.PathCounts{row("/b", 0, 5000), row("/a", 1111, 0)}}},
				{"[3,4)", Hour(3), Hour(4), store.ViewsResult{
					Totals: store.Counts{Human: 1000, AI: 5000}, Rows: []store.PathCounts{row("/b", 0, 5000), row("/a", 1000, 0)}}},
				{"[1,1) is empty", Hour(1), Hour(1), store.ViewsResult{Rows: []store.PathCounts{}}},
				{"[4,open) is empty", Hour(4), time.Time{}, store.ViewsResult{Rows: []store.PathCounts{}}},
				{"[open,0) is empty", time.Time{}, Hour(0), store.ViewsResult{Rows: []store.PathCounts{}}},
				{"bounds in another zone", Hour(1).In(elsewhere), Hour(3).In(elsewhere), store.ViewsResult{
					Totals: store.Counts{Human: 110}, Rows: []store.PathCounts{row("/a", 110, 0)}}},
			} {
				q := all("p1")
				q.From, q.To = tc.from, tc.to
				wantResult(t, "QueryViews "+tc.name, tc.want, mustQuery(t, s, q))
			}
		}},
		{"RowsAreOrderedByTotalThenPath", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			// Ties on the total 5 are broken by path in byte order ("/B"
			// before "/a"), the order of Go strings, so that every backend
			// agrees whatever its collation. A path's hours add up into
			// one row.
			add(t, s,
				store.ViewCount{ProjectID: "p1", Path: "/c", Hour: Hour(0), Human: 5},
				store.ViewCount{ProjectID: "p1", Path: "/e", Hour: Hour(0), AI: 1},
				store.ViewCount{ProjectID: "p1", Path: "/a", Hour: Hour(0), AI: 5},
				store.ViewCount{ProjectID: "p1", Path: "/d", Hour: Hour(0), Human: 4},
				store.ViewCount{ProjectID: "p1", Path: "/d", Hour: Hour(1), Human: 2, AI: 3},
				store.ViewCount{ProjectID: "p1", Path: "/B", Hour: Hour(1), Human: 2, AI: 3},
				store.ViewCount{ProjectID: "p1", Path: "/f", Hour: Hour(0), Human: 3, Bot: 10},
				store.ViewCount{ProjectID: "p1", Path: "/f", Hour: Hour(2), AI: 2},
				// More human views than /a and /B but fewer in total, as
				// /a has more AI views than /d: the total orders.
				store.ViewCount{ProjectID: "p1", Path: "/g", Hour: Hour(0), Human: 4})
			wantResult(t, "QueryViews", store.ViewsResult{
				Totals: store.Counts{Human: 20, AI: 14},
				Rows: []store.PathCounts{
					row("/d", 6, 3), row("/B", 2, 3), row("/a", 0, 5), row("/c", 5, 0),
					row("/f", 3, 2), row("/g", 4, 0), row("/e", 0, 1),
				},
			}, mustQuery(t, s, all("p1")))
		}},
		{"PagesReportHasMoreExactly", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			// Five rows with distinct totals: /e 50, /d 40, /c 30, /b 20, /a 10.
			var rows []store.PathCounts
			for i, p := range []string{"/e", "/d", "/c", "/b", "/a"} {
				n := int64(50 - 10*i)
				add(t, s, store.ViewCount{ProjectID: "p1", Path: p, Hour: Hour(i), Human: n - 1, AI: 1})
				rows = append(rows, row(p, n-1, 1))
			}
			totals := store.Counts{Human: 145, AI: 5}
			for _, tc := range []struct {
				limit, offset int
				want          []store.PathCounts
				hasMore       bool
			}{
				{2, 0, rows[0:2], true},
				{2, 2, rows[2:4], true},
				{2, 4, rows[4:5], false},
				{2, 3, rows[3:5], false}, // the page ends exactly at the last row
				{4, 0, rows[0:4], true},
				{5, 0, rows[0:5], false},
				{6, 0, rows[0:5], false},
				{1, 4, rows[4:5], false},
				{2, 5, []store.PathCounts{}, false}, // offset at the end
				{2, 9, []store.PathCounts{}, false}, // offset past the end
			} {
				q := all("p1")
				q.Limit, q.Offset = tc.limit, tc.offset
				// Totals cover the whole range on every page.
				wantResult(t, "QueryViews limit "+strconv.Itoa(tc.limit)+" offset "+strconv.Itoa(tc.offset),
					store.ViewsResult{Totals: totals, Rows: tc.want, HasMore: tc.hasMore}, mustQuery(t, s, q))
			}
		}},
		{"OtherProjectsViewsNeverLeak", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			add(t, s,
				store.ViewCount{ProjectID: "p1", Path: "/a", Hour: Hour(0), Human: 1},
				store.ViewCount{ProjectID: "p2", Path: "/a", Hour: Hour(0), Human: 20, AI: 20},
				store.ViewCount{ProjectID: "p2", Path: "/p2-only", Hour: Hour(0), AI: 7})
			wantResult(t, "QueryViews p1", store.ViewsResult{
				Totals: store.Counts{Human: 1},
				Rows:   []store.PathCounts{row("/a", 1, 0)},
			}, mustQuery(t, s, all("p1")))
			wantResult(t, "QueryViews p2", store.ViewsResult{
				Totals: store.Counts{Human: 20, AI: 27},
				Rows:   []store.PathCounts{row("/a", 20, 20), row("/p2-only", 0, 7)},
			}, mustQuery(t, s, all("p2")))
		}},
		{"UnknownProjectGivesEmptyResult", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			add(t, s, store.ViewCount{ProjectID: "p1", Path: "/a", Hour: Hour(0), Human: 1})
			wantResult(t, "QueryViews of unknown project", store.ViewsResult{Rows: []store.PathCounts{}},
				mustQuery(t, s, all("nope")))
		}},
		{"InvalidCountsAreRejectedAtomically", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			add(t, s, store.ViewCount{ProjectID: "p1", Path: "/a", Hour: Hour(0), Human: 1})
			want := store.ViewsResult{Totals: store.Counts{Human: 1}, Rows: []store.PathCounts{row("/a", 1, 0)}}
			good := []store.ViewCount{
				{ProjectID: "p1", Path: "/a", Hour: Hour(0), Human: 10},
				{ProjectID: "p1", Path: "/new", Hour: Hour(1), AI: 10},
			}
			for name, bad := range map[string]store.ViewCount{
				"negative human":       {ProjectID: "p1", Path: "/x", Hour: Hour(0), Human: -1, AI: 5},
				"negative ai":          {ProjectID: "p1", Path: "/x", Hour: Hour(0), Human: 5, AI: -1},
				"negative bot":         {ProjectID: "p1", Path: "/x", Hour: Hour(0), Human: 5, Bot: -1},
				"hour with minutes":    {ProjectID: "p1", Path: "/x", Hour: Hour(0).Add(30 * time.Minute), Human: 5},
				"hour with seconds":    {ProjectID: "p1", Path: "/x", Hour: Hour(0).Add(time.Second), Human: 5},
				"hour with micros":     {ProjectID: "p1", Path: "/x", Hour: Hour(0).Add(time.Microsecond), Human: 5},
				"negative on good key": {ProjectID: "p1", Path: "/a", Hour: Hour(0), Human: -10},
			} {
				// The bad entry comes last, after good ones that a backend
				// applying entries one by one would already have stored.
				batch := append(append([]store.ViewCount(nil), good...), bad)
				if err := s.AddViews(t.Context(), batch); err == nil {
					t.Errorf("AddViews with %s: no error", name)
				}
				wantResult(t, "QueryViews after AddViews with "+name, want, mustQuery(t, s, all("p1")))
			}
		}},
		{"RangesAcrossDaysAgreeWithHourlySums", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			// Five days of counts over a few paths, with few distinct
			// values so that totals tie across page edges, added in
			// batches that go back to earlier hours (late counts). Every
			// range answers what summing the counts hour by hour gives:
			// a backend that keeps rollups by day must split ragged
			// edges, open sides and late counts exactly.
			r := rand.New(rand.NewPCG(7, 11))
			const hours = 5 * 24
			counts := addRandomCounts(t, s, r, randomCounts{batches: 6, perBatch: 80, paths: 12, first: Hour(-24), hours: hours, p2: true})
			for range 150 {
				q := all("p1")
				if r.IntN(6) > 0 {
					q.From = Hour(r.IntN(hours+10) - 30)
				}
				if r.IntN(6) > 0 {
					q.To = Hour(r.IntN(hours+10) - 30)
				}
				q.Limit, q.Offset = 1+r.IntN(5), r.IntN(14)
				wantSummed(t, s, counts, q)
			}
		}},
		{"RangesAcrossWeeksAgreeWithHourlySums", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			// Six weeks of sparse counts, added in batches that go back
			// in time, and ranges of up to six weeks: a backend that
			// keeps rollups by week as well must split ranges into
			// weeks, days and hours exactly too.
			r := rand.New(rand.NewPCG(13, 17))
			const hours = 42 * 24
			counts := addRandomCounts(t, s, r, randomCounts{batches: 5, perBatch: 120, paths: 10, first: Hour(-24 * 7), hours: hours})
			for range 80 {
				q := all("p1")
				if r.IntN(8) > 0 {
					q.From = Hour(r.IntN(hours+48) - 24*8)
				}
				if r.IntN(8) > 0 {
					q.To = Hour(r.IntN(hours+48) - 24*8)
				}
				q.Limit, q.Offset = 1+r.IntN(5), r.IntN(12)
				wantSummed(t, s, counts, q)
			}
		}},
		{"InvalidQueryIsAnError", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			add(t, s, store.ViewCount{ProjectID: "p1", Path: "/a", Hour: Hour(0), Human: 1})
			for name, q := range map[string]store.ViewsQuery{
				"limit 0":   {ProjectID: "p1", Limit: 0},
				"limit -1":  {ProjectID: "p1", Limit: -1},
				"offset -1": {ProjectID: "p1", Limit: 10, Offset: -1},
			} {
				if _, err := s.QueryViews(t.Context(), q); err == nil {
					t.Errorf("QueryViews with %s: no error", name)
				}
			}
		}},
	})
}

// randomCounts describes the counts addRandomCounts adds: batches of
// perBatch counts of p1, on paths /a, /b... (paths of them), in the hours
// from first to first+hours; with p2, each batch adds one count of p2 too.
type randomCounts struct {
	batches, perBatch, paths int
	first                    time.Time
	hours                    int
	p2                       bool
}

// addRandomCounts adds the counts c describes, batch by batch, drawn from
// r, and returns them all.
func addRandomCounts(t *testing.T, s store.Store, r *rand.Rand, c randomCounts) []store.ViewCount {
	t.Helper()
	at := func() time.Time { return c.first.Add(time.Duration(r.IntN(c.hours)) * time.Hour) }
	var counts []store.ViewCount
	for range c.batches {
		var batch []store.ViewCount
		for range c.perBatch {
			batch = append(batch, store.ViewCount{
				ProjectID: "p1", Path: "/" + string(rune('a'+r.IntN(c.paths))),
				Hour: at(), Human: r.Int64N(3), AI: r.Int64N(2), Bot: r.Int64N(2),
			})
		}
		if c.p2 {
			batch = append(batch, store.ViewCount{ProjectID: "p2", Path: "/a", Hour: at(), Human: 9})
		}
		must(t, "AddViews", s.AddViews(t.Context(), batch))
		counts = append(counts, batch...)
	}
	return counts
}

// wantSummed fails unless the store answers q as summing counts hour by
// hour does.
func wantSummed(t *testing.T, s store.Store, counts []store.ViewCount, q store.ViewsQuery) {
	t.Helper()
	wantResult(t, fmt.Sprintf("QueryViews [%v, %v) limit %d offset %d", q.From, q.To, q.Limit, q.Offset),
		sumHourByHour(counts, q), mustQuery(t, s, q))
}

// sumHourByHour answers q from counts the plain way, as the contract
// defines it: the reference the backends are checked against.
func sumHourByHour(counts []store.ViewCount, q store.ViewsQuery) store.ViewsResult {
	sums := map[string]*store.Counts{}
	res := store.ViewsResult{Rows: []store.PathCounts{}}
	for _, c := range counts {
		if c.ProjectID != q.ProjectID || (!q.From.IsZero() && c.Hour.Before(q.From)) || (!q.To.IsZero() && !c.Hour.Before(q.To)) {
			continue
		}
		if sums[c.Path] == nil {
			sums[c.Path] = &store.Counts{}
		}
		sums[c.Path].Human += c.Human
		sums[c.Path].AI += c.AI
		res.Totals.Human += c.Human
		res.Totals.AI += c.AI
	}
	var rows []store.PathCounts
	for p, c := range sums {
		if c.Human+c.AI > 0 {
			rows = append(rows, store.PathCounts{Path: p, Counts: *c})
		}
	}
	slices.SortFunc(rows, func(a, b store.PathCounts) int {
		return cmp.Or(cmp.Compare(b.Human+b.AI, a.Human+a.AI), strings.Compare(a.Path, b.Path))
	})
	if q.Offset < len(rows) {
		res.Rows = append(res.Rows, rows[q.Offset:min(len(rows), q.Offset+q.Limit)]...)
	}
	res.HasMore = q.Offset+q.Limit < len(rows)
	return res
}
