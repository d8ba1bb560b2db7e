package docsapi

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jarcoal/httpmock"
)

// The prompts whose request bodies are kept in the golden files. They hold
// characters that JSON encoders escape differently (<, >, &, quotes, non-ASCII),
// which is why bodies are compared as JSON values rather than as bytes.
const (
	createPrompt  = "Document the v2 release: new <Widget> props & the \"beta\" flag, in English and Français"
	messagePrompt = "Also add a migration note to changelog.mdx — keep it under 100 words"
)

func TestAgentCreatePostsPromptAndDecodesCreatedJob(t *testing.T) {
	// In a bubble: a wrongly retried request would sleep.
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		log := serve(t, mt, on(http.MethodPost, "/v2/agent/proj/job", replyFixture(t, http.StatusCreated, "job_active.json")))

		job, err := c.AgentJobs.Create(t.Context(), "", CreateJobParams{Prompt: createPrompt})
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		want := Job{ID: fixtureJobID, Status: JobStatusActive, Source: JobSource{Repository: "acme/docs", Ref: "main"},
			Model: "claude-sonnet-4-5", CreatedAt: fixtureCreatedAt}
		if diff := cmp.Diff(want, *job); diff != "" {
			t.Errorf("job mismatch (-want +got):\n%s", diff)
		}
		calls := log.Requests()
		if len(calls) != 1 {
			t.Fatalf("got %d requests, want 1", len(calls))
		}
		if calls[0].Method != http.MethodPost || calls[0].Path != "/v2/agent/proj/job" || calls[0].Query != "" {
			t.Errorf("request = %s %s?%s, want POST /v2/agent/proj/job", calls[0].Method, calls[0].Path, calls[0].Query)
		}
		wantStandardHeaders(t, calls[0], true)
		goldenJSON(t, "create_job_request.golden.json", []byte(calls[0].Body))
	})
}

func TestAgentCreateUsesExplicitProjectOverClientDefault(t *testing.T) {
	// In a bubble: a wrongly retried request would sleep.
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		log := serve(t, mt, on(http.MethodPost, "/v2/agent/other/job", replyFixture(t, http.StatusCreated, "job_active.json")))

		if _, err := c.AgentJobs.Create(t.Context(), "other", CreateJobParams{Prompt: "p"}); err != nil {
			t.Fatalf("Create: %v", err)
		}
		if calls := log.Requests(); len(calls) != 1 || calls[0].Path != "/v2/agent/other/job" {
			t.Errorf("requests = %+v, want one to /v2/agent/other/job", calls)
		}
	})
}

func TestAgentCreateEscapesProjectID(t *testing.T) {
	// In a bubble: a wrongly retried request would sleep.
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		log := serve(t, mt, on(http.MethodPost, "/v2/agent/a%2Fb%20c/job", replyFixture(t, http.StatusCreated, "job_active.json")))

		if _, err := c.AgentJobs.Create(t.Context(), "a/b c", CreateJobParams{Prompt: "p"}); err != nil {
			t.Fatalf("Create: %v", err)
		}
		// An unescaped "/" would address /v2/agent/a/b c/job, another route.
		if calls := log.Requests(); len(calls) != 1 || calls[0].Path != "/v2/agent/a%2Fb%20c/job" {
			t.Errorf("requests = %+v, want one to /v2/agent/a%%2Fb%%20c/job", calls)
		}
	})
}

func TestAgentGetEscapesJobID(t *testing.T) {
	tests := []struct {
		jobID, escaped string
	}{
		{"job/1", "job%2F1"},
		{"a b", "a%20b"},
		{"x?y=1", "x%3Fy=1"}, // a "?" must not start a query string
		{"#1", "%231"},       // nor a "#" a fragment
		{"50%", "50%25"},
		{"ü", "%C3%BC"},
	}
	for _, tt := range tests {
		t.Run(tt.jobID, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t)
				path := "/v2/agent/proj/job/" + tt.escaped
				log := serve(t, mt, on(http.MethodGet, path, replyFixture(t, http.StatusOK, "job_active.json")))

				job, err := c.AgentJobs.Get(t.Context(), "", tt.jobID)
				if err != nil {
					t.Fatalf("Get: %v", err)
				}
				if job.ID != fixtureJobID {
					t.Errorf("job ID = %q, want %q", job.ID, fixtureJobID)
				}
				calls := log.Requests()
				if len(calls) != 1 || calls[0].Method != http.MethodGet || calls[0].Path != path || calls[0].Query != "" {
					t.Fatalf("requests = %+v, want one GET %s without query", calls, path)
				}
				wantStandardHeaders(t, calls[0], false)
			})
		})
	}
}

