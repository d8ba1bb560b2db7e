package storetest

import (
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// How the lease tests tell time. A store told the time (not a
// store.LeaseClock) judges leases by the times it is told, so the tests
// tell it instants on either side of a lease's end, to the microsecond.
// A store.LeaseClock judges them by its database's clock, which the suite
// cannot set: the tests read that clock to bound the expiries it sets, wait
// on it for short leases to end, and tell the store times a day off its
// clock, as replicas with wrong clocks would, which it must ignore for its
// leases. Each test states its steps once, through leaseTimes, and runs on
// both kinds of store; only the checks of the exact expiry instant are for
// stores told the time.

// skew is how far from a LeaseClock's clock the times are that the tests
// tell it where its leases must not depend on them: far longer than any
// lease of the suite, either way.
const skew = 24 * time.Hour

// lapse is how long a lease lasts that a test waits out on a LeaseClock's
// clock: the suite waits for it in real time.
const lapse = time.Millisecond

// waitLimit bounds a wait on a LeaseClock's clock: far beyond lapse, so
// that only a clock that stands still, or a lease that did not get short,
// reaches it.
const waitLimit = 30 * time.Second

// leaseTimes is how a lease test tells time to the store s.
type leaseTimes struct {
	t     *testing.T
	s     store.Store
	clock store.LeaseClock // nil: s judges leases by the times it is told
}

func leaseTimesOf(t *testing.T, s store.Store) leaseTimes {
	lt := leaseTimes{t: t, s: s}
	lt.clock, _ = s.(store.LeaseClock)
	return lt
}

// toldTime reports whether the store judges leases by the times it is
// told.
func (lt leaseTimes) toldTime() bool { return lt.clock == nil }

// read reads the LeaseClock's clock.
func (lt leaseTimes) read() time.Time {
	lt.t.Helper()
	now, err := lt.clock.LeaseNow(lt.t.Context())
	must(lt.t, "LeaseNow", err)
	return now
}

// lapsing returns how long to lease a job whose lease the test will see
// end: d on a store told the time, which the test then tells a time past
// the lease; lapse on a LeaseClock, whose clock the test waits on.
func (lt leaseTimes) lapsing(d time.Duration) time.Duration {
	if lt.toldTime() {
		return d
	}
	return lapse
}

// whileHeld returns the time to tell the store in a call made while the
// lease of j holds: told, a time within the lease, on a store told the
// time. On a LeaseClock, whose clock the lease (minutes or more) outlasts
// the test, it returns a day after the lease ends: a replica whose clock
// is a day ahead must not see the lease ended.
func (lt leaseTimes) whileHeld(j store.Job, told time.Time) time.Time {
	if lt.toldTime() || j.LeaseExpiresAt.IsZero() {
		return told
	}
	return j.LeaseExpiresAt.Add(skew)
}

// onceEnded returns the time to tell the store in a call made once the
// lease of j has ended: told, a time past the lease, on a store told the
// time. On a LeaseClock it first waits until the store's clock has passed
// the lease's end, then returns a day before that end: a replica whose
// clock is a day behind must not keep the lease alive.
func (lt leaseTimes) onceEnded(j store.Job, told time.Time) time.Time {
	lt.t.Helper()
	if lt.toldTime() || j.LeaseExpiresAt.IsZero() {
		return told
	}
	deadline := time.Now().Add(waitLimit)
	for {
		now := lt.read()
		if now.After(j.LeaseExpiresAt) {
			return j.LeaseExpiresAt.Add(-skew)
		}
		if j.LeaseExpiresAt.Sub(now) > waitLimit {
			// Not a lease of lapse (see lapsing and endSoon): waiting
			// would only delay the failure.
			lt.t.Fatalf("job %s: the lease ends at %v, %v after the store's lease clock; want it to end within %v",
				j.ID, j.LeaseExpiresAt, j.LeaseExpiresAt.Sub(now), lapse)
		}
		if time.Now().After(deadline) {
			lt.t.Fatalf("job %s: the store's lease clock still read %v after %v, not past the lease's end at %v",
				j.ID, now, waitLimit, j.LeaseExpiresAt)
		}
		time.Sleep(lapse)
	}
}

// endSoon makes the lease of j end soon enough to wait out, and returns the
// job as it is then. On a store told the time it changes nothing: the test
// tells it a time past the lease instead. On a LeaseClock the owner
// extends the lease by lapse (ExtendLease may shorten a lease).
func (lt leaseTimes) endSoon(j store.Job) store.Job {
	lt.t.Helper()
	if lt.toldTime() {
		return j
	}
	must(lt.t, "ExtendLease by lapse, to see the lease end",
		lt.s.ExtendLease(lt.t.Context(), j.ID, j.LeaseOwner, j.LeaseExpiresAt, lapse))
	return mustJob(lt.t, lt.s, j.ProjectID, j.ID)
}

// measured runs call, a ClaimJob or ExtendLease told the time told, and
// returns the bounds of the lease time the store must have measured the
// lease from: told itself, on a store told the time; on a LeaseClock, its
// clock read just before and just after the call.
func (lt leaseTimes) measured(told time.Time, call func()) (from, to time.Time) {
	lt.t.Helper()
	if lt.toldTime() {
		call()
		return told, told
	}
	from = lt.read()
	call()
	return from, lt.read()
}

// leaseEnd checks got, the end of a lease of leaseFor measured from a lease
// time within [from, to] (see measured), and returns what the test expects
// the job's LeaseExpiresAt to be: on a store told the time, the exact end;
// on a LeaseClock, got itself if it is within bounds.
func (lt leaseTimes) leaseEnd(what string, got, from, to time.Time, leaseFor time.Duration) time.Time {
	lt.t.Helper()
	earliest := from.Add(leaseFor).UTC()
	if lt.toldTime() {
		return earliest
	}
	if latest := to.Add(leaseFor).UTC(); got.Before(earliest) || got.After(latest) {
		lt.t.Errorf("%s: the lease ends at %v, want between %v and %v: %v after the store's lease clock read between %v and %v",
			what, got, earliest, latest, leaseFor, from, to)
		return earliest
	}
	return got
}

// claimFor asks for a job on behalf of owner at now, with a lease of
// leaseFor, and checks that it is wantID.
func claimFor(t *testing.T, s store.Store, owner string, now time.Time, leaseFor time.Duration, wantID string) store.Job {
	t.Helper()
	j, err := s.ClaimJob(t.Context(), store.Claim{Owner: owner, Now: now, LeaseFor: leaseFor, MaxAttempts: maxAttempts})
	must(t, "ClaimJob by "+owner, err)
	if j.ID != wantID {
		t.Fatalf("ClaimJob by %s: got job %q, want %q", owner, j.ID, wantID)
	}
	return j
}
