package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/sqlstore"
	"github.com/docsapi/docsapi-go/server/store"
)

// LockAssistantDay reads the day's count of exchanges, creating it at 0;
// the write lock keeps it as read.
func (t txn) LockAssistantDay(ctx context.Context, projectID string, day time.Time) (int64, error) {
	if _, err := t.tx.ExecContext(ctx,
		`INSERT INTO assistant_days (project_id, day, exchanges) VALUES (?, ?, 0) ON CONFLICT DO NOTHING`,
		projectID, day.UnixMicro()); err != nil {
		return 0, err
	}
	var n int64
	err := t.tx.QueryRowContext(ctx, `SELECT exchanges FROM assistant_days WHERE project_id = ? AND day = ?`,
		projectID, day.UnixMicro()).Scan(&n)
	return n, err
}

// SaveAssistantDay stores the day's count.
func (t txn) SaveAssistantDay(ctx context.Context, projectID string, day time.Time, exchanges int64) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE assistant_days SET exchanges = ? WHERE project_id = ? AND day = ?`,
		exchanges, projectID, day.UnixMicro())
	return err
}

// InsertThread stores a new thread, after checking that its ID is free
// (the write lock keeps it free until the insert).
func (t txn) InsertThread(ctx context.Context, th store.Thread) error {
	found, err := exists(ctx, t.tx, `SELECT 1 FROM assistant_threads WHERE id = ?`, th.ID)
	if err != nil {
		return err
	}
	if found {
		return fmt.Errorf("thread %q: %w", th.ID, store.ErrConflict)
	}
	_, err = t.tx.ExecContext(ctx,
		`INSERT INTO assistant_threads (id, project_id, key_hash, fp, caller, created_at, exchanges) VALUES (?, ?, ?, ?, ?, ?, 0)`,
		th.ID, th.ProjectID, th.KeyHash, th.Fp, string(th.Caller), micros(th.CreatedAt))
	return err
}

const threadColumns = `id, project_id, key_hash, fp, caller, created_at, exchanges`

func scanThread(sc scanner) (store.Thread, error) {
	var (
		th     store.Thread
		caller string
	)
	err := sc.Scan(&th.ID, &th.ProjectID, &th.KeyHash, &th.Fp, &caller, timeCol{&th.CreatedAt}, &th.Exchanges)
	th.Caller = store.CallerKind(caller)
	return th, err
}

// Thread reads the thread of the project: a seek in the primary key.
func (t txn) Thread(ctx context.Context, projectID, id string) (store.Thread, bool, error) {
	th, err := scanThread(t.tx.QueryRowContext(ctx,
		`SELECT `+threadColumns+` FROM assistant_threads WHERE id = ? AND project_id = ?`, id, projectID))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Thread{}, false, nil
	}
	return th, err == nil, err
}

// LockThread reads the thread; the write lock keeps it as read.
func (t txn) LockThread(ctx context.Context, projectID, id string) (store.Thread, bool, error) {
	return t.Thread(ctx, projectID, id)
}

// SaveThreadExchanges stores the thread's count of exchanges.
func (t txn) SaveThreadExchanges(ctx context.Context, id string, exchanges int) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE assistant_threads SET exchanges = ? WHERE id = ?`, exchanges, id)
	return err
}

// MessageIDTaken looks id up in both columns: two seeks, the primary key
// and question_id's unique index.
func (t txn) MessageIDTaken(ctx context.Context, id string) (bool, error) {
	return exists(ctx, t.tx,
		`SELECT 1 FROM assistant_exchanges WHERE id = ? UNION ALL SELECT 1 FROM assistant_exchanges WHERE question_id = ?`, id, id)
}

