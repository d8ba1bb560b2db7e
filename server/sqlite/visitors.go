package sqlite

import (
	"context"
	"database/sql"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/internal/sqlstore"
	"github.com/docsapi/docsapi-go/server/store"
)

// visitorMethods is AddVisitors, QueryVisitors and VisitorSalt as every SQL
// backend runs them, embedded in Store under a name of its own.
type visitorMethods = sqlstore.Visitors

// visitorStatements are the statements AddVisitors runs, prepared once on
// the writer when the Store opens, as the views' are (see statements.go).
type visitorStatements struct {
	rolls [rollup.Weekly + 1]rollStatements // by rollup.Kind
}

// prepareVisitorStatements prepares the statements on db.
func prepareVisitorStatements(ctx context.Context, db *sql.DB) (*visitorStatements, error) {
	p := &preparer{ctx: ctx, db: db}
	st := visitorStatements{rolls: p.prepareRolls(rollup.Kind.VisitorTable, "size", "sketches")}
	if err := p.err(); err != nil {
		return nil, err
	}
	return &st, nil
}

// StorableVisitors returns the counts that hold a sketch: SQLite's TEXT
// holds any bytes.
func (backend) StorableVisitors(counts []store.VisitorCount) []store.VisitorCount {
	batch := counts[:0:0]
	for _, c := range counts {
		if len(c.Human) > 0 || len(c.AI) > 0 {
			batch = append(batch, c)
		}
	}
	return batch
}

// WriteVisitors runs fn in a write transaction (BEGIN IMMEDIATE), which
// holds the database's write lock until it commits.
func (b backend) WriteVisitors(ctx context.Context, op string, _ []store.VisitorCount, fn func(sqlstore.VisitorsTx) error) error {
	return b.s.write(ctx, op, func(tx *sql.Tx) error {
		return fn(&visitorsTx{
			dayStore: dayStore{ctx: ctx, tx: tx, st: b.s.viewStmts},
			st:       b.s.visitorStmts,
		})
	})
}

// visitorsTx is the visitors statements of one write transaction: the
// cap's question (dayStore's Held) and the rolls'.
type visitorsTx struct {
	dayStore
	st *visitorStatements
}

// VisitorSegments lists a roll's segments and their sizes.
func (t *visitorsTx) VisitorSegments(kind rollup.Kind, project string, at int64) ([]rollup.Segment, error) {
	return listSegments(t.ctx, t.tx.StmtContext(t.ctx, t.st.rolls[kind].list), rollup.Roll{ProjectID: project, At: at})
}

// ReadVisitorSegments reads a roll's segments from from on.
func (t *visitorsTx) ReadVisitorSegments(kind rollup.Kind, project string, at, from int64) ([][]byte, error) {
	return readSegments(t.ctx, t.tx.StmtContext(t.ctx, t.st.rolls[kind].get), rollup.Roll{ProjectID: project, At: at}, from)
}

// StoreVisitorSegment replaces the segments a merged into it, if any, and
// stores a's.
func (t *visitorsTx) StoreVisitorSegment(kind rollup.Kind, project string, at int64, a rollup.Appended) error {
	st := t.st.rolls[kind]
	if a.Replaces > 0 {
		if _, err := t.tx.StmtContext(t.ctx, st.del).ExecContext(t.ctx, project, at, a.Replaces); err != nil {
			return err
		}
	}
	_, err := t.tx.StmtContext(t.ctx, st.put).ExecContext(t.ctx, project, at, a.Seq, a.Entries, a.Segment)
	return err
}

// TallyVisitorRolls reads the rolls in one read transaction, so the totals
// and the page describe one snapshot.
func (b backend) TallyVisitorRolls(ctx context.Context, op, project string, span rollup.Span, tally *rollup.VisitorTally) error {
	return b.s.read(ctx, op, func(tx *sql.Tx) error {
		if err := readRolls(ctx, tx, visitorRangeQuery, project, span, tally.Add); err != nil {
			return dbErr(op, err)
		}
		return nil
	})
}

// visitorRangeQuery selects the segments of the visitor rolls of a kind of
// a project in a time range.
func visitorRangeQuery(kind rollup.Kind) string {
	col := kind.Column()
	return `SELECT sketches FROM ` + kind.VisitorTable() + ` WHERE project_id = ? AND ` + col + ` >= ? AND ` + col + ` < ?`
}

// VisitorSalt deletes the salts before keepFrom, keeps fresh as day's
// unless it has one, and reads day's, in one write transaction: the
// database's write lock makes the first writer's salt everyone's.
func (b backend) VisitorSalt(ctx context.Context, op string, day, keepFrom int64, fresh []byte) ([]byte, error) {
	var salt []byte
	err := b.s.write(ctx, op, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM visitor_salts WHERE day < ?`, keepFrom); err != nil {
			return dbErr(op, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO visitor_salts (day, salt) VALUES (?, ?) ON CONFLICT (day) DO NOTHING`, day, fresh); err != nil {
			return dbErr(op, err)
		}
		if err := tx.QueryRowContext(ctx, `SELECT salt FROM visitor_salts WHERE day = ?`, day).Scan(&salt); err != nil {
			return dbErr(op, err)
		}
		return nil
	})
	return salt, err
}
