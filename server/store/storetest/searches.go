package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// searchDay returns the n-th UTC midnight after the one that starts the day
// of At(0).
func searchDay(n int) time.Time {
	return base.Truncate(24 * time.Hour).Add(time.Duration(n) * 24 * time.Hour)
}

// search is one search of p1 at at, opening clicked ("" for none).
func search(query, clicked string, at time.Time) store.Search {
	return store.Search{ProjectID: "p1", Query: query, ClickedPath: clicked, At: at}
}

// mustAddSearches adds a batch that must be stored, capped at cap queries
// a day, and returns what it folded.
func mustAddSearches(t *testing.T, s store.Store, cap int, searches ...store.Search) store.SearchFolds {
	t.Helper()
	folds, err := s.AddSearches(t.Context(), store.SearchBatch{Searches: searches, DailyQueryCap: cap})
	must(t, "AddSearches", err)
	return folds
}

// searchesOf is a query for every day of a project, on one large page.
func searchesOf(projectID string) store.SearchesQuery {
	return store.SearchesQuery{ProjectID: projectID, Limit: 1000}
}

// mustQuerySearches runs a query that must succeed, and checks the
// conventions of what it returns.
func mustQuerySearches(t *testing.T, s store.Store, q store.SearchesQuery) store.SearchesResult {
	t.Helper()
	res, err := s.QuerySearches(t.Context(), q)
	must(t, "QuerySearches", err)
	if res.Rows == nil {
		t.Errorf("QuerySearches: Rows is nil, want an empty, non-nil slice")
	}
	for _, r := range res.Rows {
		checkTimes(t, "QuerySearches", r.LastSearchedAt)
	}
	return res
}

// queries lists the queries of rows.
func queries(rows []store.SearchRow) []string {
	out := []string{}
	for _, r := range rows {
		out = append(out, r.Query)
	}
	return out
}

const manyQueries = 1000 // a cap no test reaches

