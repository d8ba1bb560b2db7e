package postgres

import (
	"context"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

var _ store.JobCounter = (*Store)(nil)

// jobCountsQuery is store.ReadJobCounts' rows: the jobs of each status, and
// those whose lease is free by the database's clock, as a claim judges it
// (see readyJob). One statement sees one snapshot.
const jobCountsQuery = `SELECT status, count(*),
	count(*) FILTER (WHERE lease_owner IS NULL OR lease_expires_at < now())
	FROM jobs GROUP BY status`

// JobCounts counts the jobs by status, and the active ones ready now by the
// database's clock; the time the replica sends is not used.
func (s *Store) JobCounts(ctx context.Context, _ time.Time) (store.JobCounts, error) {
	db, err := s.db()
	if err != nil {
		return store.JobCounts{}, err
	}
	rows, _ := db.Query(ctx, jobCountsQuery) // rows.Err reports its error
	defer rows.Close()
	c, err := store.ReadJobCounts(rows)
	if err != nil {
		return store.JobCounts{}, s.dbErr("job counts", err)
	}
	return c, nil
}
