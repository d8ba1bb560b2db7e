package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/store"
)

// dayStore is rollup.DayStore in a write transaction: the paths a day
// holds are in view_day_paths, their count and the folds in view_days.
type dayStore struct {
	ctx context.Context
	tx  *sql.Tx
	st  *viewStatements
}

// Held returns those of paths the day holds: one seek each.
func (d *dayStore) Held(day rollup.ProjectDay, paths []string) ([]string, error) {
	held := d.tx.StmtContext(d.ctx, d.st.held)
	var found []string
	for _, p := range paths {
		var one int
		err := held.QueryRowContext(d.ctx, day.ProjectID, day.At, p).Scan(&one)
		switch {
		case err == nil:
			found = append(found, p)
		case !errors.Is(err, sql.ErrNoRows):
			return nil, err
		}
	}
	return found, nil
}

// Paths returns the distinct paths the day holds.
func (d *dayStore) Paths(day rollup.ProjectDay) (int64, error) {
	var n int64
	err := d.tx.StmtContext(d.ctx, d.st.paths).QueryRowContext(d.ctx, day.ProjectID, day.At).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}

// Record adds the admitted paths to the day, and the folds to its counts.
func (d *dayStore) Record(day rollup.ProjectDay, admitted []string, f store.ViewFolds) error {
	add := d.tx.StmtContext(d.ctx, d.st.addPath)
	for _, p := range admitted {
		if _, err := add.ExecContext(d.ctx, day.ProjectID, day.At, p); err != nil {
			return err
		}
	}
	_, err := d.tx.StmtContext(d.ctx, d.st.record).ExecContext(d.ctx, day.ProjectID, day.At, len(admitted), f.Counts, f.Views)
	return err
}

// addToRolls adds counts to the hour, day, week and four-week rolls,
// inside the transaction that applies the cap, so the rolls and the days'
// paths never disagree.
func addToRolls(ctx context.Context, tx *sql.Tx, st *viewStatements, counts []store.ViewCount) error {
	rolls, err := rollup.Group(counts)
	if err != nil {
		return err
	}
	for kind, rs := range rolls {
		if err := appendSegments(ctx, tx, st.rolls[kind], rs); err != nil {
			return err
		}
	}
	return nil
}

// appendSegments stores each roll's counts as a new segment of its roll,
// merged with the roll's last segments that rollup.Absorb picks: a flush
// rewrites segments about the size of its batch, never the whole day.
func appendSegments(ctx context.Context, tx *sql.Tx, st rollStatements, rolls []rollup.Roll) error {
	if len(rolls) == 0 {
		return nil
	}
	list, get := tx.StmtContext(ctx, st.list), tx.StmtContext(ctx, st.get)
	del, put := tx.StmtContext(ctx, st.del), tx.StmtContext(ctx, st.put)
	for _, r := range rolls {
		segs, err := listSegments(ctx, list, r)
		if err != nil {
			return err
		}
		add, err := rollup.Append(r, segs, func(from int64) ([][]byte, error) { return readSegments(ctx, get, r, from) })
		if err != nil {
			return err
		}
		if add.Replaces > 0 {
			if _, err := del.ExecContext(ctx, r.ProjectID, r.At, add.Replaces); err != nil {
				return err
			}
		}
		if _, err := put.ExecContext(ctx, r.ProjectID, r.At, add.Seq, add.Entries, add.Segment); err != nil {
			return err
		}
	}
	return nil
}

// listSegments returns the segments of r's roll, in seq order.
func listSegments(ctx context.Context, list *sql.Stmt, r rollup.Roll) ([]rollup.Segment, error) {
	rows, err := list.QueryContext(ctx, r.ProjectID, r.At)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var segs []rollup.Segment
	for rows.Next() {
		var s rollup.Segment
		if err := rows.Scan(&s.Seq, &s.Entries); err != nil {
			return nil, err
		}
		segs = append(segs, s)
	}
	return segs, rows.Err()
}

// readSegments returns the segments of r's roll from seq from on.
func readSegments(ctx context.Context, get *sql.Stmt, r rollup.Roll, from int64) ([][]byte, error) {
	return collectSegments(get.QueryContext(ctx, r.ProjectID, r.At, from))
}

// collectSegments returns the segments of rows, each row one, or err.
func collectSegments(rows *sql.Rows, err error) ([][]byte, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var segs [][]byte
	for rows.Next() {
		var seg []byte
		if err := rows.Scan(&seg); err != nil {
			return nil, err
		}
		segs = append(segs, seg)
	}
	return segs, rows.Err()
}

