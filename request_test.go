package docsapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/iotest"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jarcoal/httpmock"
	"golang.org/x/time/rate"
)

func TestPipelineGetRetriesTransientFailuresThenReturnsTheLastError(t *testing.T) {
	statuses := []int{500, 502, 503, 504, 408, 429}
	for _, status := range statuses {
		t.Run(http.StatusText(status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t)
				mt.RegisterResponder(http.MethodGet, jobURLJ1, replyJSON(status, maintenanceJSON))
				job, err := c.AgentJobs.Get(context.Background(), "", "j1")
				if job != nil {
					t.Errorf("job = %+v, want nil", job)
				}
				if got := callCount(mt, http.MethodGet, jobURLJ1); got != DefaultMaxRetries+1 {
					t.Errorf("attempts = %d, want %d", got, DefaultMaxRetries+1)
				}
				var apiErr *APIError
				if !errors.As(err, &apiErr) {
					t.Fatalf("err = %v, want an *APIError", err)
				}
				if apiErr.StatusCode != status || apiErr.Message != "maintenance" {
					t.Errorf("APIError = %d %q, want %d %q", apiErr.StatusCode, apiErr.Message, status, "maintenance")
				}
				if !strings.HasSuffix(err.Error(), " (after 4 attempts)") {
					t.Errorf("err = %q, want it to end with the attempt count", err)
				}
			})
		})
	}
	t.Run("transport error", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c, mt := newTestClient(t)
			mt.RegisterResponder(http.MethodGet, jobURLJ1, httpmock.NewErrorResponder(errConnReset))
			_, err := c.AgentJobs.Get(context.Background(), "", "j1")
			if got := callCount(mt, http.MethodGet, jobURLJ1); got != 4 {
				t.Errorf("attempts = %d, want 4", got)
			}
			if !errors.Is(err, errConnReset) {
				t.Errorf("err = %v, want it to wrap the transport error", err)
			}
			if !strings.HasSuffix(err.Error(), " (after 4 attempts)") {
				t.Errorf("err = %q, want it to end with the attempt count", err)
			}
		})
	})
}

func TestPipelineGetSucceedsOnTheThirdAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		mt.RegisterResponder(http.MethodGet, jobURLJ1, inTurn(
			replyJSON(503, maintenanceJSON),
			httpmock.NewErrorResponder(errConnReset),
			replyJSON(200, jobJSONJ1),
		))
		var resp Response
		job, err := c.AgentJobs.Get(context.Background(), "", "j1", WithResponse(&resp))
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if diff := cmp.Diff(wantJobJ1, job); diff != "" {
			t.Errorf("job (-want +got):\n%s", diff)
		}
		if got := callCount(mt, http.MethodGet, jobURLJ1); got != 3 {
			t.Errorf("attempts = %d, want 3", got)
		}
		if resp.Attempts != 3 || resp.StatusCode != 200 {
			t.Errorf("Response = %+v, want 3 attempts ending in 200", resp)
		}
	})
}

func TestPipelineGetDoesNotRetryErrorsThatCannotHeal(t *testing.T) {
	tests := []struct {
		status   int
		sentinel error
	}{
		{400, ErrBadRequest},
		{401, ErrUnauthorized},
		{403, ErrForbidden},
		{404, ErrNotFound},
		{409, ErrConflict},
		{422, nil},
		{501, ErrServer},
		{505, ErrServer},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t)
				mt.RegisterResponder(http.MethodGet, jobURLJ1, replyJSON(tt.status, `{"error":"no"}`))
				start := time.Now()
				_, err := c.AgentJobs.Get(context.Background(), "", "j1")
				if got := callCount(mt, http.MethodGet, jobURLJ1); got != 1 {
					t.Errorf("attempts = %d, want 1", got)
				}
				if d := time.Since(start); d != 0 {
					t.Errorf("call took %v, want no wait", d)
				}
				var apiErr *APIError
				if !errors.As(err, &apiErr) || apiErr.StatusCode != tt.status {
					t.Fatalf("err = %v, want an *APIError with status %d", err, tt.status)
				}
				if tt.sentinel != nil && !errors.Is(err, tt.sentinel) {
					t.Errorf("errors.Is(%v, %v) = false", err, tt.sentinel)
				}
				if strings.Contains(err.Error(), "attempts") {
					t.Errorf("err = %q: a single attempt should not be counted", err)
				}
			})
		})
	}
}

func TestPipelineMaxRetriesZeroSendsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t, WithMaxRetries(0))
		mt.RegisterResponder(http.MethodGet, jobURLJ1, replyJSON(503, maintenanceJSON))
		start := time.Now()
		_, err := c.AgentJobs.Get(context.Background(), "", "j1")
		if !errors.Is(err, ErrServer) {
			t.Errorf("err = %v, want ErrServer", err)
		}
		if got := callCount(mt, http.MethodGet, jobURLJ1); got != 1 {
			t.Errorf("attempts = %d, want 1", got)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("call took %v, want no wait", d)
		}
	})
}

// With jitter 0, each delay is the low end of its equal-jitter window: half
// of a step that starts at min and doubles up to max.
func TestPipelineBackoffSchedule(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name     string
		opts     []Option
		want     []time.Duration // arrival of each attempt
		wantDone time.Duration
	}{
		{
			name:     "doubling",
			opts:     []Option{WithRetryDelays(100*ms, time.Second)},
			want:     []time.Duration{0, 50 * ms, 150 * ms, 350 * ms},
			wantDone: 350 * ms,
		},
		{
			name:     "capped at max",
			opts:     []Option{WithRetryDelays(100*ms, 150*ms), WithMaxRetries(4)},
			want:     []time.Duration{0, 50 * ms, 125 * ms, 200 * ms, 275 * ms},
			wantDone: 275 * ms,
		},
		{
			name:     "one retry",
			opts:     []Option{WithRetryDelays(time.Second, time.Minute), WithMaxRetries(1)},
			want:     []time.Duration{0, 500 * ms},
			wantDone: 500 * ms,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t, tt.opts...)
				rec, r := record(replyJSON(503, maintenanceJSON))
				mt.RegisterResponder(http.MethodGet, jobURLJ1, r)
				start := time.Now()
				if _, err := c.AgentJobs.Get(context.Background(), "", "j1"); !errors.Is(err, ErrServer) {
					t.Fatalf("err = %v, want ErrServer", err)
				}
				if d := time.Since(start); d != tt.wantDone {
					t.Errorf("call took %v, want %v", d, tt.wantDone)
				}
				if diff := cmp.Diff(tt.want, rec.Times()); diff != "" {
					t.Errorf("attempt times (-want +got):\n%s", diff)
				}
			})
		})
	}
}

