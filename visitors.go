package docsapi

import (
	"context"
	"iter"
	"net/http"
)

// MaxVisitorsLimit is the largest page of the visitors export, and the page
// size of AllVisitors when VisitorsParams.Limit is zero.
const MaxVisitorsLimit = 250

// VisitorsParams selects unique visitors. The zero value asks for the
// server's defaults.
type VisitorsParams struct {
	// DateFrom is the first instant counted (inclusive).
	DateFrom DateBound
	// DateTo is the end of the range (exclusive).
	DateTo DateBound
	// Limit is the page size, 1 to 250. Zero leaves it to the server (50)
	// for Visitors, and means 250 for AllVisitors.
	Limit int
	// Offset is the number of rows to skip, 0 or more.
	Offset int
}

func (p VisitorsParams) validate() error {
	return checkOffsetParams(p.DateFrom, p.DateTo, p.Limit, MaxVisitorsLimit, p.Offset)
}

func (p VisitorsParams) query() string {
	return newOffsetQuery(p.DateFrom, p.DateTo, p.Limit).encode(p.Offset)
}

// VisitorsPage is one page of the visitors export.
type VisitorsPage struct {
	// Totals counts the unique visitors of the whole range, not only of
	// this page's paths.
	Totals VisitorCounts
	// Visitors holds one row per page path, in the server's order.
	Visitors []PageVisitors
	// HasMore reports whether another page follows.
	HasMore bool
}

// VisitorCounts splits unique visitors into human and AI traffic. Total is
// de-duplicated across the two (a visitor seen as both counts once) and
// approximate, so it can be less than Human + AI; it is kept as the server
// sent it, and zero if the server left it out.
type VisitorCounts struct {
	Human int64 `json:"human"`
	AI    int64 `json:"ai"`
	Total int64 `json:"total"`
}

// PageVisitors is the unique visitors of one page path; see VisitorCounts.
type PageVisitors struct {
	Path  string `json:"path"`
	Human int64  `json:"human"`
	AI    int64  `json:"ai"`
	Total int64  `json:"total"`
}

// visitorCountsWire is VisitorCounts on the wire. Unlike views, an absent
// total is not human + ai, which would overstate a de-duplicated count.
type visitorCountsWire struct {
	Human count `json:"human"`
	AI    count `json:"ai"`
	Total count `json:"total"`
}

type pageVisitorsWire struct {
	Path  string `json:"path"`
	Human count  `json:"human"`
	AI    count  `json:"ai"`
	Total count  `json:"total"`
}

type visitorsPageWire struct {
	Totals   *visitorCountsWire `json:"totals"`
	Visitors []pageVisitorsWire `json:"visitors"`
	HasMore  *bool              `json:"hasMore"`
}

// UnmarshalJSON decodes a page in the API's shape. totals, visitors and
// hasMore are required, as for ViewsPage.
func (p *VisitorsPage) UnmarshalJSON(b []byte) error { return p.decodeBody(b) }

func (p *VisitorsPage) decodeBody(b []byte) error {
	const what = "visitors page"
	var w visitorsPageWire
	if err := decodeWire(what, b, &w); err != nil {
		return err
	}
	switch {
	case w.Totals == nil:
		return missingField(what, "totals")
	case w.Visitors == nil:
		return missingField(what, "visitors")
	case w.HasMore == nil:
		return missingField(what, "hasMore")
	}
	page := VisitorsPage{
		Totals:   VisitorCounts{Human: w.Totals.Human.n, AI: w.Totals.AI.n, Total: w.Totals.Total.n},
		Visitors: make([]PageVisitors, len(w.Visitors)),
		HasMore:  *w.HasMore,
	}
	for i, v := range w.Visitors {
		page.Visitors[i] = PageVisitors{Path: v.Path, Human: v.Human.n, AI: v.AI.n, Total: v.Total.n}
	}
	*p = page
	return nil
}

// Visitors returns one page of per-path unique visitors, with the totals
// over the whole range: GET /v1/analytics/{projectId}/visitors. On the
// hosted service each call counts against the budget of 100 analytics
// requests per organisation per hour that every export shares.
func (s *AnalyticsService) Visitors(ctx context.Context, projectID string, params VisitorsParams, opts ...RequestOption) (*VisitorsPage, error) {
	return getOne[VisitorsPage](ctx, s.client, projectID, params, func(p string) string { return analyticsPath(p, "visitors") }, opts)
}

// AllVisitors returns an iterator over the rows of every page of GET
// /v1/analytics/{projectId}/visitors from params.Offset on, 250 rows a
// request unless params.Limit says otherwise; each request counts against
// the hosted budget of 100 analytics requests per organisation per hour.
// It keeps the promises of AllViews. WithPrefetch does not shorten it:
// visitors' totals are de-duplicated, so they prove no page exists before
// the page ahead of it says more follow.
func (s *AnalyticsService) AllVisitors(ctx context.Context, projectID string, params VisitorsParams, opts ...RequestOption) iter.Seq2[PageVisitors, error] {
	project, err := s.client.project(projectID)
	if err == nil {
		err = params.validate()
	}
	if err != nil {
		return failed[PageVisitors](err)
	}
	if params.Limit == 0 {
		params.Limit = MaxVisitorsLimit
	}
	path := analyticsPath(project, "visitors")
	query := newOffsetQuery(params.DateFrom, params.DateTo, params.Limit)
	// No weight: the totals count unique visitors, de-duplicated across
	// paths, so they are not the sum of the rows, and tell nothing of how
	// many rows remain.
	return offsetExport(ctx, opts, params.Offset, params.Limit, nil, func(ctx context.Context, offset int) (offsetPage[PageVisitors], error) {
		var page VisitorsPage
		req := apiRequest{method: http.MethodGet, path: path, query: query.encode(offset)}
		if err := s.client.do(ctx, req, opts, &page); err != nil {
			return offsetPage[PageVisitors]{}, err
		}
		return offsetPage[PageVisitors]{items: page.Visitors, more: page.HasMore}, nil
	})
}
