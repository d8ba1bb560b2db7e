package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"slices"

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

// SummarizeVisitorWeek reads the week's days and their summaries in a read
// transaction, sums them outside any, and stores the week's summary in a
// short write transaction.
func (b backend) SummarizeVisitorWeek(ctx context.Context, op, project string, week int64, sum func(days []rollup.VisitorDay, sums [][]byte) ([]byte, []byte, bool, error)) error {
	var days []rollup.VisitorDay
	var sums [][]byte
	err := b.s.read(ctx, op, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, queryWeekDaySummaries, project, week, week+rollup.Week)
		if err != nil {
			return dbErr(op, err)
		}
		defer rows.Close()
		for rows.Next() {
			var d rollup.VisitorDay
			var counts []byte
			if err := rows.Scan(&d.Day, &d.LastSeq, &d.SummarySeq, &counts); err != nil {
				return dbErr(op, err)
			}
			days, sums = append(days, d), append(sums, counts)
		}
		if err := rows.Err(); err != nil {
			return dbErr(op, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	summary, daySeqs, ok, err := sum(days, sums)
	if err != nil {
		return dbErr(op, err)
	}
	if !ok {
		return nil
	}
	return b.s.write(ctx, op, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO visitor_week_summaries (project_id, week, days, counts) VALUES (?, ?, ?, ?)
			ON CONFLICT (project_id, week) DO UPDATE SET days = excluded.days, counts = excluded.counts`, project, week, daySeqs, summary)
		if err != nil {
			return dbErr(op, err)
		}
		return nil
	})
}

// queryWeekDaySummaries selects each day roll of a range, its last seq,
// and its summary's seq and counts, if it has one.
const queryWeekDaySummaries = `SELECT d.day, d.last, coalesce(s.last_seq, 0), s.counts
	FROM (SELECT day, max(seq) AS last FROM visitor_day_rolls
	      WHERE project_id = ?1 AND day >= ?2 AND day < ?3 GROUP BY day) d
	LEFT JOIN visitor_day_summaries s ON s.project_id = ?1 AND s.day = d.day
	ORDER BY d.day`

// ReadVisitors runs fn in one read transaction, so that the days' states,
// the totals and the page describe one snapshot.
func (b backend) ReadVisitors(ctx context.Context, op string, fn func(sqlstore.VisitorsReader) error) error {
	return b.s.read(ctx, op, func(tx *sql.Tx) error {
		if err := fn(&visitorsReader{ctx: ctx, tx: tx}); err != nil {
			return dbErr(op, err)
		}
		return nil
	})
}

// visitorsReader is the visitors statements of one read transaction.
type visitorsReader struct {
	ctx context.Context
	tx  *sql.Tx
}

// queryVisitorDays selects each day roll of a range, its last seq and the
// seq its summary names, if it has one.
const queryVisitorDays = `SELECT r.day, max(r.seq), coalesce(s.last_seq, 0)
	FROM visitor_day_rolls r
	LEFT JOIN visitor_day_summaries s ON s.project_id = r.project_id AND s.day = r.day
	WHERE r.project_id = ? AND r.day >= ? AND r.day < ?
	GROUP BY r.day, s.last_seq`

// VisitorDays reads the states of a range's day rolls.
func (r *visitorsReader) VisitorDays(project string, from, to int64) ([]rollup.VisitorDay, error) {
	rows, err := r.tx.QueryContext(r.ctx, queryVisitorDays, project, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var days []rollup.VisitorDay
	for rows.Next() {
		var d rollup.VisitorDay
		if err := rows.Scan(&d.Day, &d.LastSeq, &d.SummarySeq); err != nil {
			return nil, err
		}
		days = append(days, d)
	}
	return days, rows.Err()
}

// VisitorWeeks reads the days that a range's week summaries add up.
func (r *visitorsReader) VisitorWeeks(project string, from, to int64) ([]rollup.VisitorWeek, error) {
	var weeks []rollup.VisitorWeek
	err := scanBlobs(r.ctx, r.tx, `SELECT week, days FROM visitor_week_summaries WHERE project_id = ? AND week >= ? AND week < ?`,
		[]any{project, from, to}, func(week int64, b []byte) error {
			days, err := rollup.ParseVisitorDays(b)
			if err != nil {
				return err
			}
			weeks = append(weeks, rollup.VisitorWeek{Week: week, Days: days})
			return nil
		})
	return weeks, err
}

// TallyVisitors reads what plan names: the summaries of its range's days
// in one statement (they are small, so those it does not name are passed
// over rather than asked for one by one), and each week and day roll it
// names, then its hours.
func (r *visitorsReader) TallyVisitors(project string, plan rollup.VisitorPlan, tally *rollup.VisitorTally) error {
	for _, w := range plan.WeekSummaries {
		err := scanBlobs(r.ctx, r.tx, `SELECT week, counts FROM visitor_week_summaries WHERE project_id = ? AND week = ?`,
			[]any{project, w}, func(_ int64, b []byte) error { return tally.Add(b) })
		if err != nil {
			return err
		}
	}
	if n := len(plan.Summaries); n > 0 {
		from, to := plan.Summaries[0], plan.Summaries[n-1]+1
		err := scanBlobs(r.ctx, r.tx, `SELECT day, counts FROM visitor_day_summaries WHERE project_id = ? AND day >= ? AND day < ?`,
			[]any{project, from, to}, func(day int64, b []byte) error {
				if _, ok := slices.BinarySearch(plan.Summaries, day); !ok {
					return nil
				}
				return tally.Add(b)
			})
		if err != nil {
			return err
		}
	}
	for _, k := range [...]struct {
		kind rollup.Kind
		ats  []int64
	}{{rollup.Weekly, plan.Weeks}, {rollup.Daily, plan.Days}} {
		query := `SELECT ` + k.kind.Column() + `, sketches FROM ` + k.kind.VisitorTable() +
			` WHERE project_id = ? AND ` + k.kind.Column() + ` = ?`
		for _, at := range k.ats {
			err := scanBlobs(r.ctx, r.tx, query, []any{project, at}, func(_ int64, b []byte) error { return tally.Add(b) })
			if err != nil {
				return err
			}
		}
	}
	for _, h := range plan.Hours {
		err := scanBlobs(r.ctx, r.tx, `SELECT hour, sketches FROM visitor_hour_rolls WHERE project_id = ? AND hour >= ? AND hour < ?`,
			[]any{project, h[0], h[1]}, func(_ int64, b []byte) error { return tally.Add(b) })
		if err != nil {
			return err
		}
	}
	return nil
}

// scanBlobs runs query, whose rows are a key and bytes, and calls add with
// each; the bytes are the driver's, valid only during the call.
func scanBlobs(ctx context.Context, tx *sql.Tx, query string, args []any, add func(key int64, b []byte) error) error {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var key int64
		var b sql.RawBytes
		if err := rows.Scan(&key, &b); err != nil {
			return err
		}
		if err := add(key, b); err != nil {
			return err
		}
	}
	return rows.Err()
}

// UnsummarizedVisitorDays lists the days before before whose rolls no
// summary describes, latest first.
func (b backend) UnsummarizedVisitorDays(ctx context.Context, op, project string, before int64, limit int) ([]int64, error) {
	var days []int64
	err := b.s.read(ctx, op, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT r.day FROM visitor_day_rolls r
			LEFT JOIN visitor_day_summaries s ON s.project_id = r.project_id AND s.day = r.day
			WHERE r.project_id = ? AND r.day < ?
			GROUP BY r.day, s.last_seq
			HAVING s.last_seq IS NULL OR s.last_seq <> max(r.seq)
			ORDER BY r.day DESC LIMIT ?`, project, before, limit)
		if err != nil {
			return dbErr(op, err)
		}
		defer rows.Close()
		for rows.Next() {
			var day int64
			if err := rows.Scan(&day); err != nil {
				return dbErr(op, err)
			}
			days = append(days, day)
		}
		if err := rows.Err(); err != nil {
			return dbErr(op, err)
		}
		return nil
	})
	return days, err
}

