package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// run runs one claimed job, whose lease ends at until, and records how it
// ended. Every store write here uses its own context, which ends at the
// run's fence (see lease): a cancelled run must still record its outcome, but
// never once another engine may have taken the job over.
func (e *Engine) run(job store.Job, until time.Time) {
	log := e.cfg.Logger.With(slog.String("job_id", job.ID), slog.String("project_id", job.ProjectID), slog.String("owner", e.cfg.Owner))
	log.Info("engine: job claimed", slog.Int("attempt", job.Attempts), slog.Int("prompts", len(job.Prompts)))
	start := e.cfg.Now()
	outcome := RunAbandoned // until the run says otherwise
	defer func() { e.ended(job, outcome, start) }()
	if timeLeft(until, start, e.cfg.LeaseFor) <= 0 {
		// The claim took so long to come back that the lease is all but
		// over: leave the job to whoever claims it after the lease ends.
		log.Warn("engine: run abandoned: the claim came back too late to use its lease", slog.Time("lease_until", until))
		return
	}

	ctx, cancel := context.WithCancelCause(e.runs)
	defer cancel(nil)
	defer e.track(job.ID, cancel)()
	// The fence: past it, the run stops as if its lease were lost, since
	// the lease may be gone by the time it could be renewed.
	l := e.newLease(until, func() {
		log.Warn("engine: the lease was not renewed in time; stopping the run before it ends",
			slog.Duration("margin", leaseMargin(e.cfg.LeaseFor)))
		cancel(errLeaseLost)
	})
	defer l.stopFence()
	hbCtx, stopHeartbeat := context.WithCancel(ctx)
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		e.heartbeat(hbCtx, job, l, cancel)
	}()
	runCtx, cancelTimeout := context.WithTimeoutCause(ctx, e.cfg.JobTimeout, errTimeout)
	prLink, err := e.execute(runCtx, job)
	cause := context.Cause(runCtx)
	cancelTimeout()
	stopHeartbeat()
	<-hbDone

	switch {
	case errors.Is(cause, errLeaseLost):
		// Archived, or taken over: whoever holds the job now decides.
		log.Warn("engine: run abandoned: the lease is gone")
		return
	case errors.Is(cause, errShutdown):
		outcome = RunReleased
		e.release(job, l, log)
		return
	case errors.Is(cause, errTimeout):
		err = Permanent(fmt.Errorf("the run took longer than %s", e.cfg.JobTimeout))
	}
	if err == nil {
		outcome = RunCompleted
		e.finish(job, l, store.Finish{Outcome: store.Completed, PRLink: prLink, Handled: len(job.Prompts)}, log)
		return
	}
	if IsPermanent(err) || job.Attempts >= e.cfg.MaxAttempts {
		reason := err.Error()
		if !IsPermanent(err) {
			reason = store.GaveUpReason(job.Attempts, reason)
		}
		outcome = RunFailed
		e.finish(job, l, store.Finish{Outcome: store.Failed, FailureReason: reason}, log)
		return
	}
	outcome = RunRetried
	e.retryLater(job, l, err, log)
}

// execute does the work of a run and returns the pull request's URL, if any.
func (e *Engine) execute(ctx context.Context, job store.Job) (string, error) {
	project, err := e.cfg.Store.Project(ctx, job.ProjectID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return "", Permanent(fmt.Errorf("project %q no longer exists", job.ProjectID))
		}
		return "", fmt.Errorf("loading project: %w", err)
	}
	parts, err := e.cfg.Parts(ctx, project)
	if err != nil {
		return "", Permanent(fmt.Errorf("configuring the project's runner: %w", err))
	}
	if missing := parts.missing(); missing != "" {
		return "", Permanent(fmt.Errorf("Config.Parts gave project %q no %s", job.ProjectID, missing))
	}
	ws, err := parts.Repositories.Open(ctx, RepoSpec{Repository: job.Repository, Ref: job.Ref, Branch: job.Branch})
	if err != nil {
		return "", fmt.Errorf("preparing the workspace: %w", err)
	}
	defer func() {
		if cerr := ws.Close(); cerr != nil {
			e.cfg.Logger.Warn("engine: removing a workspace", slog.String("job_id", job.ID), slog.Any("error", cerr))
		}
	}()
	prompts := make([]string, len(job.Prompts))
	for i, p := range job.Prompts {
		prompts[i] = p.Text
	}
	task := Task{JobID: job.ID, ProjectID: job.ProjectID, Dir: ws.Dir(), Prompts: prompts, Model: job.Model}
	if err := parts.Agent.Run(ctx, task); err != nil {
		return "", fmt.Errorf("the agent failed: %w", err)
	}
	changed, err := ws.Publish(ctx, commitMessage(job))
	if err != nil {
		return "", fmt.Errorf("publishing the changes: %w", err)
	}
	if !changed {
		// Nothing to propose, now or before: completed without a pull
		// request, as the hosted service does when no file changed. A
		// follow-up that changed nothing keeps the earlier PRLink.
		return "", nil
	}
	url, err := parts.PullRequests.Ensure(ctx, PullRequestSpec{
		Repository: job.Repository,
		Base:       job.Ref,
		Branch:     job.Branch,
		Title:      "Docs: " + firstLine(prompts[0], 60),
		Body:       pullRequestBody(job.ID, prompts),
	})
	if err != nil {
		return "", fmt.Errorf("opening the pull request: %w", err)
	}
	return url, nil
}

