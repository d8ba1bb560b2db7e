package postgres

import (
	"context"
	"errors"
	"math"

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
// rows of days and of their weeks' Mondays, as WriteViews does (lockDays):
// those locks guard the days' visitors and the weeks' rolls too, so
// concurrent flushes and closings of the same days queue, in one order,
// instead of deadlocking or losing a write.
func (b backend) WriteVisitors(ctx context.Context, op string, days []rollup.ProjectDay, fn func(sqlstore.VisitorsTx) error) error {
	return b.s.tx(ctx, op, func(tx pgx.Tx) error {
		locked, err := lockDays(ctx, tx, days)
		if err != nil {
			return b.s.dbErr(op, err)
		}
		return fn(&visitorsTx{dayStore: dayStore{ctx: ctx, tx: tx, paths: locked}})
	})
}

// visitorsTx is the visitors statements of one write transaction that
// holds its days' locks.
type visitorsTx struct{ dayStore }

// LatestSalt reads the latest day with a salt.
func (t *visitorsTx) LatestSalt() (int64, error) {
	var day *int64
	if err := t.tx.QueryRow(t.ctx, `SELECT max(day) FROM visitor_salts`).Scan(&day); err != nil {
		return 0, err
	}
	if day == nil {
		return math.MinInt64, nil
	}
	return *day, nil
}

// Day reads a day's row.
func (t *visitorsTx) Day(d rollup.ProjectDay) (sqlstore.VisitorDay, bool, error) {
	var v sqlstore.VisitorDay
	err := t.tx.QueryRow(t.ctx, `SELECT open, human, ai, total, entries, counts FROM visitor_days WHERE project_id = $1 AND day = $2`,
		d.ProjectID, d.At).Scan(&v.Open, &v.Totals.Human, &v.Totals.AI, &v.Totals.Total, &v.Entries, &v.Counts)
	if errors.Is(err, pgx.ErrNoRows) {
		return sqlstore.VisitorDay{}, false, nil
	}
	return v, err == nil, err
}

// PutDay upserts a day's row.
func (t *visitorsTx) PutDay(d rollup.ProjectDay, v sqlstore.VisitorDay) error {
	_, err := t.tx.Exec(t.ctx, `INSERT INTO visitor_days (project_id, day, open, human, ai, total, entries, counts)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (project_id, day) DO UPDATE SET open = excluded.open, human = excluded.human, ai = excluded.ai,
		    total = excluded.total, entries = excluded.entries, counts = excluded.counts`,
		d.ProjectID, d.At, v.Open, v.Totals.Human, v.Totals.AI, v.Totals.Total, v.Entries, v.Counts)
	return err
}

// Sketches reads the sketches of keys in one statement.
func (t *visitorsTx) Sketches(d rollup.ProjectDay, keys []string) ([][2][]byte, error) {
	rows, err := t.tx.Query(t.ctx, `SELECT path, human, ai FROM visitor_sketches
		WHERE project_id = $1 AND day = $2 AND path = ANY($3::text[])`, d.ProjectID, d.At, keys)
	if err != nil {
		return nil, err
	}
	byKey := make(map[string][2][]byte, len(keys))
	var key string
	var sk [2][]byte
	if _, err := pgx.ForEachRow(rows, []any{&key, &sk[0], &sk[1]}, func() error {
		byKey[key] = sk
		return nil
	}); err != nil {
		return nil, err
	}
	out := make([][2][]byte, len(keys))
	for i, k := range keys {
		out[i] = byKey[k]
	}
	return out, nil
}

// PutSketches upserts the sketches of keys in one statement.
func (t *visitorsTx) PutSketches(d rollup.ProjectDay, keys []string, sketches [][2][]byte) error {
	if len(keys) == 0 {
		return nil
	}
	human, ai := make([][]byte, len(keys)), make([][]byte, len(keys))
	for i, sk := range sketches {
		human[i], ai[i] = sk[0], sk[1]
	}
	_, err := t.tx.Exec(t.ctx, `INSERT INTO visitor_sketches (project_id, day, path, human, ai)
		SELECT $1, $2, u.path, u.human, u.ai FROM unnest($3::text[], $4::bytea[], $5::bytea[]) AS u (path, human, ai)
		ON CONFLICT (project_id, day, path) DO UPDATE SET human = excluded.human, ai = excluded.ai`,
		d.ProjectID, d.At, keys, human, ai)
	return err
}

// DeleteSketches deletes a day's sketches.
func (t *visitorsTx) DeleteSketches(d rollup.ProjectDay) error {
	_, err := t.tx.Exec(t.ctx, `DELETE FROM visitor_sketches WHERE project_id = $1 AND day = $2`, d.ProjectID, d.At)
	return err
}

// AddToWeek adds numbers to a visitors week roll (see rolls.go).
func (t *visitorsTx) AddToWeek(r rollup.Roll) error {
	return appendSegments(t.ctx, t.tx, "visitor_week_rolls", "week", []rollup.Roll{r})
}

// queryVisitors reads, in one statement and so one snapshot, the segments
// of a visitors query (the week rolls of its weeks, $2 to $3; the days of
// its days, $4 to $7, and those open in its weeks), then one row without a
// segment: the project's numbers summed over its days, $8 to $9.
const queryVisitors = `SELECT counts, 0::bigint, 0::bigint, 0::bigint FROM visitor_week_rolls
	WHERE project_id = $1 AND week >= $2 AND week < $3
	UNION ALL
	SELECT counts, 0, 0, 0 FROM visitor_days WHERE project_id = $1
	   AND ((day >= $4 AND day < $5) OR (day >= $6 AND day < $7) OR (open AND day >= $2 AND day < $3))
	UNION ALL
	SELECT NULL, coalesce(sum(human), 0)::bigint, coalesce(sum(ai), 0)::bigint, coalesce(sum(total), 0)::bigint
	FROM visitor_days WHERE project_id = $1 AND day >= $8 AND day < $9`

// ReadVisitors reads a query's segments and the project's numbers in one
// statement.
func (b backend) ReadVisitors(ctx context.Context, op, project string, span rollup.Span, from, to int64, tally *rollup.Tally) (store.VisitorTotals, error) {
	db, err := b.s.db()
	if err != nil {
		return store.VisitorTotals{}, err
	}
	var days [2][2]int64 // empty ranges unless the span has them
	copy(days[:], span.Days)
	rows, err := db.Query(ctx, queryVisitors, makeStorable(project), span.Weeks[0], span.Weeks[1],
		days[0][0], days[0][1], days[1][0], days[1][1], from, to)
	if err != nil {
		return store.VisitorTotals{}, b.s.dbErr(op, err)
	}
	defer rows.Close()
	var totals store.VisitorTotals
	for rows.Next() {
		// The raw value is valid until the next row: the segment is
		// decoded before then, so it is never copied.
		if seg := rows.RawValues()[0]; seg != nil {
			if err := tally.Add(seg); err != nil {
				return store.VisitorTotals{}, b.s.dbErr(op, err)
			}
			continue
		}
		if err := rows.Scan(nil, &totals.Human, &totals.AI, &totals.Total); err != nil {
			return store.VisitorTotals{}, b.s.dbErr(op, err)
		}
	}
	if err := rows.Err(); err != nil {
		return store.VisitorTotals{}, b.s.dbErr(op, err)
	}
	return totals, nil
}

// ClosableVisitorDays lists the open days more than behind seconds before
// the latest salt's.
func (b backend) ClosableVisitorDays(ctx context.Context, op string, behind int64) ([]rollup.ProjectDay, error) {
	db, err := b.s.db()
	if err != nil {
		return nil, err
	}
	rows, err := db.Query(ctx, `SELECT project_id, day FROM visitor_days
		WHERE open AND day < (SELECT max(day) FROM visitor_salts) - $1`, behind)
	if err != nil {
		return nil, b.s.dbErr(op, err)
	}
	days, err := pgx.CollectRows(rows, pgx.RowToStructByPos[rollup.ProjectDay])
	if err != nil {
		return nil, b.s.dbErr(op, err)
	}
	return days, nil
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
