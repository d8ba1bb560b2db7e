package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/store"
)

// addToRolls adds validated, storable counts to the hour and day rolls,
// inside the transaction that adds them to page_views, so the two never
// disagree; see rollup.Apply for cache and the IDs it returns.
//
// Locks come in one order in every replica: the page_views rows (sorted by
// AddViews), then new paths (sorted by rollup.Paths), then hour rolls and
// day rolls (each sorted by rollup.Group). Two flushes of the same rolls
// therefore queue behind each other instead of deadlocking.
func addToRolls(ctx context.Context, tx pgx.Tx, counts []store.ViewCount, cache *rollup.PathCache) (map[rollup.PathKey]int64, error) {
	return rollup.Apply(counts, cache,
		func(paths []rollup.PathKey) (map[rollup.PathKey]int64, error) { return pathIDs(ctx, tx, paths) },
		func(kind rollup.Kind, rolls []rollup.Roll) error { return mergeRolls(ctx, tx, kind, rolls) })
}

const (
	// selectPathIDs finds the IDs of the paths given as two parallel arrays.
	selectPathIDs = `SELECT v.id, v.project_id, v.path
		FROM view_paths v JOIN unnest($1::text[], $2::text[]) AS b (project_id, path)
		  ON v.project_id = b.project_id AND v.path = b.path`
	// insertPaths gives IDs to new paths, in the arrays' order. DO NOTHING:
	// a path another flush added meanwhile keeps that flush's ID.
	insertPaths = `INSERT INTO view_paths (project_id, path)
		SELECT b.project_id, b.path FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS b (project_id, path, n)
		ORDER BY b.n
		ON CONFLICT (project_id, path) DO NOTHING`
)

// pathIDs returns the ID of each path, assigning IDs to new ones. Known
// paths are looked up first: an insert that conflicts still draws a value
// from the identity's sequence, and IDs kept dense keep rolls small.
func pathIDs(ctx context.Context, tx pgx.Tx, paths []rollup.PathKey) (map[rollup.PathKey]int64, error) {
	ids := make(map[rollup.PathKey]int64, len(paths))
	if err := lookUpPaths(ctx, tx, paths, ids); err != nil {
		return nil, err
	}
	var missing []rollup.PathKey
	for _, p := range paths {
		if _, ok := ids[p]; !ok {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return ids, nil
	}
	projects, names := splitPaths(missing)
	if _, err := tx.Exec(ctx, insertPaths, projects, names); err != nil {
		return nil, err
	}
	if err := lookUpPaths(ctx, tx, missing, ids); err != nil {
		return nil, err
	}
	for _, p := range missing {
		if _, ok := ids[p]; !ok {
			return nil, fmt.Errorf("path %q of project %q has no ID after insert", p.Path, p.ProjectID)
		}
	}
	return ids, nil
}

// lookUpPaths adds the IDs of the known paths among paths to ids.
func lookUpPaths(ctx context.Context, tx pgx.Tx, paths []rollup.PathKey, ids map[rollup.PathKey]int64) error {
	if len(paths) == 0 {
		return nil
	}
	projects, names := splitPaths(paths)
	rows, err := tx.Query(ctx, selectPathIDs, projects, names)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var k rollup.PathKey
		if err := rows.Scan(&id, &k.ProjectID, &k.Path); err != nil {
			return err
		}
		ids[k] = id
	}
	return rows.Err()
}

// splitPaths returns the projects and paths of paths as parallel arrays.
func splitPaths(paths []rollup.PathKey) (projects, names []string) {
	projects, names = make([]string, len(paths)), make([]string, len(paths))
	for i, p := range paths {
		projects[i], names[i] = p.ProjectID, p.Path
	}
	return projects, names
}

