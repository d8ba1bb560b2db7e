package postgres

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi-go/server/store"
)

// ListJobs reads a page newest first (see listJobsQuery).
func (t txn) ListJobs(ctx context.Context, q store.JobsQuery) ([]store.Job, error) {
	query, args := listJobsQuery(q)
	rows, _ := t.q.Query(ctx, query, args...) // CollectRows reports its error
	return pgx.CollectRows(rows, scanJob)
}

// listJobsQuery is the statement of a page of ListJobs, and its arguments:
// a backward scan of the index on (project_id, created_at, id) from the
// cursor's row value. The prompts are left out as empty arrays, so that
// scanJob reads the rows as it reads jobQuery's.
func listJobsQuery(q store.JobsQuery) (string, []any) {
	var args params
	where := createdWhere(q.ProjectID, q.From, q.To, q.Statuses, &args)
	if q.After != nil {
		where = append(where, `(j.created_at, j.id) < (`+args.add(ts(q.After.CreatedAt))+`, `+args.add(q.After.ID)+`)`)
	}
	return `SELECT ` + jobColumns + `, '{}'::text[], '{}'::timestamptz[] FROM jobs j WHERE ` + strings.Join(where, ` AND `) +
		` ORDER BY j.created_at DESC, j.id DESC LIMIT ` + args.add(q.Limit), args
}
