package postgres

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/store"
)

const (
	// insertDays makes sure every day of a batch has its view_days row,
	// in the arrays' (sorted) order. DO NOTHING waits for a flush that is
	// inserting the same row to end, so that lockDays then sees it.
	insertDays = `INSERT INTO view_days (project_id, day)
		SELECT b.project_id, b.day FROM unnest($1::text[], $2::bigint[]) WITH ORDINALITY AS b (project_id, day, n)
		ORDER BY b.n
		ON CONFLICT (project_id, day) DO NOTHING`
	// selectDays locks the days' rows in key order and reads their
	// counts of paths.
	selectDays = `SELECT v.project_id, v.day, v.paths FROM view_days v
		JOIN unnest($1::text[], $2::bigint[]) AS b (project_id, day) ON v.project_id = b.project_id AND v.day = b.day
		ORDER BY v.project_id, v.day
		FOR UPDATE OF v`
)

// lockDays locks the view_days rows of days (each given by an instant in
// it) and of the Mondays their weeks start on, creating them as needed, and
// returns their counts of paths. The lock of a day guards its rolls (the
// day's and its hours'), its paths and its visitors: flushes of the same
// day queue behind each other, and one that finds new paths sees every
// path an earlier one added. The lock of a week's Monday guards the week's
// rolls, which the flushes of seven days add to.
func lockDays(ctx context.Context, tx pgx.Tx, of []rollup.ProjectDay) (map[rollup.ProjectDay]int64, error) {
	set := make(map[rollup.ProjectDay]struct{})
	for _, d := range of {
		set[rollup.ProjectDay{ProjectID: d.ProjectID, At: rollup.DayOf(d.At)}] = struct{}{}
		set[rollup.ProjectDay{ProjectID: d.ProjectID, At: rollup.WeekOf(d.At)}] = struct{}{}
	}
	days := slices.SortedFunc(maps.Keys(set), func(a, b rollup.ProjectDay) int {
		return cmp.Or(cmp.Compare(a.ProjectID, b.ProjectID), cmp.Compare(a.At, b.At))
	})
	projects, ats := make([]string, len(days)), make([]int64, len(days))
	for i, d := range days {
		projects[i], ats[i] = d.ProjectID, d.At
	}
	if _, err := tx.Exec(ctx, insertDays, projects, ats); err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, selectDays, projects, ats)
	if err != nil {
		return nil, err
	}
	paths := make(map[rollup.ProjectDay]int64, len(days))
	var d rollup.ProjectDay
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&d.ProjectID, &d.At, &n}, func() error {
		paths[d] = n
		return nil
	}); err != nil {
		return nil, err
	}
	if len(paths) != len(days) {
		return nil, fmt.Errorf("%d of %d days locked", len(paths), len(days))
	}
	return paths, nil
}

// dayStore is rollup.DayStore in a write transaction that holds the days'
// locks (see lockDays).
type dayStore struct {
	ctx   context.Context
	tx    pgx.Tx
	paths map[rollup.ProjectDay]int64 // as locked
}

