package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/internal/wire"
	"github.com/docsapi/docsapi-go/server/store"
)

// Bounds of the views query, as the contract states them.
const (
	defaultViewsLimit = 50
	maxViewsLimit     = 250
)

// views: GET /v1/analytics/{projectId}/views.
func (s *Server) views(w http.ResponseWriter, r *http.Request, c keyauth.Caller) {
	q, details := parseViewsQuery(r.URL.RawQuery)
	if len(details) > 0 {
		respond.ErrorDetails(w, http.StatusBadRequest, "invalid query parameters", details)
		return
	}
	q.ProjectID = c.Project.ID
	res, err := s.cfg.Store.QueryViews(r.Context(), q)
	if err != nil {
		respond.StoreError(w, r, s.cfg.Logger, err, "project "+respond.Quote(c.Project.ID), "querying views")
		return
	}
	page := wire.ViewsPage{
		Totals:  wire.ViewCounts{Human: res.Totals.Human, AI: res.Totals.AI, Total: res.Totals.Human + res.Totals.AI},
		Views:   make([]wire.PageView, len(res.Rows)),
		HasMore: res.HasMore,
	}
	for i, row := range res.Rows {
		page.Views[i] = wire.PageView{Path: row.Path, Human: row.Human, AI: row.AI, Total: row.Human + row.AI}
	}
	respond.JSON(w, http.StatusOK, page)
}

// parseViewsQuery reads dateFrom, dateTo, limit and offset, and lists every
// problem it finds rather than stopping at the first.
//
// Counts are kept per hour, so the range is widened to whole hours: an hour
// is counted when any part of it lies in [dateFrom, dateTo). A date means
// midnight UTC. An omitted dateFrom or dateTo leaves that side open, so
// omitting both exports everything recorded. Other parameters are ignored,
// as the hosted service ignores parameters it does not know.
func parseViewsQuery(raw string) (store.ViewsQuery, []wire.ErrorDetail) {
	q := store.ViewsQuery{Limit: defaultViewsLimit}
	var details []wire.ErrorDetail
	fail := func(format string, args ...any) {
		details = append(details, wire.ErrorDetail{Message: fmt.Sprintf(format, args...)})
	}
	values, err := url.ParseQuery(raw)
	if err != nil {
		fail("the query string is malformed: %v", err)
		return q, details
	}
	one := func(name string) (string, bool) {
		v := values[name]
		if len(v) > 1 {
			fail("%s is given %d times; give it once", name, len(v))
			return "", false
		}
		if len(v) == 0 {
			return "", false
		}
		return v[0], true
	}
	var from, to time.Time
	if v, ok := one("dateFrom"); ok {
		if from, err = parseDate(v); err != nil {
			fail("dateFrom %s", err)
		}
	}
	if v, ok := one("dateTo"); ok {
		if to, err = parseDate(v); err != nil {
			fail("dateTo %s", err)
		}
	}
	if v, ok := one("limit"); ok {
		if n, err := strconv.Atoi(v); err != nil || n < 1 || n > maxViewsLimit {
			fail("limit must be an integer from 1 to %d, got %s", maxViewsLimit, strconv.Quote(v))
		} else {
			q.Limit = n
		}
	}
	if v, ok := one("offset"); ok {
		if n, err := strconv.Atoi(v); err != nil || n < 0 {
			fail("offset must be an integer of 0 or more, got %s", strconv.Quote(v))
		} else {
			q.Offset = n
		}
	}
	if !from.IsZero() && !to.IsZero() && from.After(to) {
		fail("dateFrom (%s) is after dateTo (%s)", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	if len(details) > 0 {
		return q, details
	}
	q.From, q.To = hourRange(from, to)
	return q, nil
}

// hourRange widens [from, to) to the whole hours it touches. An empty range
// (to not after from) stays empty.
func hourRange(from, to time.Time) (time.Time, time.Time) {
	return wholeRange(from, to, time.Hour)
}
