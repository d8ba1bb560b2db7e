package storetest_test

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// agentKey is a row of the reference store's agent views: a project's
// views by one agent of one path on one UTC day.
type agentKey struct {
	project string
	day     int64
	path    string
	name    string
	class   store.AgentClass
}

// agentMutants are the reference store's deliberate bugs in the agents'
// methods, and the subtests (area/name) that must fail with each; see
// TestMutantsFail.
var agentMutants = map[string][]string{
	"agentsOverwrite":       {"Agents/ViewsAddUpPerDayPathAndAgent"},
	"agentsByHour":          {"Agents/ViewsAddUpPerDayPathAndAgent", "Agents/SeriesIsPerDayInOrder"},
	"agentsUnchecked":       {"Agents/InvalidAgentsRefuseTheWholeBatch"},
	"agentsToInclusive":     {"Agents/RangeIsHalfOpenOnWholeDays"},
	"agentsLeakProjects":    {"Agents/OtherProjectsNeverLeak"},
	"agentsPathIgnored":     {"Agents/PathAndClassSelect"},
	"agentsClassIgnored":    {"Agents/PathAndClassSelect"},
	"agentsRowsByPath":      {"Agents/OrdersAreByViewsThenNames"},
	"agentsTotalsByName":    {"Agents/OrdersAreByViewsThenNames"},
	"agentsHasMoreOffByOne": {"Agents/PagesReportHasMoreExactly"},
	"agentsNilLists":        {"Agents/UnknownProjectGivesEmptyLists"},
	"agentsSeriesByName":    {"Agents/SeriesIsPerDayInOrder"},
	"agentsNoQueryCheck":    {"Agents/InvalidQueryIsAnError"},
}

// addAgents adds the agent views of a validated count, under m.mu.
func (m *memStore) addAgents(c store.ViewCount) {
	if m.agents == nil {
		m.agents = map[agentKey]int64{}
	}
	at := c.Hour.Unix()
	if !m.is("agentsByHour") {
		at -= at % 86400
	}
	for _, a := range c.Agents {
		if a.Views == 0 {
			continue
		}
		k := agentKey{c.ProjectID, at, c.Path, a.Name, a.Class}
		if m.is("agentsOverwrite") {
			m.agents[k] = 0
		}
		m.agents[k] += a.Views
	}
}

// selected reports whether the row k counts in q.
func (m *memStore) selected(q store.AgentsQuery, k agentKey) bool {
	if k.project != q.ProjectID && !m.is("agentsLeakProjects") {
		return false
	}
	if !q.From.IsZero() && k.day < q.From.Unix() {
		return false
	}
	if !q.To.IsZero() && (k.day > q.To.Unix() || k.day == q.To.Unix() && !m.is("agentsToInclusive")) {
		return false
	}
	if q.Path != "" && k.path != q.Path && !m.is("agentsPathIgnored") {
		return false
	}
	return q.Class == "" || k.class == q.Class || m.is("agentsClassIgnored")
}

func (m *memStore) QueryAgents(_ context.Context, q store.AgentsQuery) (store.AgentsResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := q.Validate(); err != nil && !m.is("agentsNoQueryCheck") {
		return store.AgentsResult{}, err
	}
	type who struct {
		name  string
		class store.AgentClass
	}
	type where struct {
		path string
		who
	}
	totals, rows := map[who]int64{}, map[where]int64{}
	for k, v := range m.agents {
		if m.selected(q, k) {
			totals[who{k.name, k.class}] += v
			rows[where{k.path, who{k.name, k.class}}] += v
		}
	}
	res := store.AgentsResult{Totals: []store.AgentCount{}, Rows: []store.AgentPathCount{}}
	for w, v := range totals {
		res.Totals = append(res.Totals, store.AgentCount{Name: w.name, Class: w.class, Views: v})
	}
	slices.SortFunc(res.Totals, func(a, b store.AgentCount) int {
		if m.is("agentsTotalsByName") {
			return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Class, b.Class))
		}
		return cmp.Or(cmp.Compare(b.Views, a.Views), cmp.Compare(a.Class, b.Class), cmp.Compare(a.Name, b.Name))
	})
	var all []store.AgentPathCount
	for w, v := range rows {
		all = append(all, store.AgentPathCount{Path: w.path, AgentCount: store.AgentCount{Name: w.name, Class: w.class, Views: v}})
	}
	slices.SortFunc(all, func(a, b store.AgentPathCount) int {
		if m.is("agentsRowsByPath") {
			return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(b.Views, a.Views), cmp.Compare(a.Class, b.Class), cmp.Compare(a.Name, b.Name))
		}
		return cmp.Or(cmp.Compare(b.Views, a.Views), cmp.Compare(a.Path, b.Path), cmp.Compare(a.Class, b.Class), cmp.Compare(a.Name, b.Name))
	})
	start := min(q.Offset, len(all))
	end := min(start+q.Limit, len(all))
	res.Rows = append(res.Rows, all[start:end]...)
	res.HasMore = end < len(all)
	if m.is("agentsHasMoreOffByOne") {
		res.HasMore = end <= len(all) && start < len(all)
	}
	if m.is("agentsNilLists") {
		if len(res.Totals) == 0 {
			res.Totals = nil
		}
		if len(res.Rows) == 0 {
			res.Rows = nil
		}
	}
	return res, nil
}

func (m *memStore) AgentSeries(_ context.Context, q store.AgentsQuery) ([]store.AgentDay, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := q.ValidateRange(); err != nil && !m.is("agentsNoQueryCheck") {
		return nil, err
	}
	type dayWho struct {
		day   int64
		name  string
		class store.AgentClass
	}
	sums := map[dayWho]int64{}
	for k, v := range m.agents {
		if m.selected(q, k) {
			sums[dayWho{k.day, k.name, k.class}] += v
		}
	}
	out := []store.AgentDay{}
	for d, v := range sums {
		out = append(out, store.AgentDay{Day: time.Unix(d.day, 0).UTC(), AgentCount: store.AgentCount{Name: d.name, Class: d.class, Views: v}})
	}
	slices.SortFunc(out, func(a, b store.AgentDay) int {
		if m.is("agentsSeriesByName") {
			return cmp.Or(cmp.Compare(a.Name, b.Name), a.Day.Compare(b.Day), cmp.Compare(a.Class, b.Class))
		}
		return cmp.Or(a.Day.Compare(b.Day), cmp.Compare(a.Class, b.Class), cmp.Compare(a.Name, b.Name))
	})
	return out, nil
}
