package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// FeedbackTx is the statements of the feedback methods.
type FeedbackTx interface {
	// LockFeedbackDay reads how many entries the project's UTC day holds
	// and locks the day's count, which it creates at 0 if missing, so
	// that concurrent writers of one day queue and the cap holds across
	// processes.
	LockFeedbackDay(ctx context.Context, projectID string, day time.Time) (entries int64, err error)
	// SaveFeedbackDay stores the day's count, locked by LockFeedbackDay.
	SaveFeedbackDay(ctx context.Context, projectID string, day time.Time, entries int64) error
	// InsertFeedback stores a new entry: store.ErrConflict if its ID is
	// taken.
	InsertFeedback(ctx context.Context, f store.Feedback) error
	// QueryFeedback reads at most q.Limit entries that q selects, in
	// QueryFeedback's order, from after q.After; the index on (project,
	// created_at, id) serves it.
	QueryFeedback(ctx context.Context, q store.FeedbackQuery) ([]store.Feedback, error)
	// FeedbackByPage reads at most q.Limit paths' counts, in
	// FeedbackByPage's order.
	FeedbackByPage(ctx context.Context, q store.FeedbackByPageQuery) ([]store.PageFeedback, error)
	// LockFeedback reads the entry id of the project and locks it.
	LockFeedback(ctx context.Context, projectID, id string) (f store.Feedback, found bool, err error)
	// SaveFeedbackStatus stores what SetFeedbackStatus changes of f, an
	// entry the transaction locked: Status and UpdatedAt.
	SaveFeedbackStatus(ctx context.Context, f store.Feedback) error
}

// AddFeedback stores a new pending entry, as store.FeedbackStore
// documents: the project first, then the day's count (locked, so that the
// cap holds whatever other processes add), then the entry.
func (s *Store) AddFeedback(ctx context.Context, n store.NewFeedback) (store.Feedback, error) {
	return write(ctx, s, "add feedback", n.Validate(), func(tx Tx) (store.Feedback, error) {
		if err := requireProject(ctx, tx, n.ProjectID); err != nil {
			return store.Feedback{}, err
		}
		day := store.FeedbackDay(n.CreatedAt)
		entries, err := tx.LockFeedbackDay(ctx, n.ProjectID, day)
		if err != nil {
			return store.Feedback{}, err
		}
		if n.DailyCap > 0 && entries >= int64(n.DailyCap) {
			return store.Feedback{}, fmt.Errorf("project %q holds %d feedback entries on %s: %w", n.ProjectID, entries, day.Format(time.DateOnly), store.ErrFull)
		}
		f := n.Created()
		if err := tx.InsertFeedback(ctx, f); err != nil {
			return store.Feedback{}, err
		}
		if err := tx.SaveFeedbackDay(ctx, n.ProjectID, day, entries+1); err != nil {
			return store.Feedback{}, err
		}
		return storedFeedback(ctx, tx, f)
	})
}

// QueryFeedback returns one page of entries, as store.FeedbackStore
// documents (see readPage).
func (s *Store) QueryFeedback(ctx context.Context, q store.FeedbackQuery) (store.FeedbackPage, error) {
	q.FeedbackFilter = wholeMicros(q.FeedbackFilter)
	entries, more, err := readPage(ctx, s, "query feedback", q.Validate(), q.Limit, func(tx Tx, limit int) ([]store.Feedback, error) {
		q.Limit = limit
		return tx.QueryFeedback(ctx, q)
	})
	return store.FeedbackPage{Entries: entries, HasMore: more}, err
}

// FeedbackByPage counts entries per path, as store.FeedbackStore
// documents (see readPage).
func (s *Store) FeedbackByPage(ctx context.Context, q store.FeedbackByPageQuery) (store.FeedbackByPage, error) {
	q.FeedbackFilter = wholeMicros(q.FeedbackFilter)
	rows, more, err := readPage(ctx, s, "feedback by page", q.Validate(), q.Limit, func(tx Tx, limit int) ([]store.PageFeedback, error) {
		q.Limit = limit
		return tx.FeedbackByPage(ctx, q)
	})
	return store.FeedbackByPage{Rows: rows, HasMore: more}, err
}

// SetFeedbackStatus moves an entry to another status, as
// store.Feedback.WithStatus says.
func (s *Store) SetFeedbackStatus(ctx context.Context, c store.FeedbackStatusChange) (store.Feedback, error) {
	return write(ctx, s, "set feedback status", c.Validate(), func(tx Tx) (store.Feedback, error) {
		f, found, err := tx.LockFeedback(ctx, c.ProjectID, c.ID)
		if err == nil && !found {
			err = fmt.Errorf("feedback %q of project %q: %w", c.ID, c.ProjectID, store.ErrNotFound)
		}
		if err != nil {
			return store.Feedback{}, err
		}
		next, changed := f.WithStatus(c)
		if !changed {
			return f, nil
		}
		if err := tx.SaveFeedbackStatus(ctx, next); err != nil {
			return store.Feedback{}, err
		}
		return storedFeedback(ctx, tx, next)
	})
}

// storedFeedback reads f back as the transaction stored it: its times in
// UTC, to the microsecond.
func storedFeedback(ctx context.Context, tx Tx, f store.Feedback) (store.Feedback, error) {
	got, found, err := tx.LockFeedback(ctx, f.ProjectID, f.ID)
	if err == nil && !found {
		err = fmt.Errorf("feedback %q vanished in its own transaction", f.ID)
	}
	return got, err
}

// wholeMicros returns f with its bounds rounded up to the microsecond (see
// ceilMicro).
func wholeMicros(f store.FeedbackFilter) store.FeedbackFilter {
	f.From, f.To = ceilMicro(f.From), ceilMicro(f.To)
	return f
}

// ceilMicro rounds a range's bound up to the microsecond. Times are stored
// to the microsecond, so a record stored at instant m lies in [From, To)
// exactly when it lies in the rounded range, which the backends can
// compare with stored times as they are.
func ceilMicro(t time.Time) time.Time {
	if r := t.Truncate(time.Microsecond); !r.Equal(t) {
		return r.Add(time.Microsecond)
	}
	return t
}
