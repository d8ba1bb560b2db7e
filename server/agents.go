package server

import (
	"net/http"
	"strconv"

	"github.com/docsapi/docsapi-go/server/internal/input"
	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/internal/wire"
	"github.com/docsapi/docsapi-go/server/pageviews"
	"github.com/docsapi/docsapi-go/server/store"
)

// agents: GET /v1/analytics/{projectId}/agents, a self-hosted addition:
// which AI agents and crawlers, by the names of the traffic classifier's
// rules, read the project's pages, with every agent's total and one page
// of per-path rows, paged as the views export is (limit, offset,
// hasMore).
func (s *Server) agents(w http.ResponseWriter, r *http.Request, c keyauth.Caller) {
	q, details := parseAgentsQuery(r.URL.RawQuery)
	if len(details) > 0 {
		respond.ErrorDetails(w, http.StatusBadRequest, "invalid query parameters", details)
		return
	}
	q.ProjectID = c.Project.ID
	res, err := s.cfg.Store.QueryAgents(r.Context(), q)
	if err != nil {
		respond.StoreError(w, r, s.cfg.Logger, err, "project "+respond.Quote(c.Project.ID), "querying agents")
		return
	}
	page := wire.AgentsPage{
		DateFrom: wire.NullTime(q.From), DateTo: wire.NullTime(q.To),
		Path: wire.NullString(q.Path), Class: wire.NullString(string(q.Class)),
		Agents:  make([]wire.AgentViews, len(res.Totals)),
		Pages:   make([]wire.AgentPage, len(res.Rows)),
		HasMore: res.HasMore,
	}
	for i, a := range res.Totals {
		page.Agents[i] = wire.AgentViews{Name: a.Name, Class: string(a.Class), Views: a.Views}
	}
	for i, row := range res.Rows {
		page.Pages[i] = wire.AgentPage{Path: row.Path, Name: row.Name, Class: string(row.Class), Views: row.Views}
	}
	respond.JSON(w, http.StatusOK, page)
}

// parseAgentsQuery reads dateFrom, dateTo, path, class, limit and offset,
// and lists every problem it finds. Agents are counted per UTC day, so the
// range is widened to the whole days it touches, as the visitors export's
// is; an omitted bound leaves that side open. A path is normalised as the
// recorder normalises the paths it counts.
func parseAgentsQuery(raw string) (store.AgentsQuery, []wire.ErrorDetail) {
	qs := newExportQuery(raw)
	q := store.AgentsQuery{Limit: qs.limit(defaultViewsLimit, maxViewsLimit)}
	from, to := qs.dates()
	if v, ok := qs.one("offset"); ok {
		if n, err := strconv.Atoi(v); err != nil || n < 0 {
			qs.fail("offset must be an integer of 0 or more, got %s", strconv.Quote(v))
		} else {
			q.Offset = n
		}
	}
	if v, ok := qs.one("path"); ok {
		if p := input.PathProblem(v); p != "" {
			qs.fail("path %s", p)
		} else {
			q.Path = pageviews.NormalizePath(v)
		}
	}
	if v, ok := qs.one("class"); ok {
		if c := store.AgentClass(v); c.Valid() {
			q.Class = c
		} else {
			qs.fail("class must be ai, search-bot, training-bot or other-bot, got %s", strconv.Quote(v))
		}
	}
	if len(qs.details) > 0 {
		return q, qs.details
	}
	q.From, q.To = dayRange(from, to)
	return q, nil
}