func TestPipelineHonoursRetryAfter(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name       string
		status     int
		retryAfter func() string // evaluated inside the bubble
		want       []time.Duration
	}{
		{"seconds longer than the backoff", 503, func() string { return "2" }, []time.Duration{0, 2 * time.Second}},
		{"seconds shorter than the backoff", 503, func() string { return "0" }, []time.Duration{0, 50 * ms}},
		{"fractional seconds", 429, func() string { return "0.5" }, []time.Duration{0, 500 * ms}},
		{"HTTP date", 429, func() string { return time.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat) }, []time.Duration{0, 3 * time.Second}},
		{"HTTP date in the past", 429, func() string { return time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat) }, []time.Duration{0, 50 * ms}},
		{"malformed header falls back to the backoff", 503, func() string { return "later" }, []time.Duration{0, 50 * ms}},
		{"exactly the cap", 429, func() string { return "10" }, []time.Duration{0, 10 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t, WithRetryDelays(100*ms, time.Second), WithMaxRetryAfter(10*time.Second))
				first := replyJSON(tt.status, `{"error":"slow down"}`).HeaderSet(http.Header{"Retry-After": {tt.retryAfter()}})
				rec, r := record(inTurn(first, replyJSON(200, jobJSONJ1)))
				mt.RegisterResponder(http.MethodGet, jobURLJ1, r)
				job, err := c.AgentJobs.Get(context.Background(), "", "j1")
				if err != nil {
					t.Fatalf("Get: %v", err)
				}
				if job.ID != "j1" {
					t.Errorf("job ID = %q, want j1", job.ID)
				}
				if diff := cmp.Diff(tt.want, rec.Times()); diff != "" {
					t.Errorf("attempt times (-want +got):\n%s", diff)
				}
			})
		})
	}
}

func TestPipelineRetryAfterOverTheCapReturnsAtOnce(t *testing.T) {
	tests := []struct {
		name           string
		maxRetryAfter  time.Duration
		retryAfter     string
		wantRetryAfter time.Duration
	}{
		{"one second over the cap", 10 * time.Second, "11", 11 * time.Second},
		{"zero cap never sleeps on Retry-After", 0, "1", time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t, WithMaxRetryAfter(tt.maxRetryAfter))
				mt.RegisterResponder(http.MethodGet, jobURLJ1, replyJSON(429, `{"error":"rate limit exceeded"}`).
					HeaderSet(http.Header{"Retry-After": {tt.retryAfter}}))
				start := time.Now()
				_, err := c.AgentJobs.Get(context.Background(), "", "j1")
				if d := time.Since(start); d != 0 {
					t.Errorf("call took %v, want it to return at once", d)
				}
				if got := callCount(mt, http.MethodGet, jobURLJ1); got != 1 {
					t.Errorf("attempts = %d, want 1", got)
				}
				var apiErr *APIError
				if !errors.As(err, &apiErr) {
					t.Fatalf("err = %v, want an *APIError", err)
				}
				if apiErr.RetryAfter != tt.wantRetryAfter {
					t.Errorf("RetryAfter = %v, want %v", apiErr.RetryAfter, tt.wantRetryAfter)
				}
				if !errors.Is(err, ErrRateLimited) {
					t.Errorf("err = %v, want ErrRateLimited", err)
				}
				if want := "[retry after " + tt.wantRetryAfter.String() + "]"; !strings.Contains(err.Error(), want) {
					t.Errorf("err = %q, want it to contain %q", err, want)
				}
			})
		})
	}
}

// The last attempt is not followed by a sleep, even when the server asks
// for one: nobody would use it.
func TestPipelineDoesNotSleepAfterTheLastAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t, WithRetryDelays(100*time.Millisecond, time.Second))
		mt.RegisterResponder(http.MethodGet, jobURLJ1, replyJSON(503, maintenanceJSON).HeaderSet(http.Header{"Retry-After": {"1"}}))
		start := time.Now()
		_, err := c.AgentJobs.Get(context.Background(), "", "j1")
		if d := time.Since(start); d != 3*time.Second {
			t.Errorf("call took %v, want 3s (three waits of 1s)", d)
		}
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.RetryAfter != time.Second {
			t.Errorf("err = %v, want an *APIError with RetryAfter 1s", err)
		}
	})
}

func TestPipelineGetRetriesABodyThatBrokeOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		mt.RegisterResponder(http.MethodGet, jobURLJ1, inTurn(replyBrokenBody(200), replyJSON(200, jobJSONJ1)))
		job, err := c.AgentJobs.Get(context.Background(), "", "j1")
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if diff := cmp.Diff(wantJobJ1, job); diff != "" {
			t.Errorf("job (-want +got):\n%s", diff)
		}
		if n := callCount(mt, http.MethodGet, jobURLJ1); n != 2 {
			t.Errorf("attempts = %d, want 2", n)
		}
	})
}

func TestPipelineBrokenBodyErrorNamesTheStatus(t *testing.T) {
	c, mt := newTestClient(t, WithMaxRetries(0))
	mt.RegisterResponder(http.MethodPost, jobsURL, replyBrokenBody(201))
	_, err := c.AgentJobs.Create(context.Background(), "", CreateJobParams{Prompt: promptV2})
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err = %v, want io.ErrUnexpectedEOF", err)
	}
	if want := "docsapi: POST /v2/agent/proj/job: reading 201 response: "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %q, want it to start with %q", err, want)
	}
}

