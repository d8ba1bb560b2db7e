package postgres

import (
	"context"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

var _ store.JobCounter = (*Store)(nil)

// jobCountsQuery is store.ReadJobCounts' rows: the jobs of each status, and
// those whose lease is free at a time. One statement sees one snapshot.
const jobCountsQuery = `SELECT status, count(*),
	count(*) FILTER (WHERE lease_owner IS NULL OR lease_expires_at < $1)
	FROM jobs GROUP BY status`

// JobCounts counts the jobs by status, and the active ones ready at now.
func (s *Store) JobCounts(ctx context.Context, now time.Time) (store.JobCounts, error) {
	db, err := s.db()
	if err != nil {
		return store.JobCounts{}, err
	}
	rows, _ := db.Query(ctx, jobCountsQuery, ts(now)) // rows.Err reports its error
	defer rows.Close()
	c, err := store.ReadJobCounts(rows)
	if err != nil {
		return store.JobCounts{}, s.dbErr("job counts", err)
	}
	return c, nil
}
