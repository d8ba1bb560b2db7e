package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/internal/wire"
	"github.com/docsapi/docsapi-go/server/store"
)

// Bounds of the job list's pages, as the document states them.
const (
	defaultJobsLimit = 50
	maxJobsLimit     = 100
)

// jobStatuses are the values the status filter of the job list takes.
var jobStatuses = []store.JobStatus{store.JobStatusActive, store.JobStatusCompleted, store.JobStatusArchived, store.JobStatusFailed}

// listJobs: GET /v2/agent/{projectId}/jobs, a self-hosted addition: the
// project's jobs, newest first, by cursor (see cursor.go), so that an
// operator sees what runs and a client whose create answer was lost finds
// its job by when it made it. As an agent endpoint, its error body is
// {"error"} alone: every problem of the query is in that one message.
func (s *Server) listJobs(w http.ResponseWriter, r *http.Request, c keyauth.Caller) {
	page, next, problems, err := s.jobsPage(r.Context(), c.Project.ID, r.URL.RawQuery)
	switch {
	case problems != "":
		respond.Error(w, http.StatusBadRequest, problems)
		return
	case err != nil:
		respond.StoreError(w, r, s.cfg.Logger, err, "project "+respond.Quote(c.Project.ID), "listing jobs")
		return
	}
	out := wire.JobsPage{Jobs: make([]wire.Job, len(page.Jobs)), NextCursor: wire.NullString(next), HasMore: page.HasMore}
	for i, j := range page.Jobs {
		out.Jobs[i] = publicJob(j)
	}
	respond.JSON(w, http.StatusOK, out)
}

// jobsPage reads the page of a project's jobs that raw, the query string
// of GET .../jobs, asks for, and the cursor of the page after it ("" on
// the last); the dashboard lists jobs through it too. problems says what
// is wrong with the query (a 400); err is the store's.
func (s *Server) jobsPage(ctx context.Context, projectID, raw string) (page store.JobsPage, next, problems string, err error) {
	q, cursor, problems := parseJobsQuery(raw)
	if problems != "" {
		return page, "", problems, nil
	}
	q.ProjectID = projectID
	scope := scope("jobs", q.ProjectID, timeParam(q.From), timeParam(q.To), statusesParam(q.Statuses))
	key := s.cursorKey
	if cursor != "" {
		at, id, err := openTimeID(key, scope, cursor)
		if err != nil {
			return page, "", err.Error(), nil
		}
		q.After = &store.JobKey{CreatedAt: at, ID: id}
	}
	if page, err = s.cfg.Store.ListJobs(ctx, q); err != nil {
		return page, "", "", err
	}
	if page.HasMore {
		last := page.Jobs[len(page.Jobs)-1]
		next = sealTimeID(key, scope, last.CreatedAt, last.ID)
	}
	return page, next, "", nil
}

// parseJobsQuery reads dateFrom and dateTo (exact instants, compared with
// each job's createdAt, as the feedback export compares its entries'),
// status (a comma-separated list), limit and cursor. problems lists every
// problem found, each naming its parameter, or is "".
func parseJobsQuery(raw string) (q store.JobsQuery, cursor, problems string) {
	qs := newExportQuery(raw)
	q.From, q.To = qs.dates()
	q.Statuses = parseStatuses(qs, jobStatuses)
	q.Limit = qs.limit(defaultJobsLimit, maxJobsLimit)
	cursor, _ = qs.one("cursor")
	return q, cursor, problemsOf(qs.details)
}

// problemsOf writes every problem of a query in one message, each naming
// its parameter, or "" when there is none.
func problemsOf(details []wire.ErrorDetail) string {
	if len(details) == 0 {
		return ""
	}
	msgs := make([]string, len(details))
	for i, d := range details {
		msgs[i] = d.Message
	}
	return "invalid query parameters: " + strings.Join(msgs, "; ")
}