func TestAgentGetNotFound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		log := serve(t, mt, on(http.MethodGet, "/v2/agent/proj/job/j1", replyJSON(http.StatusNotFound, `{"error":"Job not found"}`)))

		job, err := c.AgentJobs.Get(t.Context(), "", "j1")
		if job != nil {
			t.Errorf("job = %+v, want nil", job)
		}
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
		apiErr := asAPIError(t, err)
		if apiErr.StatusCode != http.StatusNotFound || apiErr.Message != "Job not found" ||
			apiErr.Method != http.MethodGet || apiErr.Path != "/v2/agent/proj/job/j1" {
			t.Errorf("APIError = %+v", apiErr)
		}
		if n := len(log.Requests()); n != 1 {
			t.Errorf("got %d requests, want 1: a 404 does not heal", n)
		}
	})
}

func TestAgentGetUnauthorized(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		log := serve(t, mt, on(http.MethodGet, "/v2/agent/proj/job/j1", replyJSON(http.StatusUnauthorized, `{"error":"Invalid API key"}`)))

		_, err := c.AgentJobs.Get(t.Context(), "", "j1")
		if !errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrForbidden) {
			t.Fatalf("err = %v, want ErrUnauthorized only", err)
		}
		if asAPIError(t, err).Message != "Invalid API key" {
			t.Errorf("Message = %q", asAPIError(t, err).Message)
		}
		if strings.Contains(err.Error(), testKey) {
			t.Error("error text contains the API key")
		}
		if n := len(log.Requests()); n != 1 {
			t.Errorf("got %d requests, want 1", n)
		}
	})
}

func TestAgentSendMessagePostsPromptAndReturnsJob(t *testing.T) {
	// In a bubble: a wrongly retried request would sleep.
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		path := "/v2/agent/proj/job/" + fixtureJobID + "/message"
		log := serve(t, mt, on(http.MethodPost, path, replyFixture(t, http.StatusOK, "job_active.json")))

		job, err := c.AgentJobs.SendMessage(t.Context(), "", fixtureJobID, SendMessageParams{Prompt: messagePrompt})
		if err != nil {
			t.Fatalf("SendMessage: %v", err)
		}
		if job.ID != fixtureJobID || job.Status != JobStatusActive {
			t.Errorf("job = %+v, want %s active", job, fixtureJobID)
		}
		calls := log.Requests()
		if len(calls) != 1 || calls[0].Method != http.MethodPost || calls[0].Path != path {
			t.Fatalf("requests = %+v, want one POST %s", calls, path)
		}
		wantStandardHeaders(t, calls[0], true)
		goldenJSON(t, "send_message_request.golden.json", []byte(calls[0].Body))
	})
}

func TestAgentSendMessageBadRequestIsNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		log := serve(t, mt, on(http.MethodPost, "/v2/agent/proj/job/j1/message",
			replyJSON(http.StatusBadRequest, `{"error":"Job is archived"}`)))

		job, err := c.AgentJobs.SendMessage(t.Context(), "", "j1", SendMessageParams{Prompt: "more"})
		if job != nil || !errors.Is(err, ErrBadRequest) {
			t.Fatalf("SendMessage = %+v, %v; want nil, ErrBadRequest", job, err)
		}
		if msg := asAPIError(t, err).Message; msg != "Job is archived" {
			t.Errorf("Message = %q", msg)
		}
		if n := len(log.Requests()); n != 1 {
			t.Errorf("got %d requests, want 1", n)
		}
	})
}

// A 5xx after a write leaves its outcome unknown: the server may have started
// the agent. Sending again could start a second agent and open a second pull
// request, so without an idempotency key the write is attempted once.
func TestAgentWritesAreNotRetriedWhenOutcomeIsUnknown(t *testing.T) {
	failures := []struct {
		name  string
		reply httpmock.Responder
		check func(error) bool
	}{
		{"500", replyJSON(http.StatusInternalServerError, `{"error":"Internal server error"}`),
			func(err error) bool { return errors.Is(err, ErrServer) }},
		{"connection reset", replyError(syscall.ECONNRESET),
			func(err error) bool { return errors.Is(err, syscall.ECONNRESET) }},
	}
	writes := []struct {
		name string
		path string
		call func(context.Context, *Client) (*Job, error)
	}{
		{"Create", "/v2/agent/proj/job", func(ctx context.Context, c *Client) (*Job, error) {
			return c.AgentJobs.Create(ctx, "", CreateJobParams{Prompt: "p"})
		}},
		{"SendMessage", "/v2/agent/proj/job/j1/message", func(ctx context.Context, c *Client) (*Job, error) {
			return c.AgentJobs.SendMessage(ctx, "", "j1", SendMessageParams{Prompt: "p"})
		}},
	}
	for _, w := range writes {
		for _, f := range failures {
			t.Run(w.name+"/"+f.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					c, mt := newTestClient(t)
					log := serve(t, mt, on(http.MethodPost, w.path, f.reply, replyFixture(t, http.StatusCreated, "job_active.json")))

					job, err := w.call(t.Context(), c)
					if job != nil || !f.check(err) {
						t.Errorf("%s = %+v, %v; want nil and the %s error", w.name, job, err, f.name)
					}
					if n := len(log.Requests()); n != 1 {
						t.Errorf("got %d requests, want exactly 1", n)
					}
				})
			})
		}
	}
}

