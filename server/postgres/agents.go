package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/docsapi/docsapi-go/server/internal/sqlstore"
	"github.com/docsapi/docsapi-go/server/store"
)

// addAgents adds each row's views to agent_days in one statement. The rows
// are distinct (an INSERT cannot change a row twice) and sorted; the days'
// locks (lockDays) already order concurrent writers of the same days.
const addAgents = `INSERT INTO agent_days (project_id, day, path, agent, class, views)
	SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::bigint[])
	ON CONFLICT (project_id, day, path, agent, class) DO UPDATE SET views = agent_days.views + excluded.views`

// AddAgents adds the rows to agent_days.
func (t *viewsTx) AddAgents(rows []sqlstore.AgentRow) error {
	n := len(rows)
	projects, days, paths, names, classes, views := make([]string, n), make([]int64, n), make([]string, n), make([]string, n), make([]string, n), make([]int64, n)
	for i, r := range rows {
		projects[i], days[i], paths[i], names[i], classes[i], views[i] = r.ProjectID, r.Day, r.Path, r.Name, string(r.Class), r.Views
	}
	_, err := t.tx.Exec(t.ctx, addAgents, projects, days, paths, names, classes, views)
	return err
}

// ReadAgents reads the totals and the page in one statement, so both
// describe one snapshot.
func (b backend) ReadAgents(ctx context.Context, op string, q store.AgentsQuery) (store.AgentsResult, error) {
	db, err := b.s.db()
	if err != nil {
		return store.AgentsResult{}, err
	}
	q.ProjectID, q.Path = makeStorable(q.ProjectID), makeStorable(q.Path)
	rows, err := db.Query(ctx, sqlstore.AgentsQuerySQL, sqlstore.AgentsArgs(q)...)
	if err != nil {
		return store.AgentsResult{}, b.s.dbErr(op, err)
	}
	defer rows.Close()
	var res store.AgentsResult
	for rows.Next() {
		var (
			kind        int32
			path        pgtype.Text
			name, class string
			views       int64
		)
		if err := rows.Scan(&kind, &path, &name, &class, &views); err != nil {
			return store.AgentsResult{}, b.s.dbErr(op, err)
		}
		count := store.AgentCount{Name: name, Class: store.AgentClass(class), Views: views}
		if kind == 0 {
			res.Totals = append(res.Totals, count)
		} else {
			res.Rows = append(res.Rows, store.AgentPathCount{Path: path.String, AgentCount: count})
		}
	}
	if err := rows.Err(); err != nil {
		return store.AgentsResult{}, b.s.dbErr(op, err)
	}
	return res, nil
}

// ReadAgentSeries reads the views per agent and day in one statement.
func (b backend) ReadAgentSeries(ctx context.Context, op string, q store.AgentsQuery) ([]store.AgentDay, error) {
	db, err := b.s.db()
	if err != nil {
		return nil, err
	}
	q.ProjectID, q.Path = makeStorable(q.ProjectID), makeStorable(q.Path)
	rows, err := db.Query(ctx, sqlstore.AgentSeriesSQL, sqlstore.AgentsArgs(q)[:5]...)
	if err != nil {
		return nil, b.s.dbErr(op, err)
	}
	defer rows.Close()
	var out []store.AgentDay
	for rows.Next() {
		var (
			day         int64
			name, class string
			views       int64
		)
		if err := rows.Scan(&day, &name, &class, &views); err != nil {
			return nil, b.s.dbErr(op, err)
		}
		out = append(out, store.AgentDay{Day: time.Unix(day, 0).UTC(), AgentCount: store.AgentCount{Name: name, Class: store.AgentClass(class), Views: views}})
	}
	if err := rows.Err(); err != nil {
		return nil, b.s.dbErr(op, err)
	}
	return out, nil
}
