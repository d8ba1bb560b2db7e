package docsapi

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DeploymentsService deploys the documentation site: an update from the
// project's deployment branch, a preview deployment of another branch, and
// a run of a scheduled automation; and it follows a deployment to its end.
// It needs an admin key.
//
// The hosted service allows TriggerUpdate and TriggerAutomation 10 requests
// per 10 seconds per organisation between them, and TriggerPreview 5 per
// minute per organisation; WithRateLimiter keeps a program within them.
//
// Every trigger is a POST that starts work on the server. None is sent
// again after an error whose outcome is unknown (a 5xx, a connection reset
// after the request went out): the trigger may have been queued already,
// and a second one would deploy twice or run the automation twice, which
// spends credits. The service documents no idempotency key, so only a
// refused connection or a 429 is retried; WithIdempotencyKey, against a
// server that honours it, makes a trigger retried like a read.
type DeploymentsService struct {
	client *Client
}

// UpdateTrigger is the answer of TriggerUpdate.
type UpdateTrigger struct {
	// StatusID identifies the queued update: pass it to UpdateStatus or
	// WaitUpdate. Empty only if the server sent none.
	StatusID string
}

// PreviewTrigger is the answer of TriggerPreview.
type PreviewTrigger struct {
	// StatusID identifies the preview's deployment: pass it to
	// UpdateStatus or WaitUpdate, as for an update.
	StatusID string
	// PreviewURL is where the preview is served once deployed.
	PreviewURL string
}

// AutomationTrigger is the answer of TriggerAutomation.
type AutomationTrigger struct {
	// SchemaID is the automation triggered.
	SchemaID string
	// InstanceID is the queued run, as the dashboard's run history shows it.
	InstanceID string
	// JobID is the background job that processes the run.
	JobID string
}

// UpdateState is the state of a deployment. The service may add states
// (its dashboard already shows skipped updates), so an unknown state is
// kept as sent and is not terminal: a waiter keeps waiting rather than
// failing on it.
type UpdateState string

// The states the API reference documents.
const (
	UpdateStateQueued     UpdateState = "queued"      // waiting for a builder
	UpdateStateInProgress UpdateState = "in_progress" // building and deploying
	UpdateStateSuccess    UpdateState = "success"     // deployed
	UpdateStateFailure    UpdateState = "failure"     // ended without deploying; see Summary and Logs
)

// Terminal reports whether the state is final: success or failure.
func (s UpdateState) Terminal() bool {
	return s == UpdateStateSuccess || s == UpdateStateFailure
}

// Known reports whether the state is one the API reference documents.
func (s UpdateState) Known() bool {
	return s == UpdateStateQueued || s == UpdateStateInProgress || s.Terminal()
}

// UpdateSource says what triggered a deployment. The service may add
// sources: an unknown one is kept as sent.
type UpdateSource string

// The sources the API reference documents.
const (
	UpdateSourceInternal              UpdateSource = "internal"
	UpdateSourceGitHubAppInstallation UpdateSource = "github-app-installation"
	UpdateSourceAPI                   UpdateSource = "api"
	UpdateSourceGitHub                UpdateSource = "github"
	UpdateSourceDashboard             UpdateSource = "dashboard"
	UpdateSourceGitLab                UpdateSource = "gitlab"
	UpdateSourceOnboarding            UpdateSource = "onboarding"
)

// Known reports whether the source is one the API reference documents.
func (s UpdateSource) Known() bool {
	switch s {
	case UpdateSourceInternal, UpdateSourceGitHubAppInstallation, UpdateSourceAPI, UpdateSourceGitHub,
		UpdateSourceDashboard, UpdateSourceGitLab, UpdateSourceOnboarding:
		return true
	}
	return false
}

// UpdateStatus is a deployment (an update or a preview) as UpdateStatus
// reads it. The reference marks no field required: an absent or null
// field is its zero value.
type UpdateStatus struct {
	// ID is the status ID (_id on the wire).
	ID string
	// ProjectID is the documentation project deployed.
	ProjectID string
	// CreatedAt is when the deployment was queued, in UTC.
	CreatedAt time.Time
	// EndedAt is when it ended; zero while it runs.
	EndedAt time.Time
	// Status is the deployment's state; see UpdateState.
	Status UpdateState
	// Summary describes the state in a sentence.
	Summary string
	// Logs are the build's log lines.
	Logs []string
	// Subdomain is the site's subdomain.
	Subdomain string
	// Screenshot, ScreenshotLight and ScreenshotDark show the deployed
	// site, the last in dark mode.
	Screenshot, ScreenshotLight, ScreenshotDark string
	// Author is who made the deployed commit; nil when the service sent
	// null (a deployment started from the dashboard, say).
	Author *UpdateAuthor
	// Commit is the commit deployed.
	Commit UpdateCommit
	// Source is what triggered the deployment.
	Source UpdateSource
}

