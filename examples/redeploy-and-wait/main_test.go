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
	"sync/atomic"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
)

// The tests run the program against a double of the deployment API, written
// from the platform's published reference (openapi.json): a trigger is a
// POST without a body (a preview's has {"branch"}), answered 202 with
// {statusId} or {statusId, previewUrl}; the status moves from queued
// through in_progress to success or failure while the client polls; keys
// carry scopes; errors are {"error"}.

const (
	writeKey = "mint_redeployWrite"
	readKey  = "mint_redeployRead" // may read, not trigger
)

// fast polls often, so that the tests take milliseconds; Timeout only
// bounds a broken test.
var fast = docsapi.UpdateWaitParams{MinInterval: 5 * time.Millisecond, MaxInterval: 20 * time.Millisecond, Timeout: time.Minute}

// deployment is a deployment as the double keeps it.
type deployment struct {
	id, branch string
	polls      int // reads so far
}

// api is the double of the deployment API of project "handbook".
type api struct {
	// runPolls is how many reads a deployment lasts: the first read finds
	// it queued, the next ones in_progress, read runPolls its outcome.
	runPolls int
	// fail makes deployments end in failure; nil runs none to an end.
	fail *bool
	// previews says whether the plan has preview deployments.
	previews bool
	// onRead, if set, runs before a deployment is read.
	onRead func()

	mu          sync.Mutex
	deployments []*deployment
	badBodies   []string // triggers whose bodies broke the reference
}

func newAPI(fail bool) *api { return &api{runPolls: 4, fail: &fail, previews: true} }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func (a *api) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/project/update/{project}", a.guard(a.update))
	mux.HandleFunc("POST /v1/project/preview/{project}", a.guard(a.preview))
	mux.HandleFunc("GET /v1/project/update-status/{id}", a.guard(a.status))
	return mux
}

// guard answers an unknown key 401, a read-only key's trigger and another
// project 403, and passes the others to next.
func (a *api) guard(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		switch project := r.PathValue("project"); {
		case !ok || (key != writeKey && key != readKey):
			writeError(w, http.StatusUnauthorized, "Invalid API key")
		case project != "" && project != "handbook":
			writeError(w, http.StatusForbidden, "This API key cannot access the project")
		case r.Method != http.MethodGet && key != writeKey:
			writeError(w, http.StatusForbidden, "This API key lacks the write scope")
		default:
			next(w, r)
		}
	}
}

func (a *api) queue(branch string) *deployment {
	a.mu.Lock()
	defer a.mu.Unlock()
	d := &deployment{id: fmt.Sprintf("65f1c0ffee01234567%06d", len(a.deployments)+1), branch: branch}
	a.deployments = append(a.deployments, d)
	return d
}

func (a *api) update(w http.ResponseWriter, r *http.Request) {
	// The reference documents no body: the client must send none.
	if r.ContentLength != 0 || r.Header.Get("Content-Type") != "" {
		a.mu.Lock()
		a.badBodies = append(a.badBodies, fmt.Sprintf("update with %d bytes of %q", r.ContentLength, r.Header.Get("Content-Type")))
		a.mu.Unlock()
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"statusId": a.queue("main").id})
}

