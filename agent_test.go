package docsapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
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
	ajCreatePrompt  = "Document the v2 release: new <Widget> props & the \"beta\" flag, in English and Français"
	ajMessagePrompt = "Also add a migration note to changelog.mdx — keep it under 100 words"
)

// ajCall is one request the mock transport received.
type ajCall struct {
	// At is the time since the log was made; inside a synctest bubble it is
	// virtual, and exact.
	At     time.Duration
	Method string
	// Path is the path as sent on the wire, escapes included.
	Path   string
	Query  string
	Header http.Header
	Body   []byte
}

// ajLog records requests. Responders run on httpmock's goroutines, hence
// the lock.
type ajLog struct {
	start time.Time
	mu    sync.Mutex
	calls []ajCall
}

// newAJLog must be called inside the bubble when times matter, so that its
// start is on the bubble's clock.
func newAJLog() *ajLog { return &ajLog{start: time.Now()} }

func (l *ajLog) record(req *http.Request) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, ajCall{
		At:     time.Since(l.start),
		Method: req.Method,
		Path:   req.URL.EscapedPath(),
		Query:  req.URL.RawQuery,
		Header: req.Header.Clone(),
		Body:   body,
	})
}

func (l *ajLog) Calls() []ajCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]ajCall(nil), l.calls...)
}

// Times returns the time of each request.
func (l *ajLog) Times() []time.Duration {
	var ts []time.Duration
	for _, c := range l.Calls() {
		ts = append(ts, c.At)
	}
	return ts
}

// ajServe answers method on path (escaped, as on the wire) with replies in
// turn, repeating the last one, and records every request in log. Any other
// request fails the test: a wrong path would otherwise look like a network
// error, which the poller silently survives.
func ajServe(t *testing.T, mt *httpmock.MockTransport, log *ajLog, method, path string, replies ...httpmock.Responder) {
	t.Helper()
	var mu sync.Mutex
	next := 0
	mt.RegisterResponder(method, testBaseURL+path, func(req *http.Request) (*http.Response, error) {
		log.record(req)
		mu.Lock()
		r := replies[min(next, len(replies)-1)]
		next++
		mu.Unlock()
		return r(req)
	})
	mt.RegisterNoResponder(func(req *http.Request) (*http.Response, error) {
		log.record(req)
		t.Errorf("unexpected request %s %s", req.Method, req.URL.EscapedPath())
		// A 404 is retried by nobody, so the test ends quickly.
		return ajReply(http.StatusNotFound, `{"error":"unexpected request"}`)(req)
	})
}

// ajReply answers with status and body, as JSON unless header (name, value
// pairs) says otherwise.
func ajReply(status int, body string, header ...string) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		resp := httpmock.NewStringResponse(status, body)
		resp.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(header); i += 2 {
			resp.Header.Set(header[i], header[i+1])
		}
		resp.Request = req
		return resp, nil
	}
}

func ajFixtureReply(t *testing.T, status int, name string) httpmock.Responder {
	return ajReply(status, string(fixture(t, name)))
}

// ajFail is a transport failure: no response at all.
func ajFail(err error) httpmock.Responder {
	return func(*http.Request) (*http.Response, error) { return nil, err }
}

// ajUpdating reports whether -update was given. The flag is looked up rather
// than held in a variable because other test files of the package may define
// it too; see the init function in wait_test.go.
func ajUpdating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// ajGolden compares a request body with testdata/name as JSON values, or
// rewrites the file with -update.
func ajGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	if ajUpdating() {
		// Re-encoded without HTML escaping, so the file shows "<" and "&"
		// as the reader expects rather than as \u003c and \u0026.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(ajJSONValue(t, got)); err != nil {
			t.Fatalf("encoding golden file: %v", err)
		}
		if err := os.WriteFile(filepath.Join("testdata", name), buf.Bytes(), 0o644); err != nil {
			t.Fatalf("updating golden file: %v", err)
		}
	}
	if diff := cmp.Diff(ajJSONValue(t, fixture(t, name)), ajJSONValue(t, got)); diff != "" {
		t.Errorf("request body differs from testdata/%s (-want +got):\n%s\nsent: %s", name, diff, got)
	}
}

