package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// LockSearchDay reads the day's counts, creating them at zero; the write
// lock keeps them as read.
func (t txn) LockSearchDay(ctx context.Context, projectID string, day time.Time) (store.SearchDayCounts, error) {
	if _, err := t.tx.ExecContext(ctx,
		`INSERT INTO search_days (project_id, day) VALUES (?, ?) ON CONFLICT DO NOTHING`, projectID, day.UnixMicro()); err != nil {
		return store.SearchDayCounts{}, err
	}
	var c store.SearchDayCounts
	err := t.tx.QueryRowContext(ctx, `SELECT queries, click_paths FROM search_days WHERE project_id = ? AND day = ?`,
		projectID, day.UnixMicro()).Scan(&c.Queries, &c.ClickPaths)
	return c, err
}

// HeldSearches looks each query and pair up in the day's primary keys. A
// batch holds a few searches, so a seek each is as cheap as anything.
func (t txn) HeldSearches(ctx context.Context, projectID string, day time.Time, queries []string, pairs [][2]string) (map[string]bool, map[[2]string]bool, error) {
	heldQueries, heldPairs := map[string]bool{}, map[[2]string]bool{}
	for _, q := range queries {
		found, err := exists(ctx, t.tx, `SELECT 1 FROM search_queries WHERE project_id = ? AND day = ? AND query = ?`,
			projectID, day.UnixMicro(), q)
		if err != nil {
			return nil, nil, err
		}
		heldQueries[q] = found
	}
	for _, p := range pairs {
		found, err := exists(ctx, t.tx, `SELECT 1 FROM search_clicks WHERE project_id = ? AND day = ? AND query = ? AND path = ?`,
			projectID, day.UnixMicro(), p[0], p[1])
		if err != nil {
			return nil, nil, err
		}
		heldPairs[p] = found
	}
	return heldQueries, heldPairs, nil
}

// AddSearchTally adds the tally to the day's rows.
func (t txn) AddSearchTally(ctx context.Context, projectID string, day time.Time, tally store.SearchTally) error {
	d := day.UnixMicro()
	for _, q := range tally.Queries {
		if _, err := t.tx.ExecContext(ctx,
			`INSERT INTO search_queries (project_id, day, query, hits, clicks, last_at) VALUES (?, ?, ?, ?, ?, ?)
			 ON CONFLICT (project_id, day, query) DO UPDATE SET
			     hits = hits + excluded.hits, clicks = clicks + excluded.clicks, last_at = max(last_at, excluded.last_at)`,
			projectID, d, q.Query, q.Hits, q.Clicks, q.LastAt.UnixMicro()); err != nil {
			return err
		}
	}
	for _, c := range tally.Clicks {
		if _, err := t.tx.ExecContext(ctx,
			`INSERT INTO search_clicks (project_id, day, query, path, clicks) VALUES (?, ?, ?, ?, ?)
			 ON CONFLICT (project_id, day, query, path) DO UPDATE SET clicks = clicks + excluded.clicks`,
			projectID, d, c.Query, c.Path, c.Clicks); err != nil {
			return err
		}
	}
	_, err := t.tx.ExecContext(ctx,
		`UPDATE search_days SET queries = queries + ?, click_paths = click_paths + ?,
		     folded_searches = folded_searches + ?, unattributed_clicks = unattributed_clicks + ?
		 WHERE project_id = ? AND day = ?`,
		tally.Added.Queries, tally.Added.ClickPaths, tally.Folds.Searches, tally.Folds.Clicks, projectID, d)
	return err
}

// dayRange is the range of days q selects, as day keys: an open side is
// the smallest or largest key.
func dayRange(from, to time.Time) (int64, int64) {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if !from.IsZero() {
		lo = from.UnixMicro()
	}
	if !to.IsZero() {
		hi = to.UnixMicro()
	}
	return lo, hi
}

// QuerySearches sums the range's rows per query, in one read transaction:
// the page, the total and each row's most opened result agree.
func (t txn) QuerySearches(ctx context.Context, q store.SearchesQuery) (store.SearchesResult, error) {
	lo, hi := dayRange(q.From, q.To)
	var res store.SearchesResult
	if err := t.tx.QueryRowContext(ctx,
		`SELECT COALESCE(SUM(hits), 0) FROM search_queries WHERE project_id = ? AND day >= ? AND day < ?`,
		q.ProjectID, lo, hi).Scan(&res.Total); err != nil {
		return store.SearchesResult{}, err
	}
	first, afterHits, afterQuery := q.After == nil, int64(0), ""
	if q.After != nil {
		afterHits, afterQuery = q.After.Hits, q.After.Query
	}
	rows, err := t.tx.QueryContext(ctx,
		`SELECT query, SUM(hits) AS h, SUM(clicks), MAX(last_at) FROM search_queries
		 WHERE project_id = ? AND day >= ? AND day < ?
		 GROUP BY query
		 HAVING (? OR h < ? OR (h = ? AND query > ?)) AND (NOT ? OR SUM(clicks) = 0)
		 ORDER BY h DESC, query LIMIT ?`,
		q.ProjectID, lo, hi, first, afterHits, afterHits, afterQuery, q.Unclicked, q.Limit)
	res.Rows, err = collect(rows, err, func(sc scanner) (store.SearchRow, error) {
		var r store.SearchRow
		err := sc.Scan(&r.Query, &r.Hits, &r.Clicks, timeCol{&r.LastSearchedAt})
		return r, err
	})
	if err != nil {
		return store.SearchesResult{}, err
	}
	for i := range res.Rows {
		err := t.tx.QueryRowContext(ctx,
			`SELECT path FROM search_clicks WHERE project_id = ? AND day >= ? AND day < ? AND query = ?
			 GROUP BY path ORDER BY SUM(clicks) DESC, path LIMIT 1`,
			q.ProjectID, lo, hi, res.Rows[i].Query).Scan(&res.Rows[i].TopClickedPage)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return store.SearchesResult{}, err
		}
	}
	return res, nil
}
