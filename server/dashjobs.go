package server

import (
	"context"
	"slices"

	"github.com/docsapi/docsapi-go/server/store"
)

// dashJobs is what the dashboard reads and does of jobs (dashboard.Jobs):
// what the API's job endpoints do, so that its pages show and allow what
// the API does.
type dashJobs struct{ s *Server }

// Statuses are the values of the job list's status filter.
func (j dashJobs) Statuses() []store.JobStatus { return slices.Clone(jobStatuses) }

// List reads a page of jobs as GET .../jobs does.
func (j dashJobs) List(ctx context.Context, projectID, query string) (store.JobsPage, string, string, error) {
	return j.s.jobsPage(ctx, projectID, query)
}

// Get returns a job with everything the store keeps (Server.Job), its
// repository and its model as the API shows them.
func (j dashJobs) Get(ctx context.Context, projectID, jobID string) (store.Job, error) {
	job, err := j.s.Job(ctx, projectID, jobID)
	if err != nil {
		return store.Job{}, err
	}
	public := publicJob(job)
	job.Repository, job.Model = public.Source.Repository, public.Model
	return job, nil
}

// Archive archives a job (Server.ArchiveJob).
func (j dashJobs) Archive(ctx context.Context, projectID, jobID string) (store.Job, error) {
	return j.s.ArchiveJob(ctx, projectID, jobID)
}