// ajWantHeaders checks the headers every agent request carries.
func ajWantHeaders(t *testing.T, c ajCall, withBody bool) {
	t.Helper()
	want := map[string]string{
		"Authorization":   "Bearer " + testKey,
		"Accept":          "application/json",
		"Content-Type":    "",
		"Idempotency-Key": "",
	}
	if withBody {
		want["Content-Type"] = "application/json"
	}
	for name, v := range want {
		got := c.Header.Get(name)
		switch {
		case got == v:
		case name == "Authorization":
			// Never print the key, even in a failing test's log.
			t.Errorf("%s %s: Authorization is not \"Bearer \" + testKey (len %d, want len %d)", c.Method, c.Path, len(got), len(v))
		default:
			t.Errorf("%s %s: header %s = %q, want %q", c.Method, c.Path, name, got, v)
		}
	}
}

func ajAPIError(t *testing.T, err error) *APIError {
	t.Helper()
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("error %v (%T) is not an *APIError", err, err)
	}
	return apiErr
}

func TestAgentCreatePostsPromptAndDecodesCreatedJob(t *testing.T) {
	// In a bubble: a wrongly retried request would sleep.
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		log := newAJLog()
		ajServe(t, mt, log, http.MethodPost, "/v2/agent/proj/job", ajFixtureReply(t, http.StatusCreated, "job_active.json"))

		job, err := c.AgentJobs.Create(t.Context(), "", CreateJobParams{Prompt: ajCreatePrompt})
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		want := Job{ID: ajJobID, Status: JobStatusActive, Source: JobSource{Repository: "acme/docs", Ref: "main"},
			Model: "claude-sonnet-4-5", CreatedAt: ajCreated}
		if diff := cmp.Diff(want, *job); diff != "" {
			t.Errorf("job mismatch (-want +got):\n%s", diff)
		}
		calls := log.Calls()
		if len(calls) != 1 {
			t.Fatalf("got %d requests, want 1", len(calls))
		}
		if calls[0].Method != http.MethodPost || calls[0].Path != "/v2/agent/proj/job" || calls[0].Query != "" {
			t.Errorf("request = %s %s?%s, want POST /v2/agent/proj/job", calls[0].Method, calls[0].Path, calls[0].Query)
		}
		ajWantHeaders(t, calls[0], true)
		ajGolden(t, "create_job_request.golden.json", calls[0].Body)
	})
}

func TestAgentCreateUsesExplicitProjectOverClientDefault(t *testing.T) {
	// In a bubble: a wrongly retried request would sleep.
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		log := newAJLog()
		ajServe(t, mt, log, http.MethodPost, "/v2/agent/other/job", ajFixtureReply(t, http.StatusCreated, "job_active.json"))

		if _, err := c.AgentJobs.Create(t.Context(), "other", CreateJobParams{Prompt: "p"}); err != nil {
			t.Fatalf("Create: %v", err)
		}
		if calls := log.Calls(); len(calls) != 1 || calls[0].Path != "/v2/agent/other/job" {
			t.Errorf("requests = %+v, want one to /v2/agent/other/job", calls)
		}
	})
}

func TestAgentCreateEscapesProjectID(t *testing.T) {
	// In a bubble: a wrongly retried request would sleep.
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		log := newAJLog()
		ajServe(t, mt, log, http.MethodPost, "/v2/agent/a%2Fb%20c/job", ajFixtureReply(t, http.StatusCreated, "job_active.json"))

		if _, err := c.AgentJobs.Create(t.Context(), "a/b c", CreateJobParams{Prompt: "p"}); err != nil {
			t.Fatalf("Create: %v", err)
		}
		// An unescaped "/" would address /v2/agent/a/b c/job, another route.
		if calls := log.Calls(); len(calls) != 1 || calls[0].Path != "/v2/agent/a%2Fb%20c/job" {
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
				log := newAJLog()
				path := "/v2/agent/proj/job/" + tt.escaped
				ajServe(t, mt, log, http.MethodGet, path, ajFixtureReply(t, http.StatusOK, "job_active.json"))

				job, err := c.AgentJobs.Get(t.Context(), "", tt.jobID)
				if err != nil {
					t.Fatalf("Get: %v", err)
				}
				if job.ID != ajJobID {
					t.Errorf("job ID = %q, want %q", job.ID, ajJobID)
				}
				calls := log.Calls()
				if len(calls) != 1 || calls[0].Method != http.MethodGet || calls[0].Path != path || calls[0].Query != "" {
					t.Fatalf("requests = %+v, want one GET %s without query", calls, path)
				}
				ajWantHeaders(t, calls[0], false)
			})
		})
	}
}

