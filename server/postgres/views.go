package postgres

import (
	"cmp"
	"context"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/store"
)

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
// Hour), in one statement, and to the rolls the views query reads (see
// rolls.go), in the same transaction. The batch is validated first: one bad count
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
		if p := c.Problem(); p != "" {
			return invalid(op, "count %d: %s", i, p)
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
	batch := make([]store.ViewCount, n)
	for i, k := range keys {
		batch[i] = *merged[k]
	}
	var fresh map[rollup.PathKey]int64
	err := s.tx(ctx, op, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, addViews, projects, paths, hours, human, ai, bot); err != nil {
			return s.dbErr(op, err)
		}
		var err error
		if fresh, err = addToRolls(ctx, tx, batch, &s.paths); err != nil {
			return s.dbErr(op, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.paths.Add(fresh) // committed: the IDs exist
	return nil
}

// QueryViews returns the totals and one page of per-path counts of a project
// over an hour range, as store.Store documents. From and To, when set, must
// be whole hours; a range with From at or after To is empty.
func (s *Store) QueryViews(ctx context.Context, q store.ViewsQuery) (store.ViewsResult, error) {
	const op = "query views"
	if p := q.Problem(); p != "" {
		return store.ViewsResult{}, invalid(op, "%s", p)
	}
	// The counts come from the rolls: the day rolls of the whole UTC days
	// in the range and the hour rolls of its ragged edges, so the cost
	// grows with the project's paths, not with paths × hours.
	db, err := s.db()
	if err != nil {
		return store.ViewsResult{}, err
	}
	var tally rollup.Tally
	if err := tallyRolls(ctx, db, q.ProjectID, rollup.Split(q.From, q.To), &tally); err != nil {
		return store.ViewsResult{}, s.dbErr(op, err)
	}
	rows, more, err := tally.Page(q.Offset, q.Limit, pathNames(ctx, db))
	if err != nil {
		return store.ViewsResult{}, s.dbErr(op, err)
	}
	return store.ViewsResult{Totals: tally.Totals(), Rows: rows, HasMore: more}, nil
}
