package docsapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/docsapi/docsapi-go/internal/backoff"
)

// Defaults of WaitParams.
const (
	DefaultWaitMinInterval = 2 * time.Second
	DefaultWaitMaxInterval = 30 * time.Second
	DefaultWaitTimeout     = 30 * time.Minute
)

// WaitParams tunes Wait. The zero value uses the defaults: polls start 2 s
// apart and grow towards 30 s, for at most 30 minutes.
type WaitParams struct {
	// MinInterval is the shortest wait between two polls.
	MinInterval time.Duration
	// MaxInterval bounds the wait between two polls. Once reached, waits
	// are picked between MaxInterval/2 and MaxInterval, so that waiters
	// started together drift apart.
	MaxInterval time.Duration
	// Timeout bounds the whole wait. The context's deadline, if earlier,
	// also ends it.
	Timeout time.Duration
	// OnUpdate, if set, is called with every job observed, in order and on
	// the waiting goroutine, including the final one. It suits progress
	// displays; it must not block for long.
	OnUpdate func(job *Job)
}

func (p WaitParams) validate() error {
	switch {
	case p.MinInterval < 0:
		return invalid("MinInterval", "must not be negative, got %s", p.MinInterval)
	case p.MaxInterval < 0:
		return invalid("MaxInterval", "must not be negative, got %s", p.MaxInterval)
	case p.Timeout < 0:
		return invalid("Timeout", "must not be negative, got %s", p.Timeout)
	}
	p = p.withDefaults()
	if p.MinInterval > p.MaxInterval {
		return invalid("MinInterval", "%s is greater than MaxInterval %s", p.MinInterval, p.MaxInterval)
	}
	return nil
}

func (p WaitParams) withDefaults() WaitParams {
	if p.MinInterval == 0 {
		p.MinInterval = DefaultWaitMinInterval
		if p.MaxInterval > 0 && p.MaxInterval < p.MinInterval {
			p.MinInterval = p.MaxInterval
		}
	}
	if p.MaxInterval == 0 {
		p.MaxInterval = max(DefaultWaitMaxInterval, p.MinInterval)
	}
	if p.Timeout == 0 {
		p.Timeout = DefaultWaitTimeout
	}
	return p
}

// Wait polls a job until it is completed, archived or failed, and returns it.
// A failed job is returned together with a *JobFailedError.
//
// The first poll is immediate. The waits between polls start at MinInterval
// and grow towards MaxInterval, with jitter, never exceeding it. Errors that
// can heal (network failures, 429, 5xx, a garbled body) do not stop the wait,
// and a Retry-After on them lengthens the next interval; errors that cannot
// (400, 401, 403, 404, an invalid argument) are returned at once. A status
// the SDK does not know is treated as still running.
//
// When Timeout passes or ctx ends first, Wait returns a *WaitTimeoutError
// with the last job seen. In every case the returned job is the last one
// observed, or nil if no poll succeeded.
func (s *AgentJobsService) Wait(ctx context.Context, projectID, jobID string, params WaitParams, opts ...RequestOption) (*Job, error) {
	if err := params.validate(); err != nil {
		return nil, err
	}
	return s.wait(ctx, projectID, jobID, params.withDefaults(), nil, opts)
}

// wait is Wait with defaults applied. When seen is non-nil (CreateAndWait
// passes the job Create returned), it counts as the first observation: the
// first poll then waits one interval instead of re-reading a job that was
// just returned, and a timeout reports it rather than nil.
func (s *AgentJobsService) wait(ctx context.Context, projectID, jobID string, p WaitParams, seen *Job, opts []RequestOption) (*Job, error) {
	if _, err := s.jobPath(projectID, jobID); err != nil {
		return seen, err
	}
	if ctx == nil {
		return seen, invalid("ctx", "is nil")
	}
	cfg := s.client.cfg
	start := cfg.now()
	waitCtx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()

	last := seen
	var lastErr error
	timedOut := func(cause error) (*Job, error) {
		return last, &WaitTimeoutError{Job: last, Waited: cfg.now().Sub(start), LastErr: lastErr, cause: cause}
	}
	poll := 0
	if seen != nil {
		poll = 1
		if err := sleep(waitCtx, pollInterval(poll, p.MinInterval, p.MaxInterval, cfg.jitter())); err != nil {
			return timedOut(err)
		}
	}
	for {
		poll++
		job, err := s.Get(waitCtx, projectID, jobID, opts...)
		if err != nil && waitCtx.Err() != nil {
			return timedOut(waitCtx.Err())
		}
		delay := pollInterval(poll, p.MinInterval, p.MaxInterval, cfg.jitter())
		if err != nil {
			if !pollCanContinue(err) {
				return last, err
			}
			lastErr = err
			var apiErr *APIError
			if errors.As(err, &apiErr) {
				delay = max(delay, apiErr.RetryAfter)
			}
			cfg.logger.LogAttrs(ctx, slog.LevelInfo, "docsapi: job poll failed; polling on",
				slog.String("job_id", jobID), slog.Int("poll", poll), slog.Duration("delay", delay))
		} else {
			last, lastErr = job, nil
			if p.OnUpdate != nil {
				p.OnUpdate(job)
			}
			cfg.logger.LogAttrs(ctx, slog.LevelDebug, "docsapi: job polled",
				slog.String("job_id", jobID), slog.String("status", string(job.Status)), slog.Int("poll", poll))
			if job.Status.Terminal() {
				return job, terminalError(job)
			}
		}
		if err := sleep(waitCtx, delay); err != nil {
			return timedOut(err)
		}
	}
}

// pollInterval returns the wait after poll number n (1 for the first): a
// random point in a window that doubles each poll, starting at [min, 2·min),
// never below min and never above max. Jitter keeps many waiters that started
// together from polling in lock step.
func pollInterval(n int, min, max time.Duration, jitter float64) time.Duration {
	d := backoff.Exponential(n, 2*min, max, jitter)
	if d < min {
		return min
	}
	return d
}

// pollCanContinue reports whether a failed poll may be followed by another.
// Argument errors and 4xx responses other than 408 and 429 will fail the
// same way every time.
func pollCanContinue(err error) bool {
	if errors.Is(err, ErrInvalidParam) {
		return false
	}
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		return true // network failures and garbled bodies can heal
	}
	code := apiErr.StatusCode
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}

func terminalError(job *Job) error {
	if job.Status == JobStatusFailed {
		return &JobFailedError{Job: job}
	}
	return nil
}
