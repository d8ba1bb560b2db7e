package store

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"
)

// SearchStore keeps what readers search for on the documentation site:
// per project, UTC day and normalised query, how often it was searched,
// how often a result was opened, and which results.
type SearchStore interface {
	// AddSearches counts each search of b under its (ProjectID, day of
	// At, Query), and its opened result, if any, under its Query and
	// ClickedPath; it never overwrites. A ClickOnly search adds its
	// opening alone (see Search.ClickOnly). The whole batch is applied or
	// none of it.
	//
	// A day holds at most b.DailyQueryCap distinct queries besides
	// OtherSearchesQuery: a query the day holds keeps counting, and a
	// query new to the day is admitted while the day holds fewer than
	// the cap; past it, its searches are counted under
	// OtherSearchesQuery, so that totals stay exact. In the same way a
	// day holds at most b.DailyQueryCap distinct pairs of query and
	// opened result: past it, an opening still counts among its query's
	// clicks but is not tied to a result. Within a batch, new queries and
	// then new pairs are admitted in byte order. The searches of
	// OtherSearchesQuery never tie their openings to a result. The
	// function TallySearches says all of this in one place; the result
	// reports what was folded, and what the batch added that was new to
	// its days (the room of the caps it took).
	AddSearches(ctx context.Context, b SearchBatch) (SearchFolds, error)
	// QuerySearches returns one page of a project's queries over a day
	// range, most searched first: Hits descending, then Query ascending
	// (bytes), with the total of every query's Hits in the range. With
	// q.After the page starts after that place in the order. HasMore
	// reports whether a query follows the page. Unknown projects give
	// empty results.
	QuerySearches(ctx context.Context, q SearchesQuery) (SearchesResult, error)
}

// OtherSearchesQuery is the query under which AddSearches counts the
// searches of queries new to a day that holds as many queries as its cap.
// A reader who searches for exactly this text is counted here too.
const OtherSearchesQuery = "(other searches)"

// DefaultDailyQueryCap is the cap on distinct queries (and on distinct
// pairs of query and opened result) per project and UTC day that the
// server applies unless configured otherwise: above what readers of a
// documentation site search for in a day, far below what a script sending
// made-up queries reaches.
const DefaultDailyQueryCap = 10_000

// MaxQueryLength bounds a normalised query, in characters.
const MaxQueryLength = 200

// NormaliseQuery returns q as searches are counted: lower case, with runs
// of white space made one space and none at either end, so that "Install
// ", "install" and "INSTALL" are one query.
func NormaliseQuery(q string) string {
	return strings.Join(strings.Fields(strings.ToLower(q)), " ")
}

// Search is one search made on a documentation site.
type Search struct {
	ProjectID   string
	Query       string    // normalised (NormaliseQuery)
	ClickedPath string    // the result the reader opened, or ""
	At          time.Time // when; counted in its UTC day
	// ClickOnly marks the opening of ClickedPath after a search already
	// counted (At is that search's time, so that both count in one day):
	// it adds to the query's clicks and to the pair, not to its hits, and
	// it admits no query. One whose query its day does not hold (folded
	// under OtherSearchesQuery, or gone) is dropped, so that no query
	// counts openings it was never searched for.
	ClickOnly bool
}

// SearchBatch is what AddSearches adds.
type SearchBatch struct {
	Searches      []Search
	DailyQueryCap int // at least 1; see DefaultDailyQueryCap
}

// SearchFolds counts what AddSearches did not keep apart, and what it
// added to the days' counts.
type SearchFolds struct {
	Searches int64 // searches counted under OtherSearchesQuery past the cap
	Clicks   int64 // openings counted without their result past the cap
	// Added is what the days' counts grew by: the queries and pairs new
	// to their day that were admitted (SearchTally.Added), so that the
	// server can charge them to the client that sent them.
	Added SearchDayCounts
}

// Add adds o to f.
func (f *SearchFolds) Add(o SearchFolds) {
	f.Searches += o.Searches
	f.Clicks += o.Clicks
	f.Added.Queries += o.Added.Queries
	f.Added.ClickPaths += o.Added.ClickPaths
}

// SearchDay returns the UTC day (its midnight) a search made at t counts in.
func SearchDay(t time.Time) time.Time { return t.UTC().Truncate(24 * time.Hour) }

// SearchDayCounts is what a store holds of one project's UTC day: its
// distinct queries (OtherSearchesQuery aside) and its distinct pairs of
// query and opened result.
type SearchDayCounts struct {
	Queries, ClickPaths int64
}

// QueryCount is what AddSearches adds to one query of a day.
type QueryCount struct {
	Query        string
	Hits, Clicks int64
	LastAt       time.Time // the latest search's At
}

// ClickCount is what AddSearches adds to one pair of query and opened
// result of a day.
type ClickCount struct {
	Query, Path string
	Clicks      int64
}

