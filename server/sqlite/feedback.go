package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// LockFeedbackDay reads the day's count, creating it at 0; the write lock
// keeps it as read.
func (t txn) LockFeedbackDay(ctx context.Context, projectID string, day time.Time) (int64, error) {
	if _, err := t.tx.ExecContext(ctx,
		`INSERT INTO feedback_days (project_id, day, entries) VALUES (?, ?, 0) ON CONFLICT DO NOTHING`,
		projectID, day.UnixMicro()); err != nil {
		return 0, err
	}
	var n int64
	err := t.tx.QueryRowContext(ctx, `SELECT entries FROM feedback_days WHERE project_id = ? AND day = ?`, projectID, day.UnixMicro()).Scan(&n)
	return n, err
}

// SaveFeedbackDay stores the day's count.
func (t txn) SaveFeedbackDay(ctx context.Context, projectID string, day time.Time, entries int64) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE feedback_days SET entries = ? WHERE project_id = ? AND day = ?`, entries, projectID, day.UnixMicro())
	return err
}

// InsertFeedback stores a new entry, after checking that its ID is free
// (the write lock keeps it free until the insert).
func (t txn) InsertFeedback(ctx context.Context, f store.Feedback) error {
	found, err := exists(ctx, t.tx, `SELECT 1 FROM feedback WHERE id = ?`, f.ID)
	if err != nil {
		return err
	}
	if found {
		return fmt.Errorf("feedback %q: %w", f.ID, store.ErrConflict)
	}
	var comment sql.NullString
	if f.Comment != nil {
		comment = sql.NullString{String: *f.Comment, Valid: true}
	}
	_, err = t.tx.ExecContext(ctx,
		`INSERT INTO feedback (id, project_id, path, source, status, helpful, comment, contact, code, filename, lang, created_at, updated_at)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		f.ID, f.ProjectID, f.Path, string(f.Source), string(f.Status), f.Helpful, comment,
		f.Contact, f.Code, f.Filename, f.Lang, micros(f.CreatedAt), micros(f.UpdatedAt))
	return err
}

const feedbackColumns = `id, project_id, path, source, status, helpful, comment, contact, code, filename, lang, created_at, updated_at`

func scanFeedback(sc scanner) (store.Feedback, error) {
	var (
		f              store.Feedback
		source, status string
		comment        sql.NullString
	)
	err := sc.Scan(&f.ID, &f.ProjectID, &f.Path, &source, &status, &f.Helpful, &comment,
		&f.Contact, &f.Code, &f.Filename, &f.Lang, timeCol{&f.CreatedAt}, timeCol{&f.UpdatedAt})
	f.Source, f.Status = store.FeedbackSource(source), store.FeedbackStatus(status)
	if comment.Valid {
		f.Comment = &comment.String
	}
	return f, err
}

// feedbackWhere is the WHERE clause of what f selects, and its arguments.
func feedbackWhere(f store.FeedbackFilter) (string, []any) {
	where, args := createdWhere(f.ProjectID, f.From, f.To, f.Statuses)
	if f.Source != "" {
		where, args = append(where, `source = ?`), append(args, string(f.Source))
	}
	if f.Path != "" {
		where, args = append(where, `path = ?`), append(args, f.Path)
	}
	return strings.Join(where, ` AND `), args
}

// createdWhere is the conditions on the rows of a project created in
// [from, to) (a zero bound leaves that side open) whose status is one of
// statuses (none: any), and their arguments: the filters that feedback
// and jobs share.
func createdWhere[S ~string](projectID string, from, to time.Time, statuses []S) ([]string, []any) {
	where := []string{`project_id = ?`}
	args := []any{projectID}
	if !from.IsZero() {
		where, args = append(where, `created_at >= ?`), append(args, from.UnixMicro())
	}
	if !to.IsZero() {
		where, args = append(where, `created_at < ?`), append(args, to.UnixMicro())
	}
	if len(statuses) > 0 {
		where = append(where, `status IN (?`+strings.Repeat(`, ?`, len(statuses)-1)+`)`)
		for _, st := range statuses {
			args = append(args, string(st))
		}
	}
	return where, args
}

// QueryFeedback reads a page newest first: the index on (project_id,
// created_at, id), read backwards from the cursor's place.
func (t txn) QueryFeedback(ctx context.Context, q store.FeedbackQuery) ([]store.Feedback, error) {
	where, args := feedbackWhere(q.FeedbackFilter)
	if q.After != nil {
		where += ` AND (created_at, id) < (?, ?)`
		args = append(args, q.After.CreatedAt.UnixMicro(), q.After.ID)
	}
	rows, err := t.tx.QueryContext(ctx,
		`SELECT `+feedbackColumns+` FROM feedback WHERE `+where+` ORDER BY created_at DESC, id DESC LIMIT ?`,
		append(args, q.Limit)...)
	return collect(rows, err, scanFeedback)
}

// FeedbackByPage counts the selected entries per path.
func (t txn) FeedbackByPage(ctx context.Context, q store.FeedbackByPageQuery) ([]store.PageFeedback, error) {
	where, args := feedbackWhere(q.FeedbackFilter)
	rows, err := t.tx.QueryContext(ctx,
		`SELECT path,
		        SUM(source IN ('contextual', 'thumbs_only') AND helpful = 1),
		        SUM(source IN ('contextual', 'thumbs_only') AND helpful = 0),
		        SUM(source = 'code_snippet'),
		        COUNT(*) AS total
		 FROM feedback WHERE `+where+`
		 GROUP BY path ORDER BY total DESC, path LIMIT ?`,
		append(args, q.Limit)...)
	return collect(rows, err, func(sc scanner) (store.PageFeedback, error) {
		var p store.PageFeedback
		err := sc.Scan(&p.Path, &p.ThumbsUp, &p.ThumbsDown, &p.Code, &p.Total)
		return p, err
	})
}

// LockFeedback reads the entry; the write lock keeps it as read.
func (t txn) LockFeedback(ctx context.Context, projectID, id string) (store.Feedback, bool, error) {
	f, err := scanFeedback(t.tx.QueryRowContext(ctx,
		`SELECT `+feedbackColumns+` FROM feedback WHERE id = ? AND project_id = ?`, id, projectID))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Feedback{}, false, nil
	}
	return f, err == nil, err
}

// SaveFeedbackStatus stores f's Status and UpdatedAt.
func (t txn) SaveFeedbackStatus(ctx context.Context, f store.Feedback) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE feedback SET status = ?, updated_at = ? WHERE id = ?`,
		string(f.Status), micros(f.UpdatedAt), f.ID)
	return err
}
