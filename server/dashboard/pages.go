package dashboard

import (
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/docsapi/docsapi-go/server/dashboard/internal/pages"
	"github.com/docsapi/docsapi-go/server/internal/input"
	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/store"
)

// dashTopPages is the rows of the overview's top pages.
const dashTopPages = 10

// dashOverview: GET /dashboard/projects/{projectId}/, the project's
// traffic over a period of UTC days (period.go), or one page's (path),
// compared with the period before it (dashSpan.Previous). Its numbers are
// the store's answers to the API's own queries over the same hours: the
// totals and the top pages are the views export's (QueryViews), the chart
// the views series' (ViewSeries, per hour or day, whose days the chart
// adds up into weeks or months), the visitors the visitors export's
// (QueryVisitors). A page's are the same queries of its path alone
// (their Path), which the API's exports do not offer. Above them, when
// readers' submissions met a daily cap or a client's share of it today,
// it says so (site.Endpoints.Today). With format=csv, it answers the
// chart's rows (or with table=pages, the top pages') as a CSV file
// instead.
func (s *Dashboard) dashOverview(w http.ResponseWriter, r *http.Request, d *dashRequest) {
	page := pages.OverviewPage{Frame: d.frame}
	page.Title, page.Section = "Overview of "+d.Project.ID, "overview"
	status := http.StatusOK
	q := r.URL.Query()
	span, problem := dashPeriod(q, s.now())
	path := q.Get("path")
	if problem == "" && len(path) > input.MaxPathBytes {
		problem = fmt.Sprintf("path has %d bytes; at most %d are allowed", len(path), input.MaxPathBytes)
		path = ""
	}
	format, table := q.Get("format"), q.Get("table")
	switch {
	case problem != "":
	case format != "" && format != "csv":
		problem = fmt.Sprintf("format must be csv (or absent, for the page), got %q", format)
	case table != "" && table != "series" && table != "pages":
		problem = fmt.Sprintf("table must be series or pages, got %q", table)
	case table == "pages" && path != "":
		problem = "table=pages lists the top pages of all pages: it goes without path"
	}
	if problem != "" {
		status, format = http.StatusBadRequest, ""
	}
	if page.Path = path; path != "" {
		page.Title = "Overview of " + path + " in " + d.Project.ID
	}
	page.Period = dashPicker(&page.Frame, "overview", span, problem, "path", path)
	prev := span.Previous()

	// The page's links: each keeps the period and the page shown.
	link := func(span dashSpan, path string, extra ...string) string {
		return dashPeriodURL(page.Frame, "overview", span, append([]string{"path", path}, extra...)...)
	}
	page.AllPages = link(span, "")
	page.SeriesCSV = link(span, path, "format", "csv")
	page.TopCSV = link(span, "", "format", "csv", "table", "pages")

	ctx, project := r.Context(), d.Project.ID
	subject := "project " + respond.Quote(project)
	iv := span.Interval()
	interval := day
	if iv == pages.Hour {
		interval = time.Hour
	}
	points, err := s.cfg.Store.ViewSeries(ctx, store.SeriesQuery{ProjectID: project, From: span.From, To: span.To, Interval: interval, Path: path})
	if err != nil {
		s.dashStoreError(w, r, page.Frame, err, subject, "querying the views series")
		return
	}
	bars := dashBars(points, iv, span.From, span.To)
	// The top pages are of all pages; a page's overview reads its own row.
	limit := dashTopPages
	if path != "" {
		limit = 1
	}
	views, err := s.cfg.Store.QueryViews(ctx, store.ViewsQuery{ProjectID: project, From: span.From, To: span.To, Limit: limit, Path: path})
	if err != nil {
		s.dashStoreError(w, r, page.Frame, err, subject, "querying views")
		return
	}
	before, err := s.cfg.Store.QueryViews(ctx, store.ViewsQuery{ProjectID: project, From: prev.From, To: prev.To, Limit: 1, Path: path})
	if err != nil {
		s.dashStoreError(w, r, page.Frame, err, subject, "querying views")
		return
	}
	page.Views, page.Previous.Views = viewsOf(views.Totals), viewsOf(before.Totals)
	if path == "" {
		page.TopMore = views.HasMore
		for _, row := range views.Rows {
			page.Top = append(page.Top, pages.PageViews{Path: row.Path, URL: link(span, row.Path), Views: viewsOf(row.Counts)})
		}
	}
	if format == "csv" {
		s.dashCSV(w, r, d, span, path, table, bars, page.Top)
		return
	}
	visitors, err := s.cfg.Store.QueryVisitors(ctx, store.ViewsQuery{ProjectID: project, From: span.From, To: span.To, Limit: 1, Path: path})
	if err == nil {
		var earlier store.VisitorsResult
		earlier, err = s.cfg.Store.QueryVisitors(ctx, store.ViewsQuery{ProjectID: project, From: prev.From, To: prev.To, Limit: 1, Path: path})
		page.Visitors, page.Previous.Visitors = visitors.Totals, earlier.Totals
	}
	if err != nil {
		s.dashStoreError(w, r, page.Frame, err, subject, "querying visitors")
		return
	}
	page.Chart = pages.NewChart(bars, iv)
	feedback, searches := s.cfg.Site.Today(project, s.now())
	page.Site = pages.SiteToday{Feedback: pages.SiteLimits(feedback), Searches: pages.SiteLimits(searches)}
	s.dashRender(w, r, status, page)
}

