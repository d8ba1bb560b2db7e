package sqlite

import (
	"context"
	"database/sql"
	"errors"

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

// addToRolls adds counts to the hour, day and week rolls, inside the
// transaction that applies the cap, so the rolls and the days' paths never
// disagree.
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
func readRolls(ctx context.Context, tx *sql.Tx, query func(rollup.Kind) string, project string, span rollup.Span, add func(seg []byte) error) error {
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
