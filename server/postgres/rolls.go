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

// lockDays locks the view_days rows of the days counts fall in, and of the
// Mondays their weeks start on, creating them as needed, and returns their
// counts of paths. The lock of a day guards its rolls (the day's and its
// hours') and its paths: flushes of the same day queue behind each other,
// and one that finds new paths sees every path an earlier one added. The
// lock of a week's Monday guards the week's roll, which the flushes of
// seven days add to.
func lockDays(ctx context.Context, tx pgx.Tx, counts []store.ViewCount) (map[rollup.ProjectDay]int64, error) {
	return lockStarts(ctx, tx, counts, rollup.DayOf, rollup.WeekOf)
}

// lockViewDays is lockDays for the views, which also lock the first day of
// the four weeks counts fall in: it guards the four-week roll, which the
// flushes of 28 days add to.
func lockViewDays(ctx context.Context, tx pgx.Tx, counts []store.ViewCount) (map[rollup.ProjectDay]int64, error) {
	return lockStarts(ctx, tx, counts, rollup.DayOf, rollup.WeekOf, rollup.FourWeekOf)
}

// lockStarts locks, creating them as needed, the view_days rows of the
// days that each of starts gives for the hours of counts, in sorted order,
// and returns their counts of paths.
func lockStarts(ctx context.Context, tx pgx.Tx, counts []store.ViewCount, starts ...func(int64) int64) (map[rollup.ProjectDay]int64, error) {
	set := make(map[rollup.ProjectDay]struct{})
	for _, c := range counts {
		at := c.Hour.Unix()
		for _, start := range starts {
			set[rollup.ProjectDay{ProjectID: c.ProjectID, At: start(at)}] = struct{}{}
		}
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

// addToRolls adds counts to the hour, day, week and four-week rolls,
// inside the transaction that applies the cap, so the rolls and the days'
// paths never disagree. The transaction holds the locks of the counts'
// days, weeks and four weeks (lockViewDays), which guard their rolls.
func addToRolls(ctx context.Context, tx pgx.Tx, counts []store.ViewCount) error {
	rolls, err := rollup.Group(counts)
	if err != nil {
		return err
	}
	for kind, rs := range rolls {
		if err := appendSegments(ctx, tx, rollup.Kind(kind), rs); err != nil {
			return err
		}
	}
	return nil
}

// appendSegments stores each roll's counts as a new segment of its roll,
// merged with the roll's last segments that rollup.Absorb picks: a flush
// rewrites segments about the size of its batch, never the whole day.
func appendSegments(ctx context.Context, tx pgx.Tx, kind rollup.Kind, rolls []rollup.Roll) error {
	table, col := kind.Table(), kind.Column()
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
// the four-week rolls of a range's whole four weeks, of the week rolls of
// the whole weeks on either side, of the day rolls of the whole days on
// either side of those, and of the hour rolls of its two ragged edges.
const queryRolls = `SELECT counts FROM view_four_week_rolls WHERE project_id = $1 AND four_week >= $2 AND four_week < $3
	UNION ALL
	SELECT counts FROM view_week_rolls WHERE project_id = $1
	   AND ((week >= $4 AND week < $5) OR (week >= $6 AND week < $7))
	UNION ALL
	SELECT counts FROM view_day_rolls WHERE project_id = $1
	   AND ((day >= $8 AND day < $9) OR (day >= $10 AND day < $11))
	UNION ALL
	SELECT counts FROM view_hour_rolls WHERE project_id = $1
	   AND ((hour >= $12 AND hour < $13) OR (hour >= $14 AND hour < $15))`

// queryRollsArgs returns queryRolls' arguments for the rolls of project
// that span covers.
func queryRollsArgs(project string, span rollup.ViewSpan) []any {
	var weeks, days, hours [2][2]int64 // empty ranges unless the span has them
	copy(weeks[:], span.Weeks)
	copy(days[:], span.Days)
	copy(hours[:], span.Hours)
	return []any{project, span.FourWeeks[0], span.FourWeeks[1],
		weeks[0][0], weeks[0][1], weeks[1][0], weeks[1][1],
		days[0][0], days[0][1], days[1][0], days[1][1],
		hours[0][0], hours[0][1], hours[1][0], hours[1][1]}
}

// tallyRolls adds to tally the segments of the rolls of project that span
// covers.
func tallyRolls(ctx context.Context, db querier, project string, span rollup.ViewSpan, tally *rollup.Tally) error {
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

// rebuildBatch is how many rows rebuildRolls fetches at a time.
const rebuildBatch = 20_000

// rebuildRolls fills the roll tables, and with days the days' paths, from
// page_views: the step of migration 3, as rolls became keyed by path, and
// of migration 5, as they came to count bots (which keeps the days as they
// are). A cursor reads the rows in (project, hour) order, an index's, so
// each roll is written once, when its hour, day or week has been read; the
// cursor lets the transaction write between fetches.
func rebuildRolls(ctx context.Context, tx pgx.Tx, days bool) error {
	if _, err := tx.Exec(ctx, `DECLARE page_views_for_rolls NO SCROLL CURSOR FOR
		SELECT project_id, path, hour, human, ai, bot FROM page_views ORDER BY project_id, hour`); err != nil {
		return err
	}
	b := rollup.Rebuilder{
		Write: func(kind rollup.Kind, project string, at int64, counts []rollup.Count) error {
			_, err := tx.Exec(ctx, `INSERT INTO `+kind.Table()+` (project_id, `+kind.Column()+`, seq, entries, counts)
				VALUES ($1, $2, 1, $3, $4)`, project, at, len(counts), rollup.Encode(nil, counts))
			return err
		},
	}
	if days {
		b.Day = func(project string, day int64, paths []string) error {
			if _, err := tx.Exec(ctx, `INSERT INTO view_day_paths (project_id, day, path)
				SELECT $1, $2, p FROM unnest($3::text[]) AS p`, project, day, paths); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO view_days (project_id, day, paths) VALUES ($1, $2, $3)`, project, day, len(paths))
			return err
		}
	}
	fetch := fmt.Sprintf(`FETCH %d FROM page_views_for_rolls`, rebuildBatch)
	for {
		rows, err := tx.Query(ctx, fetch)
		if err != nil {
			return err
		}
		batch, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.ViewCount, error) {
			var c store.ViewCount
			err := row.Scan(&c.ProjectID, &c.Path, &c.Hour, &c.Human, &c.AI, &c.Bot)
			return c, err
		})
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			if _, err := tx.Exec(ctx, `CLOSE page_views_for_rolls`); err != nil {
				return err
			}
			return b.Flush()
		}
		for _, c := range batch {
			if err := b.Add(c); err != nil {
				return err
			}
		}
	}
}

// buildFourWeekRolls fills view_four_week_rolls from the week rolls: the
// step of migration 11. A four-week roll holds exactly the counts of its
// four week rolls, so each is their segments merged into one. Memory holds
// one project's four weeks at a time.
func buildFourWeekRolls(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT DISTINCT project_id, week FROM view_week_rolls ORDER BY project_id, week`)
	if err != nil {
		return err
	}
	var rolls []rollup.ProjectDay // the four weeks to build, in order
	var r rollup.ProjectDay
	if _, err := pgx.ForEachRow(rows, []any{&r.ProjectID, &r.At}, func() error {
		four := rollup.ProjectDay{ProjectID: r.ProjectID, At: rollup.FourWeekOf(r.At)}
		if n := len(rolls); n == 0 || rolls[n-1] != four {
			rolls = append(rolls, four)
		}
		return nil
	}); err != nil {
		return err
	}
	for _, r := range rolls {
		rows, err := tx.Query(ctx, `SELECT counts FROM view_week_rolls
			WHERE project_id = $1 AND week >= $2 AND week < $3 ORDER BY week, seq`, r.ProjectID, r.At, r.At+rollup.FourWeeks)
		if err != nil {
			return err
		}
		segs, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
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
		if _, err := tx.Exec(ctx, `INSERT INTO view_four_week_rolls (project_id, four_week, seq, entries, counts)
			VALUES ($1, $2, 1, $3, $4)`, r.ProjectID, r.At, n, seg); err != nil {
			return err
		}
	}
	return nil
}
