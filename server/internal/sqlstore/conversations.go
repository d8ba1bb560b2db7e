package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// ConversationTx is the statements of the assistant's conversations, token
// days and gap links (store.ConversationStore).
type ConversationTx interface {
	// LockAssistantDay reads how many exchanges the project's UTC day
	// holds and locks the day's count, which it creates at 0 if missing,
	// so that concurrent writers of one day queue and the cap holds across
	// processes (as LockFeedbackDay).
	LockAssistantDay(ctx context.Context, projectID string, day time.Time) (exchanges int64, err error)
	// SaveAssistantDay stores the day's count, locked by LockAssistantDay.
	SaveAssistantDay(ctx context.Context, projectID string, day time.Time, exchanges int64) error
	// InsertThread stores a new thread with no exchanges:
	// store.ErrConflict if its ID is taken.
	InsertThread(ctx context.Context, th store.Thread) error
	// LockThread reads the thread id of the project, its Exchanges
	// filled, and locks it.
	LockThread(ctx context.Context, projectID, id string) (th store.Thread, found bool, err error)
	// SaveThreadExchanges stores how many exchanges the thread holds.
	SaveThreadExchanges(ctx context.Context, id string, exchanges int) error
	// MessageIDTaken reports whether id is an exchange's ID or a
	// question's ID.
	MessageIDTaken(ctx context.Context, id string) (bool, error)
	// InsertExchange stores a new exchange: store.ErrConflict if its ID
	// or its question's ID is taken in the column of its kind (the other
	// column was checked by MessageIDTaken). sources is e.Sources as
	// JSON text.
	InsertExchange(ctx context.Context, e store.Exchange, sources string) error
	// Thread reads the thread id of the project, its Exchanges filled.
	Thread(ctx context.Context, projectID, id string) (th store.Thread, found bool, err error)
	// ThreadExchanges reads the exchanges of the thread id of the
	// project, ordered by AskedAt then ID, their sources as JSON text.
	ThreadExchanges(ctx context.Context, projectID, id string) ([]StoredExchange, error)
	// QueryConversations reads at most q.Limit exchanges that q selects,
	// ordered by ID (descending with q.Newest), from after q.After in
	// that order (see ConversationsByID); the index on (project, id)
	// serves both directions.
	QueryConversations(ctx context.Context, q store.ConversationsQuery) ([]StoredExchange, error)
	// CallerStats counts the project's exchanges asked in [from, to) (a
	// zero bound open) by caller kind.
	CallerStats(ctx context.Context, projectID string, from, to time.Time) (store.CallerCounts, error)
	// AddAssistantTokens adds n to the project's day's tokens, creating
	// the day at n.
	AddAssistantTokens(ctx context.Context, projectID string, day time.Time, n int64) error
	// AssistantTokens reads the project's day's tokens, 0 for none.
	AssistantTokens(ctx context.Context, projectID string, day time.Time) (int64, error)
	// DeleteConversationsBefore deletes the exchanges asked before t,
	// moves the counts of their threads down, deletes the threads left
	// with none, and the days (of tokens and of the daily cap) before
	// day; it returns how many exchanges it deleted.
	DeleteConversationsBefore(ctx context.Context, t, day time.Time) (int, error)
	// InsertGapLink stores l unless a link of the same project, kind, key
	// and job is stored already, which it leaves as it is.
	InsertGapLink(ctx context.Context, l store.GapLink) error
	// GapLinks reads the project's links, ordered by CreatedAt, JobID,
	// Kind and Key.
	GapLinks(ctx context.Context, projectID string) ([]store.GapLink, error)
}

// StoredExchange is an exchange as a backend reads it: its sources still
// JSON text, which the shared methods decode alike for every backend.
type StoredExchange struct {
	store.Exchange
	Sources string
}

// storedSource is a source in the sources column's JSON.
type storedSource struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

// EncodeSources returns sources as the sources column keeps them: a JSON
// array of {"title", "url"} objects, "[]" for none.
func EncodeSources(sources []store.Source) string {
	out := make([]storedSource, len(sources))
	for i, s := range sources {
		out[i] = storedSource(s)
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic(err) // strings always marshal
	}
	return string(b)
}

