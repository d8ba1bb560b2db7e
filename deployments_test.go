package docsapi

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jarcoal/httpmock"
)

// The doubles below answer as the deployment API's reference
// (openapi.json of the platform's public docs) says: 202 with {statusId},
// {statusId, previewUrl} or {schemaId, instanceId, jobId}; 200 with the
// status object; errors as {"error"}.

const (
	statusID         = "65f1c0ffee0123456789abcd"
	updateStatusPath = "/v1/project/update-status/" + statusID
)

// wantRejected checks that err is a *ValidationError on param and that
// nothing was sent.
func wantRejected(t *testing.T, mt *httpmock.MockTransport, err error, param string) {
	t.Helper()
	var verr *ValidationError
	if !errors.As(err, &verr) || !errors.Is(err, ErrInvalidParam) {
		t.Fatalf("err = %v (%T), want a *ValidationError", err, err)
	}
	if verr.Param != param {
		t.Errorf("Param = %q, want %q (error: %v)", verr.Param, param, err)
	}
	if n := mt.GetTotalCallCount(); n != 0 {
		t.Errorf("%d requests were sent", n)
	}
}

func TestTriggerUpdate(t *testing.T) {
	for _, tt := range []struct{ arg, path string }{
		{"", "/v1/project/update/proj"},           // the client's default project
		{"other", "/v1/project/update/other"},     // an explicit one
		{"a/b c", "/v1/project/update/a%2Fb%20c"}, // escaped as one segment
	} {
		t.Run(tt.path, func(t *testing.T) {
			c, mt := newTestClient(t)
			log := serve(t, mt, on(http.MethodPost, tt.path, replyJSON(http.StatusAccepted, `{"statusId":"`+statusID+`"}`)))
			got, err := c.Deployments.TriggerUpdate(t.Context(), tt.arg)
			if err != nil {
				t.Fatal(err)
			}
			if got.StatusID != statusID {
				t.Errorf("StatusID = %q, want %q", got.StatusID, statusID)
			}
			reqs := log.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			// No body, so no Content-Type either.
			wantStandardHeaders(t, reqs[0], false)
			if reqs[0].Body != "" {
				t.Errorf("body %q, want none", reqs[0].Body)
			}
		})
	}
}

func TestDeploymentsNeedAProject(t *testing.T) {
	c, mt := newTestClientWithoutProject(t)
	wantRejected(t, mt, errOf(c.Deployments.TriggerUpdate(t.Context(), "")), "projectID")
	wantRejected(t, mt, errOf(c.Deployments.TriggerPreview(t.Context(), "", "main")), "projectID")
	wantRejected(t, mt, errOf(c.Deployments.TriggerAutomation(t.Context(), "", "wf1")), "projectID")
	wantRejected(t, mt, errOf(c.Deployments.TriggerUpdate(t.Context(), "..")), "projectID")
}

