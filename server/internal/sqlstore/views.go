package sqlstore

import (
	"context"
	"fmt"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/store"
)

// Views has the views methods of store.Store (AddViews, QueryViews) and
// store.ViewFolder, over the rolls of package rollup, for a backend that
// embeds it. Their steps are here once: validate; in one transaction,
// apply the cap and add the batch to the rolls; once committed, remember
// what the cap learned. A query reads the rolls of its range in one
// snapshot and ranks their sum.
type Views struct {
	db        ViewsBackend
	capper    rollup.Capper
	queryHook func(rollup.Stats) // see SetQueryHook
}

var _ store.ViewFolder = (*Views)(nil)

// CheckDailyPathCap refuses a cap on distinct paths per project and day
// below 1 (backend names the package in the error): a day must hold at
// least one path, or every view would fold.
func CheckDailyPathCap(backend string, n int) error {
	if n < 1 {
		return fmt.Errorf("%s: daily path cap %d: must be at least 1", backend, n)
	}
	return nil
}

// SetQueryHook makes every QueryViews of v report its work to f, for the
// tests that check it stays bounded. Set it before v is used. A function,
// not a field or method, so that it is not promoted to a backend's Store.
func SetQueryHook(v *Views, f func(rollup.Stats)) { v.queryHook = f }

// NewViews returns the views methods over db, with the cap on distinct
// paths per project and UTC day at pathCap.
func NewViews(db ViewsBackend, pathCap int) *Views {
	return &Views{db: db, capper: rollup.Capper{Limit: int64(pathCap)}}
}

// ViewsBackend is a SQL database as the views methods use it.
type ViewsBackend interface {
	// StorableViews returns the counts of a validated batch as the
	// database can store them, leaving out those that add nothing; it may
	// reuse counts' memory.
	StorableViews(counts []store.ViewCount) []store.ViewCount
	// WriteViews runs fn in one transaction that guards the rolls and the
	// days of batch (PostgreSQL locks the days' rows, in one order, so
	// that concurrent flushes queue), and commits it if fn returns nil.
	WriteViews(ctx context.Context, op string, batch []store.ViewCount, fn func(ViewsTx) error) error
	// TallyRolls adds to tally, from one snapshot, the segments of the
	// rolls of project that span covers.
	TallyRolls(ctx context.Context, op, project string, span rollup.Span, tally *rollup.Tally) error
	// ReadRolls calls add, from one snapshot, with every segment of the
	// rolls of kind of project that start in [at[0], at[1]), and the
	// start of its roll. A segment is valid only during the call.
	ReadRolls(ctx context.Context, op, project string, kind rollup.Kind, at [2]int64, add func(at int64, seg []byte) error) error
	// ReadAgents reads, from one snapshot, the totals of q (a validated
	// query) and q.Limit of its rows from q.Offset, in QueryAgents' orders.
	ReadAgents(ctx context.Context, op string, q store.AgentsQuery) (store.AgentsResult, error)
	// ReadAgentSeries reads the views of q per agent and day, in
	// AgentSeries' order.
	ReadAgentSeries(ctx context.Context, op string, q store.AgentsQuery) ([]store.AgentDay, error)
	// Fail wraps an error of op (see Backend.Fail).
	Fail(op string, err error) error
}

// ViewsTx is the views statements of one write transaction.
type ViewsTx interface {
	// DayStore answers the cap's questions about the batch's days.
	rollup.DayStore
	// AddToRolls adds counts, as the cap left them, to the hour, day and
	// week rolls they fall in (rollup.Group's).
	AddToRolls(counts []store.ViewCount) error
	// AddAgents adds each row's views to its row of agent_days, making
	// it if missing. The rows are distinct and sorted (groupAgents).
	AddAgents(rows []AgentRow) error
}

// ViewFolds returns what AddViews folded into store.OtherPagesPath since
// the store opened, in this process.
func (v *Views) ViewFolds() store.ViewFolds { return v.capper.Folds() }

// AddViews adds each count to the stored counts of its (ProjectID, Path,
// Hour), in one transaction, after applying the cap on distinct paths per
// project and day; the hour rolls are the record. The batch is validated
// first: one bad count refuses the whole batch and nothing is stored.
func (v *Views) AddViews(ctx context.Context, counts []store.ViewCount) error {
	const op = "add views"
	if err := store.ValidateViewCounts(counts); err != nil {
		return v.db.Fail(op, err)
	}
	batch := v.db.StorableViews(counts)
	if len(batch) == 0 {
		return nil
	}
	var capped rollup.Capped
	err := v.db.WriteViews(ctx, op, batch, func(tx ViewsTx) error {
		// The cap first: it decides which path each count is stored
		// under, and must see the day before this batch's counts.
		var err error
		if capped, err = v.capper.Cap(batch, tx); err != nil {
			return v.db.Fail(op, err)
		}
		if err := tx.AddToRolls(capped.Counts); err != nil {
			return v.db.Fail(op, err)
		}
		// The agents' views follow their count's path as the cap left
		// it, so the cap bounds their paths as it bounds the views'.
		if rows := groupAgents(capped.Counts); len(rows) > 0 {
			if err := tx.AddAgents(rows); err != nil {
				return v.db.Fail(op, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	v.capper.Committed(capped)
	return nil
}

// QueryViews returns the totals and one page of per-path counts of a project
// over an hour range, as store.Store documents, from the rolls that
// rollup.Split picks for the range. With q.Path, the rolls are the same:
// a roll keeps its paths packed in one segment, so the path is picked
// from each as it is read.
func (v *Views) QueryViews(ctx context.Context, q store.ViewsQuery) (store.ViewsResult, error) {
	const op = "query views"
	if err := q.Validate(); err != nil {
		return store.ViewsResult{}, v.db.Fail(op, err)
	}
	tally := rollup.Tally{Path: q.Path}
	defer tally.Release()
	if err := v.db.TallyRolls(ctx, op, q.ProjectID, rollup.Split(q.From, q.To), &tally); err != nil {
		return store.ViewsResult{}, err
	}
	res, err := tally.Result(q, v.queryHook)
	if err != nil {
		return store.ViewsResult{}, v.db.Fail(op, err)
	}
	return res, nil
}