func (a *api) preview(w http.ResponseWriter, r *http.Request) {
	if !a.previews {
		writeError(w, http.StatusForbidden, "Preview deployments are not available on your current plan.")
		return
	}
	var body struct {
		Branch string `json:"branch"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Branch == "" {
		writeError(w, http.StatusBadRequest, "branch is required")
		return
	}
	d := a.queue(body.Branch)
	writeJSON(w, http.StatusAccepted, map[string]string{"statusId": d.id,
		"previewUrl": "https://handbook-" + strings.ReplaceAll(body.Branch, "/", "-") + ".mintlify.site"})
}

func (a *api) status(w http.ResponseWriter, r *http.Request) {
	if a.onRead != nil {
		a.onRead()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	i := slices.IndexFunc(a.deployments, func(d *deployment) bool { return d.id == r.PathValue("id") })
	if i < 0 {
		writeError(w, http.StatusNotFound, "Status not found")
		return
	}
	d := a.deployments[i]
	d.polls++
	state, summary, ended := "in_progress", "Building", any(nil)
	switch {
	case d.polls == 1:
		state, summary = "queued", "Waiting for a builder"
	case d.polls >= a.runPolls && a.fail != nil && *a.fail:
		state, summary, ended = "failure", "Build failed: 1 broken link", "2026-08-14T09:23:41.000Z"
	case d.polls >= a.runPolls && a.fail != nil:
		state, summary, ended = "success", "Deployed", "2026-08-14T09:23:41.000Z"
	}
	var logs []string
	for i := range 14 {
		logs = append(logs, fmt.Sprintf("build step %d", i+1))
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"_id": d.id, "projectId": "handbook", "createdAt": "2026-08-14T09:21:07.482Z", "endedAt": ended,
		"status": state, "summary": summary, "logs": logs, "subdomain": "handbook",
		"author": nil, "source": "api",
		"commit": map[string]any{
			"sha": "9f2c1e0b7a6d5c4b3a29180716f5e4d3c2b1a090", "ref": d.branch,
			"message": "Document the --verbose flag\n\nAnd its short form.",
			"filesChanged": map[string]any{
				"added": []string{"cli/verbose.mdx"}, "modified": []string{"cli/index.mdx", "docs.json"}, "removed": []string{},
			},
		},
	})
}

func (a *api) queued() []deployment {
	a.mu.Lock()
	defer a.mu.Unlock()
	var ds []deployment
	for _, d := range a.deployments {
		ds = append(ds, *d)
	}
	return ds
}

func start(t *testing.T, a *api) config {
	t.Helper()
	srv := httptest.NewServer(a.handler())
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if len(a.badBodies) > 0 {
			t.Errorf("triggers sent bodies the reference does not document: %v", a.badBodies)
		}
	})
	return config{key: writeKey, baseURL: srv.URL, project: "handbook", wait: fast}
}

var progressLine = regexp.MustCompile(`^ *\d+[a-z0-9.]*s  deployment (\S+): (\S+)$`)

// output splits the program's output into its first line, the statuses
// of its progress lines (all of the deployment named in the first), and
// the lines after them.
func output(t *testing.T, out string) (first string, statuses []string, rest []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	first, lines = lines[0], lines[1:]
	for i, line := range lines {
		m := progressLine.FindStringSubmatch(line)
		if m == nil {
			return first, statuses, lines[i:]
		}
		if !strings.HasSuffix(first, ": "+m[1]) {
			t.Errorf("progress of deployment %s, but %q queued another", m[1], first)
		}
		statuses = append(statuses, m[2])
	}
	return first, statuses, nil
}

func TestUpdateDeployed(t *testing.T) {
	a := newAPI(false)
	cfg := start(t, a)
	var out strings.Builder
	if err := run(t.Context(), cfg, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	ds := a.queued()
	if len(ds) != 1 || ds[0].polls != a.runPolls {
		t.Fatalf("deployments %+v, want one, polled to its end", ds)
	}
	first, statuses, rest := output(t, out.String())
	if first != "queued an update of handbook: "+ds[0].id ||
		!slices.Equal(statuses, []string{"queued", "in_progress", "success"}) ||
		!slices.Equal(rest, []string{`deployed 9f2c1e0 "Document the --verbose flag" (3 files changed)`}) {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestPreviewDeployed(t *testing.T) {
	a := newAPI(false)
	cfg := start(t, a)
	cfg.branch = "feature/verbose"
	var out strings.Builder
	if err := run(t.Context(), cfg, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	ds := a.queued()
	first, statuses, rest := output(t, out.String())
	if len(ds) != 1 || ds[0].branch != "feature/verbose" || first != "queued a preview of feature/verbose: "+ds[0].id ||
		!slices.Equal(statuses, []string{"queued", "in_progress", "success"}) ||
		!slices.Equal(rest, []string{`deployed 9f2c1e0 "Document the --verbose flag" (3 files changed)`,
			"preview: https://handbook-feature-verbose.mintlify.site"}) {
		t.Errorf("deployments %+v, output:\n%s", ds, out.String())
	}
}

func TestDeploymentFailed(t *testing.T) {
	a := newAPI(true)
	cfg := start(t, a)
	var out strings.Builder
	err := run(t.Context(), cfg, &out)
	var failed *docsapi.UpdateFailedError
	if !errors.As(err, &failed) {
		t.Fatalf("run = %v, want a *docsapi.UpdateFailedError", err)
	}
	want := "the deployment failed (its log ends above): docsapi: deployment " + failed.Status.ID + " failed: Build failed: 1 broken link"
	if err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	_, statuses, rest := output(t, out.String())
	var tail []string // the last logTail of 14 lines
	for i := 5; i <= 14; i++ {
		tail = append(tail, fmt.Sprintf("  | build step %d", i))
	}
	if !slices.Equal(statuses, []string{"queued", "in_progress", "failure"}) || !slices.Equal(rest, tail) {
		t.Errorf("output:\n%s\nwant the statuses, then the log's last %d lines", out.String(), logTail)
	}
}

func TestTimeout(t *testing.T) {
	a := newAPI(false)
	a.fail = nil // no deployment ends
	cfg := start(t, a)
	cfg.wait.Timeout = 200 * time.Millisecond
	var out strings.Builder
	err := run(t.Context(), cfg, &out)
	var timedOut *docsapi.UpdateWaitTimeoutError
	if !errors.As(err, &timedOut) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("run = %v, want a *docsapi.UpdateWaitTimeoutError for the timeout", err)
	}
	want := regexp.MustCompile(`^gave up; the deployment goes on on the server: docsapi: stopped waiting for deployment ` +
		timedOut.Status.ID + ` \(last status in_progress\) after \S+: context deadline exceeded$`)
	if !want.MatchString(err.Error()) {
		t.Errorf("message %q does not match %s", err, want)
	}
}

// TestInterrupted cancels the context during the first poll, as Ctrl-C
// would during the wait.
func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	a := newAPI(false)
	a.onRead = cancel
	cfg := start(t, a)
	var out strings.Builder
	err := run(ctx, cfg, &out)
	if err == nil || !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "interrupted: the deployment goes on on the server: ") {
		t.Fatalf("run = %v, want the interruption explained", err)
	}
	if len(a.queued()) != 1 {
		t.Errorf("deployments %+v, want the one triggered", a.queued())
	}
}

// The trigger is sent once: a 5xx leaves its outcome unknown, which the
// program says instead of triggering again.
func TestOutcomeUnknown(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		writeError(w, http.StatusBadGateway, "upstream timed out")
	}))
	t.Cleanup(srv.Close)
	var out strings.Builder
	err := run(t.Context(), config{key: writeKey, baseURL: srv.URL, project: "handbook", wait: fast}, &out)
	if !errors.Is(err, docsapi.ErrServer) || !strings.HasPrefix(err.Error(), "the outcome is unknown; check the dashboard before running again: ") {
		t.Errorf("run = %v, want the unknown outcome explained", err)
	}
	if n := posts.Load(); n != 1 || out.Len() != 0 {
		t.Errorf("%d requests, printed %q; want one request and nothing printed", n, out.String())
	}
}

func TestRefused(t *testing.T) {
	for _, tt := range []struct {
		name   string
		edit   func(*config, *api)
		target error
		prefix string
	}{
		{"no key", func(c *config, _ *api) { c.key = "" }, nil, "DOCSAPI_KEY is not set"},
		{"no project", func(c *config, _ *api) { c.project = "" }, nil, "DOCSAPI_PROJECT is not set"},
		{"wrong key", func(c *config, _ *api) { c.key = "mint_wrong" }, docsapi.ErrUnauthorized, "the key was refused"},
		{"an assistant key", func(c *config, _ *api) { c.key = "mint_dsc_public" }, docsapi.ErrInvalidParam,
			"docsapi: invalid apiKey: is an assistant key (mint_dsc_...); this call needs an admin API key (mint_...)"},
		{"read-only key", func(c *config, _ *api) { c.key = readKey }, docsapi.ErrForbidden,
			`not allowed to deploy project "handbook": docsapi: POST /v1/project/update/handbook: 403 Forbidden: This API key lacks the write scope`},
		{"another project", func(c *config, _ *api) { c.project = "other" }, docsapi.ErrForbidden, `not allowed to deploy project "other"`},
		{"no previews on the plan", func(c *config, a *api) { c.branch = "feature/x"; a.previews = false }, docsapi.ErrForbidden,
			`not allowed to deploy project "handbook": docsapi: POST /v1/project/preview/handbook: 403 Forbidden: Preview deployments are not available on your current plan.`},
		{"bad base URL", func(c *config, _ *api) { c.baseURL = "localhost:8080" }, docsapi.ErrInvalidParam, "docsapi: invalid baseURL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newAPI(false)
			cfg := start(t, a)
			tt.edit(&cfg, a)
			var out strings.Builder
			err := run(t.Context(), cfg, &out)
			if err == nil || !strings.HasPrefix(err.Error(), tt.prefix) || (tt.target != nil && !errors.Is(err, tt.target)) {
				t.Errorf("run = %v, want an error starting %q (matching %v)", err, tt.prefix, tt.target)
			}
			if out.Len() != 0 || len(a.queued()) != 0 {
				t.Errorf("printed %q and queued %d deployments before failing", out.String(), len(a.queued()))
			}
		})
	}
}
