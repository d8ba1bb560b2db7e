package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"strings"

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
	weeks                    rollStatements
	latest, day, putDay, del *sql.Stmt
}

// prepareVisitorStatements prepares the statements on db.
func prepareVisitorStatements(ctx context.Context, db *sql.DB) (*visitorStatements, error) {
	p := &preparer{ctx: ctx, db: db}
	st := visitorStatements{
		weeks:  p.prepareRoll("visitor_week_rolls", "week"),
		latest: p.prepare(`SELECT max(day) FROM visitor_salts`),
		day:    p.prepare(`SELECT open, human, ai, total, entries, counts FROM visitor_days WHERE project_id = ? AND day = ?`),
		putDay: p.prepare(`INSERT INTO visitor_days (project_id, day, open, human, ai, total, entries, counts)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (project_id, day) DO UPDATE SET open = excluded.open, human = excluded.human, ai = excluded.ai,
			    total = excluded.total, entries = excluded.entries, counts = excluded.counts`),
		del: p.prepare(`DELETE FROM visitor_sketches WHERE project_id = ? AND day = ?`),
	}
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
func (b backend) WriteVisitors(ctx context.Context, op string, _ []rollup.ProjectDay, fn func(sqlstore.VisitorsTx) error) error {
	return b.s.write(ctx, op, func(tx *sql.Tx) error {
		return fn(&visitorsTx{dayStore: dayStore{ctx: ctx, tx: tx, st: b.s.viewStmts}, st: b.s.visitorStmts})
	})
}

// visitorsTx is the visitors statements of one write transaction: the
// cap's question (dayStore's Held), the days', the sketches' and the week
// rolls'.
type visitorsTx struct {
	dayStore
	st *visitorStatements
}

func (t *visitorsTx) stmt(s *sql.Stmt) *sql.Stmt { return t.tx.StmtContext(t.ctx, s) }

// LatestSalt reads the latest day with a salt.
func (t *visitorsTx) LatestSalt() (int64, error) {
	var day sql.NullInt64
	if err := t.stmt(t.st.latest).QueryRowContext(t.ctx).Scan(&day); err != nil {
		return 0, err
	}
	if !day.Valid {
		return math.MinInt64, nil
	}
	return day.Int64, nil
}

// Day reads a day's row.
func (t *visitorsTx) Day(d rollup.ProjectDay) (sqlstore.VisitorDay, bool, error) {
	var v sqlstore.VisitorDay
	err := t.stmt(t.st.day).QueryRowContext(t.ctx, d.ProjectID, d.At).
		Scan(&v.Open, &v.Totals.Human, &v.Totals.AI, &v.Totals.Total, &v.Entries, &v.Counts)
	if errors.Is(err, sql.ErrNoRows) {
		return sqlstore.VisitorDay{}, false, nil
	}
	return v, err == nil, err
}

// PutDay upserts a day's row.
func (t *visitorsTx) PutDay(d rollup.ProjectDay, v sqlstore.VisitorDay) error {
	_, err := t.stmt(t.st.putDay).ExecContext(t.ctx, d.ProjectID, d.At, v.Open, v.Totals.Human, v.Totals.AI, v.Totals.Total, v.Entries, v.Counts)
	return err
}

// sketchChunk is how many paths one statement of Sketches or PutSketches
// names: a statement per path costs a flush more than the sketches' work,
// and SQLite takes at most 32,766 parameters.
const sketchChunk = 50

// Sketches reads the sketches of keys, a chunk of them a statement.
func (t *visitorsTx) Sketches(d rollup.ProjectDay, keys []string) ([][2][]byte, error) {
	out := make([][2][]byte, len(keys))
	at := make(map[string]int, len(keys))
	for i, k := range keys {
		at[k] = i
	}
	for lo := 0; lo < len(keys); lo += sketchChunk {
		chunk := keys[lo:min(lo+sketchChunk, len(keys))]
		args := make([]any, 0, 2+len(chunk))
		args = append(args, d.ProjectID, d.At)
		for _, k := range chunk {
			args = append(args, k)
		}
		rows, err := t.tx.QueryContext(t.ctx, `SELECT path, human, ai FROM visitor_sketches
			WHERE project_id = ? AND day = ? AND path IN (?`+strings.Repeat(", ?", len(chunk)-1)+`)`, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var key string
			var sk [2][]byte
			if err := rows.Scan(&key, &sk[0], &sk[1]); err != nil {
				rows.Close()
				return nil, err
			}
			out[at[key]] = sk
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// PutSketches upserts the sketches of keys, a chunk of them a statement.
func (t *visitorsTx) PutSketches(d rollup.ProjectDay, keys []string, sketches [][2][]byte) error {
	for lo := 0; lo < len(keys); lo += sketchChunk {
		hi := min(lo+sketchChunk, len(keys))
		args := make([]any, 0, 5*(hi-lo))
		for i := lo; i < hi; i++ {
			args = append(args, d.ProjectID, d.At, keys[i], sketches[i][0], sketches[i][1])
		}
		_, err := t.tx.ExecContext(t.ctx, `INSERT INTO visitor_sketches (project_id, day, path, human, ai)
			VALUES (?, ?, ?, ?, ?)`+strings.Repeat(", (?, ?, ?, ?, ?)", hi-lo-1)+`
			ON CONFLICT (project_id, day, path) DO UPDATE SET human = excluded.human, ai = excluded.ai`, args...)
		if err != nil {
			return err
		}
	}
	return nil
}

// DeleteSketches deletes a day's sketches.
func (t *visitorsTx) DeleteSketches(d rollup.ProjectDay) error {
	_, err := t.stmt(t.st.del).ExecContext(t.ctx, d.ProjectID, d.At)
	return err
}

// AddToWeek adds numbers to a visitors week roll (see rolls.go).
func (t *visitorsTx) AddToWeek(r rollup.Roll) error {
	return appendSegments(t.ctx, t.tx, t.st.weeks, []rollup.Roll{r})
}

// queryVisitorSegments selects the segments of a visitors query: the week
// rolls of its weeks (?2 to ?3), and the days of its days (?4 to ?5, ?6
// to ?7) or open in its weeks. The three ranges of days, which never
// overlap, are three selects: SQLite reads an OR of them as every day of
// the project.
const queryVisitorSegments = `SELECT counts FROM visitor_week_rolls WHERE project_id = ?1 AND week >= ?2 AND week < ?3
	UNION ALL
	SELECT counts FROM visitor_days WHERE project_id = ?1 AND day >= ?4 AND day < ?5
	UNION ALL
	SELECT counts FROM visitor_days WHERE project_id = ?1 AND day >= ?6 AND day < ?7
	UNION ALL
	SELECT counts FROM visitor_days WHERE project_id = ?1 AND open = 1 AND day >= ?2 AND day < ?3`

// ReadVisitors reads a query's segments and the project's numbers in one
// read transaction, so that they describe one snapshot even while a day
// closes.
func (b backend) ReadVisitors(ctx context.Context, op, project string, span rollup.Span, from, to int64, tally *rollup.Tally) (store.VisitorTotals, error) {
	var days [2][2]int64 // empty ranges unless the span has them
	copy(days[:], span.Days)
	var totals store.VisitorTotals
	err := b.s.read(ctx, op, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, queryVisitorSegments, project, span.Weeks[0], span.Weeks[1],
			days[0][0], days[0][1], days[1][0], days[1][1])
		if err != nil {
			return dbErr(op, err)
		}
		defer rows.Close()
		for rows.Next() {
			var seg sql.RawBytes
			if err := rows.Scan(&seg); err != nil {
				return dbErr(op, err)
			}
			if err := tally.Add(seg); err != nil {
				return dbErr(op, err)
			}
		}
		if err := rows.Err(); err != nil {
			return dbErr(op, err)
		}
		err = tx.QueryRowContext(ctx, `SELECT coalesce(sum(human), 0), coalesce(sum(ai), 0), coalesce(sum(total), 0)
			FROM visitor_days WHERE project_id = ? AND day >= ? AND day < ?`, project, from, to).
			Scan(&totals.Human, &totals.AI, &totals.Total)
		if err != nil {
			return dbErr(op, err)
		}
		return nil
	})
	return totals, err
}

// closableDaysQuery selects the open days more than ? seconds before the
// latest salt's.
const closableDaysQuery = `SELECT project_id, day FROM visitor_days
	WHERE open = 1 AND day < (SELECT max(day) FROM visitor_salts) - ?`

// ClosableVisitorDays lists the open days more than behind seconds before
// the latest salt's.
func (b backend) ClosableVisitorDays(ctx context.Context, op string, behind int64) ([]rollup.ProjectDay, error) {
	var days []rollup.ProjectDay
	err := b.s.read(ctx, op, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, closableDaysQuery, behind)
		if err != nil {
			return dbErr(op, err)
		}
		defer rows.Close()
		for rows.Next() {
			var d rollup.ProjectDay
			if err := rows.Scan(&d.ProjectID, &d.At); err != nil {
				return dbErr(op, err)
			}
			days = append(days, d)
		}
		if err := rows.Err(); err != nil {
			return dbErr(op, err)
		}
		return nil
	})
	return days, err
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