// A context that ends while an attempt is in flight stops the call at
// once: no retry is sent on a dead context.
func TestPipelineContextEndingDuringAnAttemptStopsTheCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		mt.RegisterResponder(http.MethodGet, jobURLJ1, replyJSON(200, jobJSONJ1).Delay(time.Second))
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		var resp Response
		_, err := c.AgentJobs.Get(ctx, "", "j1", WithResponse(&resp))
		if d := time.Since(start); d != 50*time.Millisecond {
			t.Errorf("call took %v, want 50ms", d)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want context.DeadlineExceeded", err)
		}
		if resp.Attempts != 1 {
			t.Errorf("attempts = %d, want 1", resp.Attempts)
		}
	})
}

func TestPipelineCreateWithoutIdempotencyKeyIsNotRetriedWhenTheOutcomeIsUnknown(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}}
	tests := []struct {
		name      string
		responder httpmock.Responder
	}{
		{"500", replyJSON(500, maintenanceJSON)},
		{"502", replyJSON(502, maintenanceJSON)},
		{"503", replyJSON(503, maintenanceJSON)},
		{"504", replyJSON(504, maintenanceJSON)},
		{"408", replyJSON(408, maintenanceJSON)},
		{"reset after sending", httpmock.NewErrorResponder(reset)},
		{"unexpected EOF", httpmock.NewErrorResponder(io.ErrUnexpectedEOF)},
		{"body broken off after 201", replyBrokenBody(201)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t)
				mt.RegisterResponder(http.MethodPost, jobsURL, tt.responder)
				mt.RegisterResponder(http.MethodPost, messageURLJ1, tt.responder)
				var resp Response
				job, err := c.AgentJobs.Create(context.Background(), "", CreateJobParams{Prompt: promptV2}, WithResponse(&resp))
				if err == nil || job != nil {
					t.Fatalf("Create = %v, %v; want an error", job, err)
				}
				if got := callCount(mt, http.MethodPost, jobsURL); got != 1 {
					t.Errorf("Create attempts = %d, want 1", got)
				}
				if resp.Attempts != 1 {
					t.Errorf("Response.Attempts = %d, want 1", resp.Attempts)
				}
				if _, err := c.AgentJobs.SendMessage(context.Background(), "", "j1", SendMessageParams{Prompt: promptV2}); err == nil {
					t.Error("SendMessage succeeded, want an error")
				}
				if got := callCount(mt, http.MethodPost, messageURLJ1); got != 1 {
					t.Errorf("SendMessage attempts = %d, want 1", got)
				}
			})
		})
	}
}

func TestPipelineCreateRetriesWhenTheRequestSurelyWasNotProcessed(t *testing.T) {
	t.Run("429", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c, mt := newTestClient(t)
			limited := replyJSON(429, `{"error":"rate limit exceeded"}`)
			mt.RegisterResponder(http.MethodPost, jobsURL, inTurn(limited, limited, replyJSON(201, jobJSONJ1)))
			job, err := c.AgentJobs.Create(context.Background(), "", CreateJobParams{Prompt: promptV2})
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if diff := cmp.Diff(wantJobJ1, job); diff != "" {
				t.Errorf("job (-want +got):\n%s", diff)
			}
			if got := callCount(mt, http.MethodPost, jobsURL); got != 3 {
				t.Errorf("attempts = %d, want 3", got)
			}
		})
	})
	t.Run("DNS failure", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c, mt := newTestClient(t)
			dnsErr := &net.DNSError{Err: "no such host", Name: "api.example.test", IsNotFound: true}
			mt.RegisterResponder(http.MethodPost, messageURLJ1, httpmock.NewErrorResponder(dnsErr))
			_, err := c.AgentJobs.SendMessage(context.Background(), "", "j1", SendMessageParams{Prompt: promptV2})
			var got *net.DNSError
			if !errors.As(err, &got) {
				t.Errorf("err = %v, want the DNS error", err)
			}
			if n := callCount(mt, http.MethodPost, messageURLJ1); n != 4 {
				t.Errorf("attempts = %d, want 4", n)
			}
		})
	})
}

// A refused connection is the one transport failure that proves the server
// never saw the request, so it must come from a real dial, not a mock.
func TestPipelineCreateRetriesARefusedConnection(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close()

	c, err := NewClient(testKey, WithBaseURL(base), WithProjectID("proj"),
		WithRetryDelays(time.Nanosecond, time.Nanosecond), WithMaxRetries(2))
	if err != nil {
		t.Fatal(err)
	}
	c.cfg.jitter = func() float64 { return 0 } // a 1ns step with no jitter waits 0
	var resp Response
	_, err = c.AgentJobs.Create(context.Background(), "", CreateJobParams{Prompt: promptV2}, WithResponse(&resp))
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("err = %v, want a refused connection", err)
	}
	if resp.Attempts != 3 || resp.StatusCode != 0 {
		t.Errorf("Response = %+v, want 3 attempts and no status", resp)
	}
	if !strings.HasSuffix(err.Error(), " (after 3 attempts)") {
		t.Errorf("err = %q, want it to end with the attempt count", err)
	}
}

func TestPipelineCreateWithIdempotencyKeyIsRetriedWithTheSameRequest(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		rec, r := record(inTurn(
			replyJSON(500, maintenanceJSON),
			httpmock.NewErrorResponder(reset),
			replyJSON(201, jobJSONJ1),
		))
		mt.RegisterResponder(http.MethodPost, jobsURL, r)
		job, err := c.AgentJobs.Create(context.Background(), "", CreateJobParams{Prompt: promptV2}, WithIdempotencyKey(" k1 "))
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		if job.ID != "j1" {
			t.Errorf("job ID = %q, want j1", job.ID)
		}
		reqs := rec.Requests()
		if len(reqs) != 3 {
			t.Fatalf("attempts = %d, want 3", len(reqs))
		}
		for i, req := range reqs {
			if got := req.Header.Values("Idempotency-Key"); !slices.Equal(got, []string{"k1"}) {
				t.Errorf("attempt %d: Idempotency-Key = %q, want [k1]", i+1, got)
			}
			if req.Body != promptV2JSON {
				t.Errorf("attempt %d: body = %q, want %q", i+1, req.Body, promptV2JSON)
			}
			if got := req.Header.Get("Content-Type"); got != "application/json" {
				t.Errorf("attempt %d: Content-Type = %q", i+1, got)
			}
		}
	})
}