func TestAgentGetNotFound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		log := newAJLog()
		ajServe(t, mt, log, http.MethodGet, "/v2/agent/proj/job/j1", ajReply(http.StatusNotFound, `{"error":"Job not found"}`))

		job, err := c.AgentJobs.Get(t.Context(), "", "j1")
		if job != nil {
			t.Errorf("job = %+v, want nil", job)
		}
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
		apiErr := ajAPIError(t, err)
		if apiErr.StatusCode != http.StatusNotFound || apiErr.Message != "Job not found" ||
			apiErr.Method != http.MethodGet || apiErr.Path != "/v2/agent/proj/job/j1" {
			t.Errorf("APIError = %+v", apiErr)
		}
		if n := len(log.Calls()); n != 1 {
			t.Errorf("got %d requests, want 1: a 404 does not heal", n)
		}
	})
}

func TestAgentGetUnauthorized(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		log := newAJLog()
		ajServe(t, mt, log, http.MethodGet, "/v2/agent/proj/job/j1", ajReply(http.StatusUnauthorized, `{"error":"Invalid API key"}`))

		_, err := c.AgentJobs.Get(t.Context(), "", "j1")
		if !errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrForbidden) {
			t.Fatalf("err = %v, want ErrUnauthorized only", err)
		}
		if ajAPIError(t, err).Message != "Invalid API key" {
			t.Errorf("Message = %q", ajAPIError(t, err).Message)
		}
		if strings.Contains(err.Error(), testKey) {
			t.Error("error text contains the API key")
		}
		if n := len(log.Calls()); n != 1 {
			t.Errorf("got %d requests, want 1", n)
		}
	})
}

func TestAgentSendMessagePostsPromptAndReturnsJob(t *testing.T) {
	// In a bubble: a wrongly retried request would sleep.
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		log := newAJLog()
		path := "/v2/agent/proj/job/" + ajJobID + "/message"
		ajServe(t, mt, log, http.MethodPost, path, ajFixtureReply(t, http.StatusOK, "job_active.json"))

		job, err := c.AgentJobs.SendMessage(t.Context(), "", ajJobID, SendMessageParams{Prompt: ajMessagePrompt})
		if err != nil {
			t.Fatalf("SendMessage: %v", err)
		}
		if job.ID != ajJobID || job.Status != JobStatusActive {
			t.Errorf("job = %+v, want %s active", job, ajJobID)
		}
		calls := log.Calls()
		if len(calls) != 1 || calls[0].Method != http.MethodPost || calls[0].Path != path {
			t.Fatalf("requests = %+v, want one POST %s", calls, path)
		}
		ajWantHeaders(t, calls[0], true)
		ajGolden(t, "send_message_request.golden.json", calls[0].Body)
	})
}

func TestAgentSendMessageBadRequestIsNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		log := newAJLog()
		ajServe(t, mt, log, http.MethodPost, "/v2/agent/proj/job/j1/message",
			ajReply(http.StatusBadRequest, `{"error":"Job is archived"}`))

		job, err := c.AgentJobs.SendMessage(t.Context(), "", "j1", SendMessageParams{Prompt: "more"})
		if job != nil || !errors.Is(err, ErrBadRequest) {
			t.Fatalf("SendMessage = %+v, %v; want nil, ErrBadRequest", job, err)
		}
		if msg := ajAPIError(t, err).Message; msg != "Job is archived" {
			t.Errorf("Message = %q", msg)
		}
		if n := len(log.Calls()); n != 1 {
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
		{"500", ajReply(http.StatusInternalServerError, `{"error":"Internal server error"}`),
			func(err error) bool { return errors.Is(err, ErrServer) }},
		{"connection reset", ajFail(syscall.ECONNRESET),
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
					log := newAJLog()
					ajServe(t, mt, log, http.MethodPost, w.path, f.reply, ajFixtureReply(t, http.StatusCreated, "job_active.json"))

					job, err := w.call(t.Context(), c)
					if job != nil || !f.check(err) {
						t.Errorf("%s = %+v, %v; want nil and the %s error", w.name, job, err, f.name)
					}
					if n := len(log.Calls()); n != 1 {
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
		{"429", ajReply(http.StatusTooManyRequests, `{"error":"Rate limit exceeded"}`), nil, "",
			[]time.Duration{0, 250 * time.Millisecond}},
		{"429 with Retry-After", ajReply(http.StatusTooManyRequests, `{"error":"Rate limit exceeded"}`, "Retry-After", "3"), nil, "",
			[]time.Duration{0, 3 * time.Second}},
		{"connection refused", ajFail(refused), nil, "",
			[]time.Duration{0, 250 * time.Millisecond}},
		{"500 with idempotency key", ajReply(http.StatusInternalServerError, `{"error":"Internal server error"}`),
			[]RequestOption{WithIdempotencyKey("create-7f3a")}, "create-7f3a",
			[]time.Duration{0, 250 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t)
				log := newAJLog()
				ajServe(t, mt, log, http.MethodPost, "/v2/agent/proj/job", tt.first, ajFixtureReply(t, http.StatusCreated, "job_active.json"))

				job, err := c.AgentJobs.Create(t.Context(), "", CreateJobParams{Prompt: ajCreatePrompt}, tt.opts...)
				if err != nil || job == nil || job.ID != ajJobID {
					t.Fatalf("Create = %+v, %v; want job %s", job, err, ajJobID)
				}
				if diff := cmp.Diff(tt.wantAt, log.Times()); diff != "" {
					t.Errorf("request times (-want +got):\n%s", diff)
				}
				for i, call := range log.Calls() {
					if !bytes.Equal(call.Body, log.Calls()[0].Body) {
						t.Errorf("attempt %d body %s differs from the first %s", i+1, call.Body, log.Calls()[0].Body)
					}
					if got := call.Header.Get("Idempotency-Key"); got != tt.idemKey {
						t.Errorf("attempt %d Idempotency-Key = %q, want %q", i+1, got, tt.idemKey)
					}
				}
			})
		})
	}
}

// ajValidationCase is an operation called with one bad argument.
type ajValidationCase struct {
	name  string
	param string
	call  func(context.Context, *AgentJobsService) error
}

func ajErrOnly[T any](_ T, err error) error { return err }

