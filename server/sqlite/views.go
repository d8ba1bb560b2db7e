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