// viewsOf is the views the pages show of counts.
func viewsOf(c store.Counts) pages.Views {
	return pages.Views{Human: c.Human, AI: c.AI, Total: c.Human + c.AI}
}

// dashJobs: GET /dashboard/projects/{projectId}/jobs, a page of the
// project's jobs, newest first, read as GET .../jobs reads it (Jobs.List):
// the same filter, the same sealed cursors.
func (s *Dashboard) dashJobs(w http.ResponseWriter, r *http.Request, d *dashRequest) {
	page := pages.JobsPage{Frame: d.frame, Statuses: s.cfg.Jobs.Statuses()}
	page.Title, page.Section = "Jobs of "+d.Project.ID, "jobs"
	asked := r.URL.Query()
	q := url.Values{}
	for _, name := range []string{"status", "cursor"} {
		if v := asked.Get(name); v != "" {
			q.Set(name, v)
		}
	}
	page.Status = q.Get("status")
	jobs, next, problems, err := s.cfg.Jobs.List(r.Context(), d.Project.ID, q.Encode())
	switch {
	case problems != "":
		page.Problem = problems
		s.dashRender(w, r, http.StatusBadRequest, page)
		return
	case err != nil:
		s.dashStoreError(w, r, page.Frame, err, "project "+respond.Quote(d.Project.ID), "listing jobs")
		return
	}
	page.Jobs = jobs.Jobs
	if next != "" {
		q.Set("cursor", next)
		page.Next = page.Base + "/projects/" + url.PathEscape(d.Project.ID) + "/jobs?" + q.Encode()
	}
	s.dashRender(w, r, http.StatusOK, page)
}

// dashJob: GET /dashboard/projects/{projectId}/jobs/{id}, one job with
// its prompts. Its failure reason, which the API keeps for operators,
// and the archive button are for keys that may write.
func (s *Dashboard) dashJob(w http.ResponseWriter, r *http.Request, d *dashRequest) {
	jobID := r.PathValue("id")
	page := pages.JobPage{Frame: d.frame, CanWrite: keyauth.HasScope(d.Key.Scopes, store.ScopeWrite)}
	page.Title, page.Section = "Job "+jobID, "jobs"
	job, err := s.cfg.Jobs.Get(r.Context(), d.Project.ID, jobID)
	if err != nil {
		s.dashStoreError(w, r, page.Frame, err, "job "+respond.Quote(jobID), "loading job")
		return
	}
	if !page.CanWrite {
		job.FailureReason = ""
	}
	page.Job, page.Model = job, job.Model
	refs, err := s.cfg.Gaps.JobGaps(r.Context(), d.Project.ID, jobID)
	if err != nil {
		s.dashStoreError(w, r, page.Frame, err, "job "+respond.Quote(jobID), "reading the gaps of a job")
		return
	}
	for _, g := range refs {
		// The gaps page of the default period: the gap may have aged out
		// of it, and the page then simply does not scroll to it.
		u := page.Base + "/projects/" + url.PathEscape(d.Project.ID) + "/gaps#" + pages.GapID(g.Kind, g.Key)
		page.Gaps = append(page.Gaps, pages.JobGap{Kind: g.Kind, Key: g.Key, URL: u})
	}
	s.dashRender(w, r, http.StatusOK, page)
}

// dashArchive: POST /dashboard/projects/{projectId}/jobs/{id}/archive,
// admitted as POST .../archive is (write scope, the agent budget) and
// done as it does (Jobs.Archive); then back to the job's page.
func (s *Dashboard) dashArchive(w http.ResponseWriter, r *http.Request, d *dashRequest) {
	jobID := r.PathValue("id")
	if _, err := s.cfg.Jobs.Archive(r.Context(), d.Project.ID, jobID); err != nil {
		s.dashStoreError(w, r, d.frame, err, "job "+respond.Quote(jobID), "archiving job")
		return
	}
	dashHeaders(w.Header())
	http.Redirect(w, r, d.frame.Base+"/projects/"+url.PathEscape(d.Project.ID)+"/jobs/"+url.PathEscape(jobID), http.StatusSeeOther)
}