// UpdateAuthor is the author of a deployed commit.
type UpdateAuthor struct {
	// Name is the author's name.
	Name string
	// AvatarURL is the address of the author's picture.
	AvatarURL string
	// GitHubUserID is the author's GitHub user ID; zero if not sent.
	GitHubUserID int64
}

// UpdateCommit is the commit a deployment deployed.
type UpdateCommit struct {
	// SHA is the commit's hash.
	SHA string
	// Ref is the branch or tag it was on.
	Ref string
	// Message is the commit message.
	Message string
	// FilesChanged lists the files the commit changed.
	FilesChanged UpdateFilesChanged
}

// UpdateFilesChanged lists the files of a deployed commit by change.
type UpdateFilesChanged struct {
	Added, Modified, Removed []string
}

// UpdateWaitParams tunes WaitUpdate. The zero value uses the defaults of
// WaitParams: polls start 2 s apart and grow towards 30 s, for at most 30
// minutes.
type UpdateWaitParams struct {
	// MinInterval is the shortest wait between two polls.
	MinInterval time.Duration
	// MaxInterval bounds the wait between two polls.
	MaxInterval time.Duration
	// Timeout bounds the whole wait. The context's deadline, if earlier,
	// also ends it.
	Timeout time.Duration
	// OnUpdate, if set, is called with every status read, in order and on
	// the waiting goroutine, including the final one. It must not block
	// for long.
	OnUpdate func(status *UpdateStatus)
}

func (p UpdateWaitParams) schedule() pollSchedule {
	return pollSchedule{minInterval: p.MinInterval, maxInterval: p.MaxInterval, timeout: p.Timeout}
}

// UpdateFailedError is returned by WaitUpdate when the deployment ended
// with the state failure.
type UpdateFailedError struct {
	// Status is the deployment as last read; its Summary and Logs say why.
	Status *UpdateStatus
}

// Error names the deployment and gives its summary.
func (e *UpdateFailedError) Error() string {
	msg := "docsapi: deployment " + e.Status.ID + " failed"
	if e.Status.Summary != "" {
		msg += ": " + e.Status.Summary
	}
	return msg
}

// UpdateWaitTimeoutError is returned by WaitUpdate when it stopped before
// the deployment ended: its Timeout elapsed or its context ended. It
// unwraps to the context error (context.DeadlineExceeded or
// context.Canceled). The deployment goes on on the server.
type UpdateWaitTimeoutError struct {
	// Status is the last status read, or nil if no poll succeeded.
	Status *UpdateStatus
	// Waited is how long WaitUpdate ran.
	Waited time.Duration
	// LastErr is the error of the last poll, if it failed.
	LastErr error

	cause error
}

// Error says how long WaitUpdate ran and what it last saw.
func (e *UpdateWaitTimeoutError) Error() string {
	var id, state string
	if e.Status != nil {
		id, state = e.Status.ID, string(e.Status.Status)
	}
	return stoppedWaiting("deployment", e.Status != nil, id, state, e.Waited, e.cause, e.LastErr)
}

// Unwrap returns the context error that ended the wait.
func (e *UpdateWaitTimeoutError) Unwrap() error { return e.cause }

// TriggerUpdate queues a deployment of the project from its deployment
// branch: POST /v1/project/update/{projectId}, answered 202. An empty
// projectID means the client's default project. Follow the deployment with
// WaitUpdate or UpdateStatus. The trigger is not retried after an error
// whose outcome is unknown (see DeploymentsService).
func (s *DeploymentsService) TriggerUpdate(ctx context.Context, projectID string, opts ...RequestOption) (*UpdateTrigger, error) {
	project, err := s.client.project(projectID)
	if err != nil {
		return nil, err
	}
	out := new(UpdateTrigger)
	// No body: the pipeline sends a POST once-only whatever its body, and
	// sends no Content-Type without one.
	req := apiRequest{method: http.MethodPost, path: "/v1/project/update/" + url.PathEscape(project)}
	if err := s.client.do(ctx, req, opts, out); err != nil {
		return nil, err
	}
	return out, nil
}