func TestUpdateStatusDecodesEveryField(t *testing.T) {
	c, mt := newTestClient(t)
	log := serve(t, mt, on(http.MethodGet, updateStatusPath, replyFixture(t, http.StatusOK, "update_status_success.json")))
	got, err := c.Deployments.UpdateStatus(t.Context(), statusID)
	if err != nil {
		t.Fatal(err)
	}
	want := &UpdateStatus{
		ID:              statusID,
		ProjectID:       "proj",
		CreatedAt:       time.Date(2026, 8, 14, 9, 21, 7, 482e6, time.UTC),
		EndedAt:         time.Date(2026, 8, 14, 9, 23, 41, 0, time.UTC),
		Status:          UpdateStateSuccess,
		Summary:         "Deployed 3 changed files",
		Logs:            []string{"Cloning acme/docs@main", "Building 212 pages", "Deployed"},
		Subdomain:       "acme",
		Screenshot:      "https://screenshots.example.test/acme.png",
		ScreenshotLight: "https://screenshots.example.test/acme-light.png",
		ScreenshotDark:  "https://screenshots.example.test/acme-dark.png",
		Author:          &UpdateAuthor{Name: "Ada Lovelace", AvatarURL: "https://avatars.example.test/u/1815", GitHubUserID: 1815},
		Commit: UpdateCommit{
			SHA: "9f2c1e0b7a6d5c4b3a29180716f5e4d3c2b1a090", Ref: "main", Message: "Document the --verbose flag",
			FilesChanged: UpdateFilesChanged{Added: []string{"cli/verbose.mdx"}, Modified: []string{"cli/index.mdx", "docs.json"}, Removed: []string{}},
		},
		Source: UpdateSourceAPI,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	wantStandardHeaders(t, log.Requests()[0], false)
}

// Nulls and absent fields are zero values: a queued update has not ended,
// and an update started from the dashboard has no author.
func TestUpdateStatusNullsAreZero(t *testing.T) {
	c, mt := newTestClient(t)
	serve(t, mt, on(http.MethodGet, updateStatusPath, replyFixture(t, http.StatusOK, "update_status_queued.json")))
	got, err := c.Deployments.UpdateStatus(t.Context(), statusID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != UpdateStateQueued || !got.EndedAt.IsZero() || got.Author != nil ||
		!cmp.Equal(got.Commit, UpdateCommit{}) || got.Screenshot != "" || len(got.Logs) != 0 {
		t.Errorf("status = %+v; want queued, no end, no author, no commit", got)
	}
}

func TestUpdateStatesAndSources(t *testing.T) {
	for _, tt := range []struct {
		status          UpdateState
		known, terminal bool
	}{
		{UpdateStateQueued, true, false},
		{UpdateStateInProgress, true, false},
		{UpdateStateSuccess, true, true},
		{UpdateStateFailure, true, true},
		{"skipped", false, false}, // unknown: kept, and not terminal
		{"", false, false},
	} {
		t.Run(string(tt.status), func(t *testing.T) {
			c, mt := newTestClient(t)
			serve(t, mt, on(http.MethodGet, updateStatusPath,
				replyJSON(http.StatusOK, `{"_id":"`+statusID+`","status":"`+string(tt.status)+`","source":"bitbucket"}`)))
			got, err := c.Deployments.UpdateStatus(t.Context(), statusID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tt.status || got.Status.Known() != tt.known || got.Status.Terminal() != tt.terminal {
				t.Errorf("status %q: Known %v, Terminal %v; want %q, %v, %v",
					got.Status, got.Status.Known(), got.Status.Terminal(), tt.status, tt.known, tt.terminal)
			}
			if got.Source != "bitbucket" || got.Source.Known() {
				t.Errorf("source %q (Known %v), want the unknown bitbucket kept", got.Source, got.Source.Known())
			}
		})
	}
	for _, s := range []UpdateSource{UpdateSourceInternal, UpdateSourceGitHubAppInstallation, UpdateSourceAPI,
		UpdateSourceGitHub, UpdateSourceDashboard, UpdateSourceGitLab, UpdateSourceOnboarding} {
		if !s.Known() {
			t.Errorf("%q is not Known", s)
		}
	}
}

func TestUpdateStatusRefusesMalformedFields(t *testing.T) {
	for _, tt := range []struct{ body, field string }{
		{`{"_id":"x","createdAt":"yesterday"}`, "createdAt"},
		{`{"_id":"x","endedAt":"14/08/2026"}`, "endedAt"},
		{`{"_id":"x","author":{"githubUserId":1.5}}`, "githubUserId"},
		{`{"_id":"x","logs":"one line"}`, "logs"},
	} {
		c, mt := newTestClient(t, WithMaxRetries(0))
		serve(t, mt, on(http.MethodGet, updateStatusPath, replyJSON(http.StatusOK, tt.body)))
		_, err := c.Deployments.UpdateStatus(t.Context(), statusID)
		if err == nil || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("%s: err = %v, want an error naming %s", tt.body, err, tt.field)
		}
	}
}

func TestUpdateStatusRefusesBadIDs(t *testing.T) {
	for _, id := range []string{"", ".", "..", " x"} {
		c, mt := newTestClient(t)
		wantRejected(t, mt, errOf(c.Deployments.UpdateStatus(t.Context(), id)), "statusID")
		wantRejected(t, mt, errOf(c.Deployments.WaitUpdate(t.Context(), id, UpdateWaitParams{})), "statusID")
	}
}

func TestTriggerPreview(t *testing.T) {
	c, mt := newTestClient(t)
	log := serve(t, mt, on(http.MethodPost, "/v1/project/preview/proj",
		replyJSON(http.StatusAccepted, `{"statusId":"`+statusID+`","previewUrl":"https://acme-feature-verbose-flag.mintlify.site"}`)))
	got, err := c.Deployments.TriggerPreview(t.Context(), "", "feature/verbose-flag")
	if err != nil {
		t.Fatal(err)
	}
	want := &PreviewTrigger{StatusID: statusID, PreviewURL: "https://acme-feature-verbose-flag.mintlify.site"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trigger (-want +got):\n%s", diff)
	}
	req := log.Requests()[0]
	wantStandardHeaders(t, req, true)
	goldenJSON(t, "preview_request.golden.json", []byte(req.Body))
}

// The deployment API's errors are {"error": "..."}; the message is the
// APIError's, and the status its sentinel.
func TestDeploymentErrorsCarryTheServiceMessage(t *testing.T) {
	for _, tt := range []struct {
		name     string
		path     string
		call     func(c *Client) error
		status   int
		body     string
		sentinel error
		message  string
	}{
		{"preview without branch", "/v1/project/preview/proj", func(c *Client) error {
			return errOf(c.Deployments.TriggerPreview(t.Context(), "", "ghost"))
		}, http.StatusBadRequest, `{"error":"branch is required"}`, ErrBadRequest, "branch is required"},
		{"preview not on the plan", "/v1/project/preview/proj", func(c *Client) error {
			return errOf(c.Deployments.TriggerPreview(t.Context(), "", "main"))
		}, http.StatusForbidden, `{"error":"Preview deployments are not available on your current plan."}`, ErrForbidden,
			"Preview deployments are not available on your current plan."},
		{"automation not on a schedule", "/v1/workflow/proj/wf1/trigger", func(c *Client) error {
			return errOf(c.Deployments.TriggerAutomation(t.Context(), "", "wf1"))
		}, http.StatusBadRequest, `{"error":"Automation is not configured with a custom schedule"}`, ErrBadRequest,
			"Automation is not configured with a custom schedule"},
		{"automation of another project", "/v1/workflow/proj/wf1/trigger", func(c *Client) error {
			return errOf(c.Deployments.TriggerAutomation(t.Context(), "", "wf1"))
		}, http.StatusNotFound, `{"error":"Automation not found"}`, ErrNotFound, "Automation not found"},
		{"update of an unknown project", "/v1/project/update/proj", func(c *Client) error {
			return errOf(c.Deployments.TriggerUpdate(t.Context(), ""))
		}, http.StatusUnauthorized, `{"error":"Invalid API key"}`, ErrUnauthorized, "Invalid API key"},
		// Other services' {"message"} shape is read too.
		{"status of an unknown update", updateStatusPath, func(c *Client) error {
			return errOf(c.Deployments.UpdateStatus(t.Context(), statusID))
		}, http.StatusNotFound, `{"message":"Status not found"}`, ErrNotFound, "Status not found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := newTestClient(t)
			method := http.MethodPost
			if strings.Contains(tt.path, "update-status") {
				method = http.MethodGet
			}
			serve(t, mt, on(method, tt.path, replyJSON(tt.status, tt.body)))
			err := tt.call(c)
			if !errors.Is(err, tt.sentinel) {
				t.Errorf("err = %v, want %v", err, tt.sentinel)
			}
			if apiErr := asAPIError(t, err); apiErr.Message != tt.message || apiErr.StatusCode != tt.status {
				t.Errorf("APIError %d %q, want %d %q", apiErr.StatusCode, apiErr.Message, tt.status, tt.message)
			}
		})
	}
}

func TestTriggerPreviewRefusesBadBranches(t *testing.T) {
	for _, branch := range []string{"", " main", "main\n"} {
		c, mt := newTestClient(t)
		wantRejected(t, mt, errOf(c.Deployments.TriggerPreview(t.Context(), "", branch)), "branch")
	}
}

func TestTriggerAutomation(t *testing.T) {
	c, mt := newTestClient(t)
	log := serve(t, mt, on(http.MethodPost, "/v1/workflow/other/wf%2F1/trigger",
		replyJSON(http.StatusAccepted, `{"schemaId":"wf/1","instanceId":"inst_7","jobId":"job_9"}`)))
	got, err := c.Deployments.TriggerAutomation(t.Context(), "other", "wf/1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&AutomationTrigger{SchemaID: "wf/1", InstanceID: "inst_7", JobID: "job_9"}, got); diff != "" {
		t.Errorf("trigger (-want +got):\n%s", diff)
	}
	req := log.Requests()[0]
	wantStandardHeaders(t, req, false)
	if req.Body != "" {
		t.Errorf("body %q, want none", req.Body)
	}
	for _, id := range []string{"", "..", "wf1 "} {
		c, mt := newTestClient(t)
		wantRejected(t, mt, errOf(c.Deployments.TriggerAutomation(t.Context(), "", id)), "workflowID")
	}
}

// A 2xx body that is not an object is an error naming the answer, not an
// empty trigger.
func TestTriggersRefuseGarbledAnswers(t *testing.T) {
	c, mt := newTestClient(t)
	serve(t, mt,
		on(http.MethodPost, "/v1/project/update/proj", replyJSON(http.StatusAccepted, `["queued"]`)),
		on(http.MethodPost, "/v1/project/preview/proj", replyJSON(http.StatusAccepted, `{"statusId":7}`)),
		on(http.MethodPost, "/v1/workflow/proj/wf1/trigger", replyJSON(http.StatusAccepted, `"ok"`)))
	for name, err := range map[string]error{
		"update trigger":     errOf(c.Deployments.TriggerUpdate(t.Context(), "")),
		"preview trigger":    errOf(c.Deployments.TriggerPreview(t.Context(), "", "main")),
		"automation trigger": errOf(c.Deployments.TriggerAutomation(t.Context(), "", "wf1")),
	} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v, want a decoding error naming it", name, err)
		}
	}
}
