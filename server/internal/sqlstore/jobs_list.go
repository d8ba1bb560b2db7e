package sqlstore

import (
	"context"

	"github.com/docsapi/docsapi-go/server/store"
)

// ListJobs returns one page of jobs, as store.Store documents (see
// readPage).
func (s *Store) ListJobs(ctx context.Context, q store.JobsQuery) (store.JobsPage, error) {
	q.From, q.To = ceilMicro(q.From), ceilMicro(q.To)
	jobs, more, err := readPage(ctx, s, "list jobs", q.Validate(), q.Limit, func(tx Tx, limit int) ([]store.Job, error) {
		q.Limit = limit
		return tx.ListJobs(ctx, q)
	})
	return store.JobsPage{Jobs: jobs, HasMore: more}, err
}
