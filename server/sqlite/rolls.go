package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/store"
)

// addToRolls adds validated counts to the hour and day rolls, inside the
// transaction that adds them to page_views, so the two never disagree; see
// rollup.Apply for cache and the IDs it returns.
func addToRolls(ctx context.Context, tx *sql.Tx, counts []store.ViewCount, cache *rollup.PathCache) (map[rollup.PathKey]int64, error) {
	return rollup.Apply(counts, cache,
		func(paths []rollup.PathKey) (map[rollup.PathKey]int64, error) { return pathIDs(ctx, tx, paths) },
		func(kind rollup.Kind, rolls []rollup.Roll) error { return mergeRolls(ctx, tx, kind, rolls) })
}

// pathIDs returns the ID of each path, assigning IDs to new ones.
func pathIDs(ctx context.Context, tx *sql.Tx, paths []rollup.PathKey) (map[rollup.PathKey]int64, error) {
	ids := make(map[rollup.PathKey]int64, len(paths))
	if len(paths) == 0 {
		return ids, nil
	}
	// Looked up first: a path the cache lacks usually has an ID already
	// (given before a restart, or by another process), and a read costs
	// less than an insert that finds a conflict.
	get, err := tx.PrepareContext(ctx, `SELECT id FROM view_paths WHERE project_id = ? AND path = ?`)
	if err != nil {
		return nil, err
	}
	defer get.Close()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO view_paths (project_id, path) VALUES (?, ?) RETURNING id`)
	if err != nil {
		return nil, err
	}
	defer ins.Close()
	for _, p := range paths {
		var id int64
		err := get.QueryRowContext(ctx, p.ProjectID, p.Path).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			err = ins.QueryRowContext(ctx, p.ProjectID, p.Path).Scan(&id)
		}
		if err != nil {
			return nil, err
		}
		ids[p] = id
	}
	return ids, nil
}

// mergeRolls adds each roll's counts to the stored roll of its kind.
func mergeRolls(ctx context.Context, tx *sql.Tx, kind rollup.Kind, rolls []rollup.Roll) error {
	if len(rolls) == 0 {
		return nil
	}
	table, col := kind.Table(), kind.Column()
	get, err := tx.PrepareContext(ctx, `SELECT counts FROM `+table+` WHERE project_id = ? AND `+col+` = ?`)
	if err != nil {
		return err
	}
	defer get.Close()
	put, err := tx.PrepareContext(ctx, `INSERT INTO `+table+` (project_id, `+col+`, counts) VALUES (?, ?, ?)
		ON CONFLICT (project_id, `+col+`) DO UPDATE SET counts = excluded.counts`)
	if err != nil {
		return err
	}
	defer put.Close()
	for _, r := range rolls {
		var stored []byte
		if err := get.QueryRowContext(ctx, r.ProjectID, r.At).Scan(&stored); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		merged, err := rollup.Merge(stored, r.Counts)
		if err != nil {
			return err
		}
		if _, err := put.ExecContext(ctx, r.ProjectID, r.At, merged); err != nil {
			return err
		}
	}
	return nil
}

// tallyRolls adds to tally the rolls of project that span covers.
func tallyRolls(ctx context.Context, tx *sql.Tx, project string, span rollup.Span, tally *rollup.Tally) error {
	if span.Days[0] < span.Days[1] {
		if err := tallyKind(ctx, tx, rollup.Daily, project, span.Days, tally); err != nil {
			return err
		}
	}
	for _, hours := range span.Hours {
		if err := tallyKind(ctx, tx, rollup.Hourly, project, hours, tally); err != nil {
			return err
		}
	}
	return nil
}

// rollRangeQuery selects the rolls of a kind of a project in a time range.
func rollRangeQuery(kind rollup.Kind) string {
	col := kind.Column()
	return `SELECT counts FROM ` + kind.Table() + ` WHERE project_id = ? AND ` + col + ` >= ? AND ` + col + ` < ?`
}

// tallyKind adds the rolls of a kind of project from at[0] up to at[1].
func tallyKind(ctx context.Context, tx *sql.Tx, kind rollup.Kind, project string, at [2]int64, tally *rollup.Tally) error {
	rows, err := tx.QueryContext(ctx, rollRangeQuery(kind), project, at[0], at[1])
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		// RawBytes points into the driver's buffer until the next row:
		// the roll is decoded before then, so it is never copied.
		var roll sql.RawBytes
		if err := rows.Scan(&roll); err != nil {
			return err
		}
		if err := tally.Add(roll); err != nil {
			return err
		}
	}
	return rows.Err()
}

// namesBatch bounds the parameters of one lookup of path names, well under
// SQLite's limit on host parameters.
const namesBatch = 500

// pathNames looks path IDs up in view_paths within tx.
func pathNames(ctx context.Context, tx *sql.Tx) rollup.Names {
	return func(ids []int64) (map[int64]string, error) {
		names := make(map[int64]string, len(ids))
		for len(ids) > 0 {
			batch := ids[:min(len(ids), namesBatch)]
			ids = ids[len(batch):]
			args := make([]any, len(batch))
			for i, id := range batch {
				args[i] = id
			}
			marks := strings.Repeat(",?", len(batch))[1:]
			rows, err := tx.QueryContext(ctx, `SELECT id, path FROM view_paths WHERE id IN (`+marks+`)`, args...)
			if err != nil {
				return nil, err
			}
			for rows.Next() {
				var id int64
				var path string
				if err := rows.Scan(&id, &path); err != nil {
					rows.Close()
					return nil, err
				}
				names[id] = path
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return nil, err
			}
		}
		return names, nil
	}
}

// rebuildBatch is how many rows buildRolls reads at a time: enough to keep
// the reads sequential, few enough to hold in memory.
const rebuildBatch = 20_000

// buildRolls fills the roll tables from page_views: migration 2's step for
// databases that had views before rolls existed. Rows are read in
// (project, hour) order, the order of the page_views_by_hour index, so each
// roll is written a few times rather than once per batch.
func buildRolls(ctx context.Context, tx *sql.Tx) error {
	const query = `SELECT project_id, path, hour, human, ai FROM page_views INDEXED BY page_views_by_hour
		WHERE (project_id, hour, path) > (?, ?, ?) AND (human > 0 OR ai > 0)
		ORDER BY project_id, hour, path LIMIT ?`
	// Project IDs are never empty, so ("", hour, "") sorts before every row.
	var project, path string
	var hour int64 = -1 << 62
	batch := make([]store.ViewCount, 0, rebuildBatch)
	var cache rollup.PathCache
	for {
		batch = batch[:0]
		rows, err := tx.QueryContext(ctx, query, project, hour, path, rebuildBatch)
		if err != nil {
			return err
		}
		for rows.Next() {
			var c store.ViewCount
			var at int64
			if err := rows.Scan(&c.ProjectID, &c.Path, &at, &c.Human, &c.AI); err != nil {
				rows.Close()
				return err
			}
			c.Hour = time.Unix(at, 0).UTC()
			batch = append(batch, c)
			project, hour, path = c.ProjectID, at, c.Path
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(batch) == 0 {
			return nil
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
