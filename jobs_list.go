package docsapi

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"slices"
)

// MaxJobsLimit is the largest page of the job list, and the page size of
// AgentJobsService.All when JobsParams.Limit is zero.
const MaxJobsLimit = 100

// JobsParams selects the jobs of the job list, a self-hosted addition. The
// zero value asks for every job, newest first, with the server's page size.
type JobsParams struct {
	// Status keeps only the jobs in one of these statuses; empty keeps
	// all. It is sent as one comma-separated value.
	Status []JobStatus
	// DateFrom is the first creation instant listed (inclusive).
	DateFrom DateBound
	// DateTo is the end of the creation range (exclusive).
	DateTo DateBound
	// Limit is the page size, 1 to 100. Zero leaves it to the server (50)
	// for List, and means 100 for All.
	Limit int
	// Cursor is where to start: the NextCursor of an earlier page, or ""
	// for the first page.
	Cursor string
}

func (p JobsParams) validate() error {
	if err := checkLimit(p.Limit, MaxJobsLimit); err != nil {
		return err
	}
	if err := checkStatuses(p.Status); err != nil {
		return err
	}
	return checkDates(p.DateFrom, p.DateTo)
}

func (p JobsParams) query() string {
	q := dateQuery(p.DateFrom, p.DateTo)
	setPositive(q, "limit", p.Limit)
	setNonEmpty(q, "cursor", p.Cursor)
	setStatuses(q, p.Status)
	return q.Encode()
}

// JobsPage is one page of the job list, newest first.
type JobsPage struct {
	// Jobs holds the page's jobs, newest first (by creation, then ID).
	Jobs []Job
	// NextCursor asks for the next page; "" when the server sent null.
	NextCursor string
	// HasMore reports whether another page follows.
	HasMore bool
}

type jobsPageWire struct {
	Jobs       []jobWire `json:"jobs"`
	NextCursor *string   `json:"nextCursor"`
	HasMore    *bool     `json:"hasMore"`
}

// UnmarshalJSON decodes a page in the API's shape. jobs and hasMore are
// required: an answer without them is not taken for the last page.
func (p *JobsPage) UnmarshalJSON(b []byte) error { return p.decodeBody(b) }

func (p *JobsPage) decodeBody(b []byte) error {
	const what = "jobs page"
	var w jobsPageWire
	if err := decodeWire(what, b, &w); err != nil {
		return err
	}
	switch {
	case w.Jobs == nil:
		return missingField(what, "jobs")
	case w.HasMore == nil:
		return missingField(what, "hasMore")
	}
	page := JobsPage{Jobs: make([]Job, len(w.Jobs)), NextCursor: deref(w.NextCursor), HasMore: *w.HasMore}
	for i := range w.Jobs {
		j, err := w.Jobs[i].job(what, "jobs.")
		if err != nil {
			return err
		}
		page.Jobs[i] = j
	}
	*p = page
	return nil
}

// List returns one page of the project's jobs, newest first: GET
// /v2/agent/{projectId}/jobs. Self-hosted servers only: the hosted service
// has no job list, and answers with an error. A job whose create answer was
// lost is found here, by its creation time. Pass the page's NextCursor as
// params.Cursor for the next page while HasMore is true, or use All.
func (s *AgentJobsService) List(ctx context.Context, projectID string, params JobsParams, opts ...RequestOption) (*JobsPage, error) {
	return getOne[JobsPage](ctx, s.client, projectID, params, func(p string) string { return jobListPath(p) }, opts)
}

// All returns an iterator over the jobs of every page of GET
// /v2/agent/{projectId}/jobs from params.Cursor on, newest first,
// following nextCursor while hasMore is true; 100 jobs a request unless
// params.Limit says otherwise. Self-hosted servers only, as List.
//
// It keeps the promises of the exports' iterators (AllFeedback): lazy,
// restartable, one error then stop, nothing sent after a break, an empty
// page or a repeated cursor ends it, params never changed (Status
// included). Jobs created while it runs come before its cursor, so they
// are never listed and never shift the pages to come.
func (s *AgentJobsService) All(ctx context.Context, projectID string, params JobsParams, opts ...RequestOption) iter.Seq2[Job, error] {
	project, err := s.client.project(projectID)
	if err == nil {
		err = params.validate()
	}
	if err != nil {
		return failed[Job](err)
	}
	if params.Limit == 0 {
		params.Limit = MaxJobsLimit
	}
	// The iterator outlives this call: its own copy of the list keeps a
	// caller's later change to theirs out of the pages still to come.
	params.Status = slices.Clone(params.Status)
	path := jobListPath(project)
	return cursorPager(ctx, "GET "+path, whileHasMore, params.Cursor, func(ctx context.Context, cursor string) ([]Job, string, bool, error) {
		p := params
		p.Cursor = cursor
		var page JobsPage
		req := apiRequest{method: http.MethodGet, path: path, query: p.query()}
		if err := s.client.do(ctx, req, opts, &page); err != nil {
			return nil, "", false, err
		}
		return page.Jobs, page.NextCursor, page.HasMore, nil
	})
}

func jobListPath(project string) string {
	return "/v2/agent/" + url.PathEscape(project) + "/jobs"
}
