package dashboard

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/docsapi/docsapi-go/server/dashboard/internal/pages"
	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/store"
)

// The overview's range when none is asked for, and the rows of its top
// pages.
const (
	dashDefaultDays = 30
	dashTopPages    = 10
	// dashHourlyDays is the longest range charted per hour; longer ones
	// are charted per day.
	dashHourlyDays = 2
)

const day = 24 * time.Hour

// dashOverview: GET /dashboard/projects/{projectId}/, the project's
// traffic over a range of UTC days. Its numbers are the store's answers
// to the API's own queries over the same hours: the totals and the top
// pages are the views export's (QueryViews), the chart the views series'
// (ViewSeries), the visitors the visitors export's (QueryVisitors). Above
// them, when readers' submissions met a daily cap or a client's share of
// it today, it says so (site.Endpoints.Today).
func (s *Dashboard) dashOverview(w http.ResponseWriter, r *http.Request, d *dashRequest) {
	page := pages.OverviewPage{Frame: d.frame}
	page.Title, page.Section = "Overview of "+d.Project.ID, "overview"
	status := http.StatusOK
	from, to, problem := dashRange(r.URL.Query(), s.now())
	if problem != "" {
		status, page.Problem = http.StatusBadRequest, problem
		from, to, _ = dashRange(nil, s.now())
	}
	page.From, page.To = from.Format(time.DateOnly), to.Add(-day).Format(time.DateOnly)

	ctx, project := r.Context(), d.Project.ID
	subject := "project " + respond.Quote(project)
	views, err := s.cfg.Store.QueryViews(ctx, store.ViewsQuery{ProjectID: project, From: from, To: to, Limit: dashTopPages})
	if err != nil {
		s.dashStoreError(w, r, page.Frame, err, subject, "querying views")
		return
	}
	interval := day
	if to.Sub(from) <= dashHourlyDays*day {
		interval = time.Hour
	}
	points, err := s.cfg.Store.ViewSeries(ctx, store.SeriesQuery{ProjectID: project, From: from, To: to, Interval: interval})
	if err != nil {
		s.dashStoreError(w, r, page.Frame, err, subject, "querying the views series")
		return
	}
	visitors, err := s.cfg.Store.QueryVisitors(ctx, store.ViewsQuery{ProjectID: project, From: from, To: to, Limit: 1})
	if err != nil {
		s.dashStoreError(w, r, page.Frame, err, subject, "querying visitors")
		return
	}

	page.Views = pages.Views{Human: views.Totals.Human, AI: views.Totals.AI, Total: views.Totals.Human + views.Totals.AI}
	page.Visitors = visitors.Totals
	page.TopMore = views.HasMore
	for _, row := range views.Rows {
		page.Top = append(page.Top, pages.PageViews{Path: row.Path, Views: pages.Views{Human: row.Human, AI: row.AI, Total: row.Human + row.AI}})
	}
	chart := make([]pages.Point, len(points))
	for i, p := range points {
		chart[i] = pages.Point{At: p.At, Human: p.Human, AI: p.AI}
	}
	page.Chart = pages.NewChart(chart, interval == time.Hour)
	feedback, searches := s.cfg.Site.Today(project, s.now())
	page.Site = pages.SiteToday{Feedback: pages.SiteLimits(feedback), Searches: pages.SiteLimits(searches)}
	s.dashRender(w, r, status, page)
}

// dashRange reads the overview's range, from and to, both UTC days
// (YYYY-MM-DD) and both included, and returns it as [from, to) in whole
// days; without them, the last dashDefaultDays days up to today's. A
// problem says what is wrong with the range asked for.
func dashRange(q url.Values, now time.Time) (from, to time.Time, problem string) {
	to = now.UTC().Truncate(day).Add(day)
	from = to.Add(-dashDefaultDays * day)
	parse := func(name string, into *time.Time, shift time.Duration) string {
		v := q.Get(name)
		if v == "" {
			return ""
		}
		t, err := time.Parse(time.DateOnly, v)
		if err != nil {
			return fmt.Sprintf("%s must be a day such as %s, got %q", name, now.UTC().Format(time.DateOnly), v)
		}
		*into = t.Add(shift)
		return ""
	}
	if p := cmp.Or(parse("from", &from, 0), parse("to", &to, day)); p != "" {
		return from, to, p
	}
	switch days := int(to.Sub(from) / day); {
	case days < 1:
		return from, to, fmt.Sprintf("from (%s) is after to (%s)", from.Format(time.DateOnly), to.Add(-day).Format(time.DateOnly))
	case days > store.MaxSeriesPoints:
		return from, to, fmt.Sprintf("the range holds %d days; the dashboard shows at most %d", days, store.MaxSeriesPoints)
	}
	return from, to, ""
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
