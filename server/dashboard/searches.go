package dashboard

import (
	"net/http"
	"time"

	"github.com/docsapi/docsapi-go/server/dashboard/internal/pages"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/store"
)

// dashSearchRows is how many queries each table of the searches page
// lists.
const dashSearchRows = 25

// dashSearches: GET /dashboard/projects/{projectId}/searches, what
// readers searched for over a range of UTC days (from and to, as the
// overview's): the most searched queries with their click-through, and
// the queries after which no result was opened. Both are the store's
// answers to the searches export's query (QuerySearches) over the same
// days, the second selecting the queries that opened nothing.
func (s *Dashboard) dashSearches(w http.ResponseWriter, r *http.Request, d *dashRequest) {
	page := pages.SearchesPage{Frame: d.frame}
	page.Title, page.Section = "Searches of "+d.Project.ID, "searches"
	status := http.StatusOK
	from, to, problem := dashRange(r.URL.Query(), s.now())
	if problem != "" {
		status, page.Problem = http.StatusBadRequest, problem
		from, to, _ = dashRange(nil, s.now())
	}
	page.From, page.To = from.Format(time.DateOnly), to.Add(-day).Format(time.DateOnly)

	ctx, subject := r.Context(), "project "+respond.Quote(d.Project.ID)
	q := store.SearchesQuery{ProjectID: d.Project.ID, From: from, To: to, Limit: dashSearchRows}
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
	page.Total, page.Top, page.TopMore = top.Total, top.Rows, top.HasMore
	page.Gaps, page.GapsMore = gaps.Rows, gaps.HasMore
	s.dashRender(w, r, status, page)
}
