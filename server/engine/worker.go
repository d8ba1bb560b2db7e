package engine

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// storeTimeout bounds each store call the engine makes that is not made for
// a run (claims), so a hung database cannot hang the engine. The calls made
// for a run (heartbeats, outcomes, retries, releases) are bounded by the
// run's lease instead: see lease.storeContext.
const storeTimeout = 30 * time.Second

// worker claims and runs jobs until Shutdown begins.
func (e *Engine) worker() {
	defer e.workers.Done()
	for {
		select {
		case <-e.stop:
			return
		default:
		}
		job, until, err := e.claim()
		if err == nil {
			e.run(job, until)
			continue // there may be more: claim again before sleeping
		}
		if !errors.Is(err, store.ErrNoJob) {
			e.cfg.Logger.Error("engine: claiming a job", slog.String("owner", e.cfg.Owner), slog.Any("error", err))
		}
		idle := time.NewTimer(e.cfg.PollInterval)
		select {
		case <-e.stop:
			idle.Stop()
			return
		case <-e.wake:
		case <-idle.C:
		}
		idle.Stop()
	}
}

// claim claims a job and returns it with the end of its lease as this
// engine reckons it, on its own clock: LeaseFor after the time read before
// the call, however long the call took to come back. The store's lease
// starts no earlier than the call was sent (at that time, on a store told
// the time; later, by the database's clock, on a store.LeaseClock), so it
// ends no earlier than until, whatever the offset between the clocks. The
// job's LeaseExpiresAt is by the store's clock and is never compared with
// this engine's.
func (e *Engine) claim() (job store.Job, until time.Time, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	now := e.cfg.Now()
	job, err = e.cfg.Store.ClaimJob(ctx, store.Claim{
		Owner:       e.cfg.Owner,
		Now:         now,
		LeaseFor:    e.cfg.LeaseFor,
		MaxAttempts: e.cfg.MaxAttempts,
	})
	return job, now.Add(e.cfg.LeaseFor), err
}

// heartbeat extends the lease every third of LeaseFor until ctx ends, and
// moves the run's fence with each extension (see lease). When the lease is
// lost (the job was archived, or another engine took it over), it cancels
// the run at once. A heartbeat that fails, or hangs, only logs: the fence
// stops the run leaseMargin before the lease ends unless a later heartbeat
// renews it, and each call gives up at the fence, so a hanging store cannot
// keep the run going past its lease, when another engine may claim the job
// and two runs must never work on it at once.
func (e *Engine) heartbeat(ctx context.Context, job store.Job, l *lease, cancel context.CancelCauseFunc) {
	tick := time.NewTicker(e.cfg.LeaseFor / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		// Read before the call: the store's renewed lease starts no
		// earlier (see claim), so the fence can be reckoned from it.
		now := e.cfg.Now()
		// Made from ctx: once the run is over, a heartbeat still waiting
		// for the store would only hold its outcome back.
		sctx, scancel, ok := l.storeContext(ctx)
		if !ok {
			// The fence has fired, or is firing at this very instant.
			cancel(errLeaseLost)
			return
		}
		err := e.cfg.Store.ExtendLease(sctx, job.ID, e.cfg.Owner, now, e.cfg.LeaseFor)
		scancel()
		switch {
		case ctx.Err() != nil:
			return // the run is over
		case err == nil:
			l.extend(now.Add(e.cfg.LeaseFor))
		case errors.Is(err, store.ErrLeaseLost):
			e.cfg.Logger.Warn("engine: heartbeat lost the lease; stopping the run",
				slog.String("job_id", job.ID), slog.String("owner", e.cfg.Owner))
			cancel(errLeaseLost)
			return
		default:
			e.cfg.Logger.Warn("engine: heartbeat failed; the run stops before its lease ends unless a later one succeeds",
				slog.String("job_id", job.ID), slog.Time("lease_until", l.end()), slog.Any("error", err))
		}
	}
}
