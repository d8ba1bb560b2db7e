package sqlstore

import (
	"context"
	"crypto/rand"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/store"
)

// Visitors has the methods of store.VisitorStore over the visitor rolls of
// package rollup, for a backend that embeds it. Their steps are here once:
// validate; in one transaction, apply the views' cap and add the batch to
// the hour, day and week rolls; once committed, remember the paths the cap
// found held. A query reads the rolls of its range in one snapshot and
// ranks their merge.
type Visitors struct {
	db   VisitorsBackend
	days rollup.DayCache
	sums summaryMarks
}

// NewVisitors returns the visitors methods over db.
func NewVisitors(db VisitorsBackend) *Visitors { return &Visitors{db: db} }

// VisitorsBackend is a SQL database as the visitors methods use it.
type VisitorsBackend interface {
	// StorableVisitors returns the counts of a validated batch as the
	// database can store them, leaving out those without a sketch; it
	// may reuse counts' memory.
	StorableVisitors(counts []store.VisitorCount) []store.VisitorCount
	// WriteVisitors runs fn in one transaction that guards the visitor
	// rolls of batch's days and weeks (PostgreSQL locks the days' rows,
	// as for views, in one order, so that concurrent flushes queue), and
	// commits it if fn returns nil.
	WriteVisitors(ctx context.Context, op string, batch []store.VisitorCount, fn func(VisitorsTx) error) error
	// ReadVisitors runs fn with a reader of one snapshot of the visitor
	// rolls and summaries.
	ReadVisitors(ctx context.Context, op string, fn func(VisitorsReader) error) error
	// UnsummarizedVisitorDays returns, latest first, at most limit days
	// before before of project's day rolls that no summary describes (its
	// Seq is not the roll's last).
	UnsummarizedVisitorDays(ctx context.Context, op, project string, before int64, limit int) ([]int64, error)
	// SummarizeVisitorDay reads the segments of project's day roll of day
	// in one snapshot and stores summarize's summary of them, naming their
	// last Seq, unless a summary naming that Seq or a later one is stored.
	SummarizeVisitorDay(ctx context.Context, op, project string, day int64, summarize func(segs [][]byte) ([]byte, error)) error
	// SummarizeVisitorWeek reads, in one snapshot, the VisitorDay of each
	// day roll of project's week and the summary of each day (nil if it
	// has none), in the same order, and stores the week summary and days
	// that sum returns, replacing the week's, unless sum's ok is false.
	SummarizeVisitorWeek(ctx context.Context, op, project string, week int64, sum func(days []rollup.VisitorDay, sums [][]byte) (summary, daySeqs []byte, ok bool, err error)) error
	// VisitorSalt, in one transaction, deletes the salts of days before
	// keepFrom, stores fresh as the salt of day unless it has one, and
	// returns the salt of day. Processes that call it at once for the
	// same day all get the one salt stored.
	VisitorSalt(ctx context.Context, op string, day, keepFrom int64, fresh []byte) ([]byte, error)
	// Fail wraps an error of op (see Backend.Fail).
	Fail(op string, err error) error
}

// VisitorsReader is the visitors statements of one read snapshot.
type VisitorsReader interface {
	// VisitorDays returns the rollup.VisitorDay of each day roll of
	// project from from to to (day starts, half-open).
	VisitorDays(project string, from, to int64) ([]rollup.VisitorDay, error)
	// VisitorWeeks returns the rollup.VisitorWeek of each week summary of
	// project from from to to (week starts, half-open).
	VisitorWeeks(project string, from, to int64) ([]rollup.VisitorWeek, error)
	// TallyVisitors adds to tally what plan names: the summaries of its
	// days, and the segments of its week, day and hour rolls.
	TallyVisitors(project string, plan rollup.VisitorPlan, tally *rollup.VisitorTally) error
}

// VisitorsTx is the visitors statements of one write transaction. Roll
// segments are named by kind, project and start, as in package rollup.
type VisitorsTx interface {
	// HeldPaths answers the cap's question about the batch's days.
	rollup.HeldPaths
	// VisitorSegments lists the stored segments of a roll, in Seq order,
	// each with its size in bytes as Entries.
	VisitorSegments(kind rollup.Kind, project string, at int64) ([]rollup.Segment, error)
	// ReadVisitorSegments returns the segments of a roll from Seq from
	// on, in Seq order.
	ReadVisitorSegments(kind rollup.Kind, project string, at, from int64) ([][]byte, error)
	// StoreVisitorSegment deletes the roll's segments from a.Replaces on,
	// if it is not 0, and stores a's segment.
	StoreVisitorSegment(kind rollup.Kind, project string, at int64, a rollup.Appended) error
}