func TestPipelineSendMessageWithIdempotencyKeyIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		rec, r := record(inTurn(replyJSON(503, maintenanceJSON), replyJSON(200, jobJSONJ1)))
		mt.RegisterResponder(http.MethodPost, messageURLJ1, r)
		if _, err := c.AgentJobs.SendMessage(context.Background(), "", "j1", SendMessageParams{Prompt: promptV2}, WithIdempotencyKey("m1")); err != nil {
			t.Fatalf("SendMessage: %v", err)
		}
		reqs := rec.Requests()
		if len(reqs) != 2 {
			t.Fatalf("attempts = %d, want 2", len(reqs))
		}
		for i, req := range reqs {
			if got := req.Header.Get("Idempotency-Key"); got != "m1" {
				t.Errorf("attempt %d: Idempotency-Key = %q, want m1", i+1, got)
			}
			if req.Body != promptV2JSON {
				t.Errorf("attempt %d: body = %q, want %q", i+1, req.Body, promptV2JSON)
			}
		}
	})
}

func TestPipelineReadsNeverSendIdempotencyKey(t *testing.T) {
	c, mt := newTestClient(t)
	jobRec, jobR := record(replyJSON(200, jobJSONJ1))
	viewsRec, viewsR := record(replyJSON(200, viewsJSON))
	mt.RegisterResponder(http.MethodGet, jobURLJ1, jobR)
	mt.RegisterResponder(http.MethodGet, viewsURL, viewsR)
	if _, err := c.AgentJobs.Get(context.Background(), "", "j1", WithIdempotencyKey("k1")); err != nil {
		t.Fatalf("Get: %v", err)
	}
	if _, err := c.Analytics.Views(context.Background(), "", ViewsParams{}, WithIdempotencyKey("k1")); err != nil {
		t.Fatalf("Views: %v", err)
	}
	for _, req := range append(jobRec.Requests(), viewsRec.Requests()...) {
		if v, ok := req.Header["Idempotency-Key"]; ok {
			t.Errorf("GET sent Idempotency-Key %q", v)
		}
		if v, ok := req.Header["Content-Type"]; ok {
			t.Errorf("GET without a body sent Content-Type %q", v)
		}
	}
}

func TestPipelineContextEndingDuringBackoffKeepsTheLastError(t *testing.T) {
	tests := []struct {
		name    string
		ctx     func() (context.Context, context.CancelFunc)
		wantErr error
	}{
		{"canceled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(10*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 10*time.Millisecond)
		}, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t, WithRetryDelays(100*time.Millisecond, time.Second))
				mt.RegisterResponder(http.MethodGet, jobURLJ1, replyJSON(503, maintenanceJSON))
				ctx, cancel := tt.ctx()
				defer cancel()
				start := time.Now()
				_, err := c.AgentJobs.Get(ctx, "", "j1")
				if d := time.Since(start); d != 10*time.Millisecond {
					t.Errorf("call took %v, want 10ms: the sleep must end with the context", d)
				}
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("err = %v, want it to match %v", err, tt.wantErr)
				}
				var apiErr *APIError
				if !errors.As(err, &apiErr) || apiErr.StatusCode != 503 {
					t.Errorf("err = %v, want it to carry the 503 *APIError", err)
				}
				if got := callCount(mt, http.MethodGet, jobURLJ1); got != 1 {
					t.Errorf("attempts = %d, want 1", got)
				}
			})
		})
	}
}

func TestPipelineRateLimiterAppliesToEveryAttempt(t *testing.T) {
	t.Run("retries of a read", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			lim := rate.NewLimiter(rate.Every(time.Second), 1)
			c, mt := newTestClient(t, WithRateLimiter(lim), WithRetryDelays(time.Nanosecond, time.Nanosecond))
			rec, r := record(inTurn(replyJSON(503, maintenanceJSON), replyJSON(503, maintenanceJSON), replyJSON(200, jobJSONJ1)))
			mt.RegisterResponder(http.MethodGet, jobURLJ1, r)
			if _, err := c.AgentJobs.Get(context.Background(), "", "j1"); err != nil {
				t.Fatalf("Get: %v", err)
			}
			if diff := cmp.Diff([]time.Duration{0, time.Second, 2 * time.Second}, rec.Times()); diff != "" {
				t.Errorf("attempt times (-want +got):\n%s", diff)
			}
		})
	})
	t.Run("shared across calls and writes", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			lim := rate.NewLimiter(rate.Every(time.Second), 1)
			c, mt := newTestClient(t, WithRateLimiter(lim), WithRetryDelays(time.Nanosecond, time.Nanosecond))
			rec, r := record(inTurn(replyJSON(429, `{"error":"rate limit exceeded"}`), replyJSON(201, jobJSONJ1)))
			mt.RegisterResponder(http.MethodPost, jobsURL, r)
			mt.RegisterResponder(http.MethodGet, viewsURL, replyJSON(200, viewsJSON))
			start := time.Now()
			if _, err := c.Analytics.Views(context.Background(), "", ViewsParams{}); err != nil {
				t.Fatalf("Views: %v", err)
			}
			if _, err := c.AgentJobs.Create(context.Background(), "", CreateJobParams{Prompt: promptV2}); err != nil {
				t.Fatalf("Create: %v", err)
			}
			if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second}, rec.Times()); diff != "" {
				t.Errorf("Create attempt times (-want +got):\n%s", diff)
			}
			if d := time.Since(start); d != 2*time.Second {
				t.Errorf("calls took %v, want 2s", d)
			}
		})
	})
	t.Run("cancel while waiting for the first token", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			lim := rate.NewLimiter(rate.Every(time.Second), 1)
			lim.Allow() // another user of the shared limiter took the token
			c, mt := newTestClient(t, WithRateLimiter(lim))
			mt.RegisterResponder(http.MethodGet, jobURLJ1, replyJSON(200, jobJSONJ1))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			time.AfterFunc(300*time.Millisecond, cancel)
			_, err := c.AgentJobs.Get(ctx, "", "j1")
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
			if got, want := err.Error(), "docsapi: context canceled"; got != want {
				t.Errorf("err = %q, want %q", got, want)
			}
			if n := mt.GetTotalCallCount(); n != 0 {
				t.Errorf("requests sent = %d, want 0", n)
			}
		})
	})
	t.Run("cancel while waiting for a token", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			lim := rate.NewLimiter(rate.Every(time.Second), 1)
			c, mt := newTestClient(t, WithRateLimiter(lim), WithRetryDelays(time.Nanosecond, time.Nanosecond))
			mt.RegisterResponder(http.MethodGet, jobURLJ1, replyJSON(503, maintenanceJSON))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			time.AfterFunc(300*time.Millisecond, cancel)
			start := time.Now()
			_, err := c.AgentJobs.Get(ctx, "", "j1")
			if d := time.Since(start); d != 300*time.Millisecond {
				t.Errorf("call took %v, want 300ms", d)
			}
			var apiErr *APIError
			if !errors.Is(err, context.Canceled) || !errors.As(err, &apiErr) {
				t.Errorf("err = %v, want context.Canceled and the 503 *APIError", err)
			}
		})
	})
}

