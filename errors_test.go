package docsapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jarcoal/httpmock"
)

func TestAPIErrorMessage(t *testing.T) {
	tests := []struct {
		name string
		err  *APIError
		want string
	}{
		{
			name: "status and message",
			err:  &APIError{Method: "GET", Path: "/v2/agent/p/job/j1", StatusCode: 404, Message: "Job not found"},
			want: "docsapi: GET /v2/agent/p/job/j1: 404 Not Found: Job not found",
		},
		{
			name: "details joined",
			err: &APIError{Method: "GET", Path: "/v1/analytics/p/views", StatusCode: 400, Message: "Invalid date",
				Details: []ErrorDetail{{Message: "dateFrom is bad"}, {Message: "dateTo is bad"}}},
			want: "docsapi: GET /v1/analytics/p/views: 400 Bad Request: Invalid date (dateFrom is bad; dateTo is bad)",
		},
		{
			name: "one detail",
			err:  &APIError{Method: "GET", Path: "/p", StatusCode: 400, Message: "Invalid", Details: []ErrorDetail{{Message: "limit"}}},
			want: "docsapi: GET /p: 400 Bad Request: Invalid (limit)",
		},
		{
			name: "details without a message",
			err:  &APIError{Method: "GET", Path: "/p", StatusCode: 400, Details: []ErrorDetail{{Message: "limit"}}},
			want: "docsapi: GET /p: 400 Bad Request (limit)",
		},
		{
			name: "retry after and request id",
			err: &APIError{Method: "POST", Path: "/v2/agent/p/job", StatusCode: 429, Message: "rate limit exceeded",
				RetryAfter: 30 * time.Second, RequestID: "req-9"},
			want: "docsapi: POST /v2/agent/p/job: 429 Too Many Requests: rate limit exceeded [retry after 30s] [request id req-9]",
		},
		{
			name: "fractional retry after",
			err:  &APIError{Method: "GET", Path: "/p", StatusCode: 503, RetryAfter: 1500 * time.Millisecond},
			want: "docsapi: GET /p: 503 Service Unavailable [retry after 1.5s]",
		},
		{
			name: "request id alone",
			err:  &APIError{Method: "GET", Path: "/p", StatusCode: 500, RequestID: "abc"},
			want: "docsapi: GET /p: 500 Internal Server Error [request id abc]",
		},
		{
			name: "status without a standard text",
			err:  &APIError{Method: "GET", Path: "/p", StatusCode: 599},
			want: "docsapi: GET /p: 599",
		},
		{
			name: "body is not part of the message",
			err:  &APIError{Method: "GET", Path: "/p", StatusCode: 500, Message: "m", Body: `{"error":"m","trace":"secret stack"}`},
			want: "docsapi: GET /p: 500 Internal Server Error: m",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestAPIErrorMatchesTheSentinelOfItsStatus(t *testing.T) {
	sentinels := []ErrorKind{ErrBadRequest, ErrUnauthorized, ErrForbidden, ErrNotFound, ErrConflict, ErrRateLimited, ErrServer, ErrInvalidParam}
	tests := []struct {
		status int
		want   error // nil: matches none
	}{
		{400, ErrBadRequest},
		{401, ErrUnauthorized},
		{403, ErrForbidden},
		{404, ErrNotFound},
		{409, ErrConflict},
		{429, ErrRateLimited},
		{500, ErrServer},
		{501, ErrServer},
		{502, ErrServer},
		{503, ErrServer},
		{504, ErrServer},
		{599, ErrServer},
		{302, nil},
		{408, nil},
		{418, nil},
		{422, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			apiErr := &APIError{StatusCode: tt.status, Method: "GET", Path: "/p"}
			// The pipeline hands out wrapped errors; Is must see through them.
			wrapped := withAttempts(fmt.Errorf("outer: %w", apiErr), 4)
			for _, s := range sentinels {
				want := s == tt.want
				if got := errors.Is(apiErr, s); got != want {
					t.Errorf("errors.Is(%d, %q) = %v, want %v", tt.status, s, got, want)
				}
				if got := errors.Is(wrapped, s); got != want {
					t.Errorf("errors.Is(wrapped %d, %q) = %v, want %v", tt.status, s, got, want)
				}
			}
			if errors.Is(apiErr, errors.New(ErrNotFound.Error())) {
				t.Error("matched a non-sentinel error with the same text")
			}
		})
	}
}

func TestErrorKindMessages(t *testing.T) {
	want := map[ErrorKind]string{
		ErrBadRequest:   "docsapi: bad request",
		ErrUnauthorized: "docsapi: unauthorized",
		ErrForbidden:    "docsapi: forbidden",
		ErrNotFound:     "docsapi: not found",
		ErrConflict:     "docsapi: conflict",
		ErrRateLimited:  "docsapi: rate limited",
		ErrServer:       "docsapi: server error",
		ErrInvalidParam: "docsapi: invalid parameter",
	}
	for kind, msg := range want {
		if got := kind.Error(); got != msg {
			t.Errorf("%q.Error() = %q, want %q", string(kind), got, msg)
		}
	}
}

func TestValidationError(t *testing.T) {
	err := error(&ValidationError{Param: "limit", Reason: "must be between 1 and 250, got 251"})
	if got, want := err.Error(), "docsapi: invalid limit: must be between 1 and 250, got 251"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, ErrInvalidParam) {
		t.Error("does not match ErrInvalidParam")
	}
	for _, other := range []error{ErrBadRequest, ErrNotFound, ErrServer, io.EOF} {
		if errors.Is(err, other) {
			t.Errorf("matches %v", other)
		}
	}
}

// Each operation checks its arguments first and names the wrong one.
func TestValidationErrorsNameTheParameterAndSendNothing(t *testing.T) {
	tests := []struct {
		name      string
		call      func(c *Client) error
		wantParam string
	}{
		{"views limit above 250", func(c *Client) error {
			_, err := c.Analytics.Views(context.Background(), "", ViewsParams{Limit: 251})
			return err
		}, "limit"},
		{"views negative offset", func(c *Client) error {
			_, err := c.Analytics.Views(context.Background(), "", ViewsParams{Offset: -1})
			return err
		}, "offset"},
		{"empty prompt", func(c *Client) error {
			_, err := c.AgentJobs.Create(context.Background(), "", CreateJobParams{Prompt: "  "})
			return err
		}, "prompt"},
		{"empty job id", func(c *Client) error {
			_, err := c.AgentJobs.Get(context.Background(), "", "")
			return err
		}, "jobID"},
		{"dot-dot project", func(c *Client) error {
			_, err := c.AgentJobs.SendMessage(context.Background(), "..", "j1", SendMessageParams{Prompt: "x"})
			return err
		}, "projectID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := newTestClient(t)
			err := tt.call(c)
			var verr *ValidationError
			if !errors.As(err, &verr) || verr.Param != tt.wantParam {
				t.Fatalf("err = %v, want a *ValidationError for %q", err, tt.wantParam)
			}
			if !strings.Contains(err.Error(), "invalid "+tt.wantParam+":") {
				t.Errorf("err = %q does not name %q", err, tt.wantParam)
			}
			if n := mt.GetTotalCallCount(); n != 0 {
				t.Errorf("requests sent = %d, want 0", n)
			}
		})
	}
}

