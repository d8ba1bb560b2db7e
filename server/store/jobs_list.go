package store

import (
	"time"
)

// JobKey is a place in the order of ListJobs: a job's CreatedAt and ID.
type JobKey struct {
	CreatedAt time.Time
	ID        string
}

// Key returns j's place in the order of ListJobs.
func (j Job) Key() JobKey { return JobKey{CreatedAt: j.CreatedAt, ID: j.ID} }

// JobFilter selects jobs: those of one project created in [From, To) (a
// zero bound leaves that side open) whose status is one of Statuses
// (empty for any).
type JobFilter struct {
	ProjectID string
	From, To  time.Time
	Statuses  []JobStatus
}

// JobsQuery asks ListJobs for a page.
type JobsQuery struct {
	JobFilter
	Limit int     // jobs per page, at least 1
	After *JobKey // nil: the first page
}

// JobsPage is one page of ListJobs. Its jobs carry no prompts (Prompts is
// empty): a job's history can be long, and a list shows the jobs, not what
// they were told; Job reads one job whole.
type JobsPage struct {
	Jobs    []Job
	HasMore bool
}

// Validate returns what makes f unfit to select jobs, or nil.
func (f JobFilter) Validate() error {
	if f.ProjectID == "" {
		return Invalid("empty project ID")
	}
	return validateStatuses(f.Statuses)
}

// Validate returns what makes q unfit for ListJobs, or nil.
func (q JobsQuery) Validate() error {
	if err := q.JobFilter.Validate(); err != nil {
		return err
	}
	if q.After == nil {
		return validatePage(q.Limit, nil, "")
	}
	return validatePage(q.Limit, &q.After.CreatedAt, q.After.ID)
}
