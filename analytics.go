package docsapi

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
)

// Page size bounds of the views export.
const (
	MaxViewsLimit = 250
	// AllViewsLimit is the page size AllViews uses when ViewsParams.Limit is
	// zero: the largest, since the hosted service counts every request
	// against an hourly budget of 100 per organisation.
	AllViewsLimit = MaxViewsLimit
)

// AnalyticsService exports page-view analytics.
type AnalyticsService struct {
	client *Client
}

// ViewsParams selects page views. The zero value asks for the server's
// defaults (the hosted service documents no default date range).
type ViewsParams struct {
	// DateFrom is the first instant counted (inclusive).
	DateFrom DateBound
	// DateTo is the end of the range (exclusive): views on a date given
	// here are not counted.
	DateTo DateBound
	// Limit is the page size, 1 to 250. Zero leaves it to the server (50)
	// for Views, and means 250 for AllViews.
	Limit int
	// Offset is the number of rows to skip, 0 or more.
	Offset int
}

func (p ViewsParams) validate() error {
	switch {
	case p.Limit < 0 || p.Limit > MaxViewsLimit:
		return invalid("limit", "must be between 1 and %d, got %d", MaxViewsLimit, p.Limit)
	case p.Offset < 0:
		return invalid("offset", "must not be negative, got %d", p.Offset)
	case !p.DateFrom.IsZero() && !p.DateTo.IsZero() && p.DateFrom.Time().After(p.DateTo.Time()):
		return invalid("dateFrom", "%s is after dateTo %s", p.DateFrom, p.DateTo)
	}
	return nil
}

func (p ViewsParams) query() string {
	q := make(url.Values, 4)
	if !p.DateFrom.IsZero() {
		q.Set("dateFrom", p.DateFrom.String())
	}
	if !p.DateTo.IsZero() {
		q.Set("dateTo", p.DateTo.String())
	}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.Offset > 0 {
		q.Set("offset", strconv.Itoa(p.Offset))
	}
	return q.Encode()
}

// ViewsPage is one page of the views export.
type ViewsPage struct {
	// Totals counts every view in the date range, not only this page's.
	Totals ViewCounts `json:"totals"`
	// Views holds one row per page path. The order is the server's.
	Views []PageView `json:"views"`
	// HasMore reports whether another page follows.
	HasMore bool `json:"hasMore"`
}

// ViewCounts splits views into human and AI traffic. Total is Human + AI.
type ViewCounts struct {
	Human int64 `json:"human"`
	AI    int64 `json:"ai"`
	Total int64 `json:"total"`
}

// PageView is the view counts of one page path.
type PageView struct {
	Path  string `json:"path"`
	Human int64  `json:"human"`
	AI    int64  `json:"ai"`
	Total int64  `json:"total"`
}

// Views returns one page of per-path view counts, with the totals over the
// whole range. An empty projectID means the client's default project.
func (s *AnalyticsService) Views(ctx context.Context, projectID string, params ViewsParams, opts ...RequestOption) (*ViewsPage, error) {
	project, err := s.client.project(projectID)
	if err != nil {
		return nil, err
	}
	if err := params.validate(); err != nil {
		return nil, err
	}
	page := new(ViewsPage)
	req := apiRequest{method: http.MethodGet, path: viewsPath(project), query: params.query()}
	if err := s.client.do(ctx, req, opts, page); err != nil {
		return nil, err
	}
	return page, nil
}

// AllViews returns an iterator over the rows of every page from
// params.Offset on, requesting each page as the previous one is used up.
//
// Nothing is sent until the loop starts, and each loop starts again from
// the first page. An error (an invalid argument included) is yielded once
// and ends the loop; breaking out of the loop sends no further request.
// params is copied, never changed. With WithPrefetch(n), up to n pages are
// requested ahead, which shortens a long export by up to n times when
// latency dominates.
func (s *AnalyticsService) AllViews(ctx context.Context, projectID string, params ViewsParams, opts ...RequestOption) iter.Seq2[PageView, error] {
	project, err := s.client.project(projectID)
	if err == nil {
		err = params.validate()
	}
	if err != nil {
		return failed[PageView](err)
	}
	if params.Limit == 0 {
		params.Limit = AllViewsLimit
	}
	var call callConfig
	for _, opt := range opts {
		if opt != nil {
			opt(&call)
		}
	}
	if call.err == nil && call.prefetch > 1 && call.response != nil {
		// Pages in flight at once would all write the one Response.
		call.err = invalid("prefetch", "cannot be combined with WithResponse")
	}
	if call.err != nil {
		return failed[PageView](call.err)
	}
	path := viewsPath(project)
	fetch := func(ctx context.Context, offset int) ([]PageView, bool, error) {
		p := params
		p.Offset = offset
		var page ViewsPage
		req := apiRequest{method: http.MethodGet, path: path, query: p.query()}
		if err := s.client.do(ctx, req, opts, &page); err != nil {
			return nil, false, err
		}
		return page.Views, page.HasMore, nil
	}
	if call.prefetch > 1 {
		return prefetchPager(ctx, params.Offset, params.Limit, call.prefetch, fetch)
	}
	return offsetPager(ctx, params.Offset, params.Limit, fetch)
}

func viewsPath(project string) string {
	return "/v1/analytics/" + url.PathEscape(project) + "/views"
}