func TestJobFailedError(t *testing.T) {
	jf := &JobFailedError{Job: &Job{ID: "aj_9", Status: JobStatusFailed}}
	if got, want := jf.Error(), "docsapi: agent job aj_9 failed"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if errors.Unwrap(jf) != nil {
		t.Errorf("Unwrap() = %v, want nil: a failed job has no underlying error", errors.Unwrap(jf))
	}
	var got *JobFailedError
	if !errors.As(fmt.Errorf("deploy docs: %w", jf), &got) || got.Job.ID != "aj_9" {
		t.Error("errors.As does not find the *JobFailedError through wrapping")
	}
}

func TestWaitTimeoutError(t *testing.T) {
	lastErr := &APIError{Method: "GET", Path: "/v2/agent/p/job/j1", StatusCode: 503}
	tests := []struct {
		name      string
		err       *WaitTimeoutError
		want      string
		wantCause error
	}{
		{
			name: "with job and last error",
			err: &WaitTimeoutError{Job: &Job{ID: "j1", Status: JobStatusActive}, Waited: 1500400 * time.Microsecond,
				LastErr: lastErr, cause: context.DeadlineExceeded},
			want:      "docsapi: stopped waiting for agent job j1 (last status active) after 1.5s: context deadline exceeded; last poll: docsapi: GET /v2/agent/p/job/j1: 503 Service Unavailable",
			wantCause: context.DeadlineExceeded,
		},
		{
			name:      "no job seen",
			err:       &WaitTimeoutError{Waited: 2 * time.Second, cause: context.Canceled},
			want:      "docsapi: stopped waiting for agent job after 2s: context canceled",
			wantCause: context.Canceled,
		},
		{
			name: "unknown status",
			err:  &WaitTimeoutError{Job: &Job{ID: "j2", Status: "queued"}, Waited: 90 * time.Second},
			want: "docsapi: stopped waiting for agent job j2 (last status queued) after 1m30s",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() =\n%q\nwant\n%q", got, tt.want)
			}
			if got := errors.Unwrap(tt.err); got != tt.wantCause {
				t.Errorf("Unwrap() = %v, want %v", got, tt.wantCause)
			}
			if tt.wantCause != nil && !errors.Is(tt.err, tt.wantCause) {
				t.Errorf("errors.Is(err, %v) = false", tt.wantCause)
			}
			// Only the context error is in the chain; the last poll's error is
			// a field, so a timeout never looks like a server error.
			if errors.Is(tt.err, ErrServer) {
				t.Error("errors.Is(err, ErrServer) = true")
			}
		})
	}
}

