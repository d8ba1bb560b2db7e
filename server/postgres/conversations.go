package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/docsapi/docsapi-go/server/internal/sqlstore"
	"github.com/docsapi/docsapi-go/server/store"
)

// LockAssistantDay reads the day's count of exchanges, creating it at 0,
// and locks its row: another replica adding to the same day waits for this
// commit.
func (t txn) LockAssistantDay(ctx context.Context, projectID string, day time.Time) (int64, error) {
	if _, err := t.q.Exec(ctx,
		`INSERT INTO assistant_days (project_id, day, exchanges) VALUES ($1, $2, 0) ON CONFLICT DO NOTHING`,
		projectID, ts(day)); err != nil {
		return 0, err
	}
	var n int64
	err := t.q.QueryRow(ctx, `SELECT exchanges FROM assistant_days WHERE project_id = $1 AND day = $2 FOR UPDATE`,
		projectID, ts(day)).Scan(&n)
	return n, err
}

// SaveAssistantDay stores the day's count.
func (t txn) SaveAssistantDay(ctx context.Context, projectID string, day time.Time, exchanges int64) error {
	_, err := t.q.Exec(ctx, `UPDATE assistant_days SET exchanges = $3 WHERE project_id = $1 AND day = $2`,
		projectID, ts(day), exchanges)
	return err
}

// InsertThread stores a new thread; the primary key decides a taken ID.
func (t txn) InsertThread(ctx context.Context, th store.Thread) error {
	_, err := t.q.Exec(ctx,
		`INSERT INTO assistant_threads (id, project_id, key_hash, fp, caller, created_at, exchanges) VALUES ($1, $2, $3, $4, $5, $6, 0)`,
		th.ID, th.ProjectID, th.KeyHash, th.Fp, string(th.Caller), ts(th.CreatedAt))
	switch {
	case uniqueViolation(err, "assistant_threads_pkey"):
		return fmt.Errorf("thread %q: %w", th.ID, store.ErrConflict)
	case foreignKeyViolation(err):
		// The project was deleted since AddExchange checked it.
		return fmt.Errorf("project %q: %w", th.ProjectID, store.ErrNotFound)
	}
	return err
}

const threadColumns = `id, project_id, key_hash, fp, caller, created_at, exchanges`

func scanThread(row pgx.CollectableRow) (store.Thread, error) {
	var (
		th      store.Thread
		caller  string
		created pgtype.Timestamptz
	)
	if err := row.Scan(&th.ID, &th.ProjectID, &th.KeyHash, &th.Fp, &caller, &created, &th.Exchanges); err != nil {
		return store.Thread{}, err
	}
	th.Caller, th.CreatedAt = store.CallerKind(caller), fromTS(created)
	return th, nil
}

// Thread reads the thread of the project: a seek in the primary key.
func (t txn) Thread(ctx context.Context, projectID, id string) (store.Thread, bool, error) {
	return queryOne(ctx, t.q, scanThread,
		`SELECT `+threadColumns+` FROM assistant_threads WHERE id = $1 AND project_id = $2`, id, projectID)
}

// LockThread reads the thread and locks its row: a concurrent exchange of
// the thread waits, so that its cap holds.
func (t txn) LockThread(ctx context.Context, projectID, id string) (store.Thread, bool, error) {
	return queryOne(ctx, t.q, scanThread,
		`SELECT `+threadColumns+` FROM assistant_threads WHERE id = $1 AND project_id = $2 FOR UPDATE`, id, projectID)
}

// SaveThreadExchanges stores the thread's count of exchanges.
func (t txn) SaveThreadExchanges(ctx context.Context, id string, exchanges int) error {
	_, err := t.q.Exec(ctx, `UPDATE assistant_threads SET exchanges = $2 WHERE id = $1`, id, exchanges)
	return err
}

// MessageIDTaken looks id up in both columns: two seeks, the primary key
// and question_id's unique index.
func (t txn) MessageIDTaken(ctx context.Context, id string) (bool, error) {
	var taken bool
	err := t.q.QueryRow(ctx,
		`SELECT EXISTS (SELECT 1 FROM assistant_exchanges WHERE id = $1)
		     OR EXISTS (SELECT 1 FROM assistant_exchanges WHERE question_id = $1)`, id).Scan(&taken)
	return taken, err
}

