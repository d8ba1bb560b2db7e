package postgres

import (
	"context"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/docsapi/docsapi-go/server/store"
)

// ListJobs reads a page newest first (see listJobsQuery), each job with
// the summary of its first prompt.
func (t txn) ListJobs(ctx context.Context, q store.JobsQuery) ([]store.Job, error) {
	query, args := listJobsQuery(q)
	rows, _ := t.q.Query(ctx, query, args...) // CollectRows reports its error
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Job, error) {
		var first pgtype.Text
		j, err := scanJobAnd(row, &first)
		j.Summary = store.PromptSummary(first.String)
		return j, err
	})
}

// listJobsQuery is the statement of a page of ListJobs, and its arguments:
// a backward scan of the index on (project_id, created_at, id) from the
// cursor's row value. The prompts are left out as empty arrays, so that
// scanJobAnd reads the rows as it reads jobQuery's; each row adds the
// first store.SummaryScan characters (left counts characters) of the
// job's first prompt, found by the prompts' primary key in the same
// statement: no query per job.
func listJobsQuery(q store.JobsQuery) (string, []any) {
	var args params
	where := createdWhere(q.ProjectID, q.From, q.To, q.Statuses, &args)
	if q.After != nil {
		where = append(where, `(j.created_at, j.id) < (`+args.add(ts(q.After.CreatedAt))+`, `+args.add(q.After.ID)+`)`)
	}
	return `SELECT ` + jobColumns + `, '{}'::text[], '{}'::timestamptz[],
		(SELECT left(jp.text, ` + strconv.Itoa(store.SummaryScan) + `) FROM job_prompts jp WHERE jp.job_id = j.id AND jp.position = 0)
		FROM jobs j WHERE ` + strings.Join(where, ` AND `) +
		` ORDER BY j.created_at DESC, j.id DESC LIMIT ` + args.add(q.Limit), args
}
