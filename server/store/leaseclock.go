package store

import (
	"context"
	"time"
)

// Leases and clocks. A lease is written by one process and judged by
// others: the claim that takes a job over compares its expiry with the
// time now, and so does the heartbeat that extends it. Both times must come
// from one clock, or a process whose clock runs ahead judges a lease
// expired while its holder still works, and runs the job a second time.
//
// A store told the time (SQLite: one database file, which only processes
// of one machine share, on one clock) judges and sets leases by the times
// it is told, Claim.Now and ExtendLease's now. A store that processes of
// several machines share (PostgreSQL) is a LeaseClock: it judges and sets
// every lease by its database's clock, whatever the callers' clocks say,
// so that replicas whose clocks differ by minutes never run a job twice.
// The times a LeaseClock is told still become the jobs' other times
// (UpdatedAt and the rest), which are for people to read.
//
// An engine must therefore never compare a lease's expiry with its own
// clock: it measures its own deadline from the time it sent the call and
// LeaseFor, which is safe on both kinds of store, since a lease starts no
// earlier than the call that asked for it was sent (see server/engine).

// LeaseClock is implemented by a store whose leases follow its database's
// clock rather than the times it is told (see above): ClaimJob,
// ExtendLease and JobCounts judge whether a lease has expired, and set the
// new expiry, by the database's time at the start of the call's
// transaction, which comes after the call was sent.
type LeaseClock interface {
	// LeaseNow reads the clock the store's leases follow. Only a lease's
	// LeaseExpiresAt may be compared with it.
	LeaseNow(ctx context.Context) (time.Time, error)
}