// SearchTally is what AddSearches adds to one project's UTC day.
type SearchTally struct {
	Queries []QueryCount // by Query
	Clicks  []ClickCount // by Query, then Path
	// Added is what the day's counts grow by: the queries and pairs new
	// to the day that were admitted.
	Added SearchDayCounts
	Folds SearchFolds // with Added again, as AddSearches reports it
}

// SearchKeys returns the distinct queries and pairs of query and opened
// result of searches, sorted: what a store looks up to know which of them
// a day holds before calling TallySearches.
func SearchKeys(searches []Search) (queries []string, pairs [][2]string) {
	for _, s := range searches {
		queries = append(queries, s.Query)
		if s.ClickedPath != "" {
			pairs = append(pairs, [2]string{s.Query, s.ClickedPath})
		}
	}
	slices.Sort(queries)
	slices.SortFunc(pairs, comparePairs)
	return slices.Compact(queries), slices.Compact(pairs)
}

func comparePairs(a, b [2]string) int {
	return cmp.Or(strings.Compare(a[0], b[0]), strings.Compare(a[1], b[1]))
}

// TallySearches applies AddSearches' caps to searches, all of one project
// and UTC day, which held day before them: heldQueries and heldPairs say
// which of the batch's queries and pairs (see SearchKeys) the day holds
// already. It returns what to add to the day.
func TallySearches(searches []Search, day SearchDayCounts, heldQueries map[string]bool, heldPairs map[[2]string]bool, cap int) SearchTally {
	var t SearchTally
	queries, _ := SearchKeys(searches)
	searched := map[string]bool{} // the queries a search, not an opening alone, asks
	for _, s := range searches {
		if !s.ClickOnly {
			searched[s.Query] = true
		}
	}
	admitted := map[string]bool{}
	for _, q := range queries { // sorted: admitted in byte order
		switch {
		case q == OtherSearchesQuery || heldQueries[q]:
			admitted[q] = true
		case searched[q] && day.Queries+t.Added.Queries < int64(cap):
			admitted[q] = true
			t.Added.Queries++
		}
	}
	counts := map[string]*QueryCount{}
	var pairs [][2]string
	for _, s := range searches {
		q := s.Query
		switch {
		case s.ClickOnly && !admitted[q]:
			continue
		case !admitted[q]:
			q = OtherSearchesQuery
			t.Folds.Searches++
		}
		c := counts[q]
		if c == nil {
			c = &QueryCount{Query: q}
			counts[q] = c
		}
		if !s.ClickOnly {
			c.Hits++
		}
		if s.At.After(c.LastAt) {
			c.LastAt = s.At
		}
		if s.ClickedPath == "" {
			continue
		}
		c.Clicks++
		if q == OtherSearchesQuery {
			t.Folds.Clicks++
			continue
		}
		pairs = append(pairs, [2]string{q, s.ClickedPath})
	}
	slices.SortFunc(pairs, comparePairs) // admitted in byte order
	var last *ClickCount
	refused := map[[2]string]bool{}
	for _, p := range pairs {
		if last != nil && last.Query == p[0] && last.Path == p[1] {
			last.Clicks++
			continue
		}
		if refused[p] {
			t.Folds.Clicks++
			continue
		}
		if !heldPairs[p] {
			if day.ClickPaths+t.Added.ClickPaths >= int64(cap) {
				refused[p] = true
				t.Folds.Clicks++
				continue
			}
			t.Added.ClickPaths++
		}
		t.Clicks = append(t.Clicks, ClickCount{Query: p[0], Path: p[1], Clicks: 1})
		last = &t.Clicks[len(t.Clicks)-1]
	}
	for _, c := range counts {
		t.Queries = append(t.Queries, *c)
	}
	t.Folds.Added = t.Added
	slices.SortFunc(t.Queries, func(a, b QueryCount) int { return strings.Compare(a.Query, b.Query) })
	return t
}

// SearchKey is a place in the order of QuerySearches: a query's Hits in
// the range, and the query.
type SearchKey struct {
	Hits  int64
	Query string
}

// SearchesQuery asks QuerySearches for a page: the queries of ProjectID
// searched on the UTC days D with From <= D < To (whole days; a zero bound
// leaves that side open).
type SearchesQuery struct {
	ProjectID string
	From, To  time.Time
	Limit     int        // rows per page, at least 1
	After     *SearchKey // nil: the first page
	// Unclicked selects only the queries after which no result was
	// opened in the range (Clicks 0): what readers looked for and did
	// not find. Total still counts every query's searches.
	Unclicked bool
}

// SearchRow is one query of QuerySearches over its range.
type SearchRow struct {
	Query        string
	Hits, Clicks int64
	// TopClickedPage is the result opened most often after this query
	// (the first in byte order among equals), or "" when none was.
	TopClickedPage string
	LastSearchedAt time.Time
}

// Key returns r's place in the order of QuerySearches.
func (r SearchRow) Key() SearchKey { return SearchKey{Hits: r.Hits, Query: r.Query} }

// SearchesResult is one page of QuerySearches.
type SearchesResult struct {
	Rows    []SearchRow
	Total   int64 // the Hits of every query in the range, not only the page's
	HasMore bool
}
