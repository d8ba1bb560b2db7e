package postgres

import (
	"cmp"
	"context"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/docsapi/docsapi-go/server/store"
)

// wholeHour reports whether t is the start of an hour. Truncate works on
// absolute time, whose hours are aligned with UTC's, so a time in a zone with
// a half-hour offset is correctly refused even if its clock reads :00.
func wholeHour(t time.Time) bool {
	return !t.IsZero() && t.Truncate(time.Hour).Equal(t)
}

// viewKey identifies a page_views row.
type viewKey struct {
	project, path string
	hour          int64 // unix seconds
}

// addViews is AddViews' one statement. The batch arrives as six parallel
// arrays, unnested into rows and upserted together, so a flush of thousands
// of counts is one round trip and one atomic statement. ON CONFLICT adds to
// the row another flush may have created a moment before (the insert waits
// for that flush's commit, then updates), never overwriting. ORDER BY the
// ordinality keeps the rows in the order of the arrays, which AddViews has
// sorted by key: see AddViews for why that order matters.
const addViews = `INSERT INTO page_views AS v (project_id, path, hour, human, ai, bot)
	SELECT b.project_id, b.path, b.hour, b.human, b.ai, b.bot
	FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::bigint[], $5::bigint[], $6::bigint[])
	     WITH ORDINALITY AS b (project_id, path, hour, human, ai, bot, n)
	ORDER BY b.n
	ON CONFLICT (project_id, path, hour) DO UPDATE SET
		human = v.human + excluded.human,
		ai    = v.ai    + excluded.ai,
		bot   = v.bot   + excluded.bot`

// AddViews adds each count to the stored counts of its (ProjectID, Path,
// Hour), in one statement. The batch is validated first: one bad count
// refuses the whole batch and nothing is stored. Project IDs and paths that
// PostgreSQL's text cannot hold (invalid UTF-8, NUL) are stored with U+FFFD
// in place of the bad bytes, where SQLite would keep them as they are. A sum beyond int64 fails
// the statement ("bigint out of range"), so the batch, instead of storing a
// wrong count.
//
// Two things the single statement needs, done in Go first:
//   - Counts of the same key are merged: ON CONFLICT DO UPDATE may not touch
//     one row twice in a statement.
//   - The merged counts are sorted by key. Each upsert locks its row until
//     commit, in the order the rows are processed; two flushes that took
//     overlapping keys in different orders could each hold a row the other
//     waits for, and PostgreSQL would abort one of them as a deadlock.
//     Sorted, every flush of every replica locks in the same global order,
//     so whoever holds the lowest common key goes first and the other waits
//     behind it without a cycle.
func (s *Store) AddViews(ctx context.Context, counts []store.ViewCount) error {
	const op = "add views"
	for i, c := range counts {
		switch {
		case c.ProjectID == "":
			return invalid(op, "count %d: empty project ID", i)
		case c.Path == "":
			return invalid(op, "count %d: empty path", i)
		case !wholeHour(c.Hour):
			return invalid(op, "count %d: hour %v is not a whole hour", i, c.Hour)
		case c.Human < 0 || c.AI < 0 || c.Bot < 0:
			return invalid(op, "count %d: negative count (human %d, ai %d, bot %d)", i, c.Human, c.AI, c.Bot)
		}
	}
	merged := make(map[viewKey]*store.ViewCount, len(counts))
	for i, c := range counts {
		if c.Human == 0 && c.AI == 0 && c.Bot == 0 {
			continue // adds nothing; a row of zeros is noise
		}
		// A path from a request line may hold any bytes ("/%ff" decodes
		// to an invalid one); it is counted under a storable spelling
		// rather than failing the batch (see makeStorable).
		c.ProjectID, c.Path = makeStorable(c.ProjectID), makeStorable(c.Path)
		k := viewKey{c.ProjectID, c.Path, c.Hour.Unix()}
		m := merged[k]
		if m == nil {
			c.Hour = c.Hour.UTC()
			merged[k] = &c
			continue
		}
		if m.Human > math.MaxInt64-c.Human || m.AI > math.MaxInt64-c.AI || m.Bot > math.MaxInt64-c.Bot {
			return invalid(op, "count %d: the batch's counts of %s %s at %v add up beyond int64", i, c.ProjectID, c.Path, c.Hour)
		}
		m.Human += c.Human
		m.AI += c.AI
		m.Bot += c.Bot
	}
	if len(merged) == 0 {
		return nil
	}
	keys := make([]viewKey, 0, len(merged))
	for k := range merged {
		keys = append(keys, k)
	}
	// Go compares strings by bytes; any fixed total order would do, as
	// long as every replica uses the same one.
	slices.SortFunc(keys, func(a, b viewKey) int {
		return cmp.Or(cmp.Compare(a.project, b.project), cmp.Compare(a.path, b.path), cmp.Compare(a.hour, b.hour))
	})
	n := len(keys)
	projects, paths := make([]string, n), make([]string, n)
	hours := make([]time.Time, n)
	human, ai, bot := make([]int64, n), make([]int64, n), make([]int64, n)
	for i, k := range keys {
		c := merged[k]
		projects[i], paths[i], hours[i] = c.ProjectID, c.Path, c.Hour
		human[i], ai[i], bot[i] = c.Human, c.AI, c.Bot
	}
	db, err := s.db()
	if err != nil {
		return err
	}
	if _, err := db.Exec(ctx, addViews, projects, paths, hours, human, ai, bot); err != nil {
		return s.dbErr(op, err)
	}
	return nil
}

