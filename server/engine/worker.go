package engine

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// storeTimeout bounds each store call the engine makes outside a run's own
// context (claims, heartbeats, outcomes), so a hung database cannot hang the
// engine.
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
		job, err := e.claim()
		if err == nil {
			e.run(job)
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

func (e *Engine) claim() (store.Job, error) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	return e.cfg.Store.ClaimJob(ctx, store.Claim{
		Owner:       e.cfg.Owner,
		Now:         e.cfg.Now(),
		LeaseFor:    e.cfg.LeaseFor,
		MaxAttempts: e.cfg.MaxAttempts,
	})
}

// heartbeat extends the lease every third of LeaseFor until ctx ends. When
// the lease is lost (the job was archived, or another engine took it over
// after a stall), or when no heartbeat has succeeded for two thirds of
// LeaseFor, it cancels the run: past that point another engine may claim
// the job, and two runs must never work on it at once.
func (e *Engine) heartbeat(ctx context.Context, job store.Job, cancel context.CancelCauseFunc) {
	tick := time.NewTicker(e.cfg.LeaseFor / 3)
	defer tick.Stop()
	lastOK := e.cfg.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := e.cfg.Now()
		sctx, scancel := context.WithTimeout(context.Background(), storeTimeout)
		err := e.cfg.Store.ExtendLease(sctx, job.ID, e.cfg.Owner, now, now.Add(e.cfg.LeaseFor))
		scancel()
		switch {
		case err == nil:
			lastOK = now
		case errors.Is(err, store.ErrLeaseLost):
			e.cfg.Logger.Warn("engine: heartbeat lost the lease; stopping the run",
				slog.String("job_id", job.ID), slog.String("owner", e.cfg.Owner))
			cancel(errLeaseLost)
			return
		default:
			e.cfg.Logger.Warn("engine: heartbeat failed", slog.String("job_id", job.ID), slog.Any("error", err))
			if now.Sub(lastOK) >= e.cfg.LeaseFor*2/3 {
				e.cfg.Logger.Warn("engine: no heartbeat for too long; stopping the run", slog.String("job_id", job.ID))
				cancel(errLeaseLost)
				return
			}
		}
	}
}
