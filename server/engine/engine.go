// Package engine runs agent jobs: workers claim jobs from the store's lease
// queue, run them (workspace, agent, push, pull request) and record exactly
// one outcome per job, whatever crashes, restarts or duplicate requests
// happen on the way.
//
// Several engines, in one process or many, may share one store: leases keep
// any job from running in two places at once, and an engine that dies
// leaves a lease that expires, after which another engine takes the job
// over. No separate recovery process is needed.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// Defaults of Config.
const (
	DefaultConcurrency  = 2
	DefaultLeaseFor     = 2 * time.Minute
	DefaultJobTimeout   = 30 * time.Minute
	DefaultMaxAttempts  = 3
	DefaultPollInterval = 5 * time.Second
	DefaultRetryDelay   = 30 * time.Second
)

// Config configures an Engine. Store, Owner and Parts are required.
type Config struct {
	// Store holds the job queue.
	Store store.Store
	// Owner names this engine in leases. It must be unique among the
	// engines sharing the store, for example host name and process id.
	Owner string
	// Parts chooses what a job runs with, from its project.
	Parts func(ctx context.Context, project store.Project) (Parts, error)
	// Concurrency is the number of jobs run at once.
	Concurrency int
	// LeaseFor is how long a claim holds a job without a heartbeat. A
	// crashed engine's jobs wait this long before another engine takes
	// them. Heartbeats come every third of it. A run whose lease cannot be
	// renewed (its store fails or hangs) stops itself a margin before the
	// lease ends: a tenth of LeaseFor, at least a second, at most a quarter
	// of LeaseFor (3s of 30s, 12s of the default). Every store call made
	// for a run gives up at that instant too, so a run never outlasts its
	// lease, whatever the store does. The run reckons that instant from
	// durations on its own clock, and the store judges leases by one
	// clock (its database's, on a store.LeaseClock), so engines whose
	// clocks differ share a store safely (see lease.go).
	LeaseFor time.Duration
	// JobTimeout bounds one run.
	JobTimeout time.Duration
	// MaxAttempts bounds how often a job is tried before it fails.
	MaxAttempts int
	// PollInterval is how often idle workers look for jobs that another
	// process queued; jobs queued through this process wake them at once
	// (see JobQueued).
	PollInterval time.Duration
	// RetryDelay is how long a job waits after a failed attempt that may
	// succeed later (a network error, say) before it is tried again.
	RetryDelay time.Duration
	// Logger receives claim, heartbeat loss, retry, failure and completion
	// events. The default discards them.
	Logger *slog.Logger
	// Now tells the time; tests inject a clock. Default time.Now. It
	// dates what the engine records (a job's UpdatedAt) and measures the
	// fence, as differences of its readings; on a store.LeaseClock it
	// sets no lease.
	Now func() time.Time
	// OnRunEnd, if set, is told how each run ended (server/metrics counts
	// runs with it). It runs on the worker, which claims no job until it
	// returns, so it must return quickly.
	OnRunEnd func(RunInfo)
}

func (c *Config) setDefaults() error {
	switch {
	case c.Store == nil:
		return errors.New("engine: Config.Store is nil")
	case c.Owner == "":
		return errors.New("engine: Config.Owner is empty")
	case c.Parts == nil:
		return errors.New("engine: Config.Parts is nil")
	}
	for name, v := range map[string]int64{
		"Concurrency": int64(c.Concurrency), "LeaseFor": int64(c.LeaseFor), "JobTimeout": int64(c.JobTimeout),
		"MaxAttempts": int64(c.MaxAttempts), "PollInterval": int64(c.PollInterval), "RetryDelay": int64(c.RetryDelay),
	} {
		if v < 0 {
			return fmt.Errorf("engine: Config.%s must not be negative", name)
		}
	}
	if c.LeaseFor != 0 && c.LeaseFor < time.Millisecond {
		// Heartbeats come every third of the lease, and the store keeps
		// microseconds: anything shorter could never be held.
		return fmt.Errorf("engine: Config.LeaseFor must be at least 1ms, got %s", c.LeaseFor)
	}
	if c.RetryDelay != 0 && c.RetryDelay < time.Microsecond {
		// The retry delay is the last lease of the run, and the store
		// keeps microseconds (it refuses a shorter lease).
		return fmt.Errorf("engine: Config.RetryDelay must be at least 1µs, got %s", c.RetryDelay)
	}
	*c = c.WithDefaults()
	return nil
}

// WithDefaults returns c with every zero setting replaced by its default:
// the Default constants, a Logger that discards, and time.Now. It checks
// nothing (New does); a program that shows its effective configuration
// uses it to print the values the engine will run with.
func (c Config) WithDefaults() Config {
	c.Concurrency = or(c.Concurrency, DefaultConcurrency)
	c.LeaseFor = or(c.LeaseFor, DefaultLeaseFor)
	c.JobTimeout = or(c.JobTimeout, DefaultJobTimeout)
	c.MaxAttempts = or(c.MaxAttempts, DefaultMaxAttempts)
	c.PollInterval = or(c.PollInterval, DefaultPollInterval)
	c.RetryDelay = or(c.RetryDelay, DefaultRetryDelay)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