// queryViews computes a project's totals and one page of per-path sums over
// an hour range, in one statement, so both describe one snapshot even while
// flushes commit, and the range is read once: per_path, referenced twice, is
// materialized.
//
// The plan of a 30-day export (limit 100) on a table of 200 paths × 90 days
// × 24 hours (432,000 rows, vacuumed; TestViewsQueryPlan builds it, checks
// the plan and logs it with -v), as a prepared statement's generic plan:
//
//	Sort                        Sort Key: human + ai DESC, path      (101 rows)
//	  CTE per_path
//	    ->  HashAggregate       Group Key: path                      (200 rows)
//	          ->  Index Only Scan using page_views_by_hour on page_views
//	                Index Cond: project_id = $1 AND hour >= $2 AND hour < $3
//	                Heap Fetches: 0                 (144,000 rows, 1,443 buffers)
//	  ->  Nested Loop Left Join
//	        ->  Aggregate  ->  CTE Scan on per_path                  (the totals)
//	        ->  Limit  ->  Sort  ->  CTE Scan on per_path            (the page)
//	                              Filter: human + ai > 0
//	Execution Time: about 75 ms
//
// The month is one contiguous stretch of page_views_by_hour, bounded by the
// index condition on both ends, so the other two months are never read; its
// INCLUDE columns answer the query, and the visibility map lets every row
// skip the table (Heap Fetches: 0). The sums are hashed per path, and only
// those 200 sums are sorted, never the 144,000 rows. With the parameters
// known (a custom plan) PostgreSQL does the same scan split over parallel
// workers.
const queryViews = `WITH per_path AS (
		SELECT path, sum(human)::bigint AS human, sum(ai)::bigint AS ai
		FROM page_views
		WHERE project_id = $1 AND hour >= $2 AND hour < $3
		GROUP BY path
	), totals AS (
		SELECT coalesce(sum(human), 0)::bigint AS human, coalesce(sum(ai), 0)::bigint AS ai FROM per_path
	), page AS (
		SELECT path, human, ai FROM per_path
		WHERE human + ai > 0
		ORDER BY human + ai DESC, path
		LIMIT $4 OFFSET $5
	)
	SELECT t.human, t.ai, p.path, p.human, p.ai
	FROM totals t LEFT JOIN page p ON true
	ORDER BY p.human + p.ai DESC, p.path`

// QueryViews returns the totals and one page of per-path counts of a project
// over an hour range, as store.Store documents. From and To, when set, must
// be whole hours; a range with From at or after To is empty. It fetches
// Limit+1 rows: the extra one tells whether another page follows.
func (s *Store) QueryViews(ctx context.Context, q store.ViewsQuery) (store.ViewsResult, error) {
	const op = "query views"
	switch {
	case q.ProjectID == "":
		return store.ViewsResult{}, invalid(op, "empty project ID")
	case q.Limit < 1:
		return store.ViewsResult{}, invalid(op, "limit %d: must be at least 1", q.Limit)
	case q.Offset < 0:
		return store.ViewsResult{}, invalid(op, "offset %d: must be at least 0", q.Offset)
	case !q.From.IsZero() && !wholeHour(q.From):
		return store.ViewsResult{}, invalid(op, "from %v is not a whole hour", q.From)
	case !q.To.IsZero() && !wholeHour(q.To):
		return store.ViewsResult{}, invalid(op, "to %v is not a whole hour", q.To)
	}
	// An open side is an infinite bound rather than a different query
	// text: one statement, whose plan uses the index either way.
	from := pgtype.Timestamptz{InfinityModifier: pgtype.NegativeInfinity, Valid: true}
	if !q.From.IsZero() {
		from = ts(q.From)
	}
	to := pgtype.Timestamptz{InfinityModifier: pgtype.Infinity, Valid: true}
	if !q.To.IsZero() {
		to = ts(q.To)
	}
	db, err := s.db()
	if err != nil {
		return store.ViewsResult{}, err
	}
	rows, err := db.Query(ctx, queryViews, q.ProjectID, from, to, int64(q.Limit)+1, int64(q.Offset))
	if err != nil {
		return store.ViewsResult{}, s.dbErr(op, err)
	}
	defer rows.Close()
	res := store.ViewsResult{Rows: []store.PathCounts{}}
	for rows.Next() {
		var (
			path      pgtype.Text
			human, ai pgtype.Int8
		)
		if err := rows.Scan(&res.Totals.Human, &res.Totals.AI, &path, &human, &ai); err != nil {
			return store.ViewsResult{}, s.dbErr(op, err)
		}
		if path.Valid { // no page row: the totals alone, with NULLs
			res.Rows = append(res.Rows, store.PathCounts{Path: path.String, Counts: store.Counts{Human: human.Int64, AI: ai.Int64}})
		}
	}
	if err := rows.Err(); err != nil {
		return store.ViewsResult{}, s.dbErr(op, err)
	}
	if len(res.Rows) > q.Limit {
		res.Rows = res.Rows[:q.Limit]
		res.HasMore = true
	}
	return res, nil
}
