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
// (retrieve and follow-up message), which follows the contract (the API
// document, server/api/openapi.yaml): a message makes the job active again
// and starts a run on the same branch, which ends while the client polls;
// a run that changes nothing keeps the pull request of an earlier one; an
// archived job takes no more messages; keys carry scopes and projects; the
// hourly budget answers 429 with Retry-After; errors have the agent
// endpoints' body. The SDK module cannot import the self-hosted server.

const (
	writeKey = "mint_followUpWrite"
	readKey  = "mint_followUpRead" // may read, not send messages
)

// fast polls often, so that the tests take milliseconds; Timeout only
// bounds a broken test.
var fast = docsapi.WaitParams{MinInterval: 5 * time.Millisecond, MaxInterval: 20 * time.Millisecond, Timeout: time.Minute}

// outcome is how the double's agent ends a run: completed (with the pull
// request it opened or updated, or none), or failed.
type outcome struct {
	status string
	prLink string // "": no pull request from this run
}

// job is a job as the double keeps it.
type job struct {
	id, status, prLink string
	prompts            []string
	handled            int // prompts the runs so far carried out
	runs               int // runs that ended
	created, archived  time.Time
	polls              int // reads of the job since its run started
}

// api is the double of the agent endpoints of project "handbook".
type api struct {
	// runPolls is how many reads of an active job a run lasts: the first
	// runPolls-1 reads find it active, the next its outcome. Reads, not
	// time, so that every run of a test sees the same job states.
	runPolls int
	// end decides how a run ends, from the job's prompts so far; nil means
	// no agent runs, and jobs stay active.
	end func(j *job) outcome
	// budget is how many messages the project may send in the hour (the
	// hosted service's budget for jobs and messages is 100).
	budget int
	// now is the double's clock, fixed: the budget's hour started then.
	now time.Time

	mu       sync.Mutex
	jobs     []*job
	messages int // requests that reached the budget, taken or refused
}

func newAPI(end func(j *job) outcome) *api {
	return &api{runPolls: 3, end: end, budget: 100, now: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)}
}

// pullRequestOf is the pull request a host finds or opens for a job's
// branch: always the same for one branch.
func pullRequestOf(j *job) string {
	return "https://git.example.com/acme/handbook/pull/" + j.id
}

// completeWithPR completes every run with the branch's pull request.
func completeWithPR(j *job) outcome { return outcome{"completed", pullRequestOf(j)} }

// seed adds a job with one prompt, as a create request does, and carries
// out its first run at once if an agent runs (as if the test had waited for
// it); it returns the job as it then is.
func (a *api) seed(prompt string) job {
	a.mu.Lock()
	defer a.mu.Unlock()
	j := &job{id: fmt.Sprintf("job_%04d", len(a.jobs)+1), status: "active", prompts: []string{prompt}, created: a.now}
	a.jobs = append(a.jobs, j)
	if a.end != nil {
		a.finishRun(j)
	}
	return *j
}

// finishRun ends j's run as a.end decides. A completed run records the
// prompts it carried out, and its pull request unless it opened none, so
// that a run that changed nothing keeps the link of an earlier one.
func (a *api) finishRun(j *job) {
	o := a.end(j)
	j.runs++
	j.status = o.status
	if o.status == "completed" {
		j.handled = len(j.prompts)
		if o.prLink != "" {
			j.prLink = o.prLink
		}
	}
}

// archive archives the job, as an operator does.
func (a *api) archive(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	j := a.find(id)
	j.status, j.archived = "archived", a.now
}

// job returns a copy of the job with id.
func (a *api) job(id string) job {
	a.mu.Lock()
	defer a.mu.Unlock()
	j := *a.find(id)
	j.prompts = slices.Clone(j.prompts)
	return j
}

func (a *api) find(id string) *job {
	i := slices.IndexFunc(a.jobs, func(j *job) bool { return j.id == id })
	if i < 0 {
		return nil
	}
	return a.jobs[i]
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
	mux.HandleFunc("GET /v2/agent/{project}/job/{id}", a.guard(a.read))
	mux.HandleFunc("POST /v2/agent/{project}/job/{id}/message", a.guard(a.message))
	return mux
}

