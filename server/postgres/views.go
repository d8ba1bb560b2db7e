package postgres

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/store"
)

// addViews is AddViews' statement for the rows. The batch arrives as six
// parallel arrays, unnested into rows and upserted together, so a flush of
// thousands of counts is one round trip and one atomic statement. ON
// CONFLICT adds to the row another flush may have created a moment before
// (the insert waits for that flush's commit, then updates), never
// overwriting. ORDER BY the ordinality keeps the rows in the order of the
// arrays, which AddViews has sorted by key: see AddViews for why that order
// matters.
const addViews = `INSERT INTO page_views AS v (project_id, path, hour, human, ai, bot)
	SELECT b.project_id, b.path, b.hour, b.human, b.ai, b.bot
	FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::bigint[], $5::bigint[], $6::bigint[])
	     WITH ORDINALITY AS b (project_id, path, hour, human, ai, bot, n)
	ORDER BY b.n
	ON CONFLICT (project_id, hour, path) DO UPDATE SET
		human = v.human + excluded.human,
		ai    = v.ai    + excluded.ai,
		bot   = v.bot   + excluded.bot`

// WithDailyPathCap sets the cap on distinct paths per project and UTC day:
// past it, views of a path new to the day are counted under
// store.OtherPagesPath for their hour (see store.Store's AddViews). The
// default is store.DefaultDailyPathCap. It must be at least 1.
func WithDailyPathCap(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("postgres: daily path cap %d: must be at least 1", n)
		}
		c.pathCap = n
		return nil
	}
}

var _ store.ViewFolder = (*Store)(nil)

// ViewFolds returns what AddViews folded into store.OtherPagesPath since
// Open, in this process.
func (s *Store) ViewFolds() store.ViewFolds { return s.folds.Load() }