// mergeRolls adds each roll's counts to the stored roll of its kind. A stored
// roll is read FOR UPDATE: under READ COMMITTED a plain read would let two
// flushes both read the same roll and the second write lose the first's
// counts.
func mergeRolls(ctx context.Context, tx pgx.Tx, kind rollup.Kind, rolls []rollup.Roll) error {
	table, col := kind.Table(), kind.Column()
	lock := `SELECT counts FROM ` + table + ` WHERE project_id = $1 AND ` + col + ` = $2 FOR UPDATE`
	insert := `INSERT INTO ` + table + ` (project_id, ` + col + `, counts) VALUES ($1, $2, $3)
		ON CONFLICT (project_id, ` + col + `) DO NOTHING`
	update := `UPDATE ` + table + ` SET counts = $3 WHERE project_id = $1 AND ` + col + ` = $2`
	for _, r := range rolls {
		// A roll that is not stored yet is inserted; if another flush
		// inserted it first, the insert does nothing (after waiting for
		// that flush to commit) and the second pass locks and updates it.
		for pass := 0; ; pass++ {
			var stored []byte
			err := tx.QueryRow(ctx, lock, r.ProjectID, r.At).Scan(&stored)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			merged, err := rollup.Merge(stored, r.Counts)
			if err != nil {
				return err
			}
			if stored != nil {
				if _, err := tx.Exec(ctx, update, r.ProjectID, r.At, merged); err != nil {
					return err
				}
				break
			}
			tag, err := tx.Exec(ctx, insert, r.ProjectID, r.At, merged)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 1 {
				break
			}
			if pass > 0 {
				return fmt.Errorf("%s roll of %q at %d neither found nor inserted", col, r.ProjectID, r.At)
			}
		}
	}
	return nil
}

// queryRolls reads, in one statement and so one snapshot, the day rolls of
// a range's whole days and the hour rolls of its two ragged edges.
const queryRolls = `SELECT counts FROM view_day_rolls WHERE project_id = $1 AND day >= $2 AND day < $3
	UNION ALL
	SELECT counts FROM view_hour_rolls WHERE project_id = $1
	   AND ((hour >= $4 AND hour < $5) OR (hour >= $6 AND hour < $7))`

// tallyRolls adds to tally the rolls of project that span covers.
func tallyRolls(ctx context.Context, db querier, project string, span rollup.Span, tally *rollup.Tally) error {
	var edges [2][2]int64 // empty ranges unless the span has edges
	copy(edges[:], span.Hours)
	rows, err := db.Query(ctx, queryRolls, project, span.Days[0], span.Days[1],
		edges[0][0], edges[0][1], edges[1][0], edges[1][1])
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		// The raw value is valid until the next row: the roll is decoded
		// before then, so it is never copied.
		if err := tally.Add(rows.RawValues()[0]); err != nil {
			return err
		}
	}
	return rows.Err()
}

// pathNames looks path IDs up in view_paths. IDs never change their path,
// so this may run outside the snapshot the rolls were read in.
func pathNames(ctx context.Context, db querier) rollup.Names {
	return func(ids []int64) (map[int64]string, error) {
		rows, err := db.Query(ctx, `SELECT id, path FROM view_paths WHERE id = ANY($1)`, ids)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		names := make(map[int64]string, len(ids))
		for rows.Next() {
			var id int64
			var path string
			if err := rows.Scan(&id, &path); err != nil {
				return nil, err
			}
			names[id] = path
		}
		return names, rows.Err()
	}
}

// rebuildBatch is how many rows buildRolls fetches at a time.
const rebuildBatch = 20_000

// buildRolls fills the roll tables from page_views: migration 2's step for
// databases that had views before rolls existed. A cursor reads the rows in
// (project, hour) order, the order of page_views_by_hour, so each roll is
// written a few times rather than once per batch; the cursor lets the
// transaction write between fetches.
func buildRolls(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `DECLARE page_views_for_rolls NO SCROLL CURSOR FOR
		SELECT project_id, path, hour, human, ai FROM page_views
		WHERE human > 0 OR ai > 0
		ORDER BY project_id, hour`); err != nil {
		return err
	}
	fetch := fmt.Sprintf(`FETCH %d FROM page_views_for_rolls`, rebuildBatch)
	var cache rollup.PathCache
	for {
		rows, err := tx.Query(ctx, fetch)
		if err != nil {
			return err
		}
		batch, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.ViewCount, error) {
			var c store.ViewCount
			err := row.Scan(&c.ProjectID, &c.Path, &c.Hour, &c.Human, &c.AI)
			c.Hour = c.Hour.UTC()
			return c, err
		})
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			_, err := tx.Exec(ctx, `CLOSE page_views_for_rolls`)
			return err
		}
		fresh, err := addToRolls(ctx, tx, batch, &cache)
		if err != nil {
			return err
		}
		// The migration's own transaction: its IDs are good for its
		// later batches, and the cache dies with it.
		cache.Add(fresh)
	}
}
