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

// SummarizeVisitorWeek reads the week's days and their summaries in one
// statement, sums them, and upserts the week's summary. As for a day, no
// lock is taken: a summary of days written to since names older seqs than
// their rolls' last, and is not read.
func (b backend) SummarizeVisitorWeek(ctx context.Context, op, project string, week int64, sum func(days []rollup.VisitorDay, sums [][]byte) ([]byte, []byte, bool, error)) error {
	db, err := b.s.db()
	if err != nil {
		return err
	}
	project = makeStorable(project)
	rows, err := db.Query(ctx, `SELECT d.day, d.last, coalesce(s.last_seq, 0), s.counts
		FROM (SELECT day, max(seq) AS last FROM visitor_day_rolls
		      WHERE project_id = $1 AND day >= $2 AND day < $3 GROUP BY day) d
		LEFT JOIN visitor_day_summaries s ON s.project_id = $1 AND s.day = d.day
		ORDER BY d.day`, project, week, week+rollup.Week)
	if err != nil {
		return b.s.dbErr(op, err)
	}
	var days []rollup.VisitorDay
	var sums [][]byte
	for rows.Next() {
		var d rollup.VisitorDay
		var counts []byte
		if err := rows.Scan(&d.Day, &d.LastSeq, &d.SummarySeq, &counts); err != nil {
			rows.Close()
			return b.s.dbErr(op, err)
		}
		days, sums = append(days, d), append(sums, counts)
	}
	if err := rows.Err(); err != nil {
		return b.s.dbErr(op, err)
	}
	summary, daySeqs, ok, err := sum(days, sums)
	if err != nil {
		return b.s.dbErr(op, err)
	}
	if !ok {
		return nil
	}
	_, err = db.Exec(ctx, `INSERT INTO visitor_week_summaries (project_id, week, days, counts) VALUES ($1, $2, $3, $4)
		ON CONFLICT (project_id, week) DO UPDATE SET days = excluded.days, counts = excluded.counts`, project, week, daySeqs, summary)
	if err != nil {
		return b.s.dbErr(op, err)
	}
	return nil
}

// ReadVisitors runs fn in a read-only REPEATABLE READ transaction: its
// statements see one snapshot, so the days' states that pick between a
// day's summary and its sketches still hold when they are read.
func (b backend) ReadVisitors(ctx context.Context, op string, fn func(sqlstore.VisitorsReader) error) error {
	if b.s.closed.Load() {
		return opErr(op, store.ErrClosed)
	}
	tx, err := b.s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return b.s.dbErr(op, err)
	}
	// Nothing was written: the rollback only ends the snapshot.
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := fn(&visitorsReader{ctx: ctx, tx: tx}); err != nil {
		return b.s.dbErr(op, err)
	}
	return nil
}

// visitorsReader is the visitors statements of one read snapshot.
type visitorsReader struct {
	ctx context.Context
	tx  pgx.Tx
}

// VisitorDays reads the states of a range's day rolls.
func (r *visitorsReader) VisitorDays(project string, from, to int64) ([]rollup.VisitorDay, error) {
	rows, err := r.tx.Query(r.ctx, `SELECT r.day, max(r.seq), coalesce(s.last_seq, 0)
		FROM visitor_day_rolls r
		LEFT JOIN visitor_day_summaries s ON s.project_id = r.project_id AND s.day = r.day
		WHERE r.project_id = $1 AND r.day >= $2 AND r.day < $3
		GROUP BY r.day, s.last_seq`, makeStorable(project), from, to)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[rollup.VisitorDay])
}