// x/time/rate refuses at once, with an error of its own, a wait that would
// pass the context's deadline. The caller set a deadline and the call ended
// because of it, so errors.Is(err, context.DeadlineExceeded) should hold.
func TestPipelineRateLimiterRefusalBeforeTheDeadlineMatchesDeadlineExceeded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := rate.NewLimiter(rate.Every(time.Second), 1)
		c, mt := newTestClient(t, WithRateLimiter(lim), WithRetryDelays(time.Nanosecond, time.Nanosecond))
		mt.RegisterResponder(http.MethodGet, jobURLJ1, replyJSON(503, maintenanceJSON))
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		_, err := c.AgentJobs.Get(ctx, "", "j1")
		var apiErr *APIError
		if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &apiErr) {
			t.Errorf("err = %v, want context.DeadlineExceeded and the 503 *APIError", err)
		}
	})
}

func TestPipelineWithHeaderAddsHeaders(t *testing.T) {
	c, mt := newTestClient(t)
	rec, r := record(replyJSON(200, jobJSONJ1))
	mt.RegisterResponder(http.MethodGet, jobURLJ1, r)
	_, err := c.AgentJobs.Get(context.Background(), "", "j1",
		WithHeader("x-trace-id", "abc"), WithHeader("X-Multi", "1"), WithHeader("X-Multi", "2"), nil)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	reqs := rec.Requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %d, want 1", len(reqs))
	}
	h := reqs[0].Header
	if got := h.Values("X-Trace-Id"); !slices.Equal(got, []string{"abc"}) {
		t.Errorf("X-Trace-Id = %q, want [abc]", got)
	}
	if got := h.Values("X-Multi"); !slices.Equal(got, []string{"1", "2"}) {
		t.Errorf("X-Multi = %q, want [1 2]", got)
	}
	if got := h.Get("Authorization"); got != "Bearer "+testKey {
		t.Error("Authorization was lost when headers were added")
	}
}

// Every request shares the client's header values. A transport that edits
// its request's header, against RoundTripper's rules, with Set, Add or Del
// must still not change what later requests send: Add appends to a value of
// capacity 1, which copies it.
func TestPipelineSharedHeaderValuesSurviveATransportThatEditsThem(t *testing.T) {
	c, mt := newTestClient(t, WithUserAgent("app/1"))
	rec, r := record(replyJSON(200, jobJSONJ1))
	mt.RegisterResponder(http.MethodGet, jobURLJ1, r)
	editing := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		req.Header.Add("Authorization", "Bearer other")
		req.Header.Add("User-Agent", "edited")
		req.Header.Add("Accept", "text/html")
		req.Header.Set("Accept", "text/plain")
		req.Header.Del("Accept")
		return mt.RoundTrip(req)
	})
	c.cfg.httpClient.Transport = editing
	for range 2 {
		if _, err := c.AgentJobs.Get(context.Background(), "", "j1"); err != nil {
			t.Fatalf("Get: %v", err)
		}
	}
	c.cfg.httpClient.Transport = mt
	if _, err := c.AgentJobs.Get(context.Background(), "", "j1"); err != nil {
		t.Fatalf("Get: %v", err)
	}
	reqs := rec.Requests()
	last := reqs[len(reqs)-1].Header
	if got := last.Values("Authorization"); !slices.Equal(got, []string{"Bearer " + testKey}) {
		t.Errorf("Authorization has %d values after a transport edited it, want the key alone", len(got))
	}
	if got := last.Values("User-Agent"); len(got) != 1 || !strings.HasPrefix(got[0], "app/1 docsapi-go/") {
		t.Errorf("User-Agent = %q after a transport edited it", got)
	}
	if got := last.Values("Accept"); !slices.Equal(got, []string{"application/json"}) {
		t.Errorf("Accept = %q after a transport edited it", got)
	}
	if ua := c.cfg.headers.userAgent; len(ua) != 1 || cap(ua) != 1 {
		t.Errorf("the shared User-Agent value has length %d and capacity %d, want 1 and 1", len(ua), cap(ua))
	}
	if auth := c.cfg.key.headerValues(); len(auth) != 1 || cap(auth) != 1 {
		t.Errorf("the shared Authorization value has length %d and capacity %d, want 1 and 1", len(auth), cap(auth))
	}
}

