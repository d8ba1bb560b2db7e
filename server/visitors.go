package server

import (
	"net/http"

	"github.com/docsapi/docsapi-go/server/internal/wire"
)

// visitors: GET /v1/analytics/{projectId}/visitors. Its query is the views
// export's (parseViewsQuery: dates, limit and offset), and so are its auth,
// rate budget and errors; the store counts the whole UTC days the range
// touches, visitors being counted per day.
func (s *Server) visitors(w http.ResponseWriter, r *http.Request, c caller) {
	q, details := parseViewsQuery(r.URL.RawQuery)
	if len(details) > 0 {
		writeJSON(w, http.StatusBadRequest, analyticsErrorBody{Error: "invalid query parameters", Details: details})
		return
	}
	q.ProjectID = c.project.ID
	res, err := s.cfg.Store.QueryVisitors(r.Context(), q)
	if err != nil {
		s.storeError(w, r, err, "project "+quote(c.project.ID), "querying visitors")
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
	writeJSON(w, http.StatusOK, page)
}
