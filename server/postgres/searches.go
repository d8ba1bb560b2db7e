package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/docsapi/docsapi-go/server/store"
)

// LockSearchDay reads the day's counts, creating them at zero, and locks
// the day's row: another replica adding to the same day waits for this
// commit, so the caps hold across replicas.
func (t txn) LockSearchDay(ctx context.Context, projectID string, day time.Time) (store.SearchDayCounts, error) {
	if _, err := t.q.Exec(ctx,
		`INSERT INTO search_days (project_id, day) VALUES ($1, $2) ON CONFLICT DO NOTHING`, projectID, ts(day)); err != nil {
		return store.SearchDayCounts{}, err
	}
	var c store.SearchDayCounts
	err := t.q.QueryRow(ctx, `SELECT queries, click_paths FROM search_days WHERE project_id = $1 AND day = $2 FOR UPDATE`,
		projectID, ts(day)).Scan(&c.Queries, &c.ClickPaths)
	return c, err
}

// HeldSearches looks the queries and the pairs up in one statement each.
func (t txn) HeldSearches(ctx context.Context, projectID string, day time.Time, queries []string, pairs [][2]string) (map[string]bool, map[[2]string]bool, error) {
	heldQueries, heldPairs := map[string]bool{}, map[[2]string]bool{}
	rows, err := t.q.Query(ctx,
		`SELECT query FROM search_queries WHERE project_id = $1 AND day = $2 AND query = ANY($3::text[])`,
		projectID, ts(day), nonNil(queries))
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		var q string
		if err := rows.Scan(&q); err != nil {
			rows.Close()
			return nil, nil, err
		}
		heldQueries[q] = true
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	qs, ps := make([]string, len(pairs)), make([]string, len(pairs))
	for i, p := range pairs {
		qs[i], ps[i] = p[0], p[1]
	}
	rows, err = t.q.Query(ctx,
		`SELECT query, path FROM search_clicks
		 WHERE project_id = $1 AND day = $2 AND (query, path) IN (SELECT * FROM unnest($3::text[], $4::text[]))`,
		projectID, ts(day), qs, ps)
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		var p [2]string
		if err := rows.Scan(&p[0], &p[1]); err != nil {
			rows.Close()
			return nil, nil, err
		}
		heldPairs[p] = true
	}
	return heldQueries, heldPairs, rows.Err()
}

// nonNil is s, or an empty slice: an empty array, not NULL, for ANY.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// AddSearchTally upserts the tally's rows, one statement per table, their
// rows sorted by key (the tally's order), so that concurrent writers would
// lock rows in one order even without the day's lock.
func (t txn) AddSearchTally(ctx context.Context, projectID string, day time.Time, tally store.SearchTally) error {
	n := len(tally.Queries)
	queries, hits, clicks, lasts := make([]string, n), make([]int64, n), make([]int64, n), make([]pgtype.Timestamptz, n)
	for i, q := range tally.Queries {
		queries[i], hits[i], clicks[i], lasts[i] = q.Query, q.Hits, q.Clicks, ts(q.LastAt)
	}
	if _, err := t.q.Exec(ctx,
		`INSERT INTO search_queries AS s (project_id, day, query, hits, clicks, last_at)
		 SELECT $1, $2, u.query, u.hits, u.clicks, u.last_at
		 FROM unnest($3::text[], $4::bigint[], $5::bigint[], $6::timestamptz[]) AS u(query, hits, clicks, last_at)
		 ON CONFLICT (project_id, day, query) DO UPDATE SET
		     hits = s.hits + excluded.hits, clicks = s.clicks + excluded.clicks,
		     last_at = greatest(s.last_at, excluded.last_at)`,
		projectID, ts(day), queries, hits, clicks, lasts); err != nil {
		return err
	}
	m := len(tally.Clicks)
	cq, cp, cn := make([]string, m), make([]string, m), make([]int64, m)
	for i, c := range tally.Clicks {
		cq[i], cp[i], cn[i] = c.Query, c.Path, c.Clicks
	}
	if _, err := t.q.Exec(ctx,
		`INSERT INTO search_clicks AS s (project_id, day, query, path, clicks)
		 SELECT $1, $2, u.query, u.path, u.clicks FROM unnest($3::text[], $4::text[], $5::bigint[]) AS u(query, path, clicks)
		 ON CONFLICT (project_id, day, query, path) DO UPDATE SET clicks = s.clicks + excluded.clicks`,
		projectID, ts(day), cq, cp, cn); err != nil {
		return err
	}
	_, err := t.q.Exec(ctx,
		`UPDATE search_days SET queries = queries + $3, click_paths = click_paths + $4,
		     folded_searches = folded_searches + $5, unattributed_clicks = unattributed_clicks + $6
		 WHERE project_id = $1 AND day = $2`,
		projectID, ts(day), tally.Added.Queries, tally.Added.ClickPaths, tally.Folds.Searches, tally.Folds.Clicks)
	return err
}

