package engine

import (
	"context"
	"sync"
	"time"
)

// Fencing. A run may work on its job only while its lease lasts: once the
// lease has ended, another engine may claim the job, and two runs must never
// work on it at once. An engine whose store hangs cannot learn in time that
// its lease is gone, so it does not wait to be told. Each run reckons when
// its lease ends on this engine's own clock, from durations alone: LeaseFor
// after the time it read before sending the claim, or the last heartbeat
// that succeeded, never after the call came back. The store's lease starts
// no earlier than that call was sent: at the time sent, on a store told the
// time (SQLite, one machine), or at the database's time when the call
// reached it, on a store.LeaseClock (PostgreSQL). So the lease ends no
// earlier than the run reckons, whatever the offset between this engine's
// clock and the database's or other engines': the run never compares a
// time from the store (the job's LeaseExpiresAt) with its own clock. The
// run stops itself leaseMargin before that instant (the fence), and every
// store call it makes has the fence as its deadline.
//
// The reckoning is a difference of two readings of Config.Now, so an
// offset of the clock cancels out; with time.Now, the default, it is
// measured on the monotonic clock, so even a step of the wall clock
// mid-run does not move the fence.

// minLeaseMargin is the least margin of a lease that can afford it.
const minLeaseMargin = time.Second

// leaseMargin returns how long before its lease ends a run stops itself.
//
// The margin is the time between the fence and the moment another engine
// may claim the job. It must cover what happens after the run's context is
// cancelled: the agent's and git's processes being killed (they run under
// that context) and the run returning, which needs no store call, since a
// fenced run records nothing; and any difference in the rate at which the
// clocks that measure the lease advance (this engine's, and the store's
// lease clock), and any step forward of the store's lease clock, which
// would end the lease early by as much. An offset between clocks needs no
// margin (see Fencing). A tenth of the lease, and at least minLeaseMargin:
// 3 s of a 30 s lease, 6 s of a minute, 12 s of the default two minutes.
//
// It stays at most a quarter of the lease, under the third between
// heartbeats: after a renewal at t, heartbeats come at t+LeaseFor/3 and
// t+2·LeaseFor/3, and the fence is at t+LeaseFor-margin, after both. So a
// heartbeat that fails once costs nothing: the next one still has time to
// renew the lease before the fence. Leases under four seconds, used in
// tests, get the quarter.
func leaseMargin(leaseFor time.Duration) time.Duration {
	return min(max(leaseFor/10, minLeaseMargin), leaseFor/4)
}

// timeLeft returns how long a run may still act at now on a lease that ends
// at until: the time to the fence, leaseMargin before until. Zero or less
// means not at all.
func timeLeft(until, now time.Time, leaseFor time.Duration) time.Duration {
	return until.Add(-leaseMargin(leaseFor)).Sub(now)
}

// lease is what a run knows of its claim on its job: when the claim ends,
// on this engine's clock, and the fence that stops the run before. It is
// safe for concurrent use.
type lease struct {
	leaseFor time.Duration
	now      func() time.Time

	mu    sync.Mutex
	until time.Time   // when the lease ends at the earliest, on Config.Now's clock
	fence *time.Timer // stops the run leaseMargin before until
}

// newLease starts the fence of a lease that ends at until: stop is called
// leaseMargin before then, unless the lease is extended. The caller makes
// sure time is left (see timeLeft) and calls stopFence when the run ends.
func (e *Engine) newLease(until time.Time, stop func()) *lease {
	l := &lease{leaseFor: e.cfg.LeaseFor, now: e.cfg.Now, until: until}
	l.fence = time.AfterFunc(timeLeft(until, e.cfg.Now(), e.cfg.LeaseFor), stop)
	return l
}

// left returns the time left before the fence.
func (l *lease) left() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return timeLeft(l.until, l.now(), l.leaseFor)
}

// end returns when the lease ends.
func (l *lease) end() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.until
}

// extend records that the store moved the lease's end to until, and moves
// the fence with it. Once the fence has fired (or the run has ended),
// nothing changes: the run is being stopped, and from then on it makes no
// store call, whatever a late heartbeat says.
func (l *lease) extend(until time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !until.After(l.until) || !l.fence.Stop() {
		return
	}
	l.until = until
	l.fence.Reset(timeLeft(until, l.now(), l.leaseFor))
}

// stopFence disarms the fence once the run has ended.
func (l *lease) stopFence() {
	l.fence.Stop()
}

// storeContext returns the context of a store call made for the run, made
// from parent: it ends at the fence, so that a hanging store cannot make the
// engine act on a lease it may no longer hold. ok is false when the fence
// has passed: then the call must not be made at all.
func (l *lease) storeContext(parent context.Context) (ctx context.Context, cancel context.CancelFunc, ok bool) {
	d := l.left()
	if d <= 0 {
		return nil, nil, false
	}
	ctx, cancel = context.WithTimeout(parent, d)
	return ctx, cancel, true
}
