package engine

import (
	"context"
	"errors"
)

// The parts a run is made of. Each is small on purpose: the engine owns the
// order of the steps and every state change, so a part only does its one
// thing, and the same part serves a first run, a retry after a crash and a
// follow-up alike.

// Repositories opens workspaces on a project's repository.
type Repositories interface {
	// Open clones spec.Repository into a private workspace and checks out
	// spec.Branch: the remote branch if it exists (a retry or a follow-up
	// continues where the last run left off), otherwise a new branch from
	// spec.Ref ("" for the repository's default branch).
	Open(ctx context.Context, spec RepoSpec) (Workspace, error)
}

// RepoSpec says what to check out.
type RepoSpec struct {
	Repository string
	Ref        string
	Branch     string
}

// Workspace is a checked-out working tree that only this run uses.
type Workspace interface {
	// Dir is the working tree's folder, where the agent edits files.
	Dir() string
	// Publish commits every change in Dir with message and pushes the
	// branch. It reports whether the branch holds changes relative to the
	// base ref, made by this run or an earlier one (a run that crashed after
	// pushing): false means there is nothing to propose. It must be safe to
	// call again after a failure.
	Publish(ctx context.Context, message string) (bool, error)
	// Close removes the workspace. It is called once, whatever happened.
	Close() error
}

// Agent edits a workspace following a job's prompts.
type Agent interface {
	// Run works in task.Dir until the prompts are carried out. An error
	// means the agent could not do the work.
	Run(ctx context.Context, task Task) error
}

// Task is one run of the agent.
type Task struct {
	JobID     string
	ProjectID string
	Dir       string
	// Prompts is the job's whole history, oldest first; the last one is
	// the newest instruction.
	Prompts []string
	Model   string
}

// PullRequests opens pull (or merge) requests on a host.
type PullRequests interface {
	// Ensure returns the web URL of the open pull request from spec.Branch
	// into spec.Base, opening one only if none exists, so that retries and
	// follow-ups never open a second one. An empty URL means the host does
	// not use pull requests (a project that pushes directly).
	Ensure(ctx context.Context, spec PullRequestSpec) (string, error)
}

// PullRequestSpec describes the pull request of a job.
type PullRequestSpec struct {
	Repository string
	Base       string // the job's ref; "" for the default branch
	Branch     string
	Title      string
	Body       string
}

// Parts are what one project's jobs run with.
type Parts struct {
	Repositories Repositories
	Agent        Agent
	PullRequests PullRequests
}

// missing names the field of a part that is nil, or returns "".
func (p Parts) missing() string {
	switch {
	case p.Repositories == nil:
		return "Repositories"
	case p.Agent == nil:
		return "Agent"
	case p.PullRequests == nil:
		return "PullRequests"
	}
	return ""
}

// Permanent marks err as an error a retry cannot mend (bad credentials, a
// protected branch, an agent that refused), so the job fails at once with it
// as the reason instead of being tried again.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

// IsPermanent reports whether err, or an error it wraps, was marked with
// Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }
