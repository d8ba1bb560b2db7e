package docsapi

import (
	"context"
	"iter"
	"net/http"
	"time"
)

// MaxSearchesLimit is the largest page of the searches export, and the page
// size of AllSearches when SearchesParams.Limit is zero.
const MaxSearchesLimit = 100

// SearchesParams selects the searches made on the documentation site. The
// zero value asks for the server's defaults, from the first page.
type SearchesParams struct {
	// DateFrom is the first instant counted (inclusive).
	DateFrom DateBound
	// DateTo is the end of the range (exclusive).
	DateTo DateBound
	// Limit is the page size, 1 to 100. Zero leaves it to the server (50)
	// for Searches, and means 100 for AllSearches.
	Limit int
	// Cursor is where to start: the NextCursor of an earlier page, or ""
	// for the first page.
	Cursor string
}

func (p SearchesParams) validate() error {
	if err := checkLimit(p.Limit, MaxSearchesLimit); err != nil {
		return err
	}
	return checkDates(p.DateFrom, p.DateTo)
}

func (p SearchesParams) query() string {
	q := dateQuery(p.DateFrom, p.DateTo)
	setPositive(q, "limit", p.Limit)
	setNonEmpty(q, "cursor", p.Cursor)
	return q.Encode()
}

// SearchesPage is one page of the searches export, most searched first.
type SearchesPage struct {
	// Searches holds one row per distinct query.
	Searches []Search
	// TotalSearches is the number of searches in the whole range (the sum
	// of every row's Hits, not only this page's).
	TotalSearches int64
	// NextCursor asks for the next page; "" when the server sent null,
	// which marks the last page. (An empty cursor would ask for the first
	// page again, so "" can mean nothing else.)
	NextCursor string
}

// Search is one distinct query typed into the site's search.
type Search struct {
	// Query is the text searched for (searchQuery on the wire).
	Query string
	// Hits is how many times it was searched.
	Hits int64
	// CTR is the click-through rate: the share of these searches, 0 to 1,
	// after which a result was opened.
	CTR float64
	// TopClickedPage is the result opened most often; "" when the server
	// sent null, as it does when no result was opened.
	TopClickedPage string
	// LastSearchedAt is when the query was last searched, in UTC.
	LastSearchedAt time.Time
}

type searchWire struct {
	SearchQuery    string  `json:"searchQuery"`
	Hits           count   `json:"hits"`
	CTR            float64 `json:"ctr"`
	TopClickedPage *string `json:"topClickedPage"`
	LastSearchedAt *string `json:"lastSearchedAt"`
}

type searchesPageWire struct {
	Searches      []searchWire `json:"searches"`
	TotalSearches count        `json:"totalSearches"`
	NextCursor    optString    `json:"nextCursor"`
}

// UnmarshalJSON decodes a page in the API's shape. searches and nextCursor
// are required (nextCursor may be null): nextCursor is this export's only
// sign of the last page, so a 200 answer without it is not taken for one.
func (p *SearchesPage) UnmarshalJSON(b []byte) error { return p.decodeBody(b) }

func (p *SearchesPage) decodeBody(b []byte) error {
	const what = "searches page"
	var w searchesPageWire
	if err := decodeWire(what, b, &w); err != nil {
		return err
	}
	switch {
	case w.Searches == nil:
		return missingField(what, "searches")
	case !w.NextCursor.found:
		return missingField(what, "nextCursor")
	}
	page := SearchesPage{
		Searches:      make([]Search, len(w.Searches)),
		TotalSearches: w.TotalSearches.n,
		NextCursor:    deref(w.NextCursor.s),
	}
	for i, s := range w.Searches {
		last, err := parseTimestamp(what, "searches.lastSearchedAt", s.LastSearchedAt)
		if err != nil {
			return err
		}
		page.Searches[i] = Search{
			Query:          s.SearchQuery,
			Hits:           s.Hits.n,
			CTR:            s.CTR,
			TopClickedPage: deref(s.TopClickedPage),
			LastSearchedAt: last,
		}
	}
	*p = page
	return nil
}

// Searches returns one page of the site's searches, most searched first,
// with the number of searches over the whole range: GET
// /v1/analytics/{projectId}/searches. On the hosted service each call counts
// against the budget of 100 analytics requests per organisation per hour
// that every export shares. Pass the page's NextCursor as params.Cursor for
// the next page, or use AllSearches.
func (s *AnalyticsService) Searches(ctx context.Context, projectID string, params SearchesParams, opts ...RequestOption) (*SearchesPage, error) {
	return getOne[SearchesPage](ctx, s.client, projectID, params, func(p string) string { return analyticsPath(p, "searches") }, opts)
}

// AllSearches returns an iterator over the rows of every page of GET
// /v1/analytics/{projectId}/searches from params.Cursor on, following each
// page's nextCursor until it is null; 100 rows a request unless
// params.Limit says otherwise, each request counting against the hosted
// budget of 100 analytics requests per organisation per hour.
//
// Nothing is sent until the loop starts, and each loop starts again at
// params.Cursor. An error (an invalid argument included) is yielded once
// and ends the loop; breaking out of the loop sends no further request; an
// empty page ends it. A nextCursor that the loop has already used is
// yielded as an error rather than followed round again. params is copied,
// never changed. WithPrefetch does not apply: each cursor comes with the
// page before it.
func (s *AnalyticsService) AllSearches(ctx context.Context, projectID string, params SearchesParams, opts ...RequestOption) iter.Seq2[Search, error] {
	project, err := s.client.project(projectID)
	if err == nil {
		err = params.validate()
	}
	if err != nil {
		return failed[Search](err)
	}
	if params.Limit == 0 {
		params.Limit = MaxSearchesLimit
	}
	path := analyticsPath(project, "searches")
	return cursorPager(ctx, "GET "+path, untilNull, params.Cursor, func(ctx context.Context, cursor string) ([]Search, string, bool, error) {
		p := params
		p.Cursor = cursor
		var page SearchesPage
		req := apiRequest{method: http.MethodGet, path: path, query: p.query()}
		if err := s.client.do(ctx, req, opts, &page); err != nil {
			return nil, "", false, err
		}
		return page.Searches, page.NextCursor, false, nil
	})
}