// UpdateStatus reads a deployment, an update's or a preview's, by the
// status ID its trigger returned: GET /v1/project/update-status/{statusId}.
func (s *DeploymentsService) UpdateStatus(ctx context.Context, statusID string, opts ...RequestOption) (*UpdateStatus, error) {
	if err := checkID("statusID", statusID); err != nil {
		return nil, err
	}
	out := new(UpdateStatus)
	req := apiRequest{method: http.MethodGet, path: "/v1/project/update-status/" + url.PathEscape(statusID)}
	if err := s.client.do(ctx, req, opts, out); err != nil {
		return nil, err
	}
	return out, nil
}

// WaitUpdate polls a deployment until its state is success or failure, and
// returns it. A failed deployment is returned together with an
// *UpdateFailedError. It polls as AgentJobs.Wait does: at once, then at
// growing intervals with jitter; errors that can heal (network failures,
// 429, 5xx, a garbled body) do not stop it, others are returned at once;
// an unknown state counts as still running. When Timeout passes or ctx
// ends first, it returns an *UpdateWaitTimeoutError. In every case the
// returned status is the last one read, or nil if no poll succeeded.
func (s *DeploymentsService) WaitUpdate(ctx context.Context, statusID string, params UpdateWaitParams, opts ...RequestOption) (*UpdateStatus, error) {
	if err := params.schedule().validate(); err != nil {
		return nil, err
	}
	if err := checkID("statusID", statusID); err != nil {
		return nil, err
	}
	return poll(ctx, s.client.cfg, params.schedule(), poller[UpdateStatus]{
		what: "deployment", idKey: "status_id", id: statusID,
		get: func(ctx context.Context) (*UpdateStatus, error) {
			return s.UpdateStatus(ctx, statusID, opts...)
		},
		status: func(u *UpdateStatus) string { return string(u.Status) },
		end: func(u *UpdateStatus) (bool, error) {
			if u.Status == UpdateStateFailure {
				return true, &UpdateFailedError{Status: u}
			}
			return u.Status.Terminal(), nil
		},
		onUpdate: params.OnUpdate,
		timedOut: func(last *UpdateStatus, waited time.Duration, lastErr, cause error) error {
			return &UpdateWaitTimeoutError{Status: last, Waited: waited, LastErr: lastErr, cause: cause}
		},
	}, nil)
}

// TriggerPreview creates, or rebuilds if it exists, the preview deployment
// of a git branch: POST /v1/project/preview/{projectId} with {"branch"},
// answered 202. Follow it with WaitUpdate and the returned StatusID. A
// plan without preview deployments is answered 403 (ErrForbidden), with
// the service's reason in the APIError's Message. Not retried after an
// error whose outcome is unknown (see DeploymentsService).
func (s *DeploymentsService) TriggerPreview(ctx context.Context, projectID, branch string, opts ...RequestOption) (*PreviewTrigger, error) {
	project, err := s.client.project(projectID)
	if err != nil {
		return nil, err
	}
	switch {
	case branch == "":
		return nil, invalid("branch", "is empty")
	case strings.TrimSpace(branch) != branch:
		return nil, invalid("branch", "has leading or trailing white space: %q", branch)
	}
	out := new(PreviewTrigger)
	req := apiRequest{method: http.MethodPost, path: "/v1/project/preview/" + url.PathEscape(project),
		body: previewWire{Branch: branch}}
	if err := s.client.do(ctx, req, opts, out); err != nil {
		return nil, err
	}
	return out, nil
}

// TriggerAutomation runs a scheduled automation now rather than at its
// next scheduled time: POST /v1/workflow/{projectId}/{workflowSchemaId}/trigger,
// answered 202. workflowID is the automation's ID from its settings. Only
// automations on a custom schedule can be triggered; others are answered
// 400 (ErrBadRequest), and an automation of another project 404. Not
// retried after an error whose outcome is unknown (see DeploymentsService).
func (s *DeploymentsService) TriggerAutomation(ctx context.Context, projectID, workflowID string, opts ...RequestOption) (*AutomationTrigger, error) {
	project, err := s.client.project(projectID)
	if err != nil {
		return nil, err
	}
	if err := checkID("workflowID", workflowID); err != nil {
		return nil, err
	}
	out := new(AutomationTrigger)
	req := apiRequest{method: http.MethodPost,
		path: "/v1/workflow/" + url.PathEscape(project) + "/" + url.PathEscape(workflowID) + "/trigger"}
	if err := s.client.do(ctx, req, opts, out); err != nil {
		return nil, err
	}
	return out, nil
}

type previewWire struct {
	Branch string `json:"branch"`
}

