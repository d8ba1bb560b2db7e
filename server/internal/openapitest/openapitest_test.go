package openapitest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/docsapi/docsapi-go/server/api"
)

// Bodies shaped as the server sends them: every job field present, nulls
// included.
const (
	jobActive    = `{"id":"aj_1","status":"active","source":{"repository":"acme/docs","ref":null},"model":"claude-sonnet-4-5","prLink":null,"createdAt":"2026-08-14T09:21:07.482Z","archivedAt":null}`
	jobCompleted = `{"id":"aj_1","status":"completed","source":{"repository":"acme/docs","ref":"main"},"model":"claude-sonnet-4-5","prLink":"https://github.com/acme/docs/pull/118","createdAt":"2026-08-14T09:21:07Z","archivedAt":"2026-08-20T17:45:00+02:00"}`
	viewsPage    = `{"totals":{"human":24,"ai":18,"total":42},"views":[{"path":"/quickstart","human":12,"ai":8,"total":20},{"path":"/api-reference/auth","human":12,"ai":0,"total":12}],"hasMore":true}`
	viewsEmpty   = `{"totals":{"human":0,"ai":0,"total":0},"views":[],"hasMore":false}`
	agentError   = `{"error":"something is wrong"}`
)

// answer is a handler that writes one fixed response, with the content type
// and request id the server always sets unless the case overrides them (an
// empty value removes a header).
type answer struct {
	status int
	header map[string]string
	body   string
}

func (a answer) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-Id", "req-1")
	for k, v := range a.header {
		if v == "" {
			w.Header().Del(k)
		} else {
			w.Header().Set(k, v)
		}
	}
	w.WriteHeader(a.status)
	io.WriteString(w, a.body)
}

// recordingTB stands in for the test given to Check, so a test can see
// whether Check failed it without failing itself.
type recordingTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recordingTB) failures() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errors...)
}

type exchange struct {
	name   string
	method string
	target string
	answer answer
}

// serve runs the case's handler for its request and returns what it wrote.
func (c exchange) serve() (*http.Request, *httptest.ResponseRecorder) {
	var body io.Reader
	if c.method == http.MethodPost {
		body = strings.NewReader(`{"prompt":"document the release"}`)
	}
	req := httptest.NewRequest(c.method, c.target, body)
	rec := httptest.NewRecorder()
	c.answer.ServeHTTP(rec, req)
	return req, rec
}

const (
	createPath  = "/v2/agent/proj_1/job"
	jobPath     = "/v2/agent/proj_1/job/aj_1"
	messagePath = "/v2/agent/proj_1/job/aj_1/message"
	viewsPath   = "/v1/analytics/proj_1/views"
)

// acceptedExchanges lists a correct response for every status of every
// operation.
func acceptedExchanges() []exchange {
	cases := []exchange{
		{"create 201 bare job with nulls", "POST", createPath, answer{status: 201, body: jobActive}},
		{"create 201 with charset", "POST", createPath, answer{status: 201, body: jobActive, header: map[string]string{"Content-Type": "application/json; charset=utf-8"}}},
		{"get 200 completed job", "GET", jobPath, answer{status: 200, body: jobCompleted}},
		{"get 200 job with an extra field", "GET", jobPath, answer{status: 200, body: strings.Replace(jobActive, `{"id"`, `{"title":"x","id"`, 1)}},
		{"message 200 job", "POST", messagePath, answer{status: 200, body: jobActive}},
		{"views 200 page", "GET", viewsPath + "?dateFrom=2026-08-01&dateTo=2026-09-01&limit=2&offset=0", answer{status: 200, body: viewsPage}},
		{"views 200 empty page", "GET", viewsPath, answer{status: 200, body: viewsEmpty}},
		{"views 200 counts written as floats", "GET", viewsPath, answer{status: 200, body: `{"totals":{"human":2.4e1,"ai":18.0,"total":42},"views":[],"hasMore":false}`}},
		{"views 400 with details", "GET", viewsPath + "?limit=0", answer{status: 400, body: `{"error":"Invalid query","details":[{"message":"limit must be between 1 and 250"}]}`}},
		{"health 200", "GET", "/healthz", answer{status: 200, body: `{"status":"ok"}`}},
		{"health 503", "GET", "/healthz", answer{status: 503, body: `{"status":"unavailable","error":"storage does not answer"}`}},
		{"health HEAD", "HEAD", "/healthz", answer{status: 200}},
		{"openapi.yaml", "GET", "/openapi.yaml", answer{status: 200, body: string(api.OpenAPI()), header: map[string]string{"Content-Type": "application/yaml"}}},
	}
	errorStatuses := []struct {
		method, path string
		statuses     []int
	}{
		{"POST", createPath, []int{400, 401, 403, 404, 409, 413, 429, 500}},
		{"GET", jobPath, []int{401, 403, 404, 429, 500}},
		{"POST", messagePath, []int{400, 401, 403, 404, 409, 413, 429, 500}},
		{"GET", viewsPath, []int{400, 401, 403, 404, 429, 500}},
	}
	for _, op := range errorStatuses {
		for _, status := range op.statuses {
			a := answer{status: status, body: agentError}
			if status == http.StatusTooManyRequests {
				a.header = map[string]string{"Retry-After": "30"}
			}
			cases = append(cases, exchange{fmt.Sprintf("%s %s %d", op.method, op.path, status), op.method, op.path, a})
		}
	}
	return cases
}

