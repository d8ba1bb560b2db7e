package store

import (
	"context"
	"fmt"
	"time"
)

// JobCounts is how many jobs a store holds in each status at one instant.
type JobCounts struct {
	Active, Completed, Failed, Archived int64
	// Ready counts the active jobs that a claim at that instant could
	// take: not leased, or leased until before it (by the store's lease
	// time, see JobCounter). It is the depth of the
	// queue; the other active jobs are leased, running or waiting out a
	// retry delay.
	Ready int64
}

// JobCountRows is the rows of a backend's count of jobs: a status, its
// jobs, and how many of them are ready. database/sql's rows and pgx's both
// have these methods.
type JobCountRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// ReadJobCounts adds up the rows of a backend's count of jobs. An unknown
// status is an error.
func ReadJobCounts(rows JobCountRows) (JobCounts, error) {
	var c JobCounts
	for rows.Next() {
		var (
			status   string
			n, ready int64
		)
		if err := rows.Scan(&status, &n, &ready); err != nil {
			return JobCounts{}, err
		}
		switch JobStatus(status) {
		case JobStatusActive:
			c.Active += n
			c.Ready += ready
		case JobStatusCompleted:
			c.Completed += n
		case JobStatusFailed:
			c.Failed += n
		case JobStatusArchived:
			c.Archived += n
		default:
			return JobCounts{}, fmt.Errorf("%d jobs have the unknown status %q", n, status)
		}
	}
	return c, rows.Err()
}

// JobCounter is implemented by stores that count their jobs (both
// backends do); server/metrics reads it at each scrape.
type JobCounter interface {
	// JobCounts counts the jobs by status, and the active ones ready at
	// the store's lease time, as ClaimJob judges a lease (one that ends
	// at that instant still holds): now on a store told the time, the
	// database's clock on a LeaseClock.
	// It reads every job (no index holds every status, and one would
	// cost each write for a count read a few times a minute), so its time
	// grows with the jobs kept; callers bound it with ctx.
	JobCounts(ctx context.Context, now time.Time) (JobCounts, error)
}