// roundTripFunc is a RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func TestPipelineRejectsBadRequestOptionsBeforeSending(t *testing.T) {
	tests := []struct {
		name      string
		opt       RequestOption
		wantParam string
	}{
		{"Authorization", WithHeader("Authorization", "Bearer other"), "header"},
		{"authorization in lower case", WithHeader("authorization", "Bearer other"), "header"},
		{"Authorization with spaces", WithHeader(" Authorization ", "Bearer other"), "header"},
		{"idempotency-key", WithHeader("idempotency-key", "k"), "header"},
		{"IDEMPOTENCY-KEY", WithHeader("IDEMPOTENCY-KEY", "k"), "header"},
		{"name with a newline", WithHeader("X-A\nB", "v"), "header"},
		{"name with CRLF", WithHeader("X-A\r\nX-B", "v"), "header"},
		{"value with CRLF", WithHeader("X-A", "v\r\nX-Injected: 1"), "header"},
		{"empty name", WithHeader("", "v"), "header"},
		{"blank name", WithHeader("   ", "v"), "header"},
		{"empty idempotency key", WithIdempotencyKey(""), "idempotencyKey"},
		{"blank idempotency key", WithIdempotencyKey("   "), "idempotencyKey"},
		{"idempotency key over 255 bytes", WithIdempotencyKey(strings.Repeat("k", 256)), "idempotencyKey"},
		{"idempotency key with a newline", WithIdempotencyKey("k\n1"), "idempotencyKey"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := newTestClient(t)
			mt.RegisterResponder(http.MethodGet, jobURLJ1, replyJSON(200, jobJSONJ1))
			mt.RegisterResponder(http.MethodPost, jobsURL, replyJSON(201, jobJSONJ1))
			calls := []struct {
				op string
				fn func() error
			}{
				{"Get", func() error { _, err := c.AgentJobs.Get(context.Background(), "", "j1", tt.opt); return err }},
				{"Create", func() error {
					_, err := c.AgentJobs.Create(context.Background(), "", CreateJobParams{Prompt: promptV2}, tt.opt)
					return err
				}},
			}
			for _, call := range calls {
				err := call.fn()
				var verr *ValidationError
				if !errors.As(err, &verr) || verr.Param != tt.wantParam {
					t.Errorf("%s: err = %v, want a *ValidationError for %q", call.op, err, tt.wantParam)
				}
				if !errors.Is(err, ErrInvalidParam) {
					t.Errorf("%s: err = %v, want ErrInvalidParam", call.op, err)
				}
			}
			if n := mt.GetTotalCallCount(); n != 0 {
				t.Errorf("requests sent = %d, want 0", n)
			}
		})
	}
}

func TestPipelineAcceptsAnIdempotencyKeyOf255Bytes(t *testing.T) {
	c, mt := newTestClient(t)
	rec, r := record(replyJSON(201, jobJSONJ1))
	mt.RegisterResponder(http.MethodPost, jobsURL, r)
	key := strings.Repeat("k", 255)
	if _, err := c.AgentJobs.Create(context.Background(), "", CreateJobParams{Prompt: promptV2}, WithIdempotencyKey(key)); err != nil {
		t.Fatalf("Create: %v", err)
	}
	if reqs := rec.Requests(); len(reqs) != 1 || reqs[0].Header.Get("Idempotency-Key") != key {
		t.Errorf("requests = %d, want 1 carrying the 255-byte key", len(reqs))
	}
}

func TestPipelineRejectsANilContext(t *testing.T) {
	c, mt := newTestClient(t)
	var ctx context.Context // a nil context, as a caller might pass by mistake
	_, err := c.AgentJobs.Get(ctx, "", "j1")
	var verr *ValidationError
	if !errors.As(err, &verr) || verr.Param != "ctx" {
		t.Errorf("err = %v, want a *ValidationError for ctx", err)
	}
	if n := mt.GetTotalCallCount(); n != 0 {
		t.Errorf("requests sent = %d, want 0", n)
	}
}

func TestPipelineWithResponseDescribesTheExchange(t *testing.T) {
	t.Run("success after a retry", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c, mt := newTestClient(t)
			mt.RegisterResponder(http.MethodGet, jobURLJ1, inTurn(
				replyJSON(503, maintenanceJSON).HeaderSet(http.Header{"X-Request-Id": {"req-1"}}),
				replyJSON(200, jobJSONJ1).HeaderSet(http.Header{"X-Request-Id": {"req-2"}, "X-Extra": {"yes"}}),
			))
			var resp Response
			if _, err := c.AgentJobs.Get(context.Background(), "", "j1", WithResponse(&resp)); err != nil {
				t.Fatalf("Get: %v", err)
			}
			if resp.StatusCode != 200 || resp.RequestID != "req-2" || resp.Attempts != 2 {
				t.Errorf("Response = %+v, want status 200, request id req-2, 2 attempts", resp)
			}
			if resp.Header.Get("X-Extra") != "yes" || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("Response.Header = %v, want the last response's header", resp.Header)
			}
		})
	})
	t.Run("API error", func(t *testing.T) {
		c, mt := newTestClient(t)
		mt.RegisterResponder(http.MethodGet, jobURLJ1, replyJSON(404, `{"error":"job not found"}`).
			HeaderSet(http.Header{"Request-Id": {"req-404"}}))
		var resp Response
		_, err := c.AgentJobs.Get(context.Background(), "", "j1", WithResponse(&resp))
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
		if resp.StatusCode != 404 || resp.RequestID != "req-404" || resp.Attempts != 1 || resp.Header.Get("Request-Id") != "req-404" {
			t.Errorf("Response = %+v, want status 404, request id req-404, 1 attempt", resp)
		}
	})
	t.Run("transport error", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c, mt := newTestClient(t)
			mt.RegisterResponder(http.MethodGet, jobURLJ1, httpmock.NewErrorResponder(errConnReset))
			var resp Response
			if _, err := c.AgentJobs.Get(context.Background(), "", "j1", WithResponse(&resp)); err == nil {
				t.Fatal("Get succeeded")
			}
			want := Response{Attempts: 4}
			if diff := cmp.Diff(want, resp); diff != "" {
				t.Errorf("Response (-want +got):\n%s", diff)
			}
		})
	})
}

