package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
)

// viewStatements are the statements AddViews runs, prepared once on the
// writer when the Store opens. SQLite parses a statement each time it is
// prepared, and parsing the dozen statements of a small flush was about a
// fifth of an ingestion request's CPU. A transaction takes them with
// tx.StmtContext, which reuses what the writer's connection has prepared.
// (They cannot be prepared lazily: the writer has one connection, which the
// transaction that needs them holds.)
type viewStatements struct {
	rolls [rollup.Weekly + 1]rollStatements // by rollup.Kind
	// The cap's bookkeeping (dayStore).
	held, addPath, paths, record *sql.Stmt
}

// rollStatements read and write the segments of one kind of roll.
type rollStatements struct {
	list, get, del, put *sql.Stmt
}

// prepareViewStatements prepares the statements on db.
func prepareViewStatements(ctx context.Context, db *sql.DB) (*viewStatements, error) {
	var st viewStatements
	var errs []error
	prepare := func(query string) *sql.Stmt {
		s, err := db.PrepareContext(ctx, query)
		errs = append(errs, err)
		return s
	}
	for kind := range st.rolls {
		table, col := rollup.Kind(kind).Table(), rollup.Kind(kind).Column()
		where := ` WHERE project_id = ? AND ` + col + ` = ?`
		st.rolls[kind] = rollStatements{
			list: prepare(`SELECT seq, entries FROM ` + table + where + ` ORDER BY seq`),
			get:  prepare(`SELECT counts FROM ` + table + where + ` AND seq >= ?`),
			del:  prepare(`DELETE FROM ` + table + where + ` AND seq >= ?`),
			put:  prepare(`INSERT INTO ` + table + ` (project_id, ` + col + `, seq, entries, counts) VALUES (?, ?, ?, ?, ?)`),
		}
	}
	st.held = prepare(`SELECT 1 FROM view_day_paths WHERE project_id = ? AND day = ? AND path = ?`)
	st.addPath = prepare(`INSERT INTO view_day_paths (project_id, day, path) VALUES (?, ?, ?)`)
	st.paths = prepare(`SELECT paths FROM view_days WHERE project_id = ? AND day = ?`)
	// The views folded are a report: their sum stops at the largest
	// integer rather than fail the flush.
	st.record = prepare(`INSERT INTO view_days (project_id, day, paths, folded_counts, folded_views)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (project_id, day) DO UPDATE SET
		    paths = paths + excluded.paths,
		    folded_counts = folded_counts + excluded.folded_counts,
		    folded_views = CASE WHEN folded_views > 9223372036854775807 - excluded.folded_views
		                        THEN 9223372036854775807 ELSE folded_views + excluded.folded_views END`)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &st, nil
}
