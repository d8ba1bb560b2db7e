package sqlite

import (
	"context"
	"database/sql"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/internal/sqlstore"
	"github.com/docsapi/docsapi-go/server/store"
)

// StorableViews returns counts: SQLite's TEXT holds any bytes, and the
// cap leaves out the counts that add nothing.
func (backend) StorableViews(counts []store.ViewCount) []store.ViewCount { return counts }

// WriteViews runs fn in a write transaction (BEGIN IMMEDIATE), which holds
// the database's write lock, so no other flush touches the rolls or the
// days until it commits.
func (b backend) WriteViews(ctx context.Context, op string, _ []store.ViewCount, fn func(sqlstore.ViewsTx) error) error {
	return b.s.write(ctx, op, func(tx *sql.Tx) error {
		return fn(&viewsTx{dayStore: dayStore{ctx: ctx, tx: tx, st: b.s.viewStmts}})
	})
}

// viewsTx is the views statements of one write transaction: the cap's
// (dayStore) and the rolls'.
type viewsTx struct{ dayStore }

// AddToRolls adds counts to the rolls (see rolls.go).
func (t *viewsTx) AddToRolls(counts []store.ViewCount) error {
	return addToRolls(t.ctx, t.tx, t.st, counts)
}

// TallyRolls reads the rolls in one read transaction: the totals and the
// page describe the same data even while a flush commits.
func (b backend) TallyRolls(ctx context.Context, op, project string, span rollup.Span, tally *rollup.Tally) error {
	return b.s.read(ctx, op, func(tx *sql.Tx) error {
		if err := readRolls(ctx, tx, rollRangeQuery, project, span, tally.Add); err != nil {
			return dbErr(op, err)
		}
		return nil
	})
}

// ReadRolls reads the segments of a kind of roll in one read transaction,
// with their rolls' starts.
func (b backend) ReadRolls(ctx context.Context, op, project string, kind rollup.Kind, at [2]int64, add func(at int64, seg []byte) error) error {
	return b.s.read(ctx, op, func(tx *sql.Tx) error {
		if err := readSeries(ctx, tx, project, kind, at, add); err != nil {
			return dbErr(op, err)
		}
		return nil
	})
}

// readSeries calls add with each segment of rollSeriesQuery's rows and
// its roll's start. A segment points into the driver's buffer until the
// next row, so it is never copied.
func readSeries(ctx context.Context, tx *sql.Tx, project string, kind rollup.Kind, at [2]int64, add func(at int64, seg []byte) error) error {
	rows, err := tx.QueryContext(ctx, rollSeriesQuery(kind), project, at[0], at[1])
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var start int64
		var seg sql.RawBytes
		if err := rows.Scan(&start, &seg); err != nil {
			return err
		}
		if err := add(start, seg); err != nil {
			return err
		}
	}
	return rows.Err()
}

// rollSeriesQuery selects the segments of the view rolls of a kind of a
// project in a time range, with their rolls' starts.
func rollSeriesQuery(kind rollup.Kind) string {
	col := kind.Column()
	return `SELECT ` + col + `, counts FROM ` + kind.Table() + ` WHERE project_id = ? AND ` + col + ` >= ? AND ` + col + ` < ?`
}
