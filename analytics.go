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

// AnalyticsService reads the Analytics Export API: page views and visitors,
// searches, feedback, and the assistant's conversations. Every export is a
// GET under /v1/analytics/{projectId}/, and on the hosted service they share
// one budget of 100 requests per organisation per hour.
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
	return checkOffsetParams(p.DateFrom, p.DateTo, p.Limit, MaxViewsLimit, p.Offset)
}

func (p ViewsParams) query() string {
	return newOffsetQuery(p.DateFrom, p.DateTo, p.Limit).encode(p.Offset)
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
// whole range: GET /v1/analytics/{projectId}/views. On the hosted service
// each call counts against the budget of 100 analytics requests per
// organisation per hour that every export shares. An empty projectID means
// the client's default project.
func (s *AnalyticsService) Views(ctx context.Context, projectID string, params ViewsParams, opts ...RequestOption) (*ViewsPage, error) {
	return getOne[ViewsPage](ctx, s.client, projectID, params, func(p string) string { return analyticsPath(p, "views") }, opts)
}

// AllViews returns an iterator over the rows of every page of GET
// /v1/analytics/{projectId}/views from params.Offset on, requesting each
// page as the previous one is used up. Each page is one request against the
// hosted budget of 100 analytics requests per organisation per hour, hence
// pages of 250 rows unless params.Limit says otherwise.
//
// Nothing is sent until the loop starts, and each loop starts again from
// the first page. An error (an invalid argument included) is yielded once
// and ends the loop; breaking out of the loop sends no further request.
// params is copied, never changed. With WithPrefetch(n), up to n pages that
// the totals prove exist are requested ahead, never one past the last,
// which shortens a long export when latency dominates.
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
	path := analyticsPath(project, "views")
	query := newOffsetQuery(params.DateFrom, params.DateTo, params.Limit)
	return offsetExport(ctx, opts, params.Offset, params.Limit, viewTotal, func(ctx context.Context, offset int) (offsetPage[PageView], error) {
		var page ViewsPage
		req := apiRequest{method: http.MethodGet, path: path, query: query.encode(offset)}
		if err := s.client.do(ctx, req, opts, &page); err != nil {
			return offsetPage[PageView]{}, err
		}
		return offsetPage[PageView]{items: page.Views, more: page.HasMore, total: page.Totals.Total}, nil
	})
}

// viewTotal is what a views page's totals.total sums over every row.
func viewTotal(v PageView) int64 { return v.Total }

// analyticsPath is the path of one export of the project, such as "views"
// or "assistant/caller-stats".
func analyticsPath(project, export string) string {
	return "/v1/analytics/" + url.PathEscape(project) + "/" + export
}

// The hosted limits on the parameters every export shares are checked here,
// before anything is sent.

func checkDates(from, to DateBound) error {
	if !from.IsZero() && !to.IsZero() && from.Time().After(to.Time()) {
		return invalid("dateFrom", "%s is after dateTo %s", from, to)
	}
	return nil
}

// checkLimit accepts 0 (the server's or the iterator's default) and 1 to max.
func checkLimit(limit, max int) error {
	if limit < 0 || limit > max {
		return invalid("limit", "must be between 1 and %d, got %d", max, limit)
	}
	return nil
}

func checkOffsetParams(from, to DateBound, limit, maxLimit, offset int) error {
	if err := checkLimit(limit, maxLimit); err != nil {
		return err
	}
	if offset < 0 {
		return invalid("offset", "must not be negative, got %d", offset)
	}
	return checkDates(from, to)
}

// offsetQuery is the query of an offset export's pages (views, visitors),
// encoded as url.Values.Encode would (names sorted, values escaped) with
// the parts every page shares encoded once: a long export sends hundreds
// of pages, which differ only in their offset.
type offsetQuery struct {
	dateFrom, dateTo string // escaped; "" when unset
	limit            int
}

func newOffsetQuery(from, to DateBound, limit int) offsetQuery {
	var q offsetQuery
	if !from.IsZero() {
		q.dateFrom = url.QueryEscape(from.String())
	}
	if !to.IsZero() {
		q.dateTo = url.QueryEscape(to.String())
	}
	q.limit = limit
	return q
}

// encode returns the query of the page at offset. Zero limit and offset
// are left out, for the server's defaults.
func (q offsetQuery) encode(offset int) string {
	var buf [128]byte
	b := buf[:0]
	param := func(name string) {
		if len(b) > 0 {
			b = append(b, '&')
		}
		b = append(b, name...)
		b = append(b, '=')
	}
	if q.dateFrom != "" {
		param("dateFrom")
		b = append(b, q.dateFrom...)
	}
	if q.dateTo != "" {
		param("dateTo")
		b = append(b, q.dateTo...)
	}
	if q.limit > 0 {
		param("limit")
		b = strconv.AppendInt(b, int64(q.limit), 10)
	}
	if offset > 0 {
		param("offset")
		b = strconv.AppendInt(b, int64(offset), 10)
	}
	return string(b)
}

// dateQuery starts a query with the date bounds that are set.
func dateQuery(from, to DateBound) url.Values {
	q := make(url.Values, 6)
	if !from.IsZero() {
		q.Set("dateFrom", from.String())
	}
	if !to.IsZero() {
		q.Set("dateTo", to.String())
	}
	return q
}

// setPositive sets key to n when n is above zero; zero leaves the server's
// default.
func setPositive(q url.Values, key string, n int) {
	if n > 0 {
		q.Set(key, strconv.Itoa(n))
	}
}

// setNonEmpty sets key to s when s is not empty.
func setNonEmpty(q url.Values, key, s string) {
	if s != "" {
		q.Set(key, s)
	}
}