// readRolls calls add with every segment of the rolls of project that span
// covers, rolls of a kind being selected by query (its table and column:
// see rollRangeQuery). A segment is only valid during the call: it points
// into the driver's buffer until the next row, so it is never copied.
func readRolls(ctx context.Context, tx *sql.Tx, query func(rollup.Kind) string, project string, span rollup.ViewSpan, add func(seg []byte) error) error {
	return span.Ranges(func(kind rollup.Kind, at [2]int64) error {
		rows, err := tx.QueryContext(ctx, query(kind), project, at[0], at[1])
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var seg sql.RawBytes
			if err := rows.Scan(&seg); err != nil {
				return err
			}
			if err := add(seg); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}

// rollRangeQuery selects the segments of the view rolls of a kind of a
// project in a time range.
func rollRangeQuery(kind rollup.Kind) string {
	col := kind.Column()
	return `SELECT counts FROM ` + kind.Table() + ` WHERE project_id = ? AND ` + col + ` >= ? AND ` + col + ` < ?`
}

// rebuildBatch is how many rows rebuildRolls reads at a time: enough to
// keep the reads sequential, few enough to hold in memory.
const rebuildBatch = 20_000

// rebuild is what a migration's rebuild of the rolls does.
type rebuild struct {
	// byIndex reads page_views through page_views_by_hour, the index
	// that gave the (project, hour, path) order until migration 4 made it
	// the table's key.
	byIndex bool
	// days fills view_days and view_day_paths too (migration 3 made
	// them); migration 5 keeps them as they are.
	days bool
}

// rebuildRolls fills the roll tables, and what r says, from page_views: the
// step of migration 3, as rolls became keyed by path, and of migration 5,
// as they came to count bots. Rows are read in (project, hour, path) order,
// so each roll is written once, when its hour, day or week has been read.
func rebuildRolls(ctx context.Context, tx *sql.Tx, r rebuild) error {
	from := "page_views"
	if r.byIndex {
		from += " INDEXED BY page_views_by_hour"
	}
	query := `SELECT project_id, path, hour, human, ai, bot FROM ` + from + `
		WHERE (project_id, hour, path) > (?, ?, ?)
		ORDER BY project_id, hour, path LIMIT ?`
	var b rollup.Rebuilder
	b.Write = func(kind rollup.Kind, project string, at int64, counts []rollup.Count) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO `+kind.Table()+` (project_id, `+kind.Column()+`, seq, entries, counts)
			VALUES (?, ?, 1, ?, ?)`, project, at, len(counts), rollup.Encode(nil, counts))
		return err
	}
	if r.days {
		b.Day = func(project string, day int64, paths []string) error {
			for _, p := range paths {
				if _, err := tx.ExecContext(ctx, `INSERT INTO view_day_paths (project_id, day, path) VALUES (?, ?, ?)`, project, day, p); err != nil {
					return err
				}
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO view_days (project_id, day, paths) VALUES (?, ?, ?)`, project, day, len(paths))
			return err
		}
	}
	// Project IDs are never empty, so ("", hour, "") sorts before every row.
	var project, path string
	var hour int64 = -1 << 62
	for {
		rows, err := tx.QueryContext(ctx, query, project, hour, path, rebuildBatch)
		if err != nil {
			return err
		}
		n := 0
		for rows.Next() {
			var c store.ViewCount
			var at int64
			if err := rows.Scan(&c.ProjectID, &c.Path, &at, &c.Human, &c.AI, &c.Bot); err != nil {
				rows.Close()
				return err
			}
			c.Hour = time.Unix(at, 0).UTC()
			if err := b.Add(c); err != nil {
				rows.Close()
				return err
			}
			project, hour, path = c.ProjectID, at, c.Path
			n++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if n == 0 {
			return b.Flush()
		}
	}
}

// buildFourWeekRolls fills view_four_week_rolls from the week rolls: the
// step of migration 11. A four-week roll holds exactly the counts of its
// four week rolls, so each is their segments merged into one. Memory holds
// one project's four weeks at a time.
func buildFourWeekRolls(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT project_id, week FROM view_week_rolls ORDER BY project_id, week`)
	if err != nil {
		return err
	}
	var rolls []rollup.ProjectDay // the four weeks to build, in order
	for rows.Next() {
		var r rollup.ProjectDay
		if err := rows.Scan(&r.ProjectID, &r.At); err != nil {
			rows.Close()
			return err
		}
		r.At = rollup.FourWeekOf(r.At)
		if n := len(rolls); n == 0 || rolls[n-1] != r {
			rolls = append(rolls, r)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, r := range rolls {
		segs, err := collectSegments(tx.QueryContext(ctx, `SELECT counts FROM view_week_rolls
			WHERE project_id = ? AND week >= ? AND week < ? ORDER BY week, seq`, r.ProjectID, r.At, r.At+rollup.FourWeeks))
		if err != nil {
			return err
		}
		seg, n, err := rollup.MergeSegments(segs, nil)
		if err != nil {
			return fmt.Errorf("four weeks from %d of %q: %w", r.At, r.ProjectID, err)
		}
		if n == 0 {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO view_four_week_rolls (project_id, four_week, seq, entries, counts)
			VALUES (?, ?, 1, ?, ?)`, r.ProjectID, r.At, n, seg); err != nil {
			return err
		}
	}
	return nil
}