// InsertExchange stores a new exchange, whose IDs MessageIDTaken found
// free (the write lock keeps them free until the insert).
func (t txn) InsertExchange(ctx context.Context, e store.Exchange, sources string) error {
	_, err := t.tx.ExecContext(ctx,
		`INSERT INTO assistant_exchanges (id, question_id, project_id, thread_id, question, asked_at, answer, answered_at,
		     response_type, resolution, sources, page_url, caller)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.ID, e.QuestionID, e.ProjectID, e.ThreadID, e.Question, micros(e.AskedAt), e.Answer, micros(e.AnsweredAt),
		string(e.ResponseType), string(e.Resolution), sources, e.PageURL, string(e.Caller))
	return err
}

const exchangeColumns = `id, question_id, project_id, thread_id, question, asked_at, answer, answered_at,
	response_type, resolution, sources, page_url, caller`

func scanExchange(sc scanner) (sqlstore.StoredExchange, error) {
	var (
		e                                sqlstore.StoredExchange
		responseType, resolution, caller string
	)
	err := sc.Scan(&e.ID, &e.QuestionID, &e.ProjectID, &e.ThreadID, &e.Question, timeCol{&e.AskedAt}, &e.Answer,
		timeCol{&e.AnsweredAt}, &responseType, &resolution, &e.Sources, &e.PageURL, &caller)
	e.ResponseType, e.Resolution, e.Caller = store.ResponseType(responseType), store.Resolution(resolution), store.CallerKind(caller)
	return e, err
}

// ThreadExchanges reads the thread's exchanges in order: the index on
// (thread_id, asked_at, id).
func (t txn) ThreadExchanges(ctx context.Context, projectID, id string) ([]sqlstore.StoredExchange, error) {
	rows, err := t.tx.QueryContext(ctx,
		`SELECT `+exchangeColumns+` FROM assistant_exchanges WHERE thread_id = ? AND project_id = ? ORDER BY asked_at, id`,
		id, projectID)
	return collect(rows, err, scanExchange)
}

// askedWhere is the conditions on a project's exchanges asked in [from,
// to) (a zero bound open), and their arguments.
func askedWhere(projectID string, from, to time.Time) ([]string, []any) {
	where := []string{`project_id = ?`}
	args := []any{projectID}
	if !from.IsZero() {
		where, args = append(where, `asked_at >= ?`), append(args, from.UnixMicro())
	}
	if !to.IsZero() {
		where, args = append(where, `asked_at < ?`), append(args, to.UnixMicro())
	}
	return where, args
}

// QueryConversations reads a page by ID: the index on (project_id, id)
// from the cursor's place, forwards or (q.Newest) backwards.
func (t txn) QueryConversations(ctx context.Context, q store.ConversationsQuery) ([]sqlstore.StoredExchange, error) {
	query, args := conversationsQuery(q)
	rows, err := t.tx.QueryContext(ctx, query, args...)
	return collect(rows, err, scanExchange)
}

// conversationsQuery is QueryConversations' statement and its arguments.
func conversationsQuery(q store.ConversationsQuery) (string, []any) {
	where, args := askedWhere(q.ProjectID, q.From, q.To)
	afterCursor, orderBy := sqlstore.ConversationsByID(q)
	if q.After != "" {
		where, args = append(where, afterCursor+` ?`), append(args, q.After)
	}
	if q.Resolution != "" {
		where, args = append(where, `resolution = ?`), append(args, string(q.Resolution))
	}
	return `SELECT ` + exchangeColumns + ` FROM assistant_exchanges WHERE ` + strings.Join(where, ` AND `) + ` ORDER BY ` + orderBy + ` LIMIT ?`,
		append(args, q.Limit)
}

// CallerStats counts the range's exchanges by caller in one statement.
func (t txn) CallerStats(ctx context.Context, projectID string, from, to time.Time) (store.CallerCounts, error) {
	where, args := askedWhere(projectID, from, to)
	var c store.CallerCounts
	err := t.tx.QueryRowContext(ctx,
		`SELECT COALESCE(SUM(caller = 'web'), 0), COALESCE(SUM(caller = 'api'), 0), COALESCE(SUM(caller = 'other'), 0)
		 FROM assistant_exchanges WHERE `+strings.Join(where, ` AND `), args...).Scan(&c.Web, &c.API, &c.Other)
	return c, err
}

// AddAssistantTokens adds to the day's tokens, creating the day.
func (t txn) AddAssistantTokens(ctx context.Context, projectID string, day time.Time, n int64) error {
	_, err := t.tx.ExecContext(ctx,
		`INSERT INTO assistant_token_days (project_id, day, tokens) VALUES (?, ?, ?)
		 ON CONFLICT (project_id, day) DO UPDATE SET tokens = tokens + excluded.tokens`,
		projectID, day.UnixMicro(), n)
	return err
}

// AssistantTokens reads the day's tokens.
func (t txn) AssistantTokens(ctx context.Context, projectID string, day time.Time) (int64, error) {
	var n int64
	err := t.tx.QueryRowContext(ctx, `SELECT tokens FROM assistant_token_days WHERE project_id = ? AND day = ?`,
		projectID, day.UnixMicro()).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}

// DeleteConversationsBefore moves the threads' counts down by the
// exchanges it deletes, then deletes those, the threads left with none,
// and the days before day.
func (t txn) DeleteConversationsBefore(ctx context.Context, before, day time.Time) (int, error) {
	at := before.UnixMicro()
	if _, err := t.tx.ExecContext(ctx,
		`UPDATE assistant_threads SET exchanges = exchanges -
		     (SELECT count(*) FROM assistant_exchanges e WHERE e.thread_id = assistant_threads.id AND e.asked_at < ?1)
		 WHERE id IN (SELECT thread_id FROM assistant_exchanges WHERE asked_at < ?1)`, at); err != nil {
		return 0, err
	}
	res, err := t.tx.ExecContext(ctx, `DELETE FROM assistant_exchanges WHERE asked_at < ?`, at)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM assistant_threads WHERE exchanges = 0`); err != nil {
		return 0, err
	}
	for _, table := range []string{`assistant_days`, `assistant_token_days`} {
		if _, err := t.tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE day < ?`, day.UnixMicro()); err != nil {
			return 0, err
		}
	}
	return int(n), nil
}

// InsertGapLink stores the link, keeping one stored already.
func (t txn) InsertGapLink(ctx context.Context, l store.GapLink) error {
	_, err := t.tx.ExecContext(ctx,
		`INSERT INTO gap_links (project_id, kind, key, job_id, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		l.ProjectID, string(l.Kind), l.Key, l.JobID, micros(l.CreatedAt))
	return err
}

// GapLinks reads the project's links in order.
func (t txn) GapLinks(ctx context.Context, projectID string) ([]store.GapLink, error) {
	rows, err := t.tx.QueryContext(ctx,
		`SELECT project_id, kind, key, job_id, created_at FROM gap_links WHERE project_id = ? ORDER BY created_at, job_id, kind, key`,
		projectID)
	return collect(rows, err, func(sc scanner) (store.GapLink, error) {
		var (
			l    store.GapLink
			kind string
		)
		err := sc.Scan(&l.ProjectID, &kind, &l.Key, &l.JobID, timeCol{&l.CreatedAt})
		l.Kind = store.GapKind(kind)
		return l, err
	})
}
