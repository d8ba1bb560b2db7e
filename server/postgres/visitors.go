package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/internal/sqlstore"
	"github.com/docsapi/docsapi-go/server/store"
)

// visitorMethods is AddVisitors, QueryVisitors and VisitorSalt as every SQL
// backend runs them, embedded in Store under a name of its own.
type visitorMethods = sqlstore.Visitors

// StorableVisitors returns the counts that hold a sketch, with project IDs
// and paths that PostgreSQL's text cannot hold spelled as StorableViews
// spells them, so that a path's visitors and views stay under one name.
func (backend) StorableVisitors(counts []store.VisitorCount) []store.VisitorCount {
	batch := make([]store.VisitorCount, 0, len(counts))
	for _, c := range counts {
		if len(c.Human) == 0 && len(c.AI) == 0 {
			continue
		}
		c.ProjectID, c.Path, c.Hour = makeStorable(c.ProjectID), makeStorable(c.Path), c.Hour.UTC()
		batch = append(batch, c)
	}
	return batch
}

// WriteVisitors runs fn in a transaction that first locks the view_days
// rows of the batch's days and weeks, as WriteViews does (lockDays): the
// locks of a day and of its week's Monday guard its visitor rolls too, so
// concurrent flushes of the same days queue, in one order, instead of
// deadlocking or losing a segment.
func (b backend) WriteVisitors(ctx context.Context, op string, batch []store.VisitorCount, fn func(sqlstore.VisitorsTx) error) error {
	hours := make([]store.ViewCount, len(batch))
	for i, c := range batch {
		hours[i] = store.ViewCount{ProjectID: c.ProjectID, Hour: c.Hour}
	}
	return b.s.tx(ctx, op, func(tx pgx.Tx) error {
		days, err := lockDays(ctx, tx, hours)
		if err != nil {
			return b.s.dbErr(op, err)
		}
		return fn(&visitorsTx{dayStore: dayStore{ctx: ctx, tx: tx, paths: days}})
	})
}

// visitorsTx is the visitors statements of one write transaction that
// holds its days' locks: the cap's question (dayStore's Held) and the
// rolls'.
type visitorsTx struct{ dayStore }

// VisitorSegments lists a roll's segments and their sizes.
func (t *visitorsTx) VisitorSegments(kind rollup.Kind, project string, at int64) ([]rollup.Segment, error) {
	rows, err := t.tx.Query(t.ctx, `SELECT seq, size FROM `+kind.VisitorTable()+
		` WHERE project_id = $1 AND `+kind.Column()+` = $2 ORDER BY seq`, project, at)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[rollup.Segment])
}

// ReadVisitorSegments reads a roll's segments from from on.
func (t *visitorsTx) ReadVisitorSegments(kind rollup.Kind, project string, at, from int64) ([][]byte, error) {
	rows, err := t.tx.Query(t.ctx, `SELECT sketches FROM `+kind.VisitorTable()+
		` WHERE project_id = $1 AND `+kind.Column()+` = $2 AND seq >= $3 ORDER BY seq`, project, at, from)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[[]byte])
}

// StoreVisitorSegment replaces the segments a merged into it, if any, and
// stores a's.
func (t *visitorsTx) StoreVisitorSegment(kind rollup.Kind, project string, at int64, a rollup.Appended) error {
	table, col := kind.VisitorTable(), kind.Column()
	if a.Replaces > 0 {
		if _, err := t.tx.Exec(t.ctx, `DELETE FROM `+table+` WHERE project_id = $1 AND `+col+` = $2 AND seq >= $3`,
			project, at, a.Replaces); err != nil {
			return err
		}
	}
	_, err := t.tx.Exec(t.ctx, `INSERT INTO `+table+` (project_id, `+col+`, seq, size, sketches) VALUES ($1, $2, $3, $4, $5)`,
		project, at, a.Seq, a.Entries, a.Segment)
	return err
}

// queryVisitorRolls reads, in one statement and so one snapshot, the
// visitor segments of a range's whole weeks, of the whole days on either
// side, and of the hours of its two ragged edges.
const queryVisitorRolls = `SELECT sketches FROM visitor_week_rolls WHERE project_id = $1 AND week >= $2 AND week < $3
	UNION ALL
	SELECT sketches FROM visitor_day_rolls WHERE project_id = $1
	   AND ((day >= $4 AND day < $5) OR (day >= $6 AND day < $7))
	UNION ALL
	SELECT sketches FROM visitor_hour_rolls WHERE project_id = $1
	   AND ((hour >= $8 AND hour < $9) OR (hour >= $10 AND hour < $11))`

// TallyVisitorRolls reads the rolls in one statement.
func (b backend) TallyVisitorRolls(ctx context.Context, op, project string, span rollup.Span, tally *rollup.VisitorTally) error {
	db, err := b.s.db()
	if err != nil {
		return err
	}
	var days, hours [2][2]int64 // empty ranges unless the span has them
	copy(days[:], span.Days)
	copy(hours[:], span.Hours)
	rows, err := db.Query(ctx, queryVisitorRolls, makeStorable(project), span.Weeks[0], span.Weeks[1],
		days[0][0], days[0][1], days[1][0], days[1][1],
		hours[0][0], hours[0][1], hours[1][0], hours[1][1])
	if err != nil {
		return b.s.dbErr(op, err)
	}
	defer rows.Close()
	for rows.Next() {
		// The tally copies what it keeps before the next row reuses
		// the raw value.
		if err := tally.Add(rows.RawValues()[0]); err != nil {
			return b.s.dbErr(op, err)
		}
	}
	if err := rows.Err(); err != nil {
		return b.s.dbErr(op, err)
	}
	return nil
}

// VisitorSalt deletes the salts before keepFrom, keeps fresh as day's
// unless it has one, and reads day's, in one transaction. ON CONFLICT DO
// NOTHING waits for a replica inserting the same day to commit, and the
// SELECT, a statement of its own, then sees its salt.
func (b backend) VisitorSalt(ctx context.Context, op string, day, keepFrom int64, fresh []byte) ([]byte, error) {
	var salt []byte
	err := b.s.tx(ctx, op, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM visitor_salts WHERE day < $1`, keepFrom); err != nil {
			return b.s.dbErr(op, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO visitor_salts (day, salt) VALUES ($1, $2) ON CONFLICT (day) DO NOTHING`, day, fresh); err != nil {
			return b.s.dbErr(op, err)
		}
		if err := tx.QueryRow(ctx, `SELECT salt FROM visitor_salts WHERE day = $1`, day).Scan(&salt); err != nil {
			return b.s.dbErr(op, err)
		}
		return nil
	})
	return salt, err
}
