package storetest_test

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// operatorMutants are the reference store's deliberate bugs in the methods
// operators read (the job list, the views over time), and the subtests
// that must fail with each.
var operatorMutants = map[string][]string{
	"jobsOldestFirst":         {"JobList/ListIsNewestFirstWithTiesByIDAndEveryFieldButPrompts", "JobList/PagesNeverRepeatOrSkipWhileJobsArrive"},
	"jobsTiesByIDAscending":   {"JobList/ListIsNewestFirstWithTiesByIDAndEveryFieldButPrompts", "JobList/PagesNeverRepeatOrSkipWhileJobsArrive"},
	"jobsAfterInclusive":      {"JobList/PagesNeverRepeatOrSkipWhileJobsArrive"},
	"jobsListPrompts":         {"JobList/ListIsNewestFirstWithTiesByIDAndEveryFieldButPrompts"},
	"jobsIgnoreStatus":        {"JobList/FiltersSelectByStatusAndHalfOpenRange"},
	"jobsSummaryOfLastPrompt": {"JobList/SummaryIsTheFirstPromptsFirstLineInItsFirstCharacters", "JobList/ListIsNewestFirstWithTiesByIDAndEveryFieldButPrompts"},
	"jobsSummaryScansBytes":   {"JobList/SummaryIsTheFirstPromptsFirstLineInItsFirstCharacters"},
	"jobsToInclusive":         {"JobList/FiltersSelectByStatusAndHalfOpenRange"},
	"jobsOfEveryProject":      {"JobList/FiltersSelectByStatusAndHalfOpenRange"},
	"jobsHasMoreOffByOne":     {"JobList/PagesReportHasMoreExactlyAndEmptyPagesAreEmpty"},
	"jobsNilPage":             {"JobList/PagesReportHasMoreExactlyAndEmptyPagesAreEmpty"},
	"jobsNoValidation":        {"JobList/InvalidQueryIsRefused"},
	"seriesDropsBots":         {"ViewSeries/DailyPointsAddUpEveryPathBotsIncludedAndEmptyDaysAreZero"},
	"seriesSkipsEmpty":        {"ViewSeries/DailyPointsAddUpEveryPathBotsIncludedAndEmptyDaysAreZero", "ViewSeries/HourlyPointsCrossMidnight"},
	"seriesToInclusive":       {"ViewSeries/RangeIsHalfOpen"},
	"seriesIgnoresPath":       {"ViewSeries/PathSelectsOnePathAndProjectsNeverLeak"},
	"seriesPathPrefix":        {"ViewSeries/PathSelectsOnePathAndProjectsNeverLeak"},
	"seriesLeaksProjects":     {"ViewSeries/PathSelectsOnePathAndProjectsNeverLeak"},
	"seriesNoValidation":      {"ViewSeries/InvalidQueryIsRefused"},
}

// newestJobFirst orders jobs as ListJobs does.
func (m *memStore) newestJobFirst(a, b store.JobKey) int {
	switch {
	case m.is("jobsOldestFirst"):
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	case m.is("jobsTiesByIDAscending"):
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), strings.Compare(a.ID, b.ID))
	}
	return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), strings.Compare(b.ID, a.ID))
}

// listsJob reports whether f selects j.
func (m *memStore) listsJob(j *store.Job, f store.JobFilter) bool {
	switch {
	case j.ProjectID != f.ProjectID && !m.is("jobsOfEveryProject"):
		return false
	case !f.From.IsZero() && j.CreatedAt.Before(f.From):
		return false
	case !f.To.IsZero() && !j.CreatedAt.Before(f.To) && !(m.is("jobsToInclusive") && j.CreatedAt.Equal(f.To)):
		return false
	case len(f.Statuses) > 0 && !slices.Contains(f.Statuses, j.Status) && !m.is("jobsIgnoreStatus"):
		return false
	}
	return true
}

func (m *memStore) ListJobs(_ context.Context, q store.JobsQuery) (store.JobsPage, error) {
	if err := q.Validate(); err != nil && !m.is("jobsNoValidation") {
		return store.JobsPage{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var jobs []store.Job
	for _, j := range m.jobs {
		if !m.listsJob(j, q.JobFilter) {
			continue
		}
		if q.After != nil {
			c := m.newestJobFirst(j.Key(), *q.After)
			if c < 0 || (c == 0 && !m.is("jobsAfterInclusive")) {
				continue
			}
		}
		c := cloneJob(j)
		first := c.Prompts[0].Text
		switch {
		case m.is("jobsSummaryOfLastPrompt"):
			first = c.Prompts[len(c.Prompts)-1].Text
		case m.is("jobsSummaryScansBytes") && len(first) > store.SummaryScan:
			first = strings.ToValidUTF8(first[:store.SummaryScan], "")
		}
		c.Summary = store.PromptSummary(first)
		if !m.is("jobsListPrompts") {
			c.Prompts = nil
		}
		jobs = append(jobs, c)
	}
	slices.SortFunc(jobs, func(a, b store.Job) int { return m.newestJobFirst(a.Key(), b.Key()) })
	page := store.JobsPage{Jobs: append([]store.Job{}, jobs[:min(max(q.Limit, 0), len(jobs))]...)}
	page.HasMore = len(jobs) > q.Limit
	if m.is("jobsHasMoreOffByOne") {
		page.HasMore = len(jobs) >= q.Limit
	}
	if m.is("jobsNilPage") && len(page.Jobs) == 0 {
		page.Jobs = nil
	}
	return page, nil
}

func (m *memStore) ViewSeries(_ context.Context, q store.SeriesQuery) ([]store.SeriesPoint, error) {
	if err := q.Validate(); err != nil && !m.is("seriesNoValidation") {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := q.Points()
	if m.is("seriesToInclusive") {
		n++
	}
	points := make([]store.SeriesPoint, 0, n)
	for i := range n {
		points = append(points, store.SeriesPoint{At: q.From.Add(time.Duration(i) * q.Interval)})
	}
	for k, v := range m.views {
		switch {
		case k.project != q.ProjectID && !m.is("seriesLeaksProjects"):
			continue
		case q.Path != "" && k.path != q.Path && !m.is("seriesIgnoresPath") && !(m.is("seriesPathPrefix") && strings.HasPrefix(k.path, q.Path)):
			continue
		}
		h := time.Unix(k.hour, 0).UTC()
		if h.Before(q.From) || q.Interval <= 0 {
			continue
		}
		i := int(h.Sub(q.From) / q.Interval)
		if i >= len(points) {
			continue
		}
		p := &points[i]
		p.Human += v.Human
		p.AI += v.AI
		if !m.is("seriesDropsBots") {
			p.Bot += v.Bot
		}
	}
	if m.is("seriesSkipsEmpty") {
		points = slices.DeleteFunc(points, func(p store.SeriesPoint) bool { return p == store.SeriesPoint{At: p.At} })
	}
	return points, nil
}