// VisitorWeeks reads the days that a range's week summaries add up.
func (r *visitorsReader) VisitorWeeks(project string, from, to int64) ([]rollup.VisitorWeek, error) {
	rows, err := r.tx.Query(r.ctx, `SELECT week, days FROM visitor_week_summaries WHERE project_id = $1 AND week >= $2 AND week < $3`,
		makeStorable(project), from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var weeks []rollup.VisitorWeek
	for rows.Next() {
		var w rollup.VisitorWeek
		var b []byte
		if err := rows.Scan(&w.Week, &b); err != nil {
			return nil, err
		}
		if w.Days, err = rollup.ParseVisitorDays(b); err != nil {
			return nil, err
		}
		weeks = append(weeks, w)
	}
	return weeks, rows.Err()
}

// queryVisitorPlan reads, in one statement, the summaries, week rolls and
// day rolls a plan names, and the hour rolls of its two ragged edges.
const queryVisitorPlan = `SELECT counts FROM visitor_week_summaries WHERE project_id = $1 AND week = ANY($9)
	UNION ALL
	SELECT counts FROM visitor_day_summaries WHERE project_id = $1 AND day = ANY($2)
	UNION ALL
	SELECT sketches FROM visitor_week_rolls WHERE project_id = $1 AND week = ANY($3)
	UNION ALL
	SELECT sketches FROM visitor_day_rolls WHERE project_id = $1 AND day = ANY($4)
	UNION ALL
	SELECT sketches FROM visitor_hour_rolls WHERE project_id = $1
	   AND ((hour >= $5 AND hour < $6) OR (hour >= $7 AND hour < $8))`

// TallyVisitors reads what plan names in one statement.
func (r *visitorsReader) TallyVisitors(project string, plan rollup.VisitorPlan, tally *rollup.VisitorTally) error {
	var hours [2][2]int64 // empty ranges unless the plan has them
	copy(hours[:], plan.Hours)
	rows, err := r.tx.Query(r.ctx, queryVisitorPlan, makeStorable(project),
		nonNil(plan.Summaries), nonNil(plan.Weeks), nonNil(plan.Days),
		hours[0][0], hours[0][1], hours[1][0], hours[1][1], nonNil(plan.WeekSummaries))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		// The tally copies what it keeps before the next row reuses
		// the raw value.
		if err := tally.Add(rows.RawValues()[0]); err != nil {
			return err
		}
	}
	return rows.Err()
}

// UnsummarizedVisitorDays lists the days before before whose rolls no
// summary describes, latest first.
func (b backend) UnsummarizedVisitorDays(ctx context.Context, op, project string, before int64, limit int) ([]int64, error) {
	db, err := b.s.db()
	if err != nil {
		return nil, err
	}
	rows, err := db.Query(ctx, `SELECT r.day FROM visitor_day_rolls r
		LEFT JOIN visitor_day_summaries s ON s.project_id = r.project_id AND s.day = r.day
		WHERE r.project_id = $1 AND r.day < $2
		GROUP BY r.day, s.last_seq
		HAVING s.last_seq IS NULL OR s.last_seq <> max(r.seq)
		ORDER BY r.day DESC LIMIT $3`, makeStorable(project), before, limit)
	if err != nil {
		return nil, b.s.dbErr(op, err)
	}
	days, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, b.s.dbErr(op, err)
	}
	return days, nil
}

// SummarizeVisitorDay reads the day roll's segments in one statement (one
// snapshot), summarizes them, and upserts the summary unless one as
// recent is there. No lock is taken: a summary made from segments a
// flush has replaced since names an older seq than the roll's last, and
// is not read.
func (b backend) SummarizeVisitorDay(ctx context.Context, op, project string, day int64, summarize func(segs [][]byte) ([]byte, error)) error {
	db, err := b.s.db()
	if err != nil {
		return err
	}
	project = makeStorable(project)
	rows, err := db.Query(ctx, `SELECT seq, sketches FROM visitor_day_rolls WHERE project_id = $1 AND day = $2 ORDER BY seq`, project, day)
	if err != nil {
		return b.s.dbErr(op, err)
	}
	var segs [][]byte
	var last int64
	for rows.Next() {
		var seg []byte
		if err := rows.Scan(&last, &seg); err != nil {
			rows.Close()
			return b.s.dbErr(op, err)
		}
		segs = append(segs, seg)
	}
	if err := rows.Err(); err != nil {
		return b.s.dbErr(op, err)
	}
	if len(segs) == 0 {
		return nil
	}
	summary, err := summarize(segs)
	if err != nil {
		return b.s.dbErr(op, err)
	}
	_, err = db.Exec(ctx, `INSERT INTO visitor_day_summaries (project_id, day, last_seq, counts) VALUES ($1, $2, $3, $4)
		ON CONFLICT (project_id, day) DO UPDATE SET last_seq = excluded.last_seq, counts = excluded.counts
		WHERE excluded.last_seq > visitor_day_summaries.last_seq`, project, day, last, summary)
	if err != nil {
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