// A 429 or a refused connection proves the request was not processed, so the
// create is sent again; so is one that carries an idempotency key.
func TestAgentCreateIsRetriedWhenSurelyNotProcessed(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	tests := []struct {
		name    string
		first   httpmock.Responder
		opts    []RequestOption
		idemKey string
		// The retry delay with jitter 0 is half the first backoff step
		// (DefaultMinRetryDelay 500ms), unless Retry-After asks for more.
		wantAt []time.Duration
	}{
		{"429", replyJSON(http.StatusTooManyRequests, `{"error":"Rate limit exceeded"}`), nil, "",
			[]time.Duration{0, 250 * time.Millisecond}},
		{"429 with Retry-After", replyJSON(http.StatusTooManyRequests, `{"error":"Rate limit exceeded"}`, "Retry-After", "3"), nil, "",
			[]time.Duration{0, 3 * time.Second}},
		{"connection refused", replyError(refused), nil, "",
			[]time.Duration{0, 250 * time.Millisecond}},
		{"500 with idempotency key", replyJSON(http.StatusInternalServerError, `{"error":"Internal server error"}`),
			[]RequestOption{WithIdempotencyKey("create-7f3a")}, "create-7f3a",
			[]time.Duration{0, 250 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t)
				log := serve(t, mt, on(http.MethodPost, "/v2/agent/proj/job", tt.first, replyFixture(t, http.StatusCreated, "job_active.json")))

				job, err := c.AgentJobs.Create(t.Context(), "", CreateJobParams{Prompt: createPrompt}, tt.opts...)
				if err != nil || job == nil || job.ID != fixtureJobID {
					t.Fatalf("Create = %+v, %v; want job %s", job, err, fixtureJobID)
				}
				if diff := cmp.Diff(tt.wantAt, log.Times()); diff != "" {
					t.Errorf("request times (-want +got):\n%s", diff)
				}
				for i, call := range log.Requests() {
					if call.Body != log.Requests()[0].Body {
						t.Errorf("attempt %d body %s differs from the first %s", i+1, call.Body, log.Requests()[0].Body)
					}
					if got := call.Header.Get("Idempotency-Key"); got != tt.idemKey {
						t.Errorf("attempt %d Idempotency-Key = %q, want %q", i+1, got, tt.idemKey)
					}
				}
			})
		})
	}
}

// validationCase is an operation called with one bad argument.
type validationCase struct {
	name  string
	param string
	call  func(context.Context, *AgentJobsService) error
}

