package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server/internal/wire"
)

const testKey = "mint_testkey0123456789"

// fakeAPI serves the agent endpoints from a script: create answers the
// first status, and each retrieval the next one (the last repeats).
type fakeAPI struct {
	t        *testing.T
	statuses []docsapi.JobStatus
	prLink   string
	status   int // when set, every request answers this error status

	mu       sync.Mutex
	gets     int
	requests []*http.Request
	bodies   []string
	onGet    func() // called on each retrieval
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.requests = append(f.requests, r)
	f.bodies = append(f.bodies, string(body))
	f.mu.Unlock()
	if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":"invalid API key"}`)
		return
	}
	if f.status != 0 {
		w.WriteHeader(f.status)
		io.WriteString(w, `{"error":"scripted failure"}`)
		return
	}
	// The job in the API's shape, as a server sends it.
	job := wire.Job{ID: "job_1", Model: "m", CreatedAt: wire.Time(time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)),
		Source: wire.JobSource{Repository: "https://github.com/acme/handbook.git", Ref: wire.NullString("main")}}
	var status docsapi.JobStatus
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v2/agent/handbook/job":
		status = f.statuses[0]
		w.WriteHeader(http.StatusCreated)
	case r.Method == http.MethodPost && r.URL.Path == "/v2/agent/handbook/job/job_1/message":
		status = f.statuses[0]
	case r.Method == http.MethodGet && r.URL.Path == "/v2/agent/handbook/job/job_1":
		f.mu.Lock()
		f.gets++
		status = f.statuses[min(f.gets, len(f.statuses)-1)]
		onGet := f.onGet
		f.mu.Unlock()
		if onGet != nil {
			onGet()
		}
	default:
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":"no such job"}`)
		return
	}
	job.Status = string(status)
	if status == docsapi.JobStatusCompleted {
		job.PRLink = wire.NullString(f.prLink)
	}
	json.NewEncoder(w).Encode(job)
}

// serve starts the fake and returns the environment of a client of it.
func (f *fakeAPI) serve() map[string]string {
	ts := httptest.NewServer(f)
	f.t.Cleanup(ts.Close)
	return map[string]string{"DOCSAPI_KEY": testKey, "DOCSAPI_BASE_URL": ts.URL, "DOCSAPI_PROJECT": "handbook"}
}

func decodeJob(t *testing.T, out string) docsapi.Job {
	t.Helper()
	var job docsapi.Job
	if err := json.Unmarshal([]byte(out), &job); err != nil {
		t.Fatalf("stdout is not a job: %v\n%s", err, out)
	}
	return job
}

func TestMissingKey(t *testing.T) {
	for _, args := range [][]string{
		{"jobs", "get", "job_1"},
		{"jobs", "create", "--prompt", "x"},
		{"views", "export"},
	} {
		r := runCLI(t, map[string]string{"DOCSAPI_PROJECT": "p"}, "", args...)
		r.expect(t, exitFailure, "no API key", "set DOCSAPI_KEY to an admin API key", "--key-file")
	}
}

func TestMissingProject(t *testing.T) {
	r := runCLI(t, map[string]string{"DOCSAPI_KEY": testKey}, "", "jobs", "get", "job_1")
	r.expect(t, exitUsage, "no project: pass --project ID or set DOCSAPI_PROJECT")
}

func TestBadBaseURL(t *testing.T) {
	env := map[string]string{"DOCSAPI_KEY": testKey, "DOCSAPI_PROJECT": "p", "DOCSAPI_BASE_URL": "ftp://example.com"}
	runCLI(t, env, "", "jobs", "get", "j").expect(t, exitUsage, "the base URL (from DOCSAPI_BASE_URL) must start with http")
	runCLI(t, env, "", "jobs", "get", "j", "--base-url", "https://u:p@example.com").expect(t, exitUsage, "(from --base-url)", "credentials")
}

func TestKeyFile(t *testing.T) {
	f := &fakeAPI{t: t, statuses: []docsapi.JobStatus{docsapi.JobStatusActive}}
	env := f.serve()
	delete(env, "DOCSAPI_KEY")
	keyFile := writeFile(t, filepath.Join(t.TempDir(), "key"), testKey+"\n")
	r := runCLI(t, env, "", "jobs", "get", "job_1", "--key-file", keyFile)
	r.expect(t, exitOK)
	if job := decodeJob(t, r.stdout); job.ID != "job_1" || job.Status != docsapi.JobStatusActive {
		t.Fatalf("job: %+v", job)
	}
	// --key-file wins over DOCSAPI_KEY.
	r = runCLI(t, withEnv(env, "DOCSAPI_KEY", "mint_wrong"), "", "jobs", "get", "job_1", "--key-file", keyFile)
	r.expect(t, exitOK)
	empty := writeFile(t, filepath.Join(t.TempDir(), "empty"), "\n")
	runCLI(t, env, "", "jobs", "get", "job_1", "--key-file", empty).expect(t, exitFailure, "is empty")
}

