package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/store"
)

var _ store.ViewFolder = (*Store)(nil)

// WithDailyPathCap sets the cap on distinct paths per project and UTC day:
// past it, views of a path new to the day are counted under
// store.OtherPagesPath for their hour (see store.Store's AddViews). The
// default is store.DefaultDailyPathCap. It must be at least 1.
func WithDailyPathCap(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("sqlite: daily path cap %d: must be at least 1", n)
		}
		c.pathCap = n
		return nil
	}
}

// ViewFolds returns what AddViews folded into store.OtherPagesPath since
// Open, in this process.
func (s *Store) ViewFolds() store.ViewFolds { return s.folds.Load() }

// AddViews adds each count to the stored counts of its (ProjectID, Path,
// Hour), all in one transaction, after applying the cap on distinct paths
// per project and day. The counts are stored in the rolls (see rolls.go):
// the hour rolls are the record. The batch is validated first: one bad
// count refuses the whole batch and nothing is stored.
func (s *Store) AddViews(ctx context.Context, counts []store.ViewCount) error {
	const op = "add views"
	for i, c := range counts {
		if p := c.Problem(); p != "" {
			return invalid(op, "count %d: %s", i, p)
		}
	}
	if len(counts) == 0 {
		return nil
	}
	var capped rollup.Capped
	err := s.write(ctx, op, func(tx *sql.Tx) error {
		// The cap first: it decides which path each count is stored
		// under, and must see the day before this batch's counts.
		var err error
		capped, err = rollup.Cap(counts, s.pathCap, &s.days, &dayStore{ctx: ctx, tx: tx, st: s.viewStmts})
		if err != nil {
			return dbErr(op, err)
		}
		if err := addToRolls(ctx, tx, s.viewStmts, capped.Counts); err != nil {
			return dbErr(op, err)
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
	// the range, not with paths × hours.
	span := rollup.Split(q.From, q.To)
	var res store.ViewsResult
	err := s.read(ctx, op, func(tx *sql.Tx) error {
		// One read transaction: the totals and the page describe the same
		// data even while a flush commits.
		var tally rollup.Tally
		defer tally.Release()
		if err := tallyRolls(ctx, tx, q.ProjectID, span, &tally); err != nil {
			return dbErr(op, err)
		}
		rows, more, err := tally.Page(q.Offset, q.Limit)
		if err != nil {
			return dbErr(op, err)
		}
		if s.queryHook != nil {
			s.queryHook(tally.Stats())
		}
		res = store.ViewsResult{Totals: tally.Totals(), Rows: rows, HasMore: more}
		return nil
	})
	if err != nil {
		return store.ViewsResult{}, err
	}
	return res, nil
}