func testSearches(t *testing.T, open opener) {
	withProjects := func(t *testing.T, s store.Store) {
		t.Helper()
		mustProject(t, s, "p1")
		mustProject(t, s, "p2")
	}
	other := store.OtherSearchesQuery
	runAll(t, open, []subtest{
		{"AddThenQueryCountsHitsClicksAndTheTopResult", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			d0, d1 := searchDay(0), searchDay(1)
			folds := mustAddSearches(t, s, manyQueries,
				search("install", "/install", d0.Add(time.Hour)),
				search("install", "/setup", d0.Add(3*time.Hour)),
				search("api keys", "/keys", d0.Add(time.Hour)),
				search("tie", "/b", d0.Add(time.Hour)),
				search("tie", "/a", d0.Add(time.Hour)),
				search("nothing opened", "", d0.Add(time.Hour)))
			// Nothing is folded; what was new to the day is reported.
			diff(t, "folds", store.SearchFolds{Added: store.SearchDayCounts{Queries: 4, ClickPaths: 5}}, folds)
			// A second batch adds to the first, across days too: what the
			// day holds already is not new to it.
			diff(t, "folds of the second batch", store.SearchFolds{Added: store.SearchDayCounts{Queries: 1}}, mustAddSearches(t, s, manyQueries,
				search("install", "/install", d0.Add(2*time.Hour+time.Microsecond).In(elsewhere)),
				search("install", "", d0.Add(30*time.Minute)),
				search("api keys", "", d1.Add(5*time.Hour))))
			diff(t, "QuerySearches", store.SearchesResult{Total: 9, Rows: []store.SearchRow{
				{Query: "install", Hits: 4, Clicks: 3, TopClickedPage: "/install", LastSearchedAt: d0.Add(3 * time.Hour)},
				{Query: "api keys", Hits: 2, Clicks: 1, TopClickedPage: "/keys", LastSearchedAt: d1.Add(5 * time.Hour)},
				{Query: "tie", Hits: 2, Clicks: 2, TopClickedPage: "/a", LastSearchedAt: d0.Add(time.Hour)},
				{Query: "nothing opened", Hits: 1, LastSearchedAt: d0.Add(time.Hour)},
			}}, mustQuerySearches(t, s, searchesOf("p1")))
		}},
		{"ClickOnlyAddsAnOpeningToItsSearchAlone", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			d0 := searchDay(0).Add(time.Hour)
			click := func(query, path string) store.Search {
				sr := search(query, path, d0)
				sr.ClickOnly = true
				return sr
			}
			// A day capped at one query: "held" is admitted, "folded" is
			// counted under other searches.
			mustAddSearches(t, s, 1, search("held", "", d0), search("zfolded", "", d0))
			folds := mustAddSearches(t, s, 1,
				click("held", "/a"),    // counted: a click and a pair, no hit
				click("zfolded", "/b"), // its query is not held: dropped
				click("never", "/c"),   // neither: dropped, and admits nothing
				click(other, "/d"))     // other searches' openings have no result
			diff(t, "folds", store.SearchFolds{Clicks: 1, Added: store.SearchDayCounts{ClickPaths: 1}}, folds)
			// In a batch, a search admits its query and its opening counts;
			// an opening alone admits none, though the day has room.
			mustAddSearches(t, s, manyQueries, search("fresh", "", d0), click("fresh", "/e"), click("lonely", "/f"))
			diff(t, "QuerySearches", store.SearchesResult{Total: 3, Rows: []store.SearchRow{
				{Query: "(other searches)", Hits: 1, Clicks: 1, LastSearchedAt: d0},
				{Query: "fresh", Hits: 1, Clicks: 1, TopClickedPage: "/e", LastSearchedAt: d0},
				{Query: "held", Hits: 1, Clicks: 1, TopClickedPage: "/a", LastSearchedAt: d0},
			}}, mustQuerySearches(t, s, searchesOf("p1")))
			if _, err := s.AddSearches(t.Context(), store.SearchBatch{DailyQueryCap: 1, Searches: []store.Search{click("held", "")}}); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("an opening alone without a path: err = %v, want ErrInvalid", err)
			}
		}},
		{"RowsAreOrderedByHitsThenQueryAndPagedAfterAPlace", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			var batch []store.Search
			for q, hits := range map[string]int{"a": 3, "b": 3, "c": 5, "d": 1, "e": 3} {
				for i := range hits {
					batch = append(batch, search(q, "", searchDay(i%2).Add(time.Hour)))
				}
			}
			mustAddSearches(t, s, manyQueries, batch...)
			q := searchesOf("p1")
			q.Limit = 2
			var pages [][]string
			for {
				res := mustQuerySearches(t, s, q)
				if res.Total != 15 {
					t.Errorf("page %d: Total = %d, want 15", len(pages), res.Total)
				}
				pages = append(pages, queries(res.Rows))
				if !res.HasMore || len(pages) > 5 {
					break
				}
				k := res.Rows[len(res.Rows)-1].Key()
				q.After = &k
			}
			diff(t, "pages", [][]string{{"c", "a"}, {"b", "e"}, {"d"}}, pages)
			q.After, q.Limit = &store.SearchKey{Hits: 3, Query: "aa"}, 10
			diff(t, "after a place no query holds", []string{"b", "e", "d"}, queries(mustQuerySearches(t, s, q).Rows))
			q.Limit = 3
			if res := mustQuerySearches(t, s, q); res.HasMore {
				t.Errorf("a page that ends with the last query: HasMore = true")
			}
		}},
		{"UnclickedSelectsQueriesThatOpenedNothingInTheRange", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			d0, d1 := searchDay(0).Add(time.Hour), searchDay(1).Add(time.Hour)
			mustAddSearches(t, s, manyQueries,
				search("gap", "", d0), search("gap", "", d0), search("gap", "", d1),
				search("later", "", d0), search("later", "/found", d1),
				search("found", "/found", d0), search("found", "", d0), search("found", "", d0), search("found", "", d0),
				search("rare", "", d1))
			p2 := search("elsewhere", "", d0)
			p2.ProjectID = "p2"
			mustAddSearches(t, s, manyQueries, p2)
			q := searchesOf("p1")
			q.Unclicked = true
			diff(t, "every day", store.SearchesResult{Total: 10, Rows: []store.SearchRow{
				{Query: "gap", Hits: 3, LastSearchedAt: d1},
				{Query: "rare", Hits: 1, LastSearchedAt: d1},
			}}, mustQuerySearches(t, s, q))
			q.To = searchDay(1)
			diff(t, "day 0", store.SearchesResult{Total: 7, Rows: []store.SearchRow{
				{Query: "gap", Hits: 2, LastSearchedAt: d0},
				{Query: "later", Hits: 1, LastSearchedAt: d0},
			}}, mustQuerySearches(t, s, q))
			q.Limit = 1
			res := mustQuerySearches(t, s, q)
			diff(t, "first page of day 0", []string{"gap"}, queries(res.Rows))
			diff(t, "more after the first page", true, res.HasMore)
			k := res.Rows[0].Key()
			q.After = &k
			res = mustQuerySearches(t, s, q)
			diff(t, "second page of day 0", []string{"later"}, queries(res.Rows))
			diff(t, "more after the second page", false, res.HasMore)
		}},
		{"DayRangeIsHalfOpenOnWholeDays", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			mustAddSearches(t, s, manyQueries,
				search("zero", "", searchDay(0)),
				search("one", "", searchDay(1).Add(23*time.Hour+59*time.Minute)),
				search("two", "", searchDay(2)))
			for _, tc := range []struct {
				name     string
				from, to time.Time
				want     []string
			}{
				{"from day 1", searchDay(1), time.Time{}, []string{"one", "two"}},
				{"to day 1", time.Time{}, searchDay(1), []string{"zero"}},
				{"day 1 alone", searchDay(1), searchDay(2), []string{"one"}},
				{"empty", searchDay(1), searchDay(1), []string{}},
			} {
				q := searchesOf("p1")
				q.From, q.To = tc.from, tc.to
				res := mustQuerySearches(t, s, q)
				diff(t, tc.name, tc.want, queries(res.Rows))
				if res.Total != int64(len(tc.want)) {
					t.Errorf("%s: Total = %d, want %d", tc.name, res.Total, len(tc.want))
				}
			}
		}},
		{"QueriesPastTheDailyCapFoldIntoOther", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			d0 := searchDay(0)
			mustAddSearches(t, s, 2, search("b", "", d0), search("a", "", d0))
			folds := mustAddSearches(t, s, 2,
				search("c", "", d0.Add(time.Hour)),
				search("a", "", d0.Add(time.Hour)),
				search("c", "/x", d0.Add(2*time.Hour)),
				search(other, "/y", d0.Add(time.Hour)), // always admitted, never tied to a result
				search("d", "", searchDay(1)))          // a new day has room
			diff(t, "folds", store.SearchFolds{Searches: 2, Clicks: 2, Added: store.SearchDayCounts{Queries: 1}}, folds)
			q := searchesOf("p1")
			q.To = searchDay(1)
			diff(t, "day 0", store.SearchesResult{Total: 6, Rows: []store.SearchRow{
				{Query: other, Hits: 3, Clicks: 2, LastSearchedAt: d0.Add(2 * time.Hour)},
				{Query: "a", Hits: 2, LastSearchedAt: d0.Add(time.Hour)},
				{Query: "b", Hits: 1, LastSearchedAt: d0},
			}}, mustQuerySearches(t, s, q))
			q.From, q.To = searchDay(1), searchDay(2)
			diff(t, "day 1", []string{"d"}, queries(mustQuerySearches(t, s, q).Rows))
			// New queries of one batch are admitted in byte order.
			d2 := searchDay(2)
			diff(t, "folds of day 2", store.SearchFolds{Searches: 1, Added: store.SearchDayCounts{Queries: 2}},
				mustAddSearches(t, s, 2, search("z", "", d2), search("m", "", d2), search("b", "", d2)))
			q.From, q.To = d2, searchDay(3)
			diff(t, "day 2", []string{other, "b", "m"}, queries(mustQuerySearches(t, s, q).Rows))
		}},
		{"OpenedResultsPastTheDailyCapCountWithoutTheirPage", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			d0 := searchDay(0)
			folds := mustAddSearches(t, s, 2,
				search("q", "/3", d0), search("q", "/1", d0), search("q", "/2", d0), search("q", "/3", d0))
			diff(t, "folds", store.SearchFolds{Clicks: 2, Added: store.SearchDayCounts{Queries: 1, ClickPaths: 2}}, folds)
			// A pair the day holds keeps counting.
			diff(t, "folds of a held pair", store.SearchFolds{}, mustAddSearches(t, s, 2, search("q", "/2", d0), search("q", "/2", d0)))
			diff(t, "day 0", store.SearchesResult{Total: 6, Rows: []store.SearchRow{
				{Query: "q", Hits: 6, Clicks: 6, TopClickedPage: "/2", LastSearchedAt: d0},
			}}, mustQuerySearches(t, s, searchesOf("p1")))
		}},
		{"OtherProjectsSearchesNeverLeak", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			p2 := search("secret", "/p2", searchDay(0))
			p2.ProjectID = "p2"
			mustAddSearches(t, s, manyQueries, search("mine", "/p1", searchDay(0)), p2)
			diff(t, "p1", store.SearchesResult{Total: 1, Rows: []store.SearchRow{
				{Query: "mine", Hits: 1, Clicks: 1, TopClickedPage: "/p1", LastSearchedAt: searchDay(0)},
			}}, mustQuerySearches(t, s, searchesOf("p1")))
			diff(t, "unknown project", store.SearchesResult{Rows: []store.SearchRow{}}, mustQuerySearches(t, s, searchesOf("p3")))
		}},
		{"RefusedBatchStoresNothing", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			good := search("good", "", searchDay(0))
			for name, b := range map[string]store.SearchBatch{
				"a query that is not normalised": {DailyQueryCap: 5, Searches: []store.Search{good, search("Bad  Query", "", searchDay(0))}},
				"a clicked path without /":       {DailyQueryCap: 5, Searches: []store.Search{good, search("q", "relative", searchDay(0))}},
				"no cap":                         {Searches: []store.Search{good}},
			} {
				_, err := s.AddSearches(t.Context(), b)
				wantErr(t, "AddSearches with "+name, err, store.ErrInvalid)
			}
			diff(t, "after refused batches", store.SearchesResult{Rows: []store.SearchRow{}}, mustQuerySearches(t, s, searchesOf("p1")))
		}},
		{"ConcurrentBatchesCountExactlyAndKeepTheCap", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			const workers, each, cap = 6, 5, 4
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for i := range each {
						_, err := s.AddSearches(t.Context(), store.SearchBatch{DailyQueryCap: cap, Searches: []store.Search{
							search(fmt.Sprintf("w%d-%d", w, i), "", searchDay(0)),
							search("shared", "/page", searchDay(0)),
						}})
						if err != nil {
							t.Errorf("AddSearches: %v", err)
						}
					}
				})
			}
			wg.Wait()
			res := mustQuerySearches(t, s, searchesOf("p1"))
			if res.Total != 2*workers*each {
				t.Errorf("Total = %d, want the %d searches sent", res.Total, 2*workers*each)
			}
			var sum int64
			distinct := 0
			for _, r := range res.Rows {
				sum += r.Hits
				if r.Query != other {
					distinct++
				}
			}
			if sum != res.Total {
				t.Errorf("the rows add up to %d, want the total %d", sum, res.Total)
			}
			if distinct != cap {
				t.Errorf("the day holds %d queries besides %q, want the cap, %d", distinct, other, cap)
			}
		}},
	})
}
