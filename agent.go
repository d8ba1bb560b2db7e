package docsapi

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// AgentJobsService runs background agent jobs: the agent edits the project's
// documentation from a natural-language prompt and opens a pull request.
type AgentJobsService struct {
	client *Client
}

// CreateJobParams is the body of Create.
type CreateJobParams struct {
	// Prompt tells the agent what to change. Required.
	Prompt string `json:"prompt"`
}

// SendMessageParams is the body of SendMessage.
type SendMessageParams struct {
	// Prompt is the follow-up instruction. Required.
	Prompt string `json:"prompt"`
}

// Create starts an agent job in the project and returns it, normally with
// status active. An empty projectID means the client's default project.
//
// Create is not retried after an error whose outcome is unknown (a 5xx, a
// connection reset), because a second request could start a second agent:
// only refused connections and 429 responses are retried. With
// WithIdempotencyKey, against a server that honours it, Create is retried
// like a read.
func (s *AgentJobsService) Create(ctx context.Context, projectID string, params CreateJobParams, opts ...RequestOption) (*Job, error) {
	project, err := s.client.project(projectID)
	if err != nil {
		return nil, err
	}
	if err := checkPrompt(params.Prompt); err != nil {
		return nil, err
	}
	job := new(Job)
	req := apiRequest{method: http.MethodPost, path: jobsPath(project), body: params}
	if err := s.client.do(ctx, req, opts, job); err != nil {
		return nil, err
	}
	return job, nil
}

// Get retrieves a job. A job that does not exist yields an error matching
// ErrNotFound.
func (s *AgentJobsService) Get(ctx context.Context, projectID, jobID string, opts ...RequestOption) (*Job, error) {
	path, err := s.jobPath(projectID, jobID)
	if err != nil {
		return nil, err
	}
	job := new(Job)
	if err := s.client.do(ctx, apiRequest{method: http.MethodGet, path: path}, opts, job); err != nil {
		return nil, err
	}
	return job, nil
}

// SendMessage gives an existing job a follow-up instruction and returns the
// job. The agent works on it again; follow its progress with Get or Wait.
// Retries follow the same rules as Create.
func (s *AgentJobsService) SendMessage(ctx context.Context, projectID, jobID string, params SendMessageParams, opts ...RequestOption) (*Job, error) {
	path, err := s.jobPath(projectID, jobID)
	if err != nil {
		return nil, err
	}
	if err := checkPrompt(params.Prompt); err != nil {
		return nil, err
	}
	job := new(Job)
	req := apiRequest{method: http.MethodPost, path: path + "/message", body: params}
	if err := s.client.do(ctx, req, opts, job); err != nil {
		return nil, err
	}
	return job, nil
}

// CreateAndWait creates a job and waits for it as Wait does, except that the
// first poll comes one interval after the create rather than at once. The
// options apply to every request it makes (an idempotency key is sent on the
// create request only). When waiting fails, the returned job is the last one
// seen, whose ID lets the caller wait again; it is nil only if Create itself
// failed.
func (s *AgentJobsService) CreateAndWait(ctx context.Context, projectID string, params CreateJobParams, wait WaitParams, opts ...RequestOption) (*Job, error) {
	if err := wait.validate(); err != nil {
		return nil, err
	}
	job, err := s.Create(ctx, projectID, params, opts...)
	if err != nil {
		return nil, err
	}
	if wait.OnUpdate != nil {
		wait.OnUpdate(job)
	}
	if job.Status.Terminal() {
		return job, terminalError(job)
	}
	return s.wait(ctx, projectID, job.ID, wait, job, opts)
}

func (s *AgentJobsService) jobPath(projectID, jobID string) (string, error) {
	project, err := s.client.project(projectID)
	if err != nil {
		return "", err
	}
	if err := checkID("jobID", jobID); err != nil {
		return "", err
	}
	return jobsPath(project) + "/" + url.PathEscape(jobID), nil
}

func jobsPath(project string) string {
	return "/v2/agent/" + url.PathEscape(project) + "/job"
}

func checkPrompt(prompt string) error {
	switch {
	case strings.TrimSpace(prompt) == "":
		return invalid("prompt", "is empty")
	case !utf8.ValidString(prompt):
		return invalid("prompt", "is not valid UTF-8")
	}
	return nil
}
