package sqlite

import (
	"context"
	"strings"

	"github.com/docsapi/docsapi-go/server/store"
)

// ListJobs reads a page newest first (see listJobsQuery).
func (t txn) ListJobs(ctx context.Context, q store.JobsQuery) ([]store.Job, error) {
	query, args := listJobsQuery(q)
	rows, err := t.tx.QueryContext(ctx, query, args...)
	return collect(rows, err, scanJob)
}

// listJobsQuery is the statement of a page of ListJobs, and its arguments:
// the index on (project_id, created_at, id), read backwards from the
// cursor's place.
func listJobsQuery(q store.JobsQuery) (string, []any) {
	where, args := createdWhere(q.ProjectID, q.From, q.To, q.Statuses)
	if q.After != nil {
		where, args = append(where, `(created_at, id) < (?, ?)`), append(args, q.After.CreatedAt.UnixMicro(), q.After.ID)
	}
	return `SELECT ` + jobColumns + ` FROM jobs WHERE ` + strings.Join(where, ` AND `) +
		` ORDER BY created_at DESC, id DESC LIMIT ?`, append(args, q.Limit)
}