func TestAgentRejectsInvalidArgumentsBeforeAnyRequest(t *testing.T) {
	ok := CreateJobParams{Prompt: "p"}
	tests := []validationCase{
		{"Create empty prompt", "prompt", func(ctx context.Context, s *AgentJobsService) error {
			return errOf(s.Create(ctx, "", CreateJobParams{}))
		}},
		{"Create white-space prompt", "prompt", func(ctx context.Context, s *AgentJobsService) error {
			return errOf(s.Create(ctx, "", CreateJobParams{Prompt: " \t\n\u00a0"}))
		}},
		{"Create invalid UTF-8 prompt", "prompt", func(ctx context.Context, s *AgentJobsService) error {
			return errOf(s.Create(ctx, "", CreateJobParams{Prompt: "fix the \xff\xfe page"}))
		}},
		{"Create project .", "projectID", func(ctx context.Context, s *AgentJobsService) error {
			return errOf(s.Create(ctx, ".", ok))
		}},
		{"Create project ..", "projectID", func(ctx context.Context, s *AgentJobsService) error {
			return errOf(s.Create(ctx, "..", ok))
		}},
		{"Create project with space", "projectID", func(ctx context.Context, s *AgentJobsService) error {
			return errOf(s.Create(ctx, " proj", ok))
		}},
		{"Get empty job", "jobID", func(ctx context.Context, s *AgentJobsService) error {
			return errOf(s.Get(ctx, "", ""))
		}},
		{"Get job .", "jobID", func(ctx context.Context, s *AgentJobsService) error {
			return errOf(s.Get(ctx, "", "."))
		}},
		{"Get job ..", "jobID", func(ctx context.Context, s *AgentJobsService) error {
			return errOf(s.Get(ctx, "", ".."))
		}},
		{"Get job with leading space", "jobID", func(ctx context.Context, s *AgentJobsService) error {
			return errOf(s.Get(ctx, "", " x"))
		}},
		{"Get project ..", "projectID", func(ctx context.Context, s *AgentJobsService) error {
			return errOf(s.Get(ctx, "..", "j1"))
		}},
		{"SendMessage empty prompt", "prompt", func(ctx context.Context, s *AgentJobsService) error {
			return errOf(s.SendMessage(ctx, "", "j1", SendMessageParams{Prompt: "  "}))
		}},
		{"SendMessage invalid UTF-8 prompt", "prompt", func(ctx context.Context, s *AgentJobsService) error {
			return errOf(s.SendMessage(ctx, "", "j1", SendMessageParams{Prompt: "\xc3"}))
		}},
		{"SendMessage job ..", "jobID", func(ctx context.Context, s *AgentJobsService) error {
			return errOf(s.SendMessage(ctx, "", "..", SendMessageParams{Prompt: "p"}))
		}},
		{"Wait empty job", "jobID", func(ctx context.Context, s *AgentJobsService) error {
			return errOf(s.Wait(ctx, "", "", WaitParams{}))
		}},
		{"Wait project .", "projectID", func(ctx context.Context, s *AgentJobsService) error {
			return errOf(s.Wait(ctx, ".", "j1", WaitParams{}))
		}},
		{"CreateAndWait empty prompt", "prompt", func(ctx context.Context, s *AgentJobsService) error {
			return errOf(s.CreateAndWait(ctx, "", CreateJobParams{}, WaitParams{}))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Inside a bubble because Wait would poll if it wrongly
			// accepted its arguments.
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t)
				checkRejected(t, c, mt, tt)
			})
		})
	}
}

func TestAgentRejectsEmptyProjectWithoutClientDefault(t *testing.T) {
	tests := []validationCase{
		{"Create", "projectID", func(ctx context.Context, s *AgentJobsService) error {
			return errOf(s.Create(ctx, "", CreateJobParams{Prompt: "p"}))
		}},
		{"Get", "projectID", func(ctx context.Context, s *AgentJobsService) error {
			return errOf(s.Get(ctx, "", "j1"))
		}},
		{"SendMessage", "projectID", func(ctx context.Context, s *AgentJobsService) error {
			return errOf(s.SendMessage(ctx, "", "j1", SendMessageParams{Prompt: "p"}))
		}},
		{"Wait", "projectID", func(ctx context.Context, s *AgentJobsService) error {
			return errOf(s.Wait(ctx, "", "j1", WaitParams{}))
		}},
		{"CreateAndWait", "projectID", func(ctx context.Context, s *AgentJobsService) error {
			return errOf(s.CreateAndWait(ctx, "", CreateJobParams{Prompt: "p"}, WaitParams{}))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// newTestClient sets a default project; this client has none.
				mt := httpmock.NewMockTransport()
				c, err := NewClient(testKey, WithHTTPClient(&http.Client{Transport: mt}), WithBaseURL(testBaseURL))
				if err != nil {
					t.Fatalf("NewClient: %v", err)
				}
				checkRejected(t, c, mt, tt)
			})
		})
	}
}

// checkRejected runs tt.call and checks that it failed validation on
// tt.param without sending anything. Should a request go out anyway, it is
// answered with a completed job so that nothing waits.
func checkRejected(t *testing.T, c *Client, mt *httpmock.MockTransport, tt validationCase) {
	t.Helper()
	var sent atomic.Int32
	mt.RegisterNoResponder(func(req *http.Request) (*http.Response, error) {
		sent.Add(1)
		return replyJSON(http.StatusOK, string(fixture(t, "job_completed.json")))(req)
	})
	err := tt.call(t.Context(), c.AgentJobs)
	var verr *ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("err = %v (%T), want *ValidationError", err, err)
	}
	if verr.Param != tt.param {
		t.Errorf("Param = %q, want %q (error: %v)", verr.Param, tt.param, err)
	}
	if !errors.Is(err, ErrInvalidParam) {
		t.Errorf("errors.Is(%v, ErrInvalidParam) = false", err)
	}
	if n := sent.Load(); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}
