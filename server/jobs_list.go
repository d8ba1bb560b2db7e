package server

import (
	"net/http"
	"strings"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server/store"
)

// Bounds of the job list's pages.
const (
	defaultJobsLimit = 50
	maxJobsLimit     = docsapi.MaxJobsLimit
)

// jobStatuses are the values the status filter of the job list takes.
var jobStatuses = []docsapi.JobStatus{docsapi.JobStatusActive, docsapi.JobStatusCompleted, docsapi.JobStatusArchived, docsapi.JobStatusFailed}

// listJobs: GET /v2/agent/{projectId}/jobs, a self-hosted addition: the
// project's jobs, newest first, by cursor (see cursor.go), so that an
// operator sees what runs and a client whose create answer was lost finds
// its job by when it made it. As an agent endpoint, its error body is
// {"error"} alone: every problem of the query is in that one message.
func (s *Server) listJobs(w http.ResponseWriter, r *http.Request, c caller) {
	q, cursor, problems := parseJobsQuery(r.URL.RawQuery)
	if problems != "" {
		writeError(w, http.StatusBadRequest, problems)
		return
	}
	q.ProjectID = c.project.ID
	scope := scope("jobs", q.ProjectID, timeParam(q.From), timeParam(q.To), statusesParam(q.Statuses))
	key, err := s.cursorKey(r.Context())
	if err != nil {
		s.internalError(w, r, "listing jobs", err)
		return
	}
	if cursor != "" {
		at, id, err := openTimeID(key, scope, cursor)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		q.After = &store.JobKey{CreatedAt: at, ID: id}
	}
	page, err := s.cfg.Store.ListJobs(r.Context(), q)
	if err != nil {
		s.storeError(w, r, err, "project "+quote(c.project.ID), "listing jobs")
		return
	}
	out := docsapi.JobsPage{Jobs: make([]docsapi.Job, len(page.Jobs)), HasMore: page.HasMore}
	for i, j := range page.Jobs {
		out.Jobs[i] = publicJob(j)
	}
	if page.HasMore {
		last := page.Jobs[len(page.Jobs)-1]
		out.NextCursor = sealTimeID(key, scope, last.CreatedAt, last.ID)
	}
	writeJSON(w, http.StatusOK, out)
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
	if len(qs.details) == 0 {
		return q, cursor, ""
	}
	msgs := make([]string, len(qs.details))
	for i, d := range qs.details {
		msgs[i] = d.Message
	}
	return q, cursor, "invalid query parameters: " + strings.Join(msgs, "; ")
}
