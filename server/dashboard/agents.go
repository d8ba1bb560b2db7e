package dashboard

import (
	"net/http"
	"time"

	"github.com/docsapi/docsapi-go/server/dashboard/internal/pages"
	"github.com/docsapi/docsapi-go/server/internal/input"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/pageviews"
	"github.com/docsapi/docsapi-go/server/store"
)

// dashAgentPages is how many rows of one agent's views of one page the
// agents page lists.
const dashAgentPages = 20

// dashAgents: GET /dashboard/projects/{projectId}/agents, which AI agents
// and crawlers read the project's pages, by name, over a range of UTC days
// (of one page with ?path=). Its numbers are the store's answers to the
// agents export's query (QueryAgents) and, per day, AgentSeries over the
// same days; admitted as the overview is.
func (s *Dashboard) dashAgents(w http.ResponseWriter, r *http.Request, d *dashRequest) {
	page := pages.AgentsPage{Frame: d.frame}
	page.Title, page.Section = "AI & crawlers of "+d.Project.ID, "agents"
	status := http.StatusOK
	asked := r.URL.Query()
	from, to, problem := dashRange(asked, s.now())
	if problem != "" {
		status, page.Problem = http.StatusBadRequest, problem
		from, to, _ = dashRange(nil, s.now())
	}
	if v := asked.Get("path"); v != "" {
		if p := input.PathProblem(v); p != "" {
			status, page.Problem = http.StatusBadRequest, "path "+p
		} else {
			page.Path = pageviews.NormalizePath(v)
		}
	}
	page.From, page.To = from.Format(time.DateOnly), to.Add(-day).Format(time.DateOnly)

	ctx, project := r.Context(), d.Project.ID
	subject := "project " + respond.Quote(project)
	q := store.AgentsQuery{ProjectID: project, From: from, To: to, Path: page.Path, Limit: dashAgentPages}
	res, err := s.cfg.Store.QueryAgents(ctx, q)
	if err != nil {
		s.dashStoreError(w, r, page.Frame, err, subject, "querying agents")
		return
	}
	series, err := s.cfg.Store.AgentSeries(ctx, q)
	if err != nil {
		s.dashStoreError(w, r, page.Frame, err, subject, "querying agents per day")
		return
	}
	for _, a := range res.Totals {
		v := pages.AgentViews{Name: a.Name, Class: string(a.Class), ClassLabel: pages.ClassLabel(string(a.Class)), Views: a.Views}
		if a.Class == store.AgentAI {
			page.AI, page.AIViews = append(page.AI, v), page.AIViews+a.Views
		} else {
			page.Crawlers, page.CrawlerViews = append(page.Crawlers, v), page.CrawlerViews+a.Views
		}
	}
	for _, row := range res.Rows {
		page.Pages = append(page.Pages, pages.AgentPageViews{Path: row.Path,
			AgentViews: pages.AgentViews{Name: row.Name, Class: string(row.Class), ClassLabel: pages.ClassLabel(string(row.Class)), Views: row.Views}})
	}
	page.PagesMore = res.HasMore
	page.Days = agentDays(from, to, series)
	page.Charts = pages.NewClassCharts(page.Days)
	s.dashRender(w, r, status, page)
}

// agentDays sums the series' views per day and class, one row for every
// day of [from, to), those without views included.
func agentDays(from, to time.Time, series []store.AgentDay) []pages.AgentsDay {
	var days []pages.AgentsDay
	at := map[time.Time]int{}
	for t := from; t.Before(to); t = t.Add(day) {
		at[t] = len(days)
		days = append(days, pages.AgentsDay{Day: t, Label: t.Format(time.DateOnly)})
	}
	for _, p := range series {
		i, ok := at[p.Day]
		if !ok {
			continue
		}
		for ci, c := range pages.Classes {
			if c.Class == string(p.Class) {
				days[i].Views[ci] += p.Views
			}
		}
	}
	return days
}
