package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/docsapi/docsapi-go/server/store"
)

// LockFeedbackDay reads the day's count, creating it at 0, and locks its
// row: another replica adding to the same day waits for this commit.
func (t txn) LockFeedbackDay(ctx context.Context, projectID string, day time.Time) (int64, error) {
	if _, err := t.q.Exec(ctx,
		`INSERT INTO feedback_days (project_id, day, entries) VALUES ($1, $2, 0) ON CONFLICT DO NOTHING`,
		projectID, ts(day)); err != nil {
		return 0, err
	}
	var n int64
	err := t.q.QueryRow(ctx, `SELECT entries FROM feedback_days WHERE project_id = $1 AND day = $2 FOR UPDATE`,
		projectID, ts(day)).Scan(&n)
	return n, err
}

// SaveFeedbackDay stores the day's count.
func (t txn) SaveFeedbackDay(ctx context.Context, projectID string, day time.Time, entries int64) error {
	_, err := t.q.Exec(ctx, `UPDATE feedback_days SET entries = $3 WHERE project_id = $1 AND day = $2`, projectID, ts(day), entries)
	return err
}

// InsertFeedback stores a new entry; the primary key decides a taken ID.
func (t txn) InsertFeedback(ctx context.Context, f store.Feedback) error {
	_, err := t.q.Exec(ctx,
		`INSERT INTO feedback (id, project_id, path, source, status, helpful, comment, contact, code, filename, lang, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		f.ID, f.ProjectID, f.Path, string(f.Source), string(f.Status), f.Helpful, f.Comment,
		f.Contact, f.Code, f.Filename, f.Lang, ts(f.CreatedAt), ts(f.UpdatedAt))
	if uniqueViolation(err, "feedback_pkey") {
		return fmt.Errorf("feedback %q: %w", f.ID, store.ErrConflict)
	}
	return err
}

const feedbackColumns = `id, project_id, path, source, status, helpful, comment, contact, code, filename, lang, created_at, updated_at`

func scanFeedback(row pgx.CollectableRow) (store.Feedback, error) {
	var (
		f                store.Feedback
		source, status   string
		created, updated pgtype.Timestamptz
	)
	if err := row.Scan(&f.ID, &f.ProjectID, &f.Path, &source, &status, &f.Helpful, &f.Comment,
		&f.Contact, &f.Code, &f.Filename, &f.Lang, &created, &updated); err != nil {
		return store.Feedback{}, err
	}
	f.Source, f.Status = store.FeedbackSource(source), store.FeedbackStatus(status)
	f.CreatedAt, f.UpdatedAt = fromTS(created), fromTS(updated)
	return f, nil
}

// params collects a statement's arguments and names their placeholders.
type params []any

// add appends v and returns its placeholder.
func (p *params) add(v any) string {
	*p = append(*p, v)
	return "$" + strconv.Itoa(len(*p))
}

// feedbackWhere is the WHERE clause of what f selects, its arguments in
// args.
func feedbackWhere(f store.FeedbackFilter, args *params) string {
	where := createdWhere(f.ProjectID, f.From, f.To, f.Statuses, args)
	if f.Source != "" {
		where = append(where, `source = `+args.add(string(f.Source)))
	}
	if f.Path != "" {
		where = append(where, `path = `+args.add(f.Path))
	}
	return strings.Join(where, ` AND `)
}

// createdWhere is the conditions on the rows of a project created in
// [from, to) (a zero bound leaves that side open) whose status is one of
// statuses (none: any), their arguments in args: the filters that
// feedback and jobs share. The conditions name only the bounds given,
// rather than "$n IS NULL OR ...", so that the planner sees a plain range
// on the index.
func createdWhere[S ~string](projectID string, from, to time.Time, statuses []S, args *params) []string {
	where := []string{`project_id = ` + args.add(projectID)}
	if !from.IsZero() {
		where = append(where, `created_at >= `+args.add(ts(from)))
	}
	if !to.IsZero() {
		where = append(where, `created_at < `+args.add(ts(to)))
	}
	if len(statuses) > 0 {
		names := make([]string, len(statuses))
		for i, st := range statuses {
			names[i] = string(st)
		}
		where = append(where, `status = ANY(`+args.add(names)+`::text[])`)
	}
	return where
}

// QueryFeedback reads a page newest first: a backward scan of the index on
// (project_id, created_at, id) from the cursor's row value.
func (t txn) QueryFeedback(ctx context.Context, q store.FeedbackQuery) ([]store.Feedback, error) {
	var args params
	where := feedbackWhere(q.FeedbackFilter, &args)
	if q.After != nil {
		where += ` AND (created_at, id) < (` + args.add(ts(q.After.CreatedAt)) + `, ` + args.add(q.After.ID) + `)`
	}
	rows, _ := t.q.Query(ctx, `SELECT `+feedbackColumns+` FROM feedback WHERE `+where+
		` ORDER BY created_at DESC, id DESC LIMIT `+args.add(q.Limit), args...) // CollectRows reports its error
	return pgx.CollectRows(rows, scanFeedback)
}

// FeedbackByPage counts the selected entries per path in one statement.
func (t txn) FeedbackByPage(ctx context.Context, q store.FeedbackByPageQuery) ([]store.PageFeedback, error) {
	var args params
	where := feedbackWhere(q.FeedbackFilter, &args)
	rows, _ := t.q.Query(ctx,
		`SELECT path,
		        count(*) FILTER (WHERE source IN ('contextual', 'thumbs_only') AND helpful),
		        count(*) FILTER (WHERE source IN ('contextual', 'thumbs_only') AND NOT helpful),
		        count(*) FILTER (WHERE source = 'code_snippet'),
		        count(*) AS total
		 FROM feedback WHERE `+where+`
		 GROUP BY path ORDER BY total DESC, path LIMIT `+args.add(q.Limit), args...)
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.PageFeedback, error) {
		var p store.PageFeedback
		err := row.Scan(&p.Path, &p.ThumbsUp, &p.ThumbsDown, &p.Code, &p.Total)
		return p, err
	})
}

// LockFeedback reads the entry and locks its row.
func (t txn) LockFeedback(ctx context.Context, projectID, id string) (store.Feedback, bool, error) {
	return queryOne(ctx, t.q, scanFeedback,
		`SELECT `+feedbackColumns+` FROM feedback WHERE id = $1 AND project_id = $2 FOR UPDATE`, id, projectID)
}

// SaveFeedbackStatus stores f's Status and UpdatedAt.
func (t txn) SaveFeedbackStatus(ctx context.Context, f store.Feedback) error {
	_, err := t.q.Exec(ctx, `UPDATE feedback SET status = $2, updated_at = $3 WHERE id = $1`,
		f.ID, string(f.Status), ts(f.UpdatedAt))
	return err
}
