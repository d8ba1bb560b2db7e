package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
)

// The tests run the program against a double of the service's agent jobs
// (create and retrieve), which follows the contract (the API document,
// server/api/openapi.yaml): jobs start active and end completed, failed or
// archived while the client polls, keys carry scopes and projects, the
// hourly budget answers 429 with Retry-After, errors have the agent
// endpoints' body. The SDK module cannot import the self-hosted server.

const (
	writeKey = "mint_createAndWaitWrite"
	readKey  = "mint_createAndWaitRead" // may read, not create
)

// fast polls often, so that the tests take milliseconds; Timeout only
// bounds a broken test.
var fast = docsapi.WaitParams{MinInterval: 5 * time.Millisecond, MaxInterval: 20 * time.Millisecond, Timeout: time.Minute}

// outcome is how the double's agent ends a job: completed (with a pull
// request or none), failed, or archived while it ran.
type outcome struct {
	status string
	prLink string // "" sends null
}

// job is a job as the double keeps it.
type job struct {
	id, status, prLink string
	prompt             string
	created, archived  time.Time
	polls              int // reads of the job while it was active
}

// api is the double of the agent endpoints of project "handbook".
type api struct {
	// runPolls is how many reads of an active job its run lasts: the first
	// runPolls-1 reads find it active, the next its outcome. Reads, not
	// time, so that every run of a test sees the same job states.
	runPolls int
	// end decides how a job's run ends; nil means no agent runs, and jobs
	// stay active (as on a server without a job engine).
	end func(prompt string) outcome
	// budget is how many jobs the project may create in the hour (the
	// hosted service's budget is 100).
	budget int
	// foreign answers a project the key is not bound to: 403 as the
	// self-hosted server does, or 404 as the hosted service does.
	foreign int
	// onRead, if set, runs before a job is read.
	onRead func()
	// now is the double's clock, fixed: the budget's hour started then.
	now time.Time

	mu      sync.Mutex
	jobs    []*job
	creates int // requests that reached the budget, created or refused
}

func newAPI(end func(prompt string) outcome) *api {
	return &api{runPolls: 3, end: end, budget: 100, foreign: http.StatusForbidden, now: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// nullable is s, or null if empty.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func timestamp(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	return nullable(t.Format(time.RFC3339Nano))
}

// wire is j as the contract's Job schema has it, every property sent.
func (j *job) wire() map[string]any {
	return map[string]any{
		"id": j.id, "status": j.status, "model": "claude-sonnet-4-5",
		"source":    map[string]any{"repository": "acme/handbook", "ref": "docs-agent/" + j.id},
		"prLink":    nullable(j.prLink),
		"createdAt": timestamp(j.created), "archivedAt": timestamp(j.archived),
	}
}

// handler serves the double. Every route checks the key first.
func (a *api) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v2/agent/{project}/job", a.guard(a.create))
	mux.HandleFunc("GET /v2/agent/{project}/job/{id}", a.guard(a.read))
	return mux
}

// guard answers a request whose key is unknown, not bound to the path's
// project, or without the scope the method needs (GET read, others write),
// and passes the others to next.
func (a *api) guard(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		switch project := r.PathValue("project"); {
		case !ok || (key != writeKey && key != readKey):
			writeError(w, http.StatusUnauthorized, "invalid or expired API key")
		case project != "handbook" && a.foreign == http.StatusNotFound:
			writeError(w, http.StatusNotFound, "Project not found")
		case project != "handbook":
			writeError(w, http.StatusForbidden, fmt.Sprintf("this API key is not allowed to use project %q", project))
		case r.Method != http.MethodGet && key != writeKey:
			writeError(w, http.StatusForbidden, "this API key lacks the write scope")
		default:
			next(w, r)
		}
	}
}

