package sqlite

import (
	"context"
	"database/sql"
	"strconv"
	"strings"

	"github.com/docsapi/docsapi-go/server/store"
)

// ListJobs reads a page newest first (see listJobsQuery), each job with
// the summary of its first prompt.
func (t txn) ListJobs(ctx context.Context, q store.JobsQuery) ([]store.Job, error) {
	query, args := listJobsQuery(q)
	rows, err := t.tx.QueryContext(ctx, query, args...)
	return collect(rows, err, func(sc scanner) (store.Job, error) {
		var first sql.NullString
		j, err := scanJobAnd(sc, &first)
		j.Summary = store.PromptSummary(first.String)
		return j, err
	})
}

// listJobsQuery is the statement of a page of ListJobs, and its arguments:
// the index on (project_id, created_at, id), read backwards from the
// cursor's place. Each row adds the first store.SummaryScan characters
// (substr counts characters in text) of the job's first prompt, found by
// the prompts' primary key in the same statement: no query per job.
func listJobsQuery(q store.JobsQuery) (string, []any) {
	where, args := createdWhere(q.ProjectID, q.From, q.To, q.Statuses)
	if q.After != nil {
		where, args = append(where, `(created_at, id) < (?, ?)`), append(args, q.After.CreatedAt.UnixMicro(), q.After.ID)
	}
	return `SELECT ` + jobColumns + `,
		(SELECT substr(p.text, 1, ` + strconv.Itoa(store.SummaryScan) + `) FROM job_prompts p WHERE p.job_id = jobs.id AND p.position = 0)
		FROM jobs WHERE ` + strings.Join(where, ` AND `) +
		` ORDER BY created_at DESC, id DESC LIMIT ?`, append(args, q.Limit)
}