// SummarizeVisitorDay reads the day roll's segments in a read transaction,
// summarizes them outside any, and stores the summary in a short write
// transaction, unless one as recent is there: the write lock is held for
// an upsert, not for the merge.
func (b backend) SummarizeVisitorDay(ctx context.Context, op, project string, day int64, summarize func(segs [][]byte) ([]byte, error)) error {
	var segs [][]byte
	var last int64
	err := b.s.read(ctx, op, func(tx *sql.Tx) error {
		err := scanBlobs(ctx, tx, `SELECT seq, sketches FROM visitor_day_rolls WHERE project_id = ? AND day = ? ORDER BY seq`,
			[]any{project, day}, func(seq int64, b []byte) error {
				segs, last = append(segs, bytes.Clone(b)), seq
				return nil
			})
		if err != nil {
			return dbErr(op, err)
		}
		return nil
	})
	if err != nil || len(segs) == 0 {
		return err
	}
	summary, err := summarize(segs)
	if err != nil {
		return dbErr(op, err)
	}
	return b.s.write(ctx, op, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO visitor_day_summaries (project_id, day, last_seq, counts) VALUES (?, ?, ?, ?)
			ON CONFLICT (project_id, day) DO UPDATE SET last_seq = excluded.last_seq, counts = excluded.counts
			WHERE excluded.last_seq > visitor_day_summaries.last_seq`, project, day, last, summary)
		if err != nil {
			return dbErr(op, err)
		}
		return nil
	})
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
