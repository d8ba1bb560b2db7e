package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/sqlstore"
	"github.com/docsapi/docsapi-go/server/store"
)

// SQLite numbers its parameters ?n where PostgreSQL writes $n.
var (
	agentsQuery = strings.ReplaceAll(sqlstore.AgentsQuerySQL, "$", "?")
	agentSeries = strings.ReplaceAll(sqlstore.AgentSeriesSQL, "$", "?")
)

// AddAgents adds each row's views to agent_days, with the statement
// prepared at open.
func (t *viewsTx) AddAgents(rows []sqlstore.AgentRow) error {
	add := t.tx.StmtContext(t.ctx, t.st.addAgent)
	for _, r := range rows {
		if _, err := add.ExecContext(t.ctx, r.ProjectID, r.Day, r.Path, r.Name, string(r.Class), r.Views); err != nil {
			return err
		}
	}
	return nil
}

// ReadAgents reads the totals and the page in one read transaction.
func (b backend) ReadAgents(ctx context.Context, op string, q store.AgentsQuery) (store.AgentsResult, error) {
	var res store.AgentsResult
	err := b.s.read(ctx, op, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, agentsQuery, sqlstore.AgentsArgs(q)...)
		if err != nil {
			return dbErr(op, err)
		}
		defer rows.Close()
		for rows.Next() {
			var (
				kind  int
				path  sql.NullString
				count store.AgentCount
				class string
			)
			if err := rows.Scan(&kind, &path, &count.Name, &class, &count.Views); err != nil {
				return dbErr(op, err)
			}
			count.Class = store.AgentClass(class)
			if kind == 0 {
				res.Totals = append(res.Totals, count)
			} else {
				res.Rows = append(res.Rows, store.AgentPathCount{Path: path.String, AgentCount: count})
			}
		}
		if err := rows.Err(); err != nil {
			return dbErr(op, err)
		}
		return nil
	})
	return res, err
}

// ReadAgentSeries reads the views per agent and day.
func (b backend) ReadAgentSeries(ctx context.Context, op string, q store.AgentsQuery) ([]store.AgentDay, error) {
	var out []store.AgentDay
	err := b.s.read(ctx, op, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, agentSeries, sqlstore.AgentsArgs(q)[:5]...)
		if err != nil {
			return dbErr(op, err)
		}
		defer rows.Close()
		for rows.Next() {
			var (
				day   int64
				d     store.AgentDay
				class string
			)
			if err := rows.Scan(&day, &d.Name, &class, &d.Views); err != nil {
				return dbErr(op, err)
			}
			d.Day, d.Class = time.Unix(day, 0).UTC(), store.AgentClass(class)
			out = append(out, d)
		}
		if err := rows.Err(); err != nil {
			return dbErr(op, err)
		}
		return nil
	})
	return out, err
}