func TestAgentRejectsInvalidArgumentsBeforeAnyRequest(t *testing.T) {
	ok := CreateJobParams{Prompt: "p"}
	tests := []ajValidationCase{
		{"Create empty prompt", "prompt", func(ctx context.Context, s *AgentJobsService) error {
			return ajErrOnly(s.Create(ctx, "", CreateJobParams{}))
		}},
		{"Create white-space prompt", "prompt", func(ctx context.Context, s *AgentJobsService) error {
			return ajErrOnly(s.Create(ctx, "", CreateJobParams{Prompt: " \t\n\u00a0"}))
		}},
		{"Create invalid UTF-8 prompt", "prompt", func(ctx context.Context, s *AgentJobsService) error {
			return ajErrOnly(s.Create(ctx, "", CreateJobParams{Prompt: "fix the \xff\xfe page"}))
		}},
		{"Create project .", "projectID", func(ctx context.Context, s *AgentJobsService) error {
			return ajErrOnly(s.Create(ctx, ".", ok))
		}},
		{"Create project ..", "projectID", func(ctx context.Context, s *AgentJobsService) error {
			return ajErrOnly(s.Create(ctx, "..", ok))
		}},
		{"Create project with space", "projectID", func(ctx context.Context, s *AgentJobsService) error {
			return ajErrOnly(s.Create(ctx, " proj", ok))
		}},
		{"Get empty job", "jobID", func(ctx context.Context, s *AgentJobsService) error {
			return ajErrOnly(s.Get(ctx, "", ""))
		}},
		{"Get job .", "jobID", func(ctx context.Context, s *AgentJobsService) error {
			return ajErrOnly(s.Get(ctx, "", "."))
		}},
		{"Get job ..", "jobID", func(ctx context.Context, s *AgentJobsService) error {
			return ajErrOnly(s.Get(ctx, "", ".."))
		}},
		{"Get job with leading space", "jobID", func(ctx context.Context, s *AgentJobsService) error {
			return ajErrOnly(s.Get(ctx, "", " x"))
		}},
		{"Get project ..", "projectID", func(ctx context.Context, s *AgentJobsService) error {
			return ajErrOnly(s.Get(ctx, "..", "j1"))
		}},
		{"SendMessage empty prompt", "prompt", func(ctx context.Context, s *AgentJobsService) error {
			return ajErrOnly(s.SendMessage(ctx, "", "j1", SendMessageParams{Prompt: "  "}))
		}},
		{"SendMessage invalid UTF-8 prompt", "prompt", func(ctx context.Context, s *AgentJobsService) error {
			return ajErrOnly(s.SendMessage(ctx, "", "j1", SendMessageParams{Prompt: "\xc3"}))
		}},
		{"SendMessage job ..", "jobID", func(ctx context.Context, s *AgentJobsService) error {
			return ajErrOnly(s.SendMessage(ctx, "", "..", SendMessageParams{Prompt: "p"}))
		}},
		{"Wait empty job", "jobID", func(ctx context.Context, s *AgentJobsService) error {
			return ajErrOnly(s.Wait(ctx, "", "", WaitParams{}))
		}},
		{"Wait project .", "projectID", func(ctx context.Context, s *AgentJobsService) error {
			return ajErrOnly(s.Wait(ctx, ".", "j1", WaitParams{}))
		}},
		{"CreateAndWait empty prompt", "prompt", func(ctx context.Context, s *AgentJobsService) error {
			return ajErrOnly(s.CreateAndWait(ctx, "", CreateJobParams{}, WaitParams{}))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Inside a bubble because Wait would poll if it wrongly
			// accepted its arguments.
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t)
				ajCheckRejected(t, c, mt, tt)
			})
		})
	}
}

func TestAgentRejectsEmptyProjectWithoutClientDefault(t *testing.T) {
	tests := []ajValidationCase{
		{"Create", "projectID", func(ctx context.Context, s *AgentJobsService) error {
			return ajErrOnly(s.Create(ctx, "", CreateJobParams{Prompt: "p"}))
		}},
		{"Get", "projectID", func(ctx context.Context, s *AgentJobsService) error {
			return ajErrOnly(s.Get(ctx, "", "j1"))
		}},
		{"SendMessage", "projectID", func(ctx context.Context, s *AgentJobsService) error {
			return ajErrOnly(s.SendMessage(ctx, "", "j1", SendMessageParams{Prompt: "p"}))
		}},
		{"Wait", "projectID", func(ctx context.Context, s *AgentJobsService) error {
			return ajErrOnly(s.Wait(ctx, "", "j1", WaitParams{}))
		}},
		{"CreateAndWait", "projectID", func(ctx context.Context, s *AgentJobsService) error {
			return ajErrOnly(s.CreateAndWait(ctx, "", CreateJobParams{Prompt: "p"}, WaitParams{}))
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
				ajCheckRejected(t, c, mt, tt)
			})
		})
	}
}

// ajCheckRejected runs tt.call and checks that it failed validation on
// tt.param without sending anything. Should a request go out anyway, it is
// answered with a completed job so that nothing waits.
func ajCheckRejected(t *testing.T, c *Client, mt *httpmock.MockTransport, tt ajValidationCase) {
	t.Helper()
	var sent atomic.Int32
	mt.RegisterNoResponder(func(req *http.Request) (*http.Response, error) {
		sent.Add(1)
		return ajReply(http.StatusOK, string(fixture(t, "job_completed.json")))(req)
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

// ajStatuses is an OnUpdate that records the statuses it sees.
type ajStatuses struct {
	mu   sync.Mutex
	seen []JobStatus
	last *Job
}

func (s *ajStatuses) OnUpdate(j *Job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, j.Status)
	s.last = j
}

func (s *ajStatuses) Seen() []JobStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]JobStatus(nil), s.seen...)
}