func (a *api) create(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Prompt *string `json:"prompt"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "the body must be a JSON object: "+err.Error())
		return
	}
	if body.Prompt == nil || *body.Prompt == "" {
		writeError(w, http.StatusBadRequest, "prompt must not be empty")
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.creates++
	if a.creates > a.budget {
		w.Header().Set("Retry-After", "3600") // the hour started at a.now, which is now
		writeError(w, http.StatusTooManyRequests, "Rate limit exceeded")
		return
	}
	j := &job{id: fmt.Sprintf("job_%04d", len(a.jobs)+1), status: "active", prompt: *body.Prompt, created: a.now}
	a.jobs = append(a.jobs, j)
	writeJSON(w, http.StatusCreated, j.wire())
}

func (a *api) read(w http.ResponseWriter, r *http.Request) {
	if a.onRead != nil {
		a.onRead()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	i := slices.IndexFunc(a.jobs, func(j *job) bool { return j.id == r.PathValue("id") })
	if i < 0 {
		writeError(w, http.StatusNotFound, fmt.Sprintf("job %q not found", r.PathValue("id")))
		return
	}
	j := a.jobs[i]
	if j.status == "active" {
		if j.polls++; a.end != nil && j.polls >= a.runPolls {
			o := a.end(j.prompt)
			j.status, j.prLink = o.status, o.prLink
			if o.status == "archived" {
				j.archived = a.now
			}
		}
	}
	writeJSON(w, http.StatusOK, j.wire())
}

// created returns the jobs created so far.
func (a *api) created() []job {
	a.mu.Lock()
	defer a.mu.Unlock()
	var jobs []job
	for _, j := range a.jobs {
		jobs = append(jobs, *j)
	}
	return jobs
}

func start(t *testing.T, a *api) config {
	t.Helper()
	srv := httptest.NewServer(a.handler())
	t.Cleanup(srv.Close)
	return config{key: writeKey, baseURL: srv.URL, project: "handbook", prompt: "Document the --verbose flag", wait: fast}
}

var progressLine = regexp.MustCompile(`^ *\d+[a-z0-9.]*s  job (\S+): (\S+)$`)

// progress parses the output's progress lines (one per status change, all
// of one job) and returns the job's ID, the statuses and the lines that
// follow them.
func progress(t *testing.T, out string) (id string, statuses []docsapi.JobStatus, rest []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for i, line := range lines {
		m := progressLine.FindStringSubmatch(line)
		if m == nil {
			return id, statuses, lines[i:]
		}
		if id != "" && m[1] != id {
			t.Fatalf("progress of two jobs, %s and %s:\n%s", id, m[1], out)
		}
		id = m[1]
		statuses = append(statuses, docsapi.JobStatus(m[2]))
	}
	return id, statuses, nil
}

// checkOutput checks that out shows the job active (once, though several
// polls found it so), then want, then the result line; and that the program
// created that one job, with the -prompt.
func checkOutput(t *testing.T, a *api, prompt, out string, want docsapi.JobStatus, result string) {
	t.Helper()
	id, statuses, rest := progress(t, out)
	if !slices.Equal(statuses, []docsapi.JobStatus{docsapi.JobStatusActive, want}) || !slices.Equal(rest, []string{result}) {
		t.Fatalf("output:\n%s\nwant the statuses active and %s, then %q", out, want, result)
	}
	jobs := a.created()
	if len(jobs) != 1 || jobs[0].id != id || jobs[0].prompt != prompt || jobs[0].polls != a.runPolls {
		t.Errorf("jobs created: %+v; want job %s alone, with the prompt %q, polled %d times", jobs, id, prompt, a.runPolls)
	}
}

func TestPullRequest(t *testing.T) {
	const pr = "https://git.example.com/acme/handbook/pull/7"
	a := newAPI(func(string) outcome { return outcome{"completed", pr} })
	cfg := start(t, a)
	var out strings.Builder
	if err := run(t.Context(), cfg, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	checkOutput(t, a, cfg.prompt, out.String(), docsapi.JobStatusCompleted, "pull request: "+pr)
}

func TestNoPullRequest(t *testing.T) {
	a := newAPI(func(string) outcome { return outcome{"completed", ""} })
	cfg := start(t, a)
	cfg.prompt = "Fix a typo"
	var out strings.Builder
	if err := run(t.Context(), cfg, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	checkOutput(t, a, cfg.prompt, out.String(), docsapi.JobStatusCompleted, "completed without a pull request")
}

func TestFailedJob(t *testing.T) {
	a := newAPI(func(string) outcome { return outcome{"failed", ""} })
	cfg := start(t, a)
	var out strings.Builder
	err := run(t.Context(), cfg, &out)
	var failed *docsapi.JobFailedError
	if !errors.As(err, &failed) {
		t.Fatalf("run = %v, want a *docsapi.JobFailedError\n%s", err, out.String())
	}
	id, statuses, rest := progress(t, out.String())
	if !slices.Equal(statuses, []docsapi.JobStatus{docsapi.JobStatusActive, docsapi.JobStatusFailed}) || rest != nil {
		t.Errorf("output:\n%s\nwant the statuses active and failed, and nothing else", out.String())
	}
	if want := "the agent could not carry out the prompt: docsapi: agent job " + id + " failed"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
}

// A job archived while the program waits (by an operator, say) ends the
// wait without a pull request to show.
func TestArchivedWhileWaiting(t *testing.T) {
	a := newAPI(func(string) outcome { return outcome{"archived", ""} })
	cfg := start(t, a)
	var out strings.Builder
	err := run(t.Context(), cfg, &out)
	id, statuses, rest := progress(t, out.String())
	if err == nil || err.Error() != "job "+id+" was archived before it finished" {
		t.Fatalf("run = %v, want job %s archived before it finished", err, id)
	}
	if !slices.Equal(statuses, []docsapi.JobStatus{docsapi.JobStatusActive, docsapi.JobStatusArchived}) || rest != nil {
		t.Errorf("output:\n%s\nwant the statuses active and archived, and nothing else", out.String())
	}
}

func TestTimeout(t *testing.T) {
	a := newAPI(nil) // no agent: the job stays active
	cfg := start(t, a)
	cfg.wait.Timeout = 200 * time.Millisecond
	var out strings.Builder
	err := run(t.Context(), cfg, &out)
	var timedOut *docsapi.WaitTimeoutError
	if !errors.As(err, &timedOut) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("run = %v, want a *docsapi.WaitTimeoutError for the timeout", err)
	}
	want := regexp.MustCompile(`^gave up; the job goes on running on the server: docsapi: stopped waiting for agent job ` +
		timedOut.Job.ID + ` \(last status active\) after \S+: context deadline exceeded$`)
	if !want.MatchString(err.Error()) {
		t.Errorf("message %q does not match %s", err, want)
	}
	id, statuses, rest := progress(t, out.String())
	if id != timedOut.Job.ID || !slices.Equal(statuses, []docsapi.JobStatus{docsapi.JobStatusActive}) || rest != nil {
		t.Errorf("output:\n%s\nwant only the job's first status, active", out.String())
	}
	if jobs := a.created(); len(jobs) != 1 || jobs[0].id != id || jobs[0].polls < 2 {
		t.Errorf("jobs created: %+v; want job %s alone, polled more than once", jobs, id)
	}
}

// TestInterrupted cancels the context during the first poll, as Ctrl-C
// would during the wait.
func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	a := newAPI(nil)
	a.onRead = cancel
	cfg := start(t, a)
	var out strings.Builder
	err := run(ctx, cfg, &out)
	jobs := a.created()
	if len(jobs) != 1 || err == nil || err.Error() != "interrupted: job "+jobs[0].id+" goes on running on the server" {
		t.Fatalf("run = %v, want the interruption explained, naming the one job created (%+v)", err, jobs)
	}
}

func TestRateLimited(t *testing.T) {
	a := newAPI(nil)
	a.budget = 1
	cfg := start(t, a)
	client, err := newClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Spend the hour's only job.
	if _, err := client.AgentJobs.Create(t.Context(), "", docsapi.CreateJobParams{Prompt: "First"}); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	err = run(t.Context(), cfg, &out)
	if !errors.Is(err, docsapi.ErrRateLimited) || !strings.HasPrefix(err.Error(), "rate limited: try again in 1h0m0s: ") {
		t.Fatalf("run = %v, want the rate limit with the server's Retry-After", err)
	}
	if out.Len() != 0 || len(a.created()) != 1 {
		t.Errorf("printed %q, %d jobs; want nothing printed and the first job alone", out.String(), len(a.created()))
	}
}

func TestRefused(t *testing.T) {
	for _, tt := range []struct {
		name    string
		edit    func(*config)
		foreign int // how the service answers a project the key may not use; 0: 403
		target  error
		prefix  string
	}{
		{"no prompt", func(c *config) { c.prompt = " " }, 0, nil, "-prompt is required"},
		{"no key", func(c *config) { c.key = "" }, 0, nil, "DOCSAPI_KEY is not set"},
		{"no project", func(c *config) { c.project = "" }, 0, nil, "DOCSAPI_PROJECT is not set"},
		{"wrong key", func(c *config) { c.key = "mint_wrong" }, 0, docsapi.ErrUnauthorized, "the key was refused"},
		{"read-only key", func(c *config) { c.key = readKey }, 0, docsapi.ErrForbidden, `the key may not create jobs in project "handbook"`},
		{"another project", func(c *config) { c.project = "other" }, 0, docsapi.ErrForbidden, `the key may not create jobs in project "other"`},
		{"no such project (hosted)", func(c *config) { c.project = "other" }, http.StatusNotFound, docsapi.ErrNotFound, `no project "other"`},
		{"bad base URL", func(c *config) { c.baseURL = "localhost:8080" }, 0, docsapi.ErrInvalidParam, "docsapi: invalid baseURL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newAPI(func(string) outcome { return outcome{"completed", ""} })
			if tt.foreign != 0 {
				a.foreign = tt.foreign
			}
			cfg := start(t, a)
			tt.edit(&cfg)
			var out strings.Builder
			err := run(t.Context(), cfg, &out)
			if err == nil || !strings.HasPrefix(err.Error(), tt.prefix) || (tt.target != nil && !errors.Is(err, tt.target)) {
				t.Errorf("run = %v, want an error starting %q (matching %v)", err, tt.prefix, tt.target)
			}
			if out.Len() != 0 || len(a.created()) != 0 {
				t.Errorf("printed %q and created %d jobs before failing", out.String(), len(a.created()))
			}
		})
	}
}
