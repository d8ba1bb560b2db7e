package sqlstore

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/store"
)

// AgentRow is one row of a backend's agent_days table to add to: a
// project's views by one agent of one path on one UTC day.
type AgentRow struct {
	ProjectID string
	Day       int64 // Unix time of the UTC day's start
	Path      string
	Name      string
	Class     store.AgentClass
	Views     int64
}

// groupAgents sums the agent counts of a capped batch by project, day,
// path, name and class, in that order: each row is written once, and
// writers that share days touch their rows in one order.
func groupAgents(counts []store.ViewCount) []AgentRow {
	type key struct {
		project string
		day     int64
		path    string
		name    string
		class   store.AgentClass
	}
	at := map[key]int{}
	var rows []AgentRow
	for _, c := range counts {
		for _, a := range c.Agents {
			if a.Views == 0 {
				continue
			}
			k := key{c.ProjectID, rollup.DayOf(c.Hour.Unix()), c.Path, a.Name, a.Class}
			if i, ok := at[k]; ok {
				rows[i].Views += a.Views
				continue
			}
			at[k] = len(rows)
			rows = append(rows, AgentRow{ProjectID: k.project, Day: k.day, Path: k.path, Name: k.name, Class: k.class, Views: a.Views})
		}
	}
	slices.SortFunc(rows, func(a, b AgentRow) int {
		return cmp.Or(strings.Compare(a.ProjectID, b.ProjectID), cmp.Compare(a.Day, b.Day),
			strings.Compare(a.Path, b.Path), strings.Compare(a.Name, b.Name), strings.Compare(string(a.Class), string(b.Class)))
	})
	return rows
}

// QueryAgents returns a project's views per agent, as store.AgentStore
// documents: the backend reads the totals and one more row than the page,
// in one snapshot, to know whether another follows.
func (v *Views) QueryAgents(ctx context.Context, q store.AgentsQuery) (store.AgentsResult, error) {
	const op = "query agents"
	if err := q.Validate(); err != nil {
		return store.AgentsResult{}, v.db.Fail(op, err)
	}
	read := q
	read.Limit++
	res, err := v.db.ReadAgents(ctx, op, read)
	if err != nil {
		return store.AgentsResult{}, err
	}
	if len(res.Rows) > q.Limit {
		res.Rows, res.HasMore = res.Rows[:q.Limit], true
	}
	if res.Totals == nil {
		res.Totals = []store.AgentCount{}
	}
	if res.Rows == nil {
		res.Rows = []store.AgentPathCount{}
	}
	return res, nil
}

// AgentSeries returns a project's views per agent and day, as
// store.AgentStore documents.
func (v *Views) AgentSeries(ctx context.Context, q store.AgentsQuery) ([]store.AgentDay, error) {
	const op = "agent series"
	if err := q.ValidateRange(); err != nil {
		return nil, v.db.Fail(op, err)
	}
	days, err := v.db.ReadAgentSeries(ctx, op, q)
	if err != nil {
		return nil, err
	}
	if days == nil {
		days = []store.AgentDay{}
	}
	return days, nil
}