// guard answers a request whose key is unknown, not bound to the path's
// project (403, as the self-hosted server answers), or without the scope
// the method needs (GET read, others write), and passes the others to next.
func (a *api) guard(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		switch project := r.PathValue("project"); {
		case !ok || (key != writeKey && key != readKey):
			writeError(w, http.StatusUnauthorized, "invalid or expired API key")
		case project != "handbook":
			writeError(w, http.StatusForbidden, fmt.Sprintf("this API key is not allowed to use project %q", project))
		case r.Method != http.MethodGet && key != writeKey:
			writeError(w, http.StatusForbidden, "this API key lacks the write scope")
		default:
			next(w, r)
		}
	}
}

func (a *api) read(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	j := a.find(r.PathValue("id"))
	if j == nil {
		writeError(w, http.StatusNotFound, fmt.Sprintf("job %q not found", r.PathValue("id")))
		return
	}
	if j.status == "active" {
		if j.polls++; a.end != nil && j.polls >= a.runPolls {
			a.finishRun(j)
		}
	}
	writeJSON(w, http.StatusOK, j.wire())
}

// message appends a follow-up: the job becomes active again, keeps its
// branch and pull request, and a new run starts.
func (a *api) message(w http.ResponseWriter, r *http.Request) {
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
	if a.messages++; a.messages > a.budget {
		w.Header().Set("Retry-After", "3600") // the hour started at a.now, which is now
		writeError(w, http.StatusTooManyRequests, "Rate limit exceeded")
		return
	}
	id := r.PathValue("id")
	j := a.find(id)
	switch {
	case j == nil:
		writeError(w, http.StatusNotFound, fmt.Sprintf("job %q not found", id))
		return
	case j.status == "archived":
		writeError(w, http.StatusBadRequest, fmt.Sprintf("job %q is archived and takes no more messages", id))
		return
	}
	j.prompts = append(j.prompts, *body.Prompt)
	j.status, j.polls = "active", 0
	writeJSON(w, http.StatusOK, j.wire())
}

func start(t *testing.T, a *api, jobID string) config {
	t.Helper()
	srv := httptest.NewServer(a.handler())
	t.Cleanup(srv.Close)
	return config{key: writeKey, baseURL: srv.URL, project: "handbook", jobID: jobID, prompt: "Also add an example", wait: fast}
}

var progressLine = regexp.MustCompile(`^ *\d+[a-z0-9.]*s  job (\S+): (\S+)$`)

// checkOutput checks the whole output: the job's state before, its
// statuses (active, then want), and the result line if not "".
func checkOutput(t *testing.T, out, id, before string, want docsapi.JobStatus, result string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if lines[0] != before {
		t.Fatalf("first line = %q, want %q", lines[0], before)
	}
	var statuses []docsapi.JobStatus
	rest := lines[1:]
	for len(rest) > 0 {
		m := progressLine.FindStringSubmatch(rest[0])
		if m == nil {
			break
		}
		if m[1] != id {
			t.Fatalf("progress of job %s, want %s:\n%s", m[1], id, out)
		}
		statuses = append(statuses, docsapi.JobStatus(m[2]))
		rest = rest[1:]
	}
	var wantRest []string
	if result != "" {
		wantRest = []string{result}
	}
	if !slices.Equal(statuses, []docsapi.JobStatus{docsapi.JobStatusActive, want}) || !slices.Equal(rest, wantRest) {
		t.Fatalf("output:\n%s\nwant the statuses active and %s, then %q", out, want, result)
	}
}

