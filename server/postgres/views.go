package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/store"
)

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
// Hour), in one transaction, after applying the cap on distinct paths per
// project and day. The counts are stored in the rolls (see rolls.go): the
// hour rolls are the record. The batch is validated first: one bad count
// refuses the whole batch and nothing is stored. Project IDs and paths that
// PostgreSQL's text cannot hold (invalid UTF-8, NUL) are stored with U+FFFD
// in place of the bad bytes, where SQLite would keep them as they are.
//
// The only locks are the view_days rows of the batch's days and weeks,
// taken in sorted order by every flush of every replica (lockDays), so
// that concurrent flushes of the same days queue instead of deadlocking.
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
			continue // adds nothing
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
		if err := addToRolls(ctx, tx, capped.Counts); err != nil {
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