func TestJobsCreate(t *testing.T) {
	f := &fakeAPI{t: t, statuses: []docsapi.JobStatus{docsapi.JobStatusActive}}
	env := f.serve()
	promptFile := writeFile(t, filepath.Join(t.TempDir(), "prompt.md"), "\n  From a file \n")
	for _, tc := range []struct {
		args  []string
		stdin string
		want  string
	}{
		{[]string{"--prompt", "Document --verbose"}, "", "Document --verbose"},
		{[]string{"--prompt", "-"}, "From stdin\n", "From stdin"},
		{[]string{"--prompt-file", "-"}, "Also stdin", "Also stdin"},
		{[]string{"--prompt-file", promptFile}, "", "From a file"},
	} {
		r := runCLI(t, env, tc.stdin, append([]string{"jobs", "create"}, tc.args...)...)
		r.expect(t, exitOK)
		if job := decodeJob(t, r.stdout); job.Status != docsapi.JobStatusActive || job.ID != "job_1" {
			t.Errorf("%q: job %+v", tc.args, job)
		}
		f.mu.Lock()
		body := f.bodies[len(f.bodies)-1]
		f.mu.Unlock()
		if want, _ := json.Marshal(docsapi.CreateJobParams{Prompt: tc.want}); body != string(want) {
			t.Errorf("%q: sent %s, want %s", tc.args, body, want)
		}
	}
	runCLI(t, env, " \n", "jobs", "create", "--prompt", "-").expect(t, exitUsage, "the prompt read is empty")
	runCLI(t, env, "", "jobs", "create", "--prompt-file", filepath.Join(t.TempDir(), "nope")).expect(t, exitUsage, "--prompt-file")

	r := runCLI(t, env, "", "jobs", "create", "--prompt", "x", "--idempotency-key", "release-42")
	r.expect(t, exitOK)
	f.mu.Lock()
	got := f.requests[len(f.requests)-1].Header.Get("Idempotency-Key")
	f.mu.Unlock()
	if got != "release-42" {
		t.Errorf("Idempotency-Key %q", got)
	}
}

func TestWaitOutcomes(t *testing.T) {
	fast := []string{"--poll-interval", "10ms"}
	active, completed, failed, archived := docsapi.JobStatusActive, docsapi.JobStatusCompleted, docsapi.JobStatusFailed, docsapi.JobStatusArchived
	for _, tc := range []struct {
		name     string
		statuses []docsapi.JobStatus
		args     []string
		code     int
		status   docsapi.JobStatus
		stderr   []string
	}{
		{"completed with a pull request", []docsapi.JobStatus{active, active, completed}, []string{"jobs", "create", "--prompt", "x", "--wait"},
			exitOK, completed, []string{"job job_1: active", "job job_1: completed, pull request https://github.com/acme/handbook/pull/7"}},
		{"completed by jobs wait", []docsapi.JobStatus{active, completed}, []string{"jobs", "wait", "job_1"}, exitOK, completed, []string{"completed"}},
		{"failed", []docsapi.JobStatus{active, failed}, []string{"jobs", "create", "--prompt", "x", "--wait"},
			exitJobFailed, failed, []string{"job job_1: failed", "job job_1 failed; the API does not say why", "'docsapi jobs failure --project handbook job_1'"}},
		{"failed, by jobs wait", []docsapi.JobStatus{active, failed}, []string{"jobs", "wait", "job_1"}, exitJobFailed, failed, nil},
		{"archived", []docsapi.JobStatus{active, archived}, []string{"jobs", "wait", "job_1"}, exitOK, archived, []string{"was archived"}},
		{"an unknown status keeps waiting", []docsapi.JobStatus{active, "reviewing", completed}, []string{"jobs", "wait", "job_1"},
			exitOK, completed, []string{"reviewing (a status this program does not know; still waiting)"}},
		{"timed out", []docsapi.JobStatus{active}, []string{"jobs", "create", "--prompt", "x", "--wait", "--timeout", "150ms"},
			exitWaitTimeout, active, []string{"stopped waiting after", "job job_1 is still active", "docsapi jobs wait job_1"}},
		{"message and wait", []docsapi.JobStatus{active, completed}, []string{"jobs", "message", "job_1", "--prompt", "more", "--wait"},
			exitOK, completed, []string{"job job_1: active", "job job_1: completed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeAPI{t: t, statuses: tc.statuses, prLink: "https://github.com/acme/handbook/pull/7"}
			r := runCLI(t, f.serve(), "", append(tc.args, fast...)...)
			r.expect(t, tc.code, tc.stderr...)
			// The final (or last seen) job is on stdout, whatever the outcome.
			if job := decodeJob(t, r.stdout); job.Status != tc.status {
				t.Errorf("printed status %q, want %q", job.Status, tc.status)
			}
		})
	}
}

func TestWaitInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f := &fakeAPI{t: t, statuses: []docsapi.JobStatus{docsapi.JobStatusActive}, onGet: cancel}
	r := runCLIContext(ctx, t, f.serve(), "", "jobs", "wait", "job_1", "--poll-interval", "10ms")
	r.expect(t, exitInterrupted, "interrupted", "docsapi jobs wait job_1")
}

func TestAPIErrorsSayWhatToDo(t *testing.T) {
	for _, tc := range []struct {
		status int
		args   []string
		want   string
	}{
		{http.StatusForbidden, []string{"jobs", "create", "--prompt", "x"}, "must be bound to project handbook and have the write scope"},
		{http.StatusForbidden, []string{"jobs", "get", "job_1"}, "must be bound to project handbook and have the read (or write) scope"},
		{http.StatusForbidden, []string{"views", "export"}, "and have the read (or write) scope"},
		{http.StatusNotFound, []string{"jobs", "get", "job_1"}, "no such project or job"},
		{http.StatusConflict, []string{"jobs", "create", "--prompt", "x", "--idempotency-key", "k"}, "use a new key"},
		{http.StatusBadRequest, []string{"views", "export"}, "scripted failure"},
	} {
		f := &fakeAPI{t: t, statuses: []docsapi.JobStatus{docsapi.JobStatusActive}, status: tc.status}
		r := runCLI(t, f.serve(), "", tc.args...)
		r.expect(t, exitFailure, tc.want)
	}
	// A key the server does not know.
	f := &fakeAPI{t: t, statuses: []docsapi.JobStatus{docsapi.JobStatusActive}}
	r := runCLI(t, withEnv(f.serve(), "DOCSAPI_KEY", "mint_unknown"), "", "jobs", "get", "job_1")
	r.expect(t, exitFailure, "401", "the server refused the key from DOCSAPI_KEY", "set DOCSAPI_KEY to a valid admin API key")
	if strings.Contains(r.stderr, "mint_unknown") {
		t.Errorf("the key was printed:\n%s", r.stderr)
	}
}

func TestExplainNetworkErrors(t *testing.T) {
	c := &apiClient{baseURL: "http://127.0.0.1:9", keySource: "DOCSAPI_KEY", project: "p"}
	err := c.explain(&url.Error{Op: "Get", URL: "http://127.0.0.1:9/v1", Err: errors.New("connection refused")})
	var hint *hintError
	if !errors.As(err, &hint) || !strings.Contains(hint.hint, "cannot reach http://127.0.0.1:9") {
		t.Fatalf("explain: %v", err)
	}
	if err := c.explain(context.Canceled); !errors.Is(err, context.Canceled) {
		t.Fatalf("explain hid the cancellation: %v", err)
	}
}

func TestPlainHTTPWarning(t *testing.T) {
	for base, warn := range map[string]bool{
		"http://docs.example.com": true, "http://10.0.0.7:8080": true,
		"http://127.0.0.1:8080": false, "http://localhost:8080": false, "http://[::1]:8080": false,
		"https://docs.example.com": false,
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		var cf clientFlags
		cf.register(fs)
		if err := fs.Parse(nil); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{"DOCSAPI_KEY": testKey, "DOCSAPI_PROJECT": "p", "DOCSAPI_BASE_URL": base}
		var stderr strings.Builder
		if _, err := cf.client(&stdio{stderr: &stderr, getenv: func(k string) string { return env[k] }}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(stderr.String(), "unencrypted"); got != warn {
			t.Errorf("%s: warned %t, want %t (%q)", base, got, warn, stderr.String())
		}
	}
}

// An argument the SDK refuses is reported by the flag the user gave, not
// by the API's parameter name.
func TestRefusedArgumentsNameTheFlags(t *testing.T) {
	env := map[string]string{"DOCSAPI_KEY": "mint_unused", "DOCSAPI_PROJECT": "handbook", "DOCSAPI_BASE_URL": "http://127.0.0.1:9"}
	for _, args := range [][]string{
		{"views", "export", "--from", "2026-11-05", "--to", "2026-11-01"},
		{"views", "series", "--from", "2026-11-05", "--to", "2026-11-01"},
		{"jobs", "list", "--from", "2026-11-05", "--to", "2026-11-01"},
	} {
		r := runCLI(t, env, "", args...)
		r.expect(t, exitUsage, "invalid --from: 2026-11-05 is after --to 2026-11-01")
		if strings.Contains(r.stderr, "dateFrom") || strings.Contains(r.stderr, "dateTo") {
			t.Errorf("%v: the message names the API's parameters:\n%s", args, r.stderr)
		}
	}
}