type updateTriggerWire struct {
	StatusID   string `json:"statusId"`
	PreviewURL string `json:"previewUrl"`
}

// UnmarshalJSON decodes the API's shape, {"statusId"}.
func (t *UpdateTrigger) UnmarshalJSON(b []byte) error { return t.decodeBody(b) }

func (t *UpdateTrigger) decodeBody(b []byte) error {
	var w updateTriggerWire
	if err := decodeWire("update trigger", b, &w); err != nil {
		return err
	}
	*t = UpdateTrigger{StatusID: w.StatusID}
	return nil
}

// UnmarshalJSON decodes the API's shape, {"statusId", "previewUrl"}.
func (t *PreviewTrigger) UnmarshalJSON(b []byte) error { return t.decodeBody(b) }

func (t *PreviewTrigger) decodeBody(b []byte) error {
	var w updateTriggerWire
	if err := decodeWire("preview trigger", b, &w); err != nil {
		return err
	}
	*t = PreviewTrigger(w)
	return nil
}

type automationTriggerWire struct {
	SchemaID   string `json:"schemaId"`
	InstanceID string `json:"instanceId"`
	JobID      string `json:"jobId"`
}

// UnmarshalJSON decodes the API's shape, {"schemaId", "instanceId", "jobId"}.
func (t *AutomationTrigger) UnmarshalJSON(b []byte) error { return t.decodeBody(b) }

func (t *AutomationTrigger) decodeBody(b []byte) error {
	var w automationTriggerWire
	if err := decodeWire("automation trigger", b, &w); err != nil {
		return err
	}
	*t = AutomationTrigger(w)
	return nil
}

type updateStatusWire struct {
	ID              string            `json:"_id"`
	ProjectID       string            `json:"projectId"`
	CreatedAt       *string           `json:"createdAt"`
	EndedAt         *string           `json:"endedAt"`
	Status          UpdateState       `json:"status"`
	Summary         string            `json:"summary"`
	Logs            []string          `json:"logs"`
	Subdomain       string            `json:"subdomain"`
	Screenshot      string            `json:"screenshot"`
	ScreenshotLight string            `json:"screenshotLight"`
	ScreenshotDark  string            `json:"screenshotDark"`
	Author          *updateAuthorWire `json:"author"`
	Commit          *updateCommitWire `json:"commit"`
	Source          UpdateSource      `json:"source"`
}

type updateAuthorWire struct {
	Name         string `json:"name"`
	AvatarURL    string `json:"avatarUrl"`
	GitHubUserID count  `json:"githubUserId"`
}

type updateCommitWire struct {
	SHA          string `json:"sha"`
	Ref          string `json:"ref"`
	Message      string `json:"message"`
	FilesChanged *struct {
		Added    []string `json:"added"`
		Modified []string `json:"modified"`
		Removed  []string `json:"removed"`
	} `json:"filesChanged"`
}

// UnmarshalJSON decodes the API's shape. Unknown fields are ignored and
// nulls become zero values (Author nil); a malformed timestamp or author
// ID is an error naming the field.
func (u *UpdateStatus) UnmarshalJSON(b []byte) error { return u.decodeBody(b) }

func (u *UpdateStatus) decodeBody(b []byte) error {
	const what = "update status"
	var w updateStatusWire
	if err := decodeWire(what, b, &w); err != nil {
		return err
	}
	created, err := parseTimestamp(what, "createdAt", w.CreatedAt)
	if err != nil {
		return err
	}
	ended, err := parseTimestamp(what, "endedAt", w.EndedAt)
	if err != nil {
		return err
	}
	status := UpdateStatus{
		ID: w.ID, ProjectID: w.ProjectID, CreatedAt: created, EndedAt: ended,
		Status: w.Status, Summary: w.Summary, Logs: w.Logs, Subdomain: w.Subdomain,
		Screenshot: w.Screenshot, ScreenshotLight: w.ScreenshotLight, ScreenshotDark: w.ScreenshotDark,
		Source: w.Source,
	}
	if a := w.Author; a != nil {
		status.Author = &UpdateAuthor{Name: a.Name, AvatarURL: a.AvatarURL, GitHubUserID: a.GitHubUserID.n}
	}
	if c := w.Commit; c != nil {
		status.Commit = UpdateCommit{SHA: c.SHA, Ref: c.Ref, Message: c.Message}
		if f := c.FilesChanged; f != nil {
			status.Commit.FilesChanged = UpdateFilesChanged{Added: f.Added, Modified: f.Modified, Removed: f.Removed}
		}
	}
	*u = status
	return nil
}