// decodeExchanges returns the exchanges with their sources decoded.
func decodeExchanges(rows []StoredExchange) ([]store.Exchange, error) {
	out := make([]store.Exchange, len(rows))
	for i, r := range rows {
		var ss []storedSource
		if err := json.Unmarshal([]byte(r.Sources), &ss); err != nil {
			return nil, fmt.Errorf("exchange %q: sources: %w", r.ID, err)
		}
		e := r.Exchange
		e.Sources = make([]store.Source, len(ss))
		for j, s := range ss {
			e.Sources[j] = store.Source(s)
		}
		out[i] = e
	}
	return out, nil
}

// AddExchange stores an exchange, and its new thread, as
// store.ConversationStore documents: the thread first (created, or locked
// so that its cap holds whatever other processes add), then the project's
// day (locked, for the daily cap), then the IDs, then the rows. Every
// write that locks both takes a thread before a day, the retention
// included, so none waits for another in a circle.
func (s *Store) AddExchange(ctx context.Context, e store.Exchange, thread *store.Thread) error {
	return s.exec(ctx, "add exchange", store.ValidateAddExchange(e, thread), func(tx Tx) error {
		if thread != nil {
			if err := requireProject(ctx, tx, e.ProjectID); err != nil {
				return err
			}
		}
		var (
			th  store.Thread
			err error
		)
		if thread != nil {
			if err := tx.InsertThread(ctx, *thread); err != nil {
				return err
			}
			th = *thread
			th.Exchanges = 0
		} else {
			var found bool
			th, found, err = tx.LockThread(ctx, e.ProjectID, e.ThreadID)
			if err == nil && !found {
				err = fmt.Errorf("thread %q of project %q: %w", e.ThreadID, e.ProjectID, store.ErrNotFound)
			}
			if err != nil {
				return err
			}
		}
		day := store.TokenDay(e.AskedAt)
		held, err := tx.LockAssistantDay(ctx, e.ProjectID, day)
		if err != nil {
			return err
		}
		if e.DailyCap > 0 && held >= int64(e.DailyCap) {
			return fmt.Errorf("project %q holds %d exchanges on %s: %w", e.ProjectID, held, day.Format(time.DateOnly), store.ErrFull)
		}
		if e.ThreadCap > 0 && th.Exchanges >= e.ThreadCap {
			return fmt.Errorf("thread %q holds %d exchanges: %w", th.ID, th.Exchanges, store.ErrFull)
		}
		for _, id := range []string{e.ID, e.QuestionID} {
			taken, err := tx.MessageIDTaken(ctx, id)
			if err != nil {
				return err
			}
			if taken {
				return fmt.Errorf("exchange %q: message ID %q: %w", e.ID, id, store.ErrConflict)
			}
		}
		if err := tx.InsertExchange(ctx, e, EncodeSources(e.Sources)); err != nil {
			return err
		}
		if err := tx.SaveThreadExchanges(ctx, th.ID, th.Exchanges+1); err != nil {
			return err
		}
		return tx.SaveAssistantDay(ctx, e.ProjectID, day, held+1)
	})
}

// Thread returns a thread of the project, or ErrNotFound.
func (s *Store) Thread(ctx context.Context, projectID, id string) (store.Thread, error) {
	return read(ctx, s, "thread", func(tx Tx) (store.Thread, error) {
		th, found, err := tx.Thread(ctx, projectID, id)
		if err == nil && !found {
			err = fmt.Errorf("thread %q of project %q: %w", id, projectID, store.ErrNotFound)
		}
		return th, err
	})
}

// ThreadExchanges returns a thread's exchanges in the order they were
// asked, or ErrNotFound. A stored thread holds at least one exchange, so
// the thread is looked up only when none is found.
func (s *Store) ThreadExchanges(ctx context.Context, projectID, id string) ([]store.Exchange, error) {
	return read(ctx, s, "thread exchanges", func(tx Tx) ([]store.Exchange, error) {
		rows, err := tx.ThreadExchanges(ctx, projectID, id)
		if err != nil {
			return nil, err
		}
		if len(rows) == 0 {
			_, found, err := tx.Thread(ctx, projectID, id)
			if err == nil && !found {
				err = fmt.Errorf("thread %q of project %q: %w", id, projectID, store.ErrNotFound)
			}
			if err != nil {
				return nil, err
			}
		}
		return decodeExchanges(rows)
	})
}