// Held returns those of paths the day holds: one seek each in
// view_day_paths.
func (d *dayStore) Held(day rollup.ProjectDay, paths []string) ([]string, error) {
	rows, err := d.tx.Query(d.ctx, `SELECT path FROM view_day_paths
		WHERE project_id = $1 AND day = $2 AND path = ANY($3::text[])`, day.ProjectID, day.At, paths)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// Paths returns the distinct paths the day holds, as read when it was
// locked: nothing else can add to it since.
func (d *dayStore) Paths(day rollup.ProjectDay) (int64, error) {
	n, ok := d.paths[day]
	if !ok {
		return 0, fmt.Errorf("day %d of %q is not locked", day.At, day.ProjectID)
	}
	return n, nil
}

// Record adds the admitted paths to the day, and the folds to its counts.
// The views folded are a report: their sum stops at the largest bigint
// rather than fail the flush.
func (d *dayStore) Record(day rollup.ProjectDay, admitted []string, f store.ViewFolds) error {
	if len(admitted) > 0 {
		if _, err := d.tx.Exec(d.ctx, `INSERT INTO view_day_paths (project_id, day, path)
			SELECT $1, $2, p FROM unnest($3::text[]) AS p`, day.ProjectID, day.At, admitted); err != nil {
			return err
		}
	}
	_, err := d.tx.Exec(d.ctx, `UPDATE view_days SET
		    paths = paths + $3,
		    folded_counts = folded_counts + $4,
		    folded_views = CASE WHEN folded_views > 9223372036854775807 - $5::bigint
		                        THEN 9223372036854775807 ELSE folded_views + $5::bigint END
		WHERE project_id = $1 AND day = $2`, day.ProjectID, day.At, len(admitted), f.Counts, f.Views)
	if err == nil {
		d.paths[day] += int64(len(admitted))
	}
	return err
}

// addToRolls adds counts to the hour, day and week rolls, inside the
// transaction that applies the cap, so the rolls and the days' paths never
// disagree. The transaction holds the locks of the counts' days and weeks
// (lockDays), which guard their rolls.
func addToRolls(ctx context.Context, tx pgx.Tx, counts []store.ViewCount) error {
	rolls, err := rollup.Group(counts)
	if err != nil {
		return err
	}
	for kind, rs := range rolls {
		if err := appendSegments(ctx, tx, rollup.Kind(kind).Table(), rollup.Kind(kind).Column(), rs); err != nil {
			return err
		}
	}
	return nil
}

// appendSegments stores each roll's counts as a new segment of its roll in
// table (whose rolls start at column col), merged with the roll's last
// segments that rollup.Absorb picks: a flush rewrites segments about the
// size of its batch, never the whole day.
func appendSegments(ctx context.Context, tx pgx.Tx, table, col string, rolls []rollup.Roll) error {
	where := ` WHERE project_id = $1 AND ` + col + ` = $2`
	list := `SELECT seq, entries FROM ` + table + where + ` ORDER BY seq`
	get := `SELECT counts FROM ` + table + where + ` AND seq >= $3`
	del := `DELETE FROM ` + table + where + ` AND seq >= $3`
	put := `INSERT INTO ` + table + ` (project_id, ` + col + `, seq, entries, counts) VALUES ($1, $2, $3, $4, $5)`
	for _, r := range rolls {
		rows, err := tx.Query(ctx, list, r.ProjectID, r.At)
		if err != nil {
			return err
		}
		segs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[rollup.Segment])
		if err != nil {
			return err
		}
		add, err := rollup.Append(r, segs, func(from int64) ([][]byte, error) {
			rows, err := tx.Query(ctx, get, r.ProjectID, r.At, from)
			if err != nil {
				return nil, err
			}
			return pgx.CollectRows(rows, pgx.RowTo[[]byte])
		})
		if err != nil {
			return err
		}
		if add.Replaces > 0 {
			if _, err := tx.Exec(ctx, del, r.ProjectID, r.At, add.Replaces); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, put, r.ProjectID, r.At, add.Seq, add.Entries, add.Segment); err != nil {
			return err
		}
	}
	return nil
}

// queryRolls reads, in one statement and so one snapshot, the segments of
// the week rolls of a range's whole weeks, of the day rolls of the whole
// days on either side, and of the hour rolls of its two ragged edges.
const queryRolls = `SELECT counts FROM view_week_rolls WHERE project_id = $1 AND week >= $2 AND week < $3
	UNION ALL
	SELECT counts FROM view_day_rolls WHERE project_id = $1
	   AND ((day >= $4 AND day < $5) OR (day >= $6 AND day < $7))
	UNION ALL
	SELECT counts FROM view_hour_rolls WHERE project_id = $1
	   AND ((hour >= $8 AND hour < $9) OR (hour >= $10 AND hour < $11))`

// queryRollsArgs returns queryRolls' arguments for the rolls of project
// that span covers.
func queryRollsArgs(project string, span rollup.Span) []any {
	var days, hours [2][2]int64 // empty ranges unless the span has them
	copy(days[:], span.Days)
	copy(hours[:], span.Hours)
	return []any{project, span.Weeks[0], span.Weeks[1],
		days[0][0], days[0][1], days[1][0], days[1][1],
		hours[0][0], hours[0][1], hours[1][0], hours[1][1]}
}

// tallyRolls adds to tally the segments of the rolls of project that span
// covers.
func tallyRolls(ctx context.Context, db querier, project string, span rollup.Span, tally *rollup.Tally) error {
	rows, err := db.Query(ctx, queryRolls, queryRollsArgs(project, span)...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		// The raw value is valid until the next row: the segment is
		// decoded before then, so it is never copied.
		if err := tally.Add(rows.RawValues()[0]); err != nil {
			return err
		}
	}
	return rows.Err()
}