// AddVisitors merges each count's sketches into its (ProjectID, Path, Hour)
// in one transaction, after the views' cap renamed the paths its day does
// not hold. The batch is validated first: one bad count refuses the whole
// batch and nothing is stored.
func (v *Visitors) AddVisitors(ctx context.Context, counts []store.VisitorCount) error {
	const op = "add visitors"
	if err := store.ValidateVisitorCounts(counts); err != nil {
		return v.db.Fail(op, err)
	}
	batch := v.db.StorableVisitors(counts)
	if len(batch) == 0 {
		return nil
	}
	var capped rollup.CappedVisitors
	err := v.db.WriteVisitors(ctx, op, batch, func(tx VisitorsTx) error {
		var err error
		if capped, err = rollup.CapVisitors(batch, &v.days, tx); err != nil {
			return v.db.Fail(op, err)
		}
		if err := addVisitorRolls(tx, capped.Counts); err != nil {
			return v.db.Fail(op, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	v.days.Add(capped.Learned)
	v.summarizeClosedDays(ctx, batch)
	return nil
}

// addVisitorRolls adds counts to the hour, day and week rolls they fall in,
// each roll's segment merged with its last small ones (rollup.Absorb), so a
// flush rewrites about its own size, not the day's.
func addVisitorRolls(tx VisitorsTx, counts []store.VisitorCount) error {
	rolls, err := rollup.GroupVisitors(counts)
	if err != nil {
		return err
	}
	for kind, rs := range rolls {
		k := rollup.Kind(kind)
		for _, r := range rs {
			segs, err := tx.VisitorSegments(k, r.ProjectID, r.At)
			if err != nil {
				return err
			}
			a, err := rollup.AppendVisitors(r, segs, func(from int64) ([][]byte, error) {
				return tx.ReadVisitorSegments(k, r.ProjectID, r.At, from)
			})
			if err != nil {
				return err
			}
			if err := tx.StoreVisitorSegment(k, r.ProjectID, r.At, a); err != nil {
				return err
			}
		}
	}
	return nil
}

// QueryVisitors returns the totals and one page of per-path unique
// visitors of a project over an hour range, as store.VisitorStore
// documents, from the week rolls of the range's whole weeks, the day rolls
// of the whole days around them and the hour rolls of its ragged edges.
func (v *Visitors) QueryVisitors(ctx context.Context, q store.ViewsQuery) (store.VisitorsResult, error) {
	const op = "query visitors"
	if err := q.Validate(); err != nil {
		return store.VisitorsResult{}, v.db.Fail(op, err)
	}
	var tally rollup.VisitorTally
	defer tally.Release()
	span := rollup.Split(q.From, q.To)
	err := v.db.ReadVisitors(ctx, op, func(r VisitorsReader) error {
		var days []rollup.VisitorDay
		var weeks []rollup.VisitorWeek
		if from, to, ok := span.DayRange(); ok {
			var err error
			if days, err = r.VisitorDays(q.ProjectID, from, to); err != nil {
				return err
			}
		}
		if span.Weeks[0] < span.Weeks[1] && len(days) > 0 {
			var err error
			if weeks, err = r.VisitorWeeks(q.ProjectID, span.Weeks[0], span.Weeks[1]); err != nil {
				return err
			}
		}
		return r.TallyVisitors(q.ProjectID, rollup.PlanVisitors(span, days, weeks), &tally)
	})
	if err != nil {
		return store.VisitorsResult{}, err
	}
	res, err := tally.Result(q)
	if err != nil {
		return store.VisitorsResult{}, v.db.Fail(op, err)
	}
	return res, nil
}

// VisitorSalt returns the salt of the UTC day holding day, made of fresh
// random bytes on the first request, and deletes every salt of a day
// before the one preceding it.
func (v *Visitors) VisitorSalt(ctx context.Context, day time.Time) ([]byte, error) {
	const op = "visitor salt"
	if err := store.ValidateVisitorSalt(day); err != nil {
		return nil, v.db.Fail(op, err)
	}
	at := rollup.DayOf(day.Unix())
	fresh := make([]byte, store.VisitorSaltBytes)
	rand.Read(fresh)
	return v.db.VisitorSalt(ctx, op, at, at-rollup.Day, fresh)
}