func TestAcceptsDocumentedResponses(t *testing.T) {
	v := New(t)
	for _, c := range acceptedExchanges() {
		t.Run(c.name, func(t *testing.T) {
			req, rec := c.serve()
			if err := v.Validate(req, rec.Code, rec.Header(), rec.Body.Bytes()); err != nil {
				t.Errorf("rejected a documented response: %v", err)
			}
			tb := &recordingTB{TB: t}
			v.CheckRecorder(tb, req, rec)
			if f := tb.failures(); len(f) != 0 {
				t.Errorf("CheckRecorder failed the test: %q", f)
			}
		})
	}
}

func TestRejectsUndocumentedResponses(t *testing.T) {
	v := New(t)
	jobMissing := func(field string) string {
		return strings.Replace(jobActive, `"`+field+`":null,`, "", 1)
	}
	cases := []struct {
		exchange
		want string // a part of the error that says why
	}{
		{exchange{"job wrapped in an envelope", "GET", jobPath, answer{status: 200, body: `{"job":` + jobActive + `}`}}, `property "id" is missing`},
		{exchange{"job without prLink", "GET", jobPath, answer{status: 200, body: jobMissing("prLink")}}, `property "prLink" is missing`},
		{exchange{"job without source.ref", "GET", jobPath, answer{status: 200, body: strings.Replace(jobActive, `,"ref":null`, "", 1)}}, `property "ref" is missing`},
		{exchange{"job with an unknown status", "GET", jobPath, answer{status: 200, body: strings.Replace(jobActive, `"active"`, `"queued"`, 1)}}, "allowed values"},
		{exchange{"job with a timestamp that is not RFC 3339", "GET", jobPath, answer{status: 200, body: strings.Replace(jobActive, "2026-08-14T09:21:07.482Z", "2026-08-14 09:21:07", 1)}}, `"date-time"`},
		{exchange{"job with a prLink that is not a URL", "GET", jobPath, answer{status: 200, body: strings.Replace(jobActive, `"prLink":null`, `"prLink":"pull 118"`, 1)}}, `"uri"`},
		{exchange{"job with an empty model", "GET", jobPath, answer{status: 200, body: strings.Replace(jobActive, `"claude-sonnet-4-5"`, `""`, 1)}}, "/model"},
		{exchange{"job with a numeric id", "GET", jobPath, answer{status: 200, body: strings.Replace(jobActive, `"aj_1"`, `1`, 1)}}, "/id"},
		{exchange{"create answering 200", "POST", createPath, answer{status: 200, body: jobActive}}, "status is not supported"},
		{exchange{"get answering 201", "GET", jobPath, answer{status: 201, body: jobActive}}, "status is not supported"},
		{exchange{"get answering 409", "GET", jobPath, answer{status: 409, body: agentError}}, "status is not supported"},
		{exchange{"status 418", "GET", jobPath, answer{status: 418, body: agentError}}, "status is not supported"},
		{exchange{"views page without hasMore", "GET", viewsPath, answer{status: 200, body: strings.Replace(viewsPage, `,"hasMore":true`, "", 1)}}, `property "hasMore" is missing`},
		{exchange{"views page with a count as a string", "GET", viewsPath, answer{status: 200, body: strings.Replace(viewsEmpty, `"ai":0`, `"ai":"0"`, 1)}}, "/totals/ai"},
		{exchange{"views row without total", "GET", viewsPath, answer{status: 200, body: strings.Replace(viewsPage, `,"total":12}`, "}", 1)}}, `property "total" is missing`},
		{exchange{"views page with a negative count", "GET", viewsPath, answer{status: 200, body: strings.Replace(viewsEmpty, `"human":0`, `"human":-1`, 1)}}, "/totals/human"},
		{exchange{"error body with message, not error", "GET", jobPath, answer{status: 404, body: `{"message":"x"}`}}, `property "error" is missing`},
		{exchange{"analytics details as strings", "GET", viewsPath, answer{status: 400, body: `{"error":"x","details":["limit"]}`}}, "/details/0"},
		{exchange{"error body that is not JSON", "GET", jobPath, answer{status: 500, body: "internal error"}}, "failed to decode"},
		{exchange{"job as text/plain", "GET", jobPath, answer{status: 200, body: jobActive, header: map[string]string{"Content-Type": "text/plain; charset=utf-8"}}}, "Content-Type"},
		{exchange{"job without a content type", "GET", jobPath, answer{status: 200, body: jobActive, header: map[string]string{"Content-Type": ""}}}, "Content-Type"},
		{exchange{"openapi.yaml as JSON content type", "GET", "/openapi.yaml", answer{status: 200, body: `{}`}}, "Content-Type"},
		{exchange{"without X-Request-Id", "GET", jobPath, answer{status: 200, body: jobActive, header: map[string]string{"X-Request-Id": ""}}}, `"X-Request-Id" missing`},
		{exchange{"X-Request-Id with a space", "GET", jobPath, answer{status: 200, body: jobActive, header: map[string]string{"X-Request-Id": "a b"}}}, `"X-Request-Id"`},
		{exchange{"429 without Retry-After", "POST", createPath, answer{status: 429, body: agentError}}, `"Retry-After" missing`},
		{exchange{"429 with Retry-After as a date", "GET", viewsPath, answer{status: 429, body: agentError, header: map[string]string{"Retry-After": "Wed, 21 Oct 2026 07:28:00 GMT"}}}, `"Retry-After"`},
		{exchange{"health 200 with another status", "GET", "/healthz", answer{status: 200, body: `{"status":"fine"}`}}, "/status"},
		{exchange{"health 503 without error", "GET", "/healthz", answer{status: 503, body: `{"status":"unavailable"}`}}, `property "error" is missing`},
		{exchange{"unknown path", "GET", "/v3/agent/proj_1/job/aj_1", answer{status: 200, body: jobActive}}, "not in the document"},
		{exchange{"unknown method", "DELETE", jobPath, answer{status: 200, body: jobActive}}, "method is not documented"},
		{exchange{"a prefix the validator was not told about", "GET", "/api" + jobPath, answer{status: 200, body: jobActive}}, "not in the document"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, rec := c.serve()
			err := v.Validate(req, rec.Code, rec.Header(), rec.Body.Bytes())
			if err == nil {
				t.Fatal("accepted a response the document does not describe")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v\nwant it to mention %q", err, c.want)
			}
			tb := &recordingTB{TB: t}
			v.CheckRecorder(tb, req, rec)
			if f := tb.failures(); len(f) != 1 || !strings.Contains(f[0], c.want) {
				t.Errorf("CheckRecorder failures = %q, want one that mentions %q", f, c.want)
			}
		})
	}
}