func TestPipelineNonJSONSuccessBodyIsAnError(t *testing.T) {
	c, mt := newTestClient(t)
	mt.RegisterResponder(http.MethodGet, jobURLJ1, httpmock.NewStringResponder(200, "<html><title>Sign in</title></html>").
		HeaderSet(http.Header{"Content-Type": {"text/html; charset=utf-8"}}))
	job, err := c.AgentJobs.Get(context.Background(), "", "j1")
	if err == nil {
		t.Fatalf("Get = %+v, want an error", job)
	}
	for _, want := range []string{"GET " + jobPathJ1, "200", `"text/html; charset=utf-8"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %q, want it to contain %q", err, want)
		}
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		t.Errorf("err is an *APIError, but the status was 200")
	}
	if n := callCount(mt, http.MethodGet, jobURLJ1); n != 1 {
		t.Errorf("attempts = %d, want 1", n)
	}
}

// endlessBody is a response body that never ends; it counts what was read
// from it.
type endlessBody struct{ read atomic.Int64 }

func (b *endlessBody) Read(p []byte) (int, error) {
	b.read.Add(int64(len(p)))
	return len(p), nil
}

func (b *endlessBody) Close() error { return nil }

func TestPipelineRefusesAResponseLargerThan32MiB(t *testing.T) {
	logger, sink := captureLogs()
	c, mt := newTestClient(t, WithMaxRetries(0), WithLogger(logger))
	body := new(endlessBody)
	mt.RegisterResponder(http.MethodGet, jobURLJ1, func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: body, Request: req}, nil
	})
	var resp Response
	_, err := c.AgentJobs.Get(context.Background(), "", "j1", WithResponse(&resp))
	if err == nil || !strings.Contains(err.Error(), "larger than 33554432 bytes") {
		t.Fatalf("err = %v, want a body-too-large error", err)
	}
	if got, want := body.read.Load(), int64(32<<20+1); got != want {
		t.Errorf("bytes read = %d, want %d: reading must stop just past the limit", got, want)
	}
	if resp.StatusCode != 200 || resp.Attempts != 1 {
		t.Errorf("Response = %+v, want status 200, 1 attempt", resp)
	}
	logs := sink.all()
	if len(logs) != 1 || !strings.Contains(fmt.Sprint(logs[0].Attrs["error"]), "larger than 33554432 bytes") {
		t.Errorf("log records = %+v, want one whose error names the limit", logs)
	}
}

func TestPipelineLogsEachAttemptAndRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logger, sink := captureLogs()
		c, mt := newTestClient(t, WithLogger(logger), WithRetryDelays(100*time.Millisecond, time.Second))
		mt.RegisterResponder(http.MethodGet, viewsURL, inTurn(
			replyJSON(503, maintenanceJSON).HeaderSet(http.Header{"X-Request-Id": {"r1"}}),
			replyJSON(200, viewsJSON).HeaderSet(http.Header{"X-Request-Id": {"r2"}}).Delay(25*time.Millisecond),
		))
		params := ViewsParams{DateFrom: Day(2026, time.January, 1), DateTo: Day(2026, time.February, 1), Limit: 10, Offset: 20}
		if _, err := c.Analytics.Views(context.Background(), "", params); err != nil {
			t.Fatalf("Views: %v", err)
		}
		want := []logRecord{
			{Level: slog.LevelDebug, Msg: "docsapi: request", Attrs: map[string]any{
				"method": "GET", "path": viewsPath, "status": int64(503), "attempt": int64(1),
				"duration": time.Duration(0), "request_id": "r1", "error": "maintenance",
			}},
			{Level: slog.LevelInfo, Msg: "docsapi: retrying request", Attrs: map[string]any{
				"method": "GET", "path": viewsPath, "status": int64(503), "attempt": int64(1),
				"delay": 50 * time.Millisecond, "error": "maintenance",
			}},
			{Level: slog.LevelDebug, Msg: "docsapi: request", Attrs: map[string]any{
				"method": "GET", "path": viewsPath, "status": int64(200), "attempt": int64(2),
				"duration": 25 * time.Millisecond, "request_id": "r2", "error": "",
			}},
		}
		got := sink.all()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("log records (-want +got):\n%s", diff)
		}
		for _, r := range got {
			for k, v := range r.Attrs {
				if s, ok := v.(string); ok && (strings.Contains(s, "?") || strings.Contains(s, "dateFrom") || strings.Contains(s, "limit")) {
					t.Errorf("%s: attr %s = %q leaks the query string", r.Msg, k, s)
				}
			}
		}
	})
}

// A transport error's own text holds the full URL, query included; the log
// must carry the path alone.
func TestPipelineLogsTransportErrorsWithoutTheQuery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logger, sink := captureLogs()
		c, mt := newTestClient(t, WithLogger(logger), WithMaxRetries(1))
		mt.RegisterResponder(http.MethodGet, viewsURL, httpmock.NewErrorResponder(errConnReset))
		_, err := c.Analytics.Views(context.Background(), "", ViewsParams{Limit: 7, DateFrom: Day(2026, time.March, 3)})
		if !errors.Is(err, errConnReset) {
			t.Fatalf("err = %v, want the transport error", err)
		}
		got := sink.all()
		if len(got) != 3 {
			t.Fatalf("log records = %d, want 3 (2 requests, 1 retry)", len(got))
		}
		for _, r := range got {
			if r.Attrs["error"] != errConnReset.Error() {
				t.Errorf("%s: error attr = %q, want %q", r.Msg, r.Attrs["error"], errConnReset.Error())
			}
			if r.Attrs["status"] != int64(0) {
				t.Errorf("%s: status attr = %v, want 0", r.Msg, r.Attrs["status"])
			}
		}
	})
}

// The default client must not fall back to slog.Default: a library that
// logs into its host's default logger uninvited is noise.
func TestPipelineDefaultClientLogsNothing(t *testing.T) {
	sinkLogger, sink := captureLogs()
	oldSlog, oldWriter, oldFlags := slog.Default(), log.Writer(), log.Flags()
	slog.SetDefault(sinkLogger)
	t.Cleanup(func() {
		slog.SetDefault(oldSlog)
		log.SetOutput(oldWriter)
		log.SetFlags(oldFlags)
	})
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		mt.RegisterResponder(http.MethodGet, jobURLJ1, inTurn(httpmock.NewErrorResponder(errConnReset), replyJSON(503, maintenanceJSON), replyJSON(200, jobJSONJ1)))
		if _, err := c.AgentJobs.Get(context.Background(), "", "j1"); err != nil {
			t.Fatalf("Get: %v", err)
		}
	})
	for _, r := range sink.all() {
		if strings.HasPrefix(r.Msg, "docsapi") {
			t.Errorf("default client logged %q to slog.Default", r.Msg)
		}
	}
}

func TestPipelineCrossHostRedirectDropsTheKey(t *testing.T) {
	var gotAuth atomic.Value
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth.Store(r.Header.Values("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, jobJSONJ1)
	}))
	defer b.Close()
	var firstAuth atomic.Value
	a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		firstAuth.Store(r.Header.Get("Authorization"))
		http.Redirect(w, r, b.URL+r.URL.Path, http.StatusFound)
	}))
	defer a.Close()

	c, err := NewClient(testKey, WithBaseURL(a.URL), WithProjectID("proj"))
	if err != nil {
		t.Fatal(err)
	}
	job, err := c.AgentJobs.Get(context.Background(), "", "j1")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if job.ID != "j1" {
		t.Errorf("job ID = %q, want j1", job.ID)
	}
	if got, _ := firstAuth.Load().(string); got != "Bearer "+testKey {
		t.Errorf("the API host did not get the key")
	}
	got, ok := gotAuth.Load().([]string)
	if !ok {
		t.Fatal("the redirect target was never reached")
	}
	if len(got) != 0 {
		t.Errorf("the other host got Authorization (%d values), want none", len(got))
	}
}

func TestPipelineSameHostRedirectKeepsTheKey(t *testing.T) {
	var gotAuth atomic.Value
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v2/agent/proj/job/j1", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/v2/agent/proj/job/j2", http.StatusMovedPermanently)
	})
	mux.HandleFunc("GET /v2/agent/proj/job/j2", func(w http.ResponseWriter, r *http.Request) {
		gotAuth.Store(r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, strings.Replace(jobJSONJ1, `"j1"`, `"j2"`, 1))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	c, err := NewClient(testKey, WithBaseURL(srv.URL), WithProjectID("proj"))
	if err != nil {
		t.Fatal(err)
	}
	job, err := c.AgentJobs.Get(context.Background(), "", "j1")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if job.ID != "j2" {
		t.Errorf("job ID = %q, want j2", job.ID)
	}
	if got, _ := gotAuth.Load().(string); got != "Bearer "+testKey {
		t.Errorf("the redirect within the API host lost Authorization")
	}
}

// Many goroutines share one client; the race detector checks that nothing
// in the pipeline writes shared state.
func TestPipelineClientIsSafeForConcurrentUse(t *testing.T) {
	logger, _ := captureLogs()
	c, mt := newTestClient(t, WithLogger(logger))
	mt.RegisterResponder(http.MethodGet, jobURLJ1, replyJSON(200, jobJSONJ1))
	mt.RegisterResponder(http.MethodPost, jobsURL, replyJSON(201, jobJSONJ1))
	mt.RegisterResponder(http.MethodGet, viewsURL, replyJSON(200, viewsJSON))
	var wg sync.WaitGroup
	errs := make(chan error, 60)
	for i := range 20 {
		wg.Add(3)
		go func() {
			defer wg.Done()
			_, err := c.AgentJobs.Get(context.Background(), "", "j1", WithHeader("X-N", strings.Repeat("n", i)))
			errs <- err
		}()
		go func() {
			defer wg.Done()
			_, err := c.AgentJobs.Create(context.Background(), "", CreateJobParams{Prompt: promptV2})
			errs <- err
		}()
		go func() {
			defer wg.Done()
			_, err := c.Analytics.Views(context.Background(), "", ViewsParams{Limit: i + 1})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := mt.GetTotalCallCount(); n != 60 {
		t.Errorf("requests = %d, want 60", n)
	}
}

// paddedJobBody is a response body of size bytes: a job, then spaces.
type paddedJobBody struct {
	r    io.Reader
	read int64
}

func newPaddedJobBody(size int64) *paddedJobBody {
	job := strings.NewReader(jobJSONJ1)
	spaces := io.LimitReader(spaces{}, size-int64(job.Len()))
	return &paddedJobBody{r: io.MultiReader(job, spaces)}
}

func (b *paddedJobBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read += int64(n)
	return n, err
}

func (b *paddedJobBody) Close() error { return nil }

type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// Whatever length the response declares, the body is read to its end, a
// body of exactly the bound is accepted, and one byte more is refused after
// reading just that byte.
func TestPipelineBodyBoundDoesNotTrustTheDeclaredLength(t *testing.T) {
	const limit = maxResponseBytes
	for _, tt := range []struct {
		name     string
		declared int64
		size     int64
		oneByte  bool // the transport returns one byte per Read
	}{
		{"unknown length", -1, int64(len(jobJSONJ1)), true},
		{"declared too short", 10, int64(len(jobJSONJ1)), true},
		{"declared too long", 4096, int64(len(jobJSONJ1)), false},
		{"exactly the bound", limit, limit, false},
		{"one byte past the bound, declared as the bound", limit, limit + 1, false},
		{"past the bound, unknown length", -1, limit + 100, false},
		{"past the bound, declared past it", 1 << 40, limit + 100, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := newTestClient(t, WithMaxRetries(0))
			body := newPaddedJobBody(tt.size)
			mt.RegisterResponder(http.MethodGet, jobURLJ1, func(req *http.Request) (*http.Response, error) {
				var r io.ReadCloser = body
				if tt.oneByte {
					r = io.NopCloser(iotest.OneByteReader(body))
				}
				return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
					ContentLength: tt.declared, Body: r, Request: req}, nil
			})
			job, err := c.AgentJobs.Get(context.Background(), "", "j1")
			if tt.size > limit {
				if err == nil || !strings.Contains(err.Error(), "larger than 33554432 bytes") {
					t.Fatalf("err = %v, want a body-too-large error", err)
				}
				if body.read != limit+1 {
					t.Errorf("bytes read = %d, want %d: reading must stop just past the limit", body.read, limit+1)
				}
			} else {
				if err != nil {
					t.Fatalf("Get: %v", err)
				}
				if diff := cmp.Diff(wantJobJ1, job); diff != "" {
					t.Errorf("job (-want +got):\n%s", diff)
				}
				if body.read != tt.size {
					t.Errorf("bytes read = %d, want %d", body.read, tt.size)
				}
			}
		})
	}
}