func TestUpdatesTheSamePullRequest(t *testing.T) {
	a := newAPI(completeWithPR)
	first := a.seed("Document the --verbose flag")
	pr := first.prLink
	if pr == "" {
		t.Fatal("the first run opened no pull request")
	}

	cfg := start(t, a, first.id)
	var out strings.Builder
	if err := run(t.Context(), cfg, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	checkOutput(t, out.String(), first.id, "job "+first.id+" is completed; pull request: "+pr,
		docsapi.JobStatusCompleted, "pull request updated: "+pr)

	j := a.job(first.id)
	if want := []string{"Document the --verbose flag", "Also add an example"}; !slices.Equal(j.prompts, want) {
		t.Errorf("prompts = %q, want %q", j.prompts, want)
	}
	if j.status != "completed" || j.handled != 2 || j.runs != 2 {
		t.Errorf("job %s handled %d prompts in %d runs, want completed, 2 in 2", j.status, j.handled, j.runs)
	}
}

// The pull request line compares the job's link before the message with
// the one after its run, whichever way the runs went. Here the run ends by
// the first poll, so that the program's first status line, active, comes
// from the message's answer alone.
func TestPullRequestLine(t *testing.T) {
	for _, tt := range []struct {
		name         string
		first, again func(*job) string // the pull request each run opens
		before, want string
	}{
		{
			name:  "the first run changed nothing, the follow-up opens one",
			first: func(*job) string { return "" }, again: pullRequestOf,
			before: "none", want: "pull request opened: https://git.example.com/acme/handbook/pull/job_0001",
		},
		{
			name:  "neither run changed anything",
			first: func(*job) string { return "" }, again: func(*job) string { return "" },
			before: "none", want: "completed without a pull request",
		},
		{
			// The run keeps the link of the first: the pull request is
			// still the job's.
			name:  "the follow-up changed nothing",
			first: pullRequestOf, again: func(*job) string { return "" },
			before: "https://git.example.com/acme/handbook/pull/job_0001",
			want:   "pull request updated: https://git.example.com/acme/handbook/pull/job_0001",
		},
		{
			name:  "the first pull request was merged, the follow-up opens another",
			first: pullRequestOf, again: func(*job) string { return "https://git.example.com/acme/handbook/pull/8" },
			before: "https://git.example.com/acme/handbook/pull/job_0001",
			want:   "pull request opened: https://git.example.com/acme/handbook/pull/8 (the job's earlier one was https://git.example.com/acme/handbook/pull/job_0001)",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newAPI(func(j *job) outcome {
				if len(j.prompts) == 1 {
					return outcome{"completed", tt.first(j)}
				}
				return outcome{"completed", tt.again(j)}
			})
			a.runPolls = 1
			first := a.seed("Check the spelling")
			var out strings.Builder
			if err := run(t.Context(), start(t, a, first.id), &out); err != nil {
				t.Fatalf("run: %v\n%s", err, out.String())
			}
			checkOutput(t, out.String(), first.id, "job "+first.id+" is completed; pull request: "+tt.before,
				docsapi.JobStatusCompleted, tt.want)
		})
	}
}

func TestFollowUpFails(t *testing.T) {
	a := newAPI(func(j *job) outcome {
		if len(j.prompts) == 1 {
			return completeWithPR(j)
		}
		return outcome{"failed", ""}
	})
	first := a.seed("Document the --verbose flag")
	cfg := start(t, a, first.id)
	cfg.prompt = "Delete every page"
	var out strings.Builder
	err := run(t.Context(), cfg, &out)
	var failed *docsapi.JobFailedError
	if !errors.As(err, &failed) || err.Error() != "the agent could not carry out the follow-up: docsapi: agent job "+first.id+" failed" {
		t.Fatalf("run = %v, want the failure explained", err)
	}
	checkOutput(t, out.String(), first.id, "job "+first.id+" is completed; pull request: "+first.prLink, docsapi.JobStatusFailed, "")
}

func TestArchivedJob(t *testing.T) {
	a := newAPI(completeWithPR)
	first := a.seed("Document the --verbose flag")
	a.archive(first.id)
	var out strings.Builder
	err := run(t.Context(), start(t, a, first.id), &out)
	want := `the server refused the message: job "` + first.id + `" is archived and takes no more messages: `
	if !errors.Is(err, docsapi.ErrBadRequest) || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("run = %v, want an error starting %q", err, want)
	}
	if got, want := out.String(), "job "+first.id+" is archived; pull request: "+first.prLink+"\n"; got != want {
		t.Errorf("output = %q, want %q", got, want)
	}
	if j := a.job(first.id); j.runs != 1 || len(j.prompts) != 1 {
		t.Errorf("%d runs, %d prompts; want the first only", j.runs, len(j.prompts))
	}
}

