package engine

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// Engine runs jobs. Create it with New, start it with Start (or Run), and
// stop it with Shutdown. It is safe for concurrent use.
type Engine struct {
	cfg Config

	wake chan struct{} // a token per queued job, up to one per worker

	startOnce sync.Once
	stopOnce  sync.Once
	stop      chan struct{} // closed when Shutdown begins: stop claiming
	workers   sync.WaitGroup

	// runs is the parent of every run's context; cancelling it with
	// errShutdown makes running jobs give their leases back.
	runs       context.Context
	cancelRuns context.CancelCauseFunc

	mu      sync.Mutex
	running map[string]context.CancelCauseFunc // job ID → its run's cancel
}

// Causes of a run's cancellation; each leads to a different end.
var (
	errShutdown  = errors.New("engine: shutting down")
	errLeaseLost = errors.New("engine: lease lost")
	errTimeout   = errors.New("engine: job timed out")
)

// New checks cfg and returns an Engine that is not running yet.
func New(cfg Config) (*Engine, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	runs, cancel := context.WithCancelCause(context.Background())
	return &Engine{
		cfg:        cfg,
		wake:       make(chan struct{}, cfg.Concurrency),
		stop:       make(chan struct{}),
		runs:       runs,
		cancelRuns: cancel,
		running:    map[string]context.CancelCauseFunc{},
	}, nil
}

// Start starts the workers. It returns at once; calling it again does
// nothing.
func (e *Engine) Start() {
	e.startOnce.Do(func() {
		for range e.cfg.Concurrency {
			e.workers.Add(1)
			go e.worker()
		}
		if n, ok := e.cfg.Store.(store.JobNotifier); ok {
			e.workers.Add(1)
			go e.listen(n)
		}
	})
}

// listen turns the store's job notifications into wake-ups until Shutdown
// begins. If notifications cannot be had, polling still finds every job.
func (e *Engine) listen(n store.JobNotifier) {
	defer e.workers.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-e.stop
		cancel()
	}()
	ch, err := n.JobNotifications(ctx)
	if err != nil {
		e.cfg.Logger.Warn("engine: job notifications unavailable; relying on polling", slog.Any("error", err))
		return
	}
	for range ch {
		e.JobQueued()
	}
}

// Shutdown stops claiming new jobs and waits for running ones to finish.
// When ctx ends first, it cancels them: each gives its lease back, so
// another engine can take the job over at once, and its attempt does not
// count. Shutdown returns once every worker has stopped, with ctx's error if
// it had to cancel runs.
func (e *Engine) Shutdown(ctx context.Context) error {
	e.stopOnce.Do(func() { close(e.stop) })
	done := make(chan struct{})
	go func() {
		e.workers.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		e.cancelRuns(errShutdown)
		<-done
		return ctx.Err()
	}
}

// Run starts the engine and, when ctx ends, shuts it down, giving running
// jobs up to grace to finish.
func (e *Engine) Run(ctx context.Context, grace time.Duration) error {
	e.Start()
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	return e.Shutdown(sctx)
}

// JobQueued wakes an idle worker: a job was created or given a follow-up
// through this process. Jobs queued elsewhere are found by polling.
func (e *Engine) JobQueued() {
	select {
	case e.wake <- struct{}{}:
	default: // every worker already has a wake-up pending
	}
}

// JobArchived cancels the job's run if it runs here. (A run elsewhere stops
// at its next heartbeat, which finds the lease gone.)
func (e *Engine) JobArchived(jobID string) {
	e.mu.Lock()
	cancel := e.running[jobID]
	e.mu.Unlock()
	if cancel != nil {
		cancel(errLeaseLost)
	}
}

func (e *Engine) track(jobID string, cancel context.CancelCauseFunc) func() {
	e.mu.Lock()
	e.running[jobID] = cancel
	e.mu.Unlock()
	return func() {
		e.mu.Lock()
		delete(e.running, jobID)
		e.mu.Unlock()
	}
}
