package dashboard

import (
	"net/http"

	"github.com/docsapi/docsapi-go/server/dashboard/internal/pages"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/store"
)

// dashSearchRows is how many queries each table of the searches page
// lists.
const dashSearchRows = 25

// dashSearches: GET /dashboard/projects/{projectId}/searches, what
// readers searched for over a period of UTC days (period.go, as the
// overview's): the most searched queries with their click-through, and
// the queries after which no result was opened. Both are the store's
// answers to the searches export's query (QuerySearches) over the same
// days, the second selecting the queries that opened nothing; the
// searches of the period before are the Total of the same query over it.
func (s *Dashboard) dashSearches(w http.ResponseWriter, r *http.Request, d *dashRequest) {
	page := pages.SearchesPage{Frame: d.frame}
	page.Title, page.Section = "Searches of "+d.Project.ID, "searches"
	status := http.StatusOK
	span, problem := dashPeriod(r.URL.Query(), s.now())
	if problem != "" {
		status = http.StatusBadRequest
	}
	page.Period = dashPicker(&page.Frame, "searches", span, problem)

	ctx, subject := r.Context(), "project "+respond.Quote(d.Project.ID)
	q := store.SearchesQuery{ProjectID: d.Project.ID, From: span.From, To: span.To, Limit: dashSearchRows}
	top, err := s.cfg.Store.QuerySearches(ctx, q)
	if err != nil {
		s.dashStoreError(w, r, page.Frame, err, subject, "querying searches")
		return
	}
	q.Unclicked = true
	gaps, err := s.cfg.Store.QuerySearches(ctx, q)
	if err != nil {
		s.dashStoreError(w, r, page.Frame, err, subject, "querying searches that opened nothing")
		return
	}
	prev := span.Previous()
	before, err := s.cfg.Store.QuerySearches(ctx, store.SearchesQuery{ProjectID: d.Project.ID, From: prev.From, To: prev.To, Limit: 1})
	if err != nil {
		s.dashStoreError(w, r, page.Frame, err, subject, "querying searches")
		return
	}
	page.Total, page.Before, page.Top, page.TopMore = top.Total, before.Total, top.Rows, top.HasMore
	page.Gaps, page.GapsMore = gaps.Rows, gaps.HasMore
	s.dashRender(w, r, status, page)
}
