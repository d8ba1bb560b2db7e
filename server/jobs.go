package server

import (
	"cmp"
	"context"
	"crypto/sha256"
	"net/http"
	"net/url"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/base62"
	"github.com/docsapi/docsapi-go/server/internal/input"
	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/internal/wire"
	"github.com/docsapi/docsapi-go/server/store"
)

// createJob: POST /v2/agent/{projectId}/job.
func (s *Server) createJob(w http.ResponseWriter, r *http.Request, c keyauth.Caller) {
	prompt, ok := s.readWrite(w, r)
	if !ok || !s.canRun(w, r, c.Project) {
		return
	}
	job, err := s.newJob(r.Context(), c.Project, prompt, idempotency(r, "create", c.Project.ID, "", prompt))
	if err != nil {
		respond.StoreError(w, r, s.cfg.Logger, err, "project "+respond.Quote(c.Project.ID), "storing job")
		return
	}
	// A replay answers 201 again, as the first request was answered: to a
	// client retrying after a lost response, the two must look the same.
	respond.JSON(w, http.StatusCreated, publicJob(job))
}

// newJob stores a new job of project p with its first prompt, or the job
// idem's replay names, and wakes an engine: the one way jobs are created,
// by POST /v2/agent/{projectId}/job and from content gaps alike.
func (s *Server) newJob(ctx context.Context, p store.Project, prompt string, idem *store.Idempotency) (store.Job, error) {
	id := "job_" + base62.Random(20)
	job, _, err := s.cfg.Store.CreateJob(ctx, store.NewJob{
		ID:          id,
		ProjectID:   p.ID,
		Prompt:      prompt,
		Repository:  p.Repository,
		Ref:         p.Ref,
		Model:       p.Model,
		Branch:      "docs-agent/" + id,
		CreatedAt:   s.now(),
		Idempotency: idem,
	})
	if err != nil {
		return store.Job{}, err
	}
	s.jobQueued()
	return job, nil
}

// getJob: GET /v2/agent/{projectId}/job/{id}.
func (s *Server) getJob(w http.ResponseWriter, r *http.Request, c keyauth.Caller) {
	job, err := s.cfg.Store.Job(r.Context(), c.Project.ID, r.PathValue("id"))
	if err != nil {
		respond.StoreError(w, r, s.cfg.Logger, err, "job "+respond.Quote(r.PathValue("id")), "loading job")
		return
	}
	respond.JSON(w, http.StatusOK, publicJob(job))
}

// sendMessage: POST /v2/agent/{projectId}/job/{id}/message.
func (s *Server) sendMessage(w http.ResponseWriter, r *http.Request, c keyauth.Caller) {
	prompt, ok := s.readWrite(w, r)
	if !ok || !s.canRun(w, r, c.Project) {
		return
	}
	jobID := r.PathValue("id")
	job, _, err := s.cfg.Store.AddPrompt(r.Context(), store.NewPrompt{
		ProjectID:   c.Project.ID,
		JobID:       jobID,
		Prompt:      prompt,
		At:          s.now(),
		Idempotency: idempotency(r, "message", c.Project.ID, jobID, prompt),
		// Checked by the store inside its write: two follow-ups racing
		// for a job's last place cannot both take it.
		Limits: store.PromptLimits{Prompts: s.cfg.MaxJobPrompts, Characters: s.cfg.MaxJobPromptLength},
	})
	if err != nil {
		respond.StoreError(w, r, s.cfg.Logger, err, "job "+respond.Quote(jobID), "storing job")
		return
	}
	s.jobQueued()
	respond.JSON(w, http.StatusOK, publicJob(job))
}

// archiveJob: POST /v2/agent/{projectId}/job/{id}/archive, a self-hosted
// addition. Archiving an archived job answers it again.
func (s *Server) archiveJob(w http.ResponseWriter, r *http.Request, c keyauth.Caller) {
	jobID := r.PathValue("id")
	job, err := s.ArchiveJob(r.Context(), c.Project.ID, jobID)
	if err != nil {
		respond.StoreError(w, r, s.cfg.Logger, err, "job "+respond.Quote(jobID), "archiving job")
		return
	}
	respond.JSON(w, http.StatusOK, publicJob(job))
}

