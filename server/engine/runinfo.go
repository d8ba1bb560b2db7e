package engine

import (
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// RunOutcome is how a run ended, as Config.OnRunEnd is told.
type RunOutcome string

// The outcomes of a run.
const (
	// RunCompleted: the run did the work (with a pull request, or with
	// no change to propose); the job is completed, unless a follow-up
	// arrived meanwhile, which makes it run again.
	RunCompleted RunOutcome = "completed"
	// RunFailed: the job failed, for good.
	RunFailed RunOutcome = "failed"
	// RunRetried: the attempt failed, and the job will be tried again
	// after Config.RetryDelay.
	RunRetried RunOutcome = "retried"
	// RunReleased: the engine shut down during the run and gave the job
	// back to the queue, its attempt uncounted.
	RunReleased RunOutcome = "released"
	// RunAbandoned: the lease was lost (the job was archived, or the
	// lease could not be renewed in time), so the run stopped and left the
	// outcome to whoever holds the job next.
	RunAbandoned RunOutcome = "abandoned"
)

// RunInfo is what Config.OnRunEnd is told of a run.
type RunInfo struct {
	JobID     string
	ProjectID string
	Attempt   int // 1 for the first run of the job
	Outcome   RunOutcome
	// Duration is the run's, by Config.Now: from the claim's return
	// until its outcome was recorded (or recording it gave up).
	Duration time.Duration
}

// ended tells Config.OnRunEnd, if set, how a run that started at start
// ended.
func (e *Engine) ended(job store.Job, outcome RunOutcome, start time.Time) {
	if e.cfg.OnRunEnd == nil {
		return
	}
	e.cfg.OnRunEnd(RunInfo{
		JobID: job.ID, ProjectID: job.ProjectID, Attempt: job.Attempts,
		Outcome: outcome, Duration: e.cfg.Now().Sub(start),
	})
}
