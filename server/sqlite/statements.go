package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
)

// viewStatements are the statements AddViews runs, prepared once on the
// writer when the Store opens. SQLite parses a statement each time it is
// prepared, and every flush and every ingestion commit runs the same dozen
// statements: parsed once, they cost the busiest path of writes nothing
// more. A transaction takes them with tx.StmtContext, which reuses what the
// writer's connection has prepared. (They cannot be prepared lazily: the
// writer has one connection, which the transaction that needs them holds.)
type viewStatements struct {
	rolls [rollup.Kinds]rollStatements // by rollup.Kind
	// The cap's bookkeeping (dayStore).
	held, addPath, paths, record *sql.Stmt
	// addAgent adds a row's views to agent_days (viewsTx.AddAgents).
	addAgent *sql.Stmt
}

// rollStatements read and write the segments of one kind of roll.
type rollStatements struct {
	list, get, del, put *sql.Stmt
}

// preparer prepares statements on the writer, keeping every error for the
// end, so a list of statements reads as a list.
type preparer struct {
	ctx  context.Context
	db   *sql.DB
	errs []error
}

func (p *preparer) prepare(query string) *sql.Stmt {
	s, err := p.db.PrepareContext(p.ctx, query)
	p.errs = append(p.errs, err)
	return s
}

func (p *preparer) err() error { return errors.Join(p.errs...) }

// prepareRoll prepares the statements of the segments in table, whose
// rolls start at column col.
func (p *preparer) prepareRoll(table, col string) rollStatements {
	where := ` WHERE project_id = ? AND ` + col + ` = ?`
	return rollStatements{
		list: p.prepare(`SELECT seq, entries FROM ` + table + where + ` ORDER BY seq`),
		get:  p.prepare(`SELECT counts FROM ` + table + where + ` AND seq >= ? ORDER BY seq`),
		del:  p.prepare(`DELETE FROM ` + table + where + ` AND seq >= ?`),
		put:  p.prepare(`INSERT INTO ` + table + ` (project_id, ` + col + `, seq, entries, counts) VALUES (?, ?, ?, ?, ?)`),
	}
}

// prepareViewStatements prepares the statements on db.
func prepareViewStatements(ctx context.Context, db *sql.DB) (*viewStatements, error) {
	p := &preparer{ctx: ctx, db: db}
	var st viewStatements
	for kind := range st.rolls {
		st.rolls[kind] = p.prepareRoll(rollup.Kind(kind).Table(), rollup.Kind(kind).Column())
	}
	st.held = p.prepare(`SELECT 1 FROM view_day_paths WHERE project_id = ? AND day = ? AND path = ?`)
	st.addPath = p.prepare(`INSERT INTO view_day_paths (project_id, day, path) VALUES (?, ?, ?)`)
	st.paths = p.prepare(`SELECT paths FROM view_days WHERE project_id = ? AND day = ?`)
	// The views folded are a report: their sum stops at the largest
	// integer rather than fail the flush.
	st.record = p.prepare(`INSERT INTO view_days (project_id, day, paths, folded_counts, folded_views)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (project_id, day) DO UPDATE SET
		    paths = paths + excluded.paths,
		    folded_counts = folded_counts + excluded.folded_counts,
		    folded_views = CASE WHEN folded_views > 9223372036854775807 - excluded.folded_views
		                        THEN 9223372036854775807 ELSE folded_views + excluded.folded_views END`)
	st.addAgent = p.prepare(`INSERT INTO agent_days (project_id, day, path, agent, class, views)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (project_id, day, path, agent, class) DO UPDATE SET views = views + excluded.views`)
	if err := p.err(); err != nil {
		return nil, err
	}
	return &st, nil
}