func TestAPIErrorFromResponseBody(t *testing.T) {
	longText := strings.Repeat("x", 300)
	runeEdge := strings.Repeat("a", 199) + strings.Repeat("é", 10)
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		wantMessage string
		wantDetails []ErrorDetail
		wantError   string
	}{
		{
			name: "error string", status: 404, contentType: "application/json",
			body:        string(fixture(t, "error_simple.json")),
			wantMessage: "Job not found",
			wantError:   "docsapi: GET /v2/agent/proj/job/j1: 404 Not Found: Job not found",
		},
		{
			name: "error with details", status: 400, contentType: "application/json",
			body:        string(fixture(t, "error_details.json")),
			wantMessage: "Invalid date",
			wantDetails: []ErrorDetail{
				{Message: "dateFrom must be a date (YYYY-MM-DD) or an ISO 8601 timestamp"},
				{Message: "dateTo must be after dateFrom"},
			},
			wantError: "docsapi: GET /v2/agent/proj/job/j1: 400 Bad Request: Invalid date (dateFrom must be a date (YYYY-MM-DD) or an ISO 8601 timestamp; dateTo must be after dateFrom)",
		},
		{
			name: "nested error object", status: 400, contentType: "application/json",
			body:        string(fixture(t, "error_nested.json")),
			wantMessage: "nested message",
		},
		{
			name: "message field", status: 500, contentType: "application/json",
			body:        string(fixture(t, "error_message.json")),
			wantMessage: "Internal server error",
		},
		{
			name: "details as strings, mixed and empty", status: 400, contentType: "application/json",
			body:        string(fixture(t, "error_string_details.json")),
			wantMessage: "Invalid query",
			wantDetails: []ErrorDetail{{Message: "limit is too large"}, {Message: "offset is negative"}},
		},
		{
			name: "error takes precedence over message", status: 400, contentType: "application/json",
			body:        `{"error":"from error","message":"from message"}`,
			wantMessage: "from error",
		},
		{
			name: "HTML proxy page", status: 502, contentType: "text/html; charset=utf-8",
			body:        string(fixture(t, "error_proxy.html")),
			wantMessage: "non-JSON text/html response: 502 Bad Gateway",
			wantError:   "docsapi: GET /v2/agent/proj/job/j1: 502 Bad Gateway: non-JSON text/html response: 502 Bad Gateway",
		},
		{
			name: "HTML title with entities and line breaks", status: 403, contentType: "text/html",
			body:        "<html><head><TITLE lang=en>\n  Access &amp; Denied\n</TITLE></head></html>",
			wantMessage: "non-JSON text/html response: Access & Denied",
		},
		{
			name: "plain text", status: 503, contentType: "text/plain; charset=utf-8",
			body:        string(fixture(t, "error_text.txt")),
			wantMessage: "non-JSON text/plain response: upstream connect error or disconnect/reset before headers. reset reason: connection termination",
		},
		{
			name: "text without a content type", status: 500,
			body:        "oops",
			wantMessage: "non-JSON unknown response: oops",
		},
		{
			name: "long text is cut", status: 500, contentType: "text/plain",
			body:        longText,
			wantMessage: "non-JSON text/plain response: " + strings.Repeat("x", 200) + "…",
		},
		{
			name: "cut never splits a character", status: 500, contentType: "text/plain",
			body:        runeEdge,
			wantMessage: "non-JSON text/plain response: " + strings.Repeat("a", 199) + "…",
		},
		{
			name: "empty body", status: 502, contentType: "text/html",
			body:        "",
			wantMessage: "",
			wantError:   "docsapi: GET /v2/agent/proj/job/j1: 502 Bad Gateway",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := newTestClient(t, WithMaxRetries(0))
			r := httpmock.NewStringResponder(tt.status, tt.body)
			if tt.contentType != "" {
				r = r.HeaderSet(http.Header{"Content-Type": {tt.contentType}})
			}
			mt.RegisterResponder(http.MethodGet, jobURLJ1, r)
			_, err := c.AgentJobs.Get(context.Background(), "", "j1")
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v, want an *APIError", err)
			}
			want := &APIError{
				StatusCode: tt.status,
				Message:    tt.wantMessage,
				Details:    tt.wantDetails,
				Method:     "GET",
				Path:       jobPathJ1,
				Body:       tt.body,
			}
			if diff := cmp.Diff(want, apiErr); diff != "" {
				t.Errorf("APIError (-want +got):\n%s", diff)
			}
			if tt.wantError != "" && err.Error() != tt.wantError {
				t.Errorf("Error() =\n%q\nwant\n%q", err.Error(), tt.wantError)
			}
		})
	}
}

