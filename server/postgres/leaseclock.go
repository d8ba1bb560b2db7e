package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/docsapi/docsapi-go/server/store"
)

var _ store.LeaseClock = (*Store)(nil)

// LeaseNow reads the database's clock, which every job lease follows.
//
// Replicas share the database but not a clock: a lease written by one and
// judged by another by their own clocks would expire early on a replica
// whose clock runs ahead, which would then run the job a second time. So
// ClaimJob, ExtendLease and JobCounts judge and set leases by now() in SQL,
// the time the statement's transaction started, and ignore the times the
// replica sends for that (they still become UpdatedAt and the other times
// people read). Only the database server's own clock matters: stepping it
// forward ends every lease early by as much.
func (s *Store) LeaseNow(ctx context.Context) (time.Time, error) {
	db, err := s.db()
	if err != nil {
		return time.Time{}, err
	}
	now, _, err := queryOne(ctx, db, pgx.RowTo[pgtype.Timestamptz], `SELECT now()`)
	if err != nil {
		return time.Time{}, s.dbErr("lease clock", err)
	}
	return fromTS(now), nil
}
