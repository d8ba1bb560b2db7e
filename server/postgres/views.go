package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/internal/sqlstore"
	"github.com/docsapi/docsapi-go/server/store"
)

// StorableViews returns the counts that add views, with project IDs and
// paths that PostgreSQL's text cannot hold (invalid UTF-8, NUL) spelled
// with U+FFFD in place of the bad bytes, where SQLite keeps them as they
// are: a path from a request line may hold any bytes ("/%ff" decodes to an
// invalid one), and is counted under a storable spelling rather than fail
// the batch (see makeStorable).
func (backend) StorableViews(counts []store.ViewCount) []store.ViewCount {
	batch := make([]store.ViewCount, 0, len(counts))
	for _, c := range counts {
		if c.Human == 0 && c.AI == 0 && c.Bot == 0 {
			continue // adds nothing
		}
		c.ProjectID, c.Path, c.Hour = makeStorable(c.ProjectID), makeStorable(c.Path), c.Hour.UTC()
		batch = append(batch, c)
	}
	return batch
}

// WriteViews runs fn in a transaction that first locks the view_days rows
// of the batch's days and weeks (lockDays). Those are the only locks a
// flush takes, in sorted order by every flush of every replica, so that
// concurrent flushes of the same days queue instead of deadlocking.
func (b backend) WriteViews(ctx context.Context, op string, batch []store.ViewCount, fn func(sqlstore.ViewsTx) error) error {
	days := make([]rollup.ProjectDay, len(batch))
	for i, c := range batch {
		days[i] = rollup.ProjectDay{ProjectID: c.ProjectID, At: c.Hour.Unix()}
	}
	return b.s.tx(ctx, op, func(tx pgx.Tx) error {
		days, err := lockDays(ctx, tx, days)
		if err != nil {
			return b.s.dbErr(op, err)
		}
		return fn(&viewsTx{dayStore: dayStore{ctx: ctx, tx: tx, paths: days}})
	})
}

// viewsTx is the views statements of one write transaction: the cap's
// (dayStore) and the rolls'.
type viewsTx struct{ dayStore }

// AddToRolls adds counts to the rolls (see rolls.go).
func (t *viewsTx) AddToRolls(counts []store.ViewCount) error { return addToRolls(t.ctx, t.tx, counts) }

// TallyRolls reads the rolls in one statement, so the totals and the page
// describe one snapshot.
func (b backend) TallyRolls(ctx context.Context, op, project string, span rollup.Span, tally *rollup.Tally) error {
	db, err := b.s.db()
	if err != nil {
		return err
	}
	if err := tallyRolls(ctx, db, project, span, tally); err != nil {
		return b.s.dbErr(op, err)
	}
	return nil
}

// ReadRolls reads the segments of a kind of roll in one statement, with
// their rolls' starts.
func (b backend) ReadRolls(ctx context.Context, op, project string, kind rollup.Kind, at [2]int64, add func(at int64, seg []byte) error) error {
	db, err := b.s.db()
	if err != nil {
		return err
	}
	if err := readSeries(ctx, db, project, kind, at, add); err != nil {
		return b.s.dbErr(op, err)
	}
	return nil
}

// readSeries calls add with each segment of the rolls of kind of project
// that start in at, and its roll's start. The raw value is valid until the
// next row: the segment is summed before then, so it is never copied.
func readSeries(ctx context.Context, db querier, project string, kind rollup.Kind, at [2]int64, add func(at int64, seg []byte) error) error {
	col := kind.Column()
	rows, err := db.Query(ctx, `SELECT `+col+`, counts FROM `+kind.Table()+
		` WHERE project_id = $1 AND `+col+` >= $2 AND `+col+` < $3`, project, at[0], at[1])
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var start int64
		if err := rows.Scan(&start, nil); err != nil {
			return err
		}
		if err := add(start, rows.RawValues()[1]); err != nil {
			return err
		}
	}
	return rows.Err()
}
