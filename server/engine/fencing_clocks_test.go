package engine

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// clocksApart sets the clocks of a fencing test's engines apart. With
// leaseClock, their stores' leases follow a clock of the stores' own (a
// store.LeaseClock, as PostgreSQL's follow the database's), the bubble's,
// and each engine's Config.Now reads its offset, a or b, ahead of it. The
// zero value is every engine on its store's clock, a store told the time.
type clocksApart struct {
	leaseClock bool
	a, b       time.Duration
}

// store returns s as an engine of the test sees it: s itself, or s with
// leases on the bubble's clock.
func (c clocksApart) store(s store.Store) store.Store {
	if !c.leaseClock {
		return s
	}
	return leaseClockStore{Store: s}
}

// clockAhead returns a clock that reads d ahead of the bubble's.
func clockAhead(d time.Duration) func() time.Time {
	return func() time.Time { return time.Now().Add(d) }
}

// leaseClockStore is a store whose leases follow a clock of its own, the
// bubble's, whatever times its engine sends, as those of a
// store.LeaseClock follow the database's: it reads that clock when a lease
// call reaches it (after the engine read its own), and tells the store
// under it that time instead of the engine's.
type leaseClockStore struct{ store.Store }

var _ store.LeaseClock = leaseClockStore{}

func (leaseClockStore) LeaseNow(context.Context) (time.Time, error) { return time.Now(), nil }

func (s leaseClockStore) ClaimJob(ctx context.Context, c store.Claim) (store.Job, error) {
	c.Now = time.Now()
	return s.Store.ClaimJob(ctx, c)
}

func (s leaseClockStore) ExtendLease(ctx context.Context, jobID, owner string, _ time.Time, leaseFor time.Duration) error {
	return s.Store.ExtendLease(ctx, jobID, owner, time.Now(), leaseFor)
}

// TestFencingClocksApart is TestFencingHangingStore with engines whose
// clocks are minutes off each other's and off the clock their store's
// leases follow: A's run must still stop before its lease ends by the
// store's clock, when B may take the job over, since A reckons its fence
// from durations alone and never from the store's times; and B must take
// the job over once that lease ends, not minutes before or after.
func TestFencingClocksApart(t *testing.T) {
	const leaseFor = 30 * time.Second
	for _, clocks := range []clocksApart{
		{leaseClock: true, a: 5 * time.Minute},
		{leaseClock: true, b: 5 * time.Minute},
		{leaseClock: true, a: -3 * time.Minute, b: 2 * time.Minute},
	} {
		for _, agent := range fencingAgents {
			t.Run(fmt.Sprintf("A %+v, B %+v off the store's clock/%s", clocks.a, clocks.b, agent.name), func(t *testing.T) {
				t.Parallel() // a bubble and a database of its own
				synctest.Test(t, func(t *testing.T) {
					testFencingClocks(t, leaseFor, leaseFor/2, agent, clocks)
				})
			})
		}
	}
}