func TestAPIErrorBodyIsCutAt64KiB(t *testing.T) {
	body := strings.Repeat("0123456789abcdef", 100<<10/16) // 100 KiB
	c, mt := newTestClient(t)
	mt.RegisterResponder(http.MethodGet, jobURLJ1, httpmock.NewStringResponder(400, body).
		HeaderSet(http.Header{"Content-Type": {"text/plain"}}))
	_, err := c.AgentJobs.Get(context.Background(), "", "j1")
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("err = %v, want an *APIError", err)
	}
	if len(apiErr.Body) != 64<<10 || apiErr.Body != body[:64<<10] {
		t.Errorf("len(Body) = %d, want the first %d bytes", len(apiErr.Body), 64<<10)
	}
	if n := len(apiErr.Message); n > 300 {
		t.Errorf("len(Message) = %d, want a short excerpt", n)
	}
}

func TestAPIErrorRequestID(t *testing.T) {
	tests := []struct {
		name   string
		header http.Header
		want   string
	}{
		{"X-Request-Id", http.Header{"X-Request-Id": {"xr-1"}}, "xr-1"},
		{"Request-Id", http.Header{"Request-Id": {"r-1"}}, "r-1"},
		{"X-Request-Id preferred", http.Header{"X-Request-Id": {"xr-2"}, "Request-Id": {"r-2"}}, "xr-2"},
		{"none", http.Header{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := newTestClient(t)
			mt.RegisterResponder(http.MethodGet, jobURLJ1, replyJSON(404, `{"error":"Job not found"}`).HeaderSet(tt.header))
			_, err := c.AgentJobs.Get(context.Background(), "", "j1")
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.RequestID != tt.want {
				t.Fatalf("err = %v, want an *APIError with request id %q", err, tt.want)
			}
			if tt.want != "" && !strings.HasSuffix(err.Error(), "[request id "+tt.want+"]") {
				t.Errorf("Error() = %q, want it to end with the request id", err)
			}
		})
	}
}
