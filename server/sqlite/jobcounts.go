package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

var _ store.JobCounter = (*Store)(nil)

// jobCountsQuery is store.ReadJobCounts' rows: the jobs of each status, and
// those whose lease is free at a time.
const jobCountsQuery = `SELECT status, count(*),
	count(*) FILTER (WHERE lease_owner IS NULL OR lease_expires_at < ?)
	FROM jobs GROUP BY status`

// JobCounts counts the jobs by status, and the active ones ready at now.
func (s *Store) JobCounts(ctx context.Context, now time.Time) (store.JobCounts, error) {
	var c store.JobCounts
	err := s.read(ctx, "job counts", func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, jobCountsQuery, micros(now))
		if err == nil {
			defer rows.Close()
			c, err = store.ReadJobCounts(rows)
		}
		if err != nil {
			return dbErr("job counts", err)
		}
		return nil
	})
	return c, err
}