func TestWithPrefix(t *testing.T) {
	v := New(t, WithPrefix("/api/"))
	ok := answer{status: 200, body: jobActive}
	for _, target := range []string{"/api" + jobPath, "/api/v2/agent/proj%2F1/job/aj_1"} {
		req := httptest.NewRequest("GET", target, nil)
		if err := v.Validate(req, 200, http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"r"}}, []byte(jobActive)); err != nil {
			t.Errorf("%s: %v", target, err)
		}
	}
	for _, target := range []string{jobPath, "/apiary" + jobPath, "/api"} {
		req, rec := exchange{target, "GET", target, ok}.serve()
		if err := v.Validate(req, rec.Code, rec.Header(), rec.Body.Bytes()); err == nil {
			t.Errorf("%s: accepted a path outside the document under the prefix", target)
		}
	}

	if _, err := newValidator(WithPrefix("api")); err == nil || !strings.Contains(err.Error(), "must start with a slash") {
		t.Errorf("a relative prefix: err = %v, want one that says it must start with a slash", err)
	}
}

// TestHandler runs a server through the wrapper, concurrently, as an
// end-to-end test would.
func TestHandler(t *testing.T) {
	v := New(t, WithPrefix("/api"))
	mux := http.NewServeMux()
	mux.Handle("GET /v2/agent/{projectId}/job/{id}", answer{status: 200, body: jobActive})
	mux.Handle("GET /v1/analytics/{projectId}/views", answer{status: 200, body: `{"totals":{"human":1,"ai":0,"total":1},"views":[]}`})
	tb := &recordingTB{TB: t}
	// The server is mounted under /api, as a host application would do it.
	srv := httptest.NewServer(v.Handler(tb, http.StripPrefix("/api", mux)))
	defer srv.Close()

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			resp, err := http.Get(srv.URL + "/api" + jobPath)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			if body, _ := io.ReadAll(resp.Body); string(body) != jobActive || resp.StatusCode != 200 {
				t.Errorf("the wrapper changed the response: %d %s", resp.StatusCode, body)
			}
		})
	}
	wg.Wait()
	if f := tb.failures(); len(f) != 0 {
		t.Fatalf("a documented response failed the check: %q", f)
	}

	resp, err := http.Get(srv.URL + "/api" + viewsPath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"views":[]`) {
		t.Errorf("the client did not get the body unchanged: %s", body)
	}
	if f := tb.failures(); len(f) != 1 || !strings.Contains(f[0], `property "hasMore" is missing`) {
		t.Errorf("a views page without hasMore: failures = %q", f)
	}
}

func TestHandlerImplicitStatus(t *testing.T) {
	v := New(t)
	// A handler that never calls WriteHeader answers 200.
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "r")
		io.WriteString(w, `{"status":"ok"}`)
	})
	tb := &recordingTB{TB: t}
	rec := httptest.NewRecorder()
	v.Handler(tb, h).ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if f := tb.failures(); len(f) != 0 {
		t.Errorf("failures = %q", f)
	}
	if rec.Code != 200 || rec.Body.String() != `{"status":"ok"}` {
		t.Errorf("the wrapper changed the response: %d %q", rec.Code, rec.Body)
	}
}

func TestTransport(t *testing.T) {
	v := New(t)
	mux := http.NewServeMux()
	mux.Handle("POST /v2/agent/{projectId}/job", answer{status: 201, body: jobActive})
	mux.Handle("GET /v2/agent/{projectId}/job/{id}", answer{status: 200, body: `{"job":` + jobActive + `}`})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	tb := &recordingTB{TB: t}
	client := &http.Client{Transport: v.Transport(tb, nil)}

	resp, err := client.Post(srv.URL+createPath, "application/json", strings.NewReader(`{"prompt":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != jobActive {
		t.Errorf("the caller got body %q after the check, want the job", body)
	}
	if f := tb.failures(); len(f) != 0 {
		t.Fatalf("a documented response failed the check: %q", f)
	}

	resp, err = client.Get(srv.URL + jobPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if f := tb.failures(); len(f) != 1 || !strings.Contains(f[0], `property "id" is missing`) {
		t.Errorf("an enveloped job: failures = %q", f)
	}
}

func TestValidateWithoutRequest(t *testing.T) {
	v := New(t)
	if err := v.Validate(nil, 200, nil, nil); err == nil {
		t.Error("Validate accepted a response without its request")
	}
}

// TestHandlerChecksTheSentHeaders: a header set after WriteHeader never
// reaches the client, so the check must not count it.
func TestHandlerChecksTheSentHeaders(t *testing.T) {
	v := New(t)
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Header().Set("X-Request-Id", "too-late")
		io.WriteString(w, `{"status":"ok"}`)
	})
	tb := &recordingTB{TB: t}
	srv := httptest.NewServer(v.Handler(tb, h))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("X-Request-Id") != "" {
		t.Fatal("net/http sent a header set after WriteHeader; this test's premise is wrong")
	}
	if f := tb.failures(); len(f) != 1 || !strings.Contains(f[0], `"X-Request-Id" missing`) {
		t.Errorf("failures = %q, want one about the missing X-Request-Id", f)
	}
}
