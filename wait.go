package docsapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/internal/backoff"
)

// Defaults of WaitParams, and of the other waiters' params.
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

func (p WaitParams) validate() error { return p.schedule().validate() }

func (p WaitParams) schedule() pollSchedule {
	return pollSchedule{minInterval: p.MinInterval, maxInterval: p.MaxInterval, timeout: p.Timeout}
}

// pollSchedule is the timing every waiter's params share (WaitParams,
// UpdateWaitParams, StaticExportWaitParams): only their OnUpdate differs.
type pollSchedule struct {
	minInterval, maxInterval, timeout time.Duration
}

func (s pollSchedule) validate() error {
	switch {
	case s.minInterval < 0:
		return invalid("MinInterval", "must not be negative, got %s", s.minInterval)
	case s.maxInterval < 0:
		return invalid("MaxInterval", "must not be negative, got %s", s.maxInterval)
	case s.timeout < 0:
		return invalid("Timeout", "must not be negative, got %s", s.timeout)
	}
	s = s.withDefaults()
	if s.minInterval > s.maxInterval {
		return invalid("MinInterval", "%s is greater than MaxInterval %s", s.minInterval, s.maxInterval)
	}
	return nil
}

// withDefaults fills the zero fields. A bound given alone pulls the other
// default along rather than making the pair invalid: MaxInterval 500ms
// lowers the minimum to 500ms, MinInterval 40s raises the maximum to 40s.
func (s pollSchedule) withDefaults() pollSchedule {
	if s.minInterval == 0 {
		s.minInterval = DefaultWaitMinInterval
		if s.maxInterval > 0 && s.maxInterval < s.minInterval {
			s.minInterval = s.maxInterval
		}
	}
	if s.maxInterval == 0 {
		s.maxInterval = max(DefaultWaitMaxInterval, s.minInterval)
	}
	if s.timeout == 0 {
		s.timeout = DefaultWaitTimeout
	}
	return s
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
	return s.wait(ctx, projectID, jobID, params, nil, opts)
}

// wait is Wait once the params are checked. When seen is non-nil
// (CreateAndWait passes the job Create returned), it counts as the first
// observation: the first poll then waits one interval instead of
// re-reading a job that was just returned, and a timeout reports it rather
// than nil.
func (s *AgentJobsService) wait(ctx context.Context, projectID, jobID string, p WaitParams, seen *Job, opts []RequestOption) (*Job, error) {
	if _, err := s.jobPath(projectID, jobID); err != nil {
		return seen, err
	}
	return poll(ctx, s.client.cfg, p.schedule(), poller[Job]{
		what: "job", idKey: "job_id", id: jobID,
		get:    func(ctx context.Context) (*Job, error) { return s.Get(ctx, projectID, jobID, opts...) },
		status: func(j *Job) string { return string(j.Status) },
		end: func(j *Job) (bool, error) {
			return j.Status.Terminal(), terminalError(j)
		},
		onUpdate: p.OnUpdate,
		timedOut: func(last *Job, waited time.Duration, lastErr, cause error) error {
			return &WaitTimeoutError{Job: last, Waited: waited, LastErr: lastErr, cause: cause}
		},
	}, seen)
}

// poller is what a wait needs to know about the thing it polls; poll does
// the rest, the same way for every waiter.
type poller[T any] struct {
	// what names the thing in log messages ("job"), idKey and id in their
	// attributes.
	what, idKey, id string
	// get reads the thing once, through the request pipeline.
	get func(ctx context.Context) (*T, error)
	// status is a reading's status, for logs.
	status func(*T) string
	// end reports whether a reading ends the wait, and with which error
	// (nil for a success).
	end func(*T) (bool, error)
	// onUpdate, if set, sees every reading.
	onUpdate func(*T)
	// timedOut is the error of a wait that ctx or the timeout ended, with
	// the last reading (nil if none) and the last poll's error.
	timedOut func(last *T, waited time.Duration, lastErr, cause error) error
}

// poll reads p until a reading ends the wait, an error cannot heal, or the
// schedule's timeout or ctx ends it; it returns the last reading in every
// case. A non-nil seen counts as the first reading: the first poll then
// comes one interval later.
func poll[T any](ctx context.Context, cfg *config, sched pollSchedule, p poller[T], seen *T) (*T, error) {
	if ctx == nil {
		return seen, invalid("ctx", "is nil")
	}
	sched = sched.withDefaults()
	start := cfg.now()
	waitCtx, cancel := context.WithTimeout(ctx, sched.timeout)
	defer cancel()

	last := seen
	var lastErr error
	timedOut := func(cause error) (*T, error) {
		return last, p.timedOut(last, cfg.now().Sub(start), lastErr, cause)
	}
	n := 0
	if seen != nil {
		n = 1
		if err := sleep(waitCtx, nextPollDelay(n, sched, cfg.jitter(), nil)); err != nil {
			return timedOut(err)
		}
	}
	for {
		n++
		got, err := p.get(waitCtx)
		if err != nil && waitCtx.Err() != nil {
			return timedOut(waitCtx.Err())
		}
		if err != nil {
			if !pollCanContinue(err) {
				return last, err
			}
			lastErr = err
		} else {
			last, lastErr = got, nil
			if p.onUpdate != nil {
				p.onUpdate(got)
			}
			cfg.logger.LogAttrs(ctx, slog.LevelDebug, "docsapi: "+p.what+" polled",
				slog.String(p.idKey, p.id), slog.String("status", p.status(got)), slog.Int("poll", n))
			if done, err := p.end(got); done {
				return got, err
			}
		}
		delay := nextPollDelay(n, sched, cfg.jitter(), err)
		if err != nil {
			cfg.logger.LogAttrs(ctx, slog.LevelInfo, "docsapi: "+p.what+" poll failed; polling on",
				slog.String(p.idKey, p.id), slog.Int("poll", n), slog.Duration("delay", delay))
		}
		if err := sleep(waitCtx, delay); err != nil {
			return timedOut(err)
		}
	}
}

// nextPollDelay is the wait after poll number n (1 for the first) of a
// schedule with defaults applied: pollInterval's, or longer when the poll
// failed with a Retry-After that asks for more. Retry-After lengthens an
// interval, never shortens one.
func nextPollDelay(n int, sched pollSchedule, jitter float64, pollErr error) time.Duration {
	d := pollInterval(n, sched.minInterval, sched.maxInterval, jitter)
	var apiErr *APIError
	if errors.As(pollErr, &apiErr) {
		d = max(d, apiErr.RetryAfter)
	}
	return d
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

// stoppedWaiting is the message of every waiter's timeout error: what it
// waited for, the last reading's ID and status when seen, how long it ran,
// what ended it, and the last poll's error.
func stoppedWaiting(what string, seen bool, id, status string, waited time.Duration, cause, lastErr error) string {
	var b strings.Builder
	b.WriteString("docsapi: stopped waiting for " + what)
	if seen {
		b.WriteString(" " + id + " (last status " + status + ")")
	}
	b.WriteString(" after " + waited.Round(time.Millisecond).String())
	if cause != nil {
		b.WriteString(": " + cause.Error())
	}
	if lastErr != nil {
		b.WriteString("; last poll: " + lastErr.Error())
	}
	return b.String()
}

func terminalError(job *Job) error {
	if job.Status == JobStatusFailed {
		return &JobFailedError{Job: job}
	}
	return nil
}