// ArchiveJob archives a job: it takes no more follow-ups, and a run in
// progress is cancelled (at once in this process, at its next heartbeat
// elsewhere). The error matches store.ErrNotFound if there is no such job.
func (s *Server) ArchiveJob(ctx context.Context, projectID, jobID string) (store.Job, error) {
	job, err := s.cfg.Store.ArchiveJob(ctx, projectID, jobID, s.now())
	if err != nil {
		return store.Job{}, err
	}
	if s.cfg.Jobs != nil {
		s.cfg.Jobs.JobArchived(jobID)
	}
	return job, nil
}

// Job returns a job with everything the store keeps, the failure reason
// included, for operators.
func (s *Server) Job(ctx context.Context, projectID, jobID string) (store.Job, error) {
	return s.cfg.Store.Job(ctx, projectID, jobID)
}

func (s *Server) jobQueued() {
	if s.cfg.Jobs != nil {
		s.cfg.Jobs.JobQueued()
	}
}

// readWrite reads the prompt of a create or message request and checks its
// Idempotency-Key; on a problem it answers and returns false.
func (s *Server) readWrite(w http.ResponseWriter, r *http.Request) (string, bool) {
	prompt, bad := readPrompt(w, r, s.cfg.MaxBodyBytes, s.cfg.MaxPromptLength)
	if bad == nil {
		bad = checkIdempotencyKey(r)
	}
	if bad != nil {
		respond.Error(w, bad.Status, bad.Message)
		return "", false
	}
	return prompt, true
}

// checkIdempotencyKey validates the optional Idempotency-Key header.
func checkIdempotencyKey(r *http.Request) *input.Problem {
	values := r.Header.Values("Idempotency-Key")
	switch {
	case len(values) == 0:
		return nil
	case len(values) > 1:
		return input.Invalid("send one Idempotency-Key header, not %d", len(values))
	case len(values[0]) == 0 || len(values[0]) > 255:
		return input.Invalid("Idempotency-Key must be 1 to 255 characters")
	}
	for _, c := range values[0] {
		if c < 0x21 || c > 0x7e {
			return input.Invalid("Idempotency-Key must be printable ASCII without spaces")
		}
	}
	return nil
}

// idempotency ties a write to its Idempotency-Key, if it has one. The hash
// covers what makes two requests the same request: the operation, its
// target and the prompt. Fields are separated by NUL, which a prompt (valid
// JSON text) and the IDs cannot contain unescaped, so no two requests share
// a hash by concatenation.
func idempotency(r *http.Request, op, projectID, jobID, prompt string) *store.Idempotency {
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		return nil
	}
	h := sha256.New()
	for _, part := range []string{op, projectID, jobID, prompt} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return &store.Idempotency{Key: key, RequestHash: h.Sum(nil)}
}

// publicJob is the job as the API shows it. The failure reason, attempts and
// lease stay with the operator, and so does the ref the job's branch starts
// from (j.Ref): source.ref is, as the hosted service documents it, the
// branch the agent works on, where its changes go.
func publicJob(j store.Job) wire.Job {
	return wire.Job{
		ID:         j.ID,
		Status:     string(j.Status),
		Source:     wire.JobSource{Repository: publicRepository(j.Repository), Ref: wire.NullString(j.Branch)},
		Model:      cmp.Or(j.Model, UnnamedModel),
		PRLink:     wire.NullString(j.PRLink),
		CreatedAt:  wire.Time(j.CreatedAt),
		ArchivedAt: wire.NullTime(j.ArchivedAt),
	}
}

// UnnamedModel is the model a job reports when its project names none:
// the hosted service always names one, and this server cannot name the
// agent an engine will run. docsapi serve names one for every project it
// runs (its model, else its agent's; see runner.Agent.Model). The job keeps
// no model (store.Job.Model stays ""), so the agent still picks its own.
const UnnamedModel = "docsapi-agent"

// publicRepository drops credentials from a repository URL. Projects are
// checked for them on creation; this guards the stores written before.
func publicRepository(repo string) string {
	u, err := url.Parse(repo)
	if err != nil || u.User == nil {
		return repo
	}
	u.User = nil
	return u.String()
}

func (s *Server) now() time.Time { return s.cfg.Now().UTC().Truncate(time.Microsecond) }

// canRun answers 503 and reports false when Config.Runs says this server
// cannot run the project's jobs.
func (s *Server) canRun(w http.ResponseWriter, r *http.Request, p store.Project) bool {
	if s.cfg.Runs == nil {
		return true
	}
	if err := s.cfg.Runs(r.Context(), p); err != nil {
		respond.Error(w, http.StatusServiceUnavailable, "this server cannot run jobs of project "+respond.Quote(p.ID)+": "+err.Error())
		return false
	}
	return true
}