// InsertExchange stores a new exchange; the primary key and question_id's
// unique constraint decide an ID taken in its own column atomically.
func (t txn) InsertExchange(ctx context.Context, e store.Exchange, sources string) error {
	_, err := t.q.Exec(ctx,
		`INSERT INTO assistant_exchanges (id, question_id, project_id, thread_id, question, asked_at, answer, answered_at,
		     response_type, resolution, sources, page_url, caller)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		e.ID, e.QuestionID, e.ProjectID, e.ThreadID, e.Question, ts(e.AskedAt), e.Answer, ts(e.AnsweredAt),
		string(e.ResponseType), string(e.Resolution), sources, e.PageURL, string(e.Caller))
	switch {
	case uniqueViolation(err, "assistant_exchanges_pkey"), uniqueViolation(err, "assistant_exchanges_question_key"):
		return fmt.Errorf("exchange %q: %w", e.ID, store.ErrConflict)
	case foreignKeyViolation(err):
		return fmt.Errorf("thread %q of project %q: %w", e.ThreadID, e.ProjectID, store.ErrNotFound)
	}
	return err
}

const exchangeColumns = `id, question_id, project_id, thread_id, question, asked_at, answer, answered_at,
	response_type, resolution, sources, page_url, caller`

func scanExchange(row pgx.CollectableRow) (sqlstore.StoredExchange, error) {
	var (
		e                                sqlstore.StoredExchange
		responseType, resolution, caller string
		asked, answered                  pgtype.Timestamptz
	)
	if err := row.Scan(&e.ID, &e.QuestionID, &e.ProjectID, &e.ThreadID, &e.Question, &asked, &e.Answer, &answered,
		&responseType, &resolution, &e.Sources, &e.PageURL, &caller); err != nil {
		return sqlstore.StoredExchange{}, err
	}
	e.AskedAt, e.AnsweredAt = fromTS(asked), fromTS(answered)
	e.ResponseType, e.Resolution, e.Caller = store.ResponseType(responseType), store.Resolution(resolution), store.CallerKind(caller)
	return e, nil
}

// ThreadExchanges reads the thread's exchanges in order: the index on
// (thread_id, asked_at, id).
func (t txn) ThreadExchanges(ctx context.Context, projectID, id string) ([]sqlstore.StoredExchange, error) {
	rows, _ := t.q.Query(ctx,
		`SELECT `+exchangeColumns+` FROM assistant_exchanges WHERE thread_id = $1 AND project_id = $2 ORDER BY asked_at, id`,
		id, projectID) // CollectRows reports its error
	return pgx.CollectRows(rows, scanExchange)
}

// askedWhere is the conditions on a project's exchanges asked in [from,
// to), naming only the bounds given, so the planner sees a plain range.
func askedWhere(projectID string, from, to time.Time, args *params) []string {
	where := []string{`project_id = ` + args.add(projectID)}
	if !from.IsZero() {
		where = append(where, `asked_at >= `+args.add(ts(from)))
	}
	if !to.IsZero() {
		where = append(where, `asked_at < `+args.add(ts(to)))
	}
	return where
}

// QueryConversations reads a page by ID: the index on (project_id, id)
// from the cursor's place, forwards or (q.Newest) backwards.
func (t txn) QueryConversations(ctx context.Context, q store.ConversationsQuery) ([]sqlstore.StoredExchange, error) {
	query, args := conversationsQuery(q)
	rows, _ := t.q.Query(ctx, query, args...) // CollectRows reports its error
	return pgx.CollectRows(rows, scanExchange)
}

// conversationsQuery is QueryConversations' statement and its arguments.
func conversationsQuery(q store.ConversationsQuery) (string, []any) {
	var args params
	where := askedWhere(q.ProjectID, q.From, q.To, &args)
	afterCursor, orderBy := sqlstore.ConversationsByID(q)
	if q.After != "" {
		where = append(where, afterCursor+` `+args.add(q.After))
	}
	if q.Resolution != "" {
		where = append(where, `resolution = `+args.add(string(q.Resolution)))
	}
	query := `SELECT ` + exchangeColumns + ` FROM assistant_exchanges WHERE ` + strings.Join(where, ` AND `) +
		` ORDER BY ` + orderBy + ` LIMIT ` + args.add(q.Limit)
	return query, args
}

// CallerStats counts the range's exchanges by caller in one statement.
func (t txn) CallerStats(ctx context.Context, projectID string, from, to time.Time) (store.CallerCounts, error) {
	var args params
	where := askedWhere(projectID, from, to, &args)
	var c store.CallerCounts
	err := t.q.QueryRow(ctx,
		`SELECT count(*) FILTER (WHERE caller = 'web'), count(*) FILTER (WHERE caller = 'api'), count(*) FILTER (WHERE caller = 'other')
		 FROM assistant_exchanges WHERE `+strings.Join(where, ` AND `), args...).Scan(&c.Web, &c.API, &c.Other)
	return c, err
}

// AddAssistantTokens adds to the day's tokens, creating the day: one
// statement, atomic across replicas.
func (t txn) AddAssistantTokens(ctx context.Context, projectID string, day time.Time, n int64) error {
	_, err := t.q.Exec(ctx,
		`INSERT INTO assistant_token_days (project_id, day, tokens) VALUES ($1, $2, $3)
		 ON CONFLICT (project_id, day) DO UPDATE SET tokens = assistant_token_days.tokens + excluded.tokens`,
		projectID, ts(day), n)
	return err
}

// AssistantTokens reads the day's tokens.
func (t txn) AssistantTokens(ctx context.Context, projectID string, day time.Time) (int64, error) {
	var n int64
	err := t.q.QueryRow(ctx, `SELECT tokens FROM assistant_token_days WHERE project_id = $1 AND day = $2`,
		projectID, ts(day)).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return n, err
}

// DeleteConversationsBefore moves the threads' counts down by the
// exchanges it deletes (locking those threads, so that an exchange added
// to one meanwhile waits), then deletes those exchanges, the threads left
// with none, and the days before day.
func (t txn) DeleteConversationsBefore(ctx context.Context, before, day time.Time) (int, error) {
	if _, err := t.q.Exec(ctx,
		`UPDATE assistant_threads SET exchanges = exchanges -
		     (SELECT count(*) FROM assistant_exchanges e WHERE e.thread_id = assistant_threads.id AND e.asked_at < $1)
		 WHERE id IN (SELECT thread_id FROM assistant_exchanges WHERE asked_at < $1)`, ts(before)); err != nil {
		return 0, err
	}
	tag, err := t.q.Exec(ctx, `DELETE FROM assistant_exchanges WHERE asked_at < $1`, ts(before))
	if err != nil {
		return 0, err
	}
	if _, err := t.q.Exec(ctx, `DELETE FROM assistant_threads WHERE exchanges = 0`); err != nil {
		return 0, err
	}
	for _, table := range []string{`assistant_days`, `assistant_token_days`} {
		if _, err := t.q.Exec(ctx, `DELETE FROM `+table+` WHERE day < $1`, ts(day)); err != nil {
			return 0, err
		}
	}
	return int(tag.RowsAffected()), nil
}

// InsertGapLink stores the link, keeping one stored already.
func (t txn) InsertGapLink(ctx context.Context, l store.GapLink) error {
	_, err := t.q.Exec(ctx,
		`INSERT INTO gap_links (project_id, kind, key, job_id, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
		l.ProjectID, string(l.Kind), l.Key, l.JobID, ts(l.CreatedAt))
	return err
}

// GapLinks reads the project's links in order.
func (t txn) GapLinks(ctx context.Context, projectID string) ([]store.GapLink, error) {
	rows, _ := t.q.Query(ctx,
		`SELECT project_id, kind, key, job_id, created_at FROM gap_links WHERE project_id = $1
		 ORDER BY created_at, job_id, kind, key`, projectID) // CollectRows reports its error
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.GapLink, error) {
		var (
			l       store.GapLink
			kind    string
			created pgtype.Timestamptz
		)
		err := row.Scan(&l.ProjectID, &kind, &l.Key, &l.JobID, &created)
		l.Kind, l.CreatedAt = store.GapKind(kind), fromTS(created)
		return l, err
	})
}