// QueryConversations returns one page of a project's exchanges, as
// store.ConversationStore documents (see readPage).
func (s *Store) QueryConversations(ctx context.Context, q store.ConversationsQuery) (store.ConversationsPage, error) {
	q.From, q.To = ceilMicro(q.From), ceilMicro(q.To)
	rows, more, err := readPage(ctx, s, "query conversations", q.Validate(), q.Limit, func(tx Tx, limit int) ([]store.Exchange, error) {
		q.Limit = limit
		rows, err := tx.QueryConversations(ctx, q)
		if err != nil {
			return nil, err
		}
		return decodeExchanges(rows)
	})
	return store.ConversationsPage{Exchanges: rows, HasMore: more}, err
}

// ConversationsByID returns how a backend's QueryConversations pages by
// ID: the comparison of an exchange's ID with the cursor (q.After) and
// the ORDER BY. Oldest first, the IDs after the cursor are greater;
// newest first (q.Newest), less, read by the same (project_id, id) index
// scanned backwards.
func ConversationsByID(q store.ConversationsQuery) (afterCursor, orderBy string) {
	if q.Newest {
		return "id <", "id DESC"
	}
	return "id >", "id"
}

// CallerStats counts a project's exchanges asked in [from, to) by caller
// kind.
func (s *Store) CallerStats(ctx context.Context, projectID string, from, to time.Time) (store.CallerCounts, error) {
	if err := store.ValidateCallerStats(projectID, from, to); err != nil {
		return store.CallerCounts{}, s.db.Fail("caller stats", err)
	}
	return read(ctx, s, "caller stats", func(tx Tx) (store.CallerCounts, error) {
		return tx.CallerStats(ctx, projectID, ceilMicro(from), ceilMicro(to))
	})
}

// AddAssistantTokens adds n tokens to the project's UTC day of at.
func (s *Store) AddAssistantTokens(ctx context.Context, projectID string, at time.Time, n int64) error {
	return s.exec(ctx, "add assistant tokens", store.ValidateAddAssistantTokens(projectID, at, n), func(tx Tx) error {
		return tx.AddAssistantTokens(ctx, projectID, store.TokenDay(at), n)
	})
}

// AssistantTokens reads the tokens of the project's UTC day of day.
func (s *Store) AssistantTokens(ctx context.Context, projectID string, day time.Time) (int64, error) {
	if err := store.ValidateAssistantTokens(projectID, day); err != nil {
		return 0, s.db.Fail("assistant tokens", err)
	}
	return read(ctx, s, "assistant tokens", func(tx Tx) (int64, error) {
		return tx.AssistantTokens(ctx, projectID, store.TokenDay(day))
	})
}

// DeleteConversationsBefore deletes what was asked before t, as
// store.ConversationStore documents, in one transaction.
func (s *Store) DeleteConversationsBefore(ctx context.Context, t time.Time) (int, error) {
	return write(ctx, s, "delete conversations", store.ValidateDeleteConversationsBefore(t), func(tx Tx) (int, error) {
		return tx.DeleteConversationsBefore(ctx, ceilMicro(t), store.TokenDay(t))
	})
}

// LinkGaps records the links, each job checked to be the project's first.
func (s *Store) LinkGaps(ctx context.Context, ls []store.GapLink) error {
	return s.exec(ctx, "link gaps", store.ValidateLinkGaps(ls), func(tx Tx) error {
		checked := map[string]bool{}
		for _, l := range ls {
			if checked[l.JobID] {
				continue
			}
			if _, found, err := tx.Job(ctx, l.ProjectID, l.JobID); err != nil {
				return err
			} else if !found {
				return fmt.Errorf("job %q of project %q: %w", l.JobID, l.ProjectID, store.ErrNotFound)
			}
			checked[l.JobID] = true
		}
		for _, l := range ls {
			if err := tx.InsertGapLink(ctx, l); err != nil {
				return err
			}
		}
		return nil
	})
}

// GapLinks returns a project's links in their order.
func (s *Store) GapLinks(ctx context.Context, projectID string) ([]store.GapLink, error) {
	return read(ctx, s, "gap links", func(tx Tx) ([]store.GapLink, error) {
		ls, err := tx.GapLinks(ctx, projectID)
		return append([]store.GapLink{}, ls...), err
	})
}