func (e *Engine) finish(job store.Job, l *lease, f store.Finish, log *slog.Logger) {
	f.JobID, f.Owner, f.At = job.ID, e.cfg.Owner, e.cfg.Now()
	ctx, cancel, ok := l.storeContext(context.Background())
	if !ok {
		// Too late to be sure the lease is still ours. The job will be
		// taken over once the lease ends and run again; every step is
		// idempotent, so that costs time, not correctness.
		log.Warn("engine: outcome dropped: the lease ran out before it could be recorded",
			slog.Bool("completed", f.Outcome == store.Completed), slog.Time("lease_until", l.end()))
		return
	}
	defer cancel()
	stored, err := e.cfg.Store.FinishJob(ctx, f)
	switch {
	case errors.Is(err, store.ErrLeaseLost):
		log.Warn("engine: outcome dropped: the lease is gone")
	case err != nil:
		// The lease will expire and another run will redo the job; every
		// step is idempotent, so that costs time, not correctness.
		log.Error("engine: recording the outcome", slog.Any("error", err))
	case f.Outcome == store.Failed:
		log.Warn("engine: job failed", slog.String("reason", f.FailureReason))
	case stored.Status == store.JobStatusActive:
		log.Info("engine: run done; a follow-up arrived meanwhile, so the job runs again", slog.String("pr_link", stored.PRLink))
		e.JobQueued()
	default:
		log.Info("engine: job completed", slog.String("pr_link", stored.PRLink))
	}
}

// retryLater keeps the lease for RetryDelay more, by the store's lease
// time, and lets it lapse: any engine may then claim the job again, and
// the attempt counts. If the lease is too near its end to be set, it lapses
// at its end instead.
func (e *Engine) retryLater(job store.Job, l *lease, runErr error, log *slog.Logger) {
	now := e.cfg.Now()
	if ctx, cancel, ok := l.storeContext(context.Background()); ok {
		err := e.cfg.Store.ExtendLease(ctx, job.ID, e.cfg.Owner, now, e.cfg.RetryDelay)
		cancel()
		if err != nil && !errors.Is(err, store.ErrLeaseLost) {
			log.Error("engine: scheduling a retry", slog.Any("error", err))
		}
	} else {
		log.Warn("engine: the lease ran out before the retry could be scheduled; the job is retried when it ends",
			slog.Time("lease_until", l.end()))
	}
	log.Warn("engine: attempt failed; the job will be retried",
		slog.Int("attempt", job.Attempts), slog.Duration("delay", e.cfg.RetryDelay), slog.Any("error", runErr))
}

// release gives the job back at shutdown, without counting the attempt.
func (e *Engine) release(job store.Job, l *lease, log *slog.Logger) {
	ctx, cancel, ok := l.storeContext(context.Background())
	if !ok {
		log.Warn("engine: the lease ran out before the job could be released; it will be taken over when the lease ends",
			slog.Time("lease_until", l.end()))
		return
	}
	defer cancel()
	if err := e.cfg.Store.ReleaseJob(ctx, job.ID, e.cfg.Owner); err != nil && !errors.Is(err, store.ErrLeaseLost) {
		log.Error("engine: releasing the job at shutdown; it will be taken over when the lease expires", slog.Any("error", err))
		return
	}
	log.Info("engine: job released at shutdown")
}

func commitMessage(job store.Job) string {
	newest := job.Prompts[len(job.Prompts)-1].Text
	return firstLine(newest, 72) + "\n\n" + newest + "\n\nAgent job: " + job.ID + "\n"
}

func pullRequestBody(jobID string, prompts []string) string {
	var b strings.Builder
	b.WriteString("Changes made by a documentation agent.\n\n")
	for i, p := range prompts {
		if i == 0 {
			b.WriteString("**Prompt**\n\n")
		} else {
			fmt.Fprintf(&b, "**Follow-up %d**\n\n", i)
		}
		b.WriteString("> " + strings.ReplaceAll(strings.TrimSpace(p), "\n", "\n> ") + "\n\n")
	}
	b.WriteString("Agent job: `" + jobID + "`\n")
	return b.String()
}

// firstLine returns the first line of s, cut to at most n characters.
func firstLine(s string, n int) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	line = strings.TrimSpace(line) // a CRLF prompt leaves "\r" before the cut
	if r := []rune(line); len(r) > n {
		return strings.TrimSpace(string(r[:n-1])) + "…"
	}
	return line
}