// AddViews adds each count to the stored counts of its (ProjectID, Path,
// Hour), in one statement, and to the rolls the views query reads (see
// rolls.go), in the same transaction, after applying the cap on distinct
// paths per project and day. The batch is validated first: one bad count
// refuses the whole batch and nothing is stored. Project IDs and paths that
// PostgreSQL's text cannot hold (invalid UTF-8, NUL) are stored with U+FFFD
// in place of the bad bytes, where SQLite would keep them as they are. A sum
// beyond int64 fails the statement ("bigint out of range"), so the batch,
// instead of storing a wrong count.
//
// Locks are taken in one order by every flush of every replica, so that
// concurrent flushes queue instead of deadlocking: first the view_days rows
// of the batch's days, sorted (they also guard the days' rolls, and make
// the cap's count of a day's paths exact); then the page_views rows, in
// one statement whose rows are sorted by key. Each upsert locks its row
// until commit, in the order the rows are processed: two flushes that took
// overlapping keys in different orders could each hold a row the other
// waits for, and PostgreSQL would abort one of them as a deadlock. Counts
// of the same key are merged in Go first: ON CONFLICT DO UPDATE may not
// touch one row twice in a statement.
func (s *Store) AddViews(ctx context.Context, counts []store.ViewCount) error {
	const op = "add views"
	for i, c := range counts {
		if p := c.Problem(); p != "" {
			return invalid(op, "count %d: %s", i, p)
		}
	}
	batch := make([]store.ViewCount, 0, len(counts))
	for _, c := range counts {
		if c.Human == 0 && c.AI == 0 && c.Bot == 0 {
			continue // adds nothing; a row of zeros is noise
		}
		// A path from a request line may hold any bytes ("/%ff" decodes
		// to an invalid one); it is counted under a storable spelling
		// rather than failing the batch (see makeStorable).
		c.ProjectID, c.Path, c.Hour = makeStorable(c.ProjectID), makeStorable(c.Path), c.Hour.UTC()
		batch = append(batch, c)
	}
	if len(batch) == 0 {
		return nil
	}
	var capped rollup.Capped
	err := s.tx(ctx, op, func(tx pgx.Tx) error {
		days, err := lockDays(ctx, tx, batch)
		if err != nil {
			return s.dbErr(op, err)
		}
		if capped, err = rollup.Cap(batch, s.pathCap, &s.days, &dayStore{ctx: ctx, tx: tx, paths: days}); err != nil {
			return s.dbErr(op, err)
		}
		rows, err := mergeViews(capped.Counts)
		if err != nil {
			return invalid(op, "%v", err)
		}
		n := len(rows)
		projects, paths := make([]string, n), make([]string, n)
		hours := make([]time.Time, n)
		human, ai, bot := make([]int64, n), make([]int64, n), make([]int64, n)
		for i, c := range rows {
			projects[i], paths[i], hours[i] = c.ProjectID, c.Path, c.Hour
			human[i], ai[i], bot[i] = c.Human, c.AI, c.Bot
		}
		if _, err := tx.Exec(ctx, addViews, projects, paths, hours, human, ai, bot); err != nil {
			return s.dbErr(op, err)
		}
		if err := addToRolls(ctx, tx, rows); err != nil {
			return s.dbErr(op, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Committed: the days hold the paths, and the folds happened.
	s.days.Add(capped.Learned)
	s.folds.Add(capped.Folds)
	return nil
}

// mergeViews returns counts with those of the same key added up, sorted by
// key (project, hour, path: the order of page_views' key). Go compares
// strings by bytes; any fixed total order would do, as long as every
// replica uses the same one. counts is sorted in place.
func mergeViews(counts []store.ViewCount) ([]store.ViewCount, error) {
	slices.SortFunc(counts, func(a, b store.ViewCount) int {
		return cmp.Or(cmp.Compare(a.ProjectID, b.ProjectID), a.Hour.Compare(b.Hour), cmp.Compare(a.Path, b.Path))
	})
	rows := counts[:0]
	for _, c := range counts {
		n := len(rows)
		if n == 0 || rows[n-1].ProjectID != c.ProjectID || !rows[n-1].Hour.Equal(c.Hour) || rows[n-1].Path != c.Path {
			rows = append(rows, c)
			continue
		}
		m := &rows[n-1]
		if m.Human > math.MaxInt64-c.Human || m.AI > math.MaxInt64-c.AI || m.Bot > math.MaxInt64-c.Bot {
			return nil, fmt.Errorf("the batch's counts of %s %s at %v add up beyond int64", c.ProjectID, c.Path, c.Hour)
		}
		m.Human += c.Human
		m.AI += c.AI
		m.Bot += c.Bot
	}
	return rows, nil
}

// QueryViews returns the totals and one page of per-path counts of a project
// over an hour range, as store.Store documents. From and To, when set, must
// be whole hours; a range with From at or after To is empty.
func (s *Store) QueryViews(ctx context.Context, q store.ViewsQuery) (store.ViewsResult, error) {
	const op = "query views"
	if p := q.Problem(); p != "" {
		return store.ViewsResult{}, invalid(op, "%s", p)
	}
	// The counts come from the rolls: the week rolls of the whole weeks in
	// the range, the day rolls of the whole UTC days around them and the
	// hour rolls of its ragged edges, so the cost grows with the paths in
	// the range, not with paths × hours. One
	// statement reads them all, so the totals and the page describe one
	// snapshot.
	db, err := s.db()
	if err != nil {
		return store.ViewsResult{}, err
	}
	var tally rollup.Tally
	defer tally.Release()
	if err := tallyRolls(ctx, db, q.ProjectID, rollup.Split(q.From, q.To), &tally); err != nil {
		return store.ViewsResult{}, s.dbErr(op, err)
	}
	rows, more, err := tally.Page(q.Offset, q.Limit)
	if err != nil {
		return store.ViewsResult{}, s.dbErr(op, err)
	}
	if s.queryHook != nil {
		s.queryHook(tally.Stats())
	}
	return store.ViewsResult{Totals: tally.Totals(), Rows: rows, HasMore: more}, nil
}
