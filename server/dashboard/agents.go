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
// and crawlers read the project's pages, by name, over a period of UTC
// days (period.go, as the overview's), of one page with ?path=, compared
// with the period before it. Its numbers are the store's answers to the
// agents export's query (QueryAgents) over each period, and AgentSeries
// over the same days, which the charts add up per day, ISO week or month
// as the overview's chart does (the store counts agents per day, so a
// day or two are charted per day, not per hour). Admitted as the overview
// is.
func (s *Dashboard) dashAgents(w http.ResponseWriter, r *http.Request, d *dashRequest) {
	page := pages.AgentsPage{Frame: d.frame}
	page.Title, page.Section = "AI & crawlers of "+d.Project.ID, "agents"
	status := http.StatusOK
	asked := r.URL.Query()
	span, problem := dashPeriod(asked, s.now())
	if v := asked.Get("path"); v != "" && problem == "" {
		if p := input.PathProblem(v); p != "" {
			problem = "path " + p
		} else {
			page.Path = pageviews.NormalizePath(v)
		}
	}
	if problem != "" {
		status = http.StatusBadRequest
	}
	page.Period = dashPicker(&page.Frame, "agents", span, problem, "path", page.Path)
	if page.Path != "" {
		page.Title = "AI & crawlers of " + page.Path + " in " + d.Project.ID
		page.AllPages = dashPeriodURL(page.Frame, "agents", span)
	}

	ctx, project := r.Context(), d.Project.ID
	subject := "project " + respond.Quote(project)
	q := store.AgentsQuery{ProjectID: project, From: span.From, To: span.To, Path: page.Path, Limit: dashAgentPages}
	res, err := s.cfg.Store.QueryAgents(ctx, q)
	if err != nil {
		s.dashStoreError(w, r, page.Frame, err, subject, "querying agents")
		return
	}
	// The period before: its totals alone, which QueryAgents lists whole
	// whatever its Limit.
	prev := span.Previous()
	before, err := s.cfg.Store.QueryAgents(ctx, store.AgentsQuery{ProjectID: project, From: prev.From, To: prev.To, Path: page.Path, Limit: 1})
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
	for _, a := range before.Totals {
		if a.Class == store.AgentAI {
			page.Before.AI, page.Before.AIViews = page.Before.AI+1, page.Before.AIViews+a.Views
		} else {
			page.Before.Crawlers, page.Before.CrawlerViews = page.Before.Crawlers+1, page.Before.CrawlerViews+a.Views
		}
	}
	for _, row := range res.Rows {
		page.Pages = append(page.Pages, pages.AgentPageViews{Path: row.Path, URL: dashPeriodURL(page.Frame, "agents", span, "path", row.Path),
			AgentViews: pages.AgentViews{Name: row.Name, Class: string(row.Class), ClassLabel: pages.ClassLabel(string(row.Class)), Views: row.Views}})
	}
	page.PagesMore = res.HasMore
	page.Interval = max(span.Interval(), pages.Day)
	page.Bars = agentBars(span, page.Interval, series)
	page.Charts = pages.NewClassCharts(page.Bars, page.Interval)
	s.dashRender(w, r, status, page)
}

// agentBars sums the series' views per bar of iv and class, one bar for
// every interval of span (dashSlot), those without views included.
func agentBars(span dashSpan, iv pages.Interval, series []store.AgentDay) []pages.AgentsBar {
	var bars []pages.AgentsBar
	at := map[time.Time]int{}
	for t := span.From; t.Before(span.To); t = t.Add(day) {
		start, next := dashSlot(t, iv, span.From, span.To)
		if n := len(bars); n == 0 || !bars[n-1].At.Equal(start) {
			bars = append(bars, pages.AgentsBar{At: start, End: next})
		}
		at[t] = len(bars) - 1
	}
	for _, p := range series {
		i, ok := at[p.Day.UTC()]
		if !ok {
			continue
		}
		for ci, c := range pages.Classes {
			if c.Class == string(p.Class) {
				bars[i].Views[ci] += p.Views
			}
		}
	}
	return bars
}