func TestTimeout(t *testing.T) {
	a := newAPI(nil) // no agent: jobs stay active
	first := a.seed("Document the --verbose flag")
	cfg := start(t, a, first.id)
	cfg.wait.Timeout = 200 * time.Millisecond
	var out strings.Builder
	err := run(t.Context(), cfg, &out)
	var timedOut *docsapi.WaitTimeoutError
	if !errors.As(err, &timedOut) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("run = %v, want a *docsapi.WaitTimeoutError for the timeout", err)
	}
	want := regexp.MustCompile(`^gave up; the job goes on running on the server: docsapi: stopped waiting for agent job ` +
		first.id + ` \(last status active\) after \S+: context deadline exceeded$`)
	if !want.MatchString(err.Error()) {
		t.Errorf("message %q does not match %s", err, want)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 || lines[0] != "job "+first.id+" is active; pull request: none" || !strings.HasSuffix(lines[1], "job "+first.id+": active") {
		t.Errorf("output:\n%s\nwant the job's state, then its one status, active", out.String())
	}
	if j := a.job(first.id); len(j.prompts) != 2 || j.polls < 2 {
		t.Errorf("the job has %d prompts and was read %d times since; want the follow-up added, and polled more than once", len(j.prompts), j.polls)
	}
}

func TestRateLimited(t *testing.T) {
	a := newAPI(completeWithPR)
	a.budget = 0 // the hour's messages are spent
	first := a.seed("Document the --verbose flag")
	var out strings.Builder
	err := run(t.Context(), start(t, a, first.id), &out)
	if !errors.Is(err, docsapi.ErrRateLimited) || !strings.HasPrefix(err.Error(), "rate limited: try again in 1h0m0s: ") {
		t.Fatalf("run = %v, want the rate limit with the server's Retry-After", err)
	}
	if got, want := out.String(), "job "+first.id+" is completed; pull request: "+first.prLink+"\n"; got != want {
		t.Errorf("output = %q, want %q", got, want)
	}
}

func TestRefused(t *testing.T) {
	a := newAPI(nil)
	first := a.seed("Document the --verbose flag")
	for _, tt := range []struct {
		name   string
		edit   func(*config)
		target error
		prefix string
	}{
		{"no job", func(c *config) { c.jobID = "" }, nil, "-job is required"},
		{"no prompt", func(c *config) { c.prompt = "" }, nil, "-prompt is required"},
		{"no key", func(c *config) { c.key = "" }, nil, "DOCSAPI_KEY is not set"},
		{"no project", func(c *config) { c.project = "" }, nil, "DOCSAPI_PROJECT is not set"},
		{"no such job", func(c *config) { c.jobID = "job_nope" }, docsapi.ErrNotFound, `no job job_nope in project "handbook"`},
		{"wrong key", func(c *config) { c.key = "mint_wrong" }, docsapi.ErrUnauthorized, "the key was refused"},
		{"another project", func(c *config) { c.project = "other" }, docsapi.ErrForbidden, `the key may not use project "other"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := start(t, a, first.id)
			tt.edit(&cfg)
			var out strings.Builder
			err := run(t.Context(), cfg, &out)
			if err == nil || !strings.HasPrefix(err.Error(), tt.prefix) || (tt.target != nil && !errors.Is(err, tt.target)) {
				t.Errorf("run = %v, want an error starting %q (matching %v)", err, tt.prefix, tt.target)
			}
			if out.Len() != 0 {
				t.Errorf("printed %q before failing", out.String())
			}
		})
	}
	// A read-only key reads the job, then cannot send the message.
	cfg := start(t, a, first.id)
	cfg.key = readKey
	err := run(t.Context(), cfg, new(strings.Builder))
	if want := `the key may not use project "handbook"`; !errors.Is(err, docsapi.ErrForbidden) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("run with a read-only key = %v, want an error starting %q", err, want)
	}
	if j := a.job(first.id); len(j.prompts) != 1 {
		t.Errorf("the job has %d prompts, want none added", len(j.prompts))
	}
}
