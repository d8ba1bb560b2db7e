package server

import (
	"net/http"

	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/internal/wire"
)

// visitors: GET /v1/analytics/{projectId}/visitors. Its query is the views
// export's (parseViewsQuery: dates, limit and offset), and so are its auth,
// rate budget and errors; the store counts the whole UTC days the range
// touches, visitors being counted per day.
func (s *Server) visitors(w http.ResponseWriter, r *http.Request, c keyauth.Caller) {
	q, details := parseViewsQuery(r.URL.RawQuery)
	if len(details) > 0 {
		respond.ErrorDetails(w, http.StatusBadRequest, "invalid query parameters", details)
		return
	}
	q.ProjectID = c.Project.ID
	res, err := s.cfg.Store.QueryVisitors(r.Context(), q)
	if err != nil {
		respond.StoreError(w, r, s.cfg.Logger, err, "project "+respond.Quote(c.Project.ID), "querying visitors")
		return
	}
	page := wire.VisitorsPage{
		Totals:   wire.VisitorCounts{Human: res.Totals.Human, AI: res.Totals.AI, Total: res.Totals.Total},
		Visitors: make([]wire.PageVisitors, len(res.Rows)),
		HasMore:  res.HasMore,
	}
	for i, row := range res.Rows {
		page.Visitors[i] = wire.PageVisitors{Path: row.Path, Human: row.Human, AI: row.AI, Total: row.Total}
	}
	respond.JSON(w, http.StatusOK, page)
}