// dayBound is a bound of a day range: an open side is infinity.
func dayBound(t time.Time, open pgtype.InfinityModifier) pgtype.Timestamptz {
	if t.IsZero() {
		return pgtype.Timestamptz{InfinityModifier: open, Valid: true}
	}
	return ts(t)
}

// QuerySearches sums the range's rows per query in one statement, which
// sees one snapshot: the page, the total, and each row's most opened
// result agree. The total comes on every row, and on a row of NULLs when
// the page is empty.
func (t txn) QuerySearches(ctx context.Context, q store.SearchesQuery) (store.SearchesResult, error) {
	var afterHits int64
	var afterQuery string
	if q.After != nil {
		afterHits, afterQuery = q.After.Hits, q.After.Query
	}
	rows, err := t.q.Query(ctx,
		`WITH agg AS (
		     SELECT query, sum(hits)::bigint AS hits, sum(clicks)::bigint AS clicks, max(last_at) AS last_at
		     FROM search_queries WHERE project_id = $1 AND day >= $2 AND day < $3
		     GROUP BY query),
		 total AS (SELECT coalesce(sum(hits), 0)::bigint AS n FROM agg),
		 page AS (
		     SELECT * FROM agg WHERE ($4 OR hits < $5 OR (hits = $5 AND query > $6)) AND (NOT $8 OR clicks = 0)
		     ORDER BY hits DESC, query LIMIT $7)
		 SELECT t.n, p.query, p.hits, p.clicks, p.last_at,
		     (SELECT c.path FROM search_clicks c
		      WHERE c.project_id = $1 AND c.day >= $2 AND c.day < $3 AND c.query = p.query
		      GROUP BY c.path ORDER BY sum(c.clicks) DESC, c.path LIMIT 1)
		 FROM total t LEFT JOIN page p ON true
		 ORDER BY p.hits DESC, p.query`,
		q.ProjectID, dayBound(q.From, pgtype.NegativeInfinity), dayBound(q.To, pgtype.Infinity),
		q.After == nil, afterHits, afterQuery, q.Limit, q.Unclicked)
	if err != nil {
		return store.SearchesResult{}, err
	}
	defer rows.Close()
	var res store.SearchesResult
	for rows.Next() {
		var (
			query, top   pgtype.Text
			hits, clicks pgtype.Int8
			last         pgtype.Timestamptz
		)
		if err := rows.Scan(&res.Total, &query, &hits, &clicks, &last, &top); err != nil {
			return store.SearchesResult{}, err
		}
		if !query.Valid {
			continue // the empty page's row
		}
		res.Rows = append(res.Rows, store.SearchRow{Query: query.String, Hits: hits.Int64, Clicks: clicks.Int64,
			TopClickedPage: top.String, LastSearchedAt: fromTS(last)})
	}
	return res, rows.Err()
}
