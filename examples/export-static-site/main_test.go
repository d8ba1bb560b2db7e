package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
)

// The tests run the program against a double of the static export API,
// written from the platform's published reference
// (static-export-openapi.json): a start is a POST of {domain, version?,
// paths?} answered 202 with the job {jobId, status, progress, pageCount,
// createdAt, updatedAt, error}; the job moves from queued through running to
// completed or failed while the client polls; a bundle is a POST without a
// body answered 200 {jobId, bundleUrl, sizeBytes, expiresAt}, or 409 while
// the job is not completed; errors are {"error"}. The bundle's link points
// at a second server, the storage host, which records what reaches it.

const (
	adminKey  = "mint_exportAdminKey"
	noPlanKey = "mint_exportNoPlanKey" // an organisation without static export
)

// fast polls often, so that the tests take milliseconds; Timeout only
// bounds a broken test.
var fast = docsapi.StaticExportWaitParams{MinInterval: 5 * time.Millisecond, MaxInterval: 20 * time.Millisecond, Timeout: time.Minute}

// step is the job as one read finds it.
type step struct {
	status   string
	progress float64
	pages    int
}

// timeline is what successive reads of a job find; the last read repeats
// the last step. The third read changes nothing the program prints.
var timeline = []step{{"queued", 0, 0}, {"running", 25.2, 40}, {"running", 25.4, 40}, {"running", 75, 120}}

// export is an export as the double keeps it.
type export struct {
	id    string
	body  map[string]any // the start's body
	polls int
}

// api is the double of the static export API, with its storage host.
type api struct {
	// outcome is the state a job reaches after the timeline: completed,
	// failed, or "" for none.
	outcome string
	// bundleStatus, if set, answers every bundle with it: 409, as a
	// service whose job store lags behind would, or a 5xx.
	bundleStatus int
	bundles      int // bundle requests so far
	// onRead, if set, runs before a job is read.
	onRead func()
	// content is the bundle; serve sends it from the storage host.
	content []byte
	serve   func(w http.ResponseWriter, content []byte)

	storage *httptest.Server
	mu      sync.Mutex
	exports []*export
	fetches []http.Header // the headers of each request to the storage host
}

func newAPI(outcome string) *api {
	content := bytes.Repeat([]byte("static site bundle\n"), 4000)
	return &api{outcome: outcome, content: content, serve: func(w http.ResponseWriter, c []byte) { w.Write(c) }}
}

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
	mux.HandleFunc("POST /v1/static-export/jobs", a.guard(a.start))
	mux.HandleFunc("GET /v1/static-export/jobs/{id}", a.guard(a.get))
	mux.HandleFunc("POST /v1/static-export/jobs/{id}/bundle", a.guard(a.bundle))
	return mux
}

// guard answers an unknown key 401 and a key of an organisation without
// static export 403, and passes the others to next.
func (a *api) guard(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Authorization") {
		case "Bearer " + adminKey:
			next(w, r)
		case "Bearer " + noPlanKey:
			writeError(w, http.StatusForbidden, "Static export is not enabled for this organization.")
		default:
			writeError(w, http.StatusUnauthorized, "Authentication failed.")
		}
	}
}

func (a *api) start(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "The request body is invalid.")
		return
	}
	if body["domain"] != "docs.example.com" {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%v is not a reachable hostname", body["domain"]))
		return
	}
	a.mu.Lock()
	e := &export{id: fmt.Sprintf("se_3f9a2c1b8e7d4a%02d", len(a.exports)+1), body: body}
	a.exports = append(a.exports, e)
	a.mu.Unlock()
	writeJSON(w, http.StatusAccepted, jobJSON(e.id, timeline[0], ""))
}

func jobJSON(id string, s step, errMsg string) map[string]any {
	var e any
	if errMsg != "" {
		e = errMsg
	}
	return map[string]any{"jobId": id, "status": s.status, "progress": s.progress, "pageCount": s.pages,
		"createdAt": "2026-08-14T09:21:07Z", "updatedAt": "2026-08-14T09:22:30Z", "error": e}
}

// find returns the export named in the path, or answers 404.
func (a *api) find(w http.ResponseWriter, r *http.Request) *export {
	i := slices.IndexFunc(a.exports, func(e *export) bool { return e.id == r.PathValue("id") })
	if i < 0 {
		writeError(w, http.StatusNotFound, "No job exists with the provided ID.")
		return nil
	}
	return a.exports[i]
}

func (a *api) get(w http.ResponseWriter, r *http.Request) {
	if a.onRead != nil {
		a.onRead()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.find(w, r)
	if e == nil {
		return
	}
	e.polls++
	s, errMsg := timeline[min(e.polls, len(timeline))-1], ""
	switch {
	case e.polls > len(timeline) && a.outcome == "completed":
		s = step{"completed", 100, 160}
	case e.polls > len(timeline) && a.outcome == "failed":
		s.status, errMsg = "failed", "Page guides/broken failed to render: unclosed <Tabs>"
	}
	writeJSON(w, http.StatusOK, jobJSON(e.id, s, errMsg))
}

func (a *api) bundle(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.bundles++
	e := a.find(w, r)
	switch {
	case e == nil:
	case r.ContentLength > 0:
		writeError(w, http.StatusBadRequest, "The bundle takes no body.")
	case a.bundleStatus >= 500:
		writeError(w, a.bundleStatus, "upstream timed out")
	case a.bundleStatus == http.StatusConflict || e.polls <= len(timeline) || a.outcome != "completed":
		writeError(w, http.StatusConflict, "The job has not finished yet")
	default:
		writeJSON(w, http.StatusOK, map[string]any{"jobId": e.id,
			"bundleUrl": a.storage.URL + "/" + e.id + "/bundle.tar.gz?X-Amz-Expires=3600&X-Amz-Signature=3c9f0e",
			"sizeBytes": len(a.content), "expiresAt": "2026-08-14T10:22:30Z"})
	}
}

// storageHandler serves the bundle to a request signed in its query, as a
// presigned link is; it records the headers of every request.
func (a *api) storageHandler(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.fetches = append(a.fetches, r.Header.Clone())
	a.mu.Unlock()
	if r.URL.Query().Get("X-Amz-Signature") != "3c9f0e" || !strings.HasSuffix(r.URL.Path, "/bundle.tar.gz") {
		http.Error(w, "<Error><Code>AccessDenied</Code></Error>", http.StatusForbidden)
		return
	}
	a.serve(w, a.content)
}

func (a *api) started() []export {
	a.mu.Lock()
	defer a.mu.Unlock()
	var es []export
	for _, e := range a.exports {
		es = append(es, *e)
	}
	return es
}

func (a *api) storageFetches() []http.Header {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.fetches)
}

func start(t *testing.T, a *api) config {
	t.Helper()
	srv := httptest.NewServer(a.handler())
	t.Cleanup(srv.Close)
	a.storage = httptest.NewServer(http.HandlerFunc(a.storageHandler))
	t.Cleanup(a.storage.Close)
	return config{key: adminKey, baseURL: srv.URL, wait: fast,
		params: docsapi.StaticExportParams{Domain: "docs.example.com"}}
}

var progressLine = regexp.MustCompile(`^ *\d+[a-z0-9.]*s  export (\S+): (.+)$`)

// output splits the program's output into its first line, the progress
// lines (all of the export named in the first), and the lines after them.
func output(t *testing.T, out string) (first string, progress []string, rest []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	first, lines = lines[0], lines[1:]
	for i, line := range lines {
		m := progressLine.FindStringSubmatch(line)
		if m == nil {
			return first, progress, lines[i:]
		}
		if !strings.HasSuffix(first, " "+m[1]) {
			t.Errorf("progress of export %s, but the first line is %q", m[1], first)
		}
		progress = append(progress, m[2])
	}
	return first, progress, nil
}

var wantProgress = []string{"queued 0%, 0 pages", "running 25%, 40 pages", "running 75%, 120 pages"}

func (a *api) wantLink(id string) []string {
	return []string{
		"bundle: " + a.storage.URL + "/" + id + "/bundle.tar.gz?X-Amz-Expires=3600&X-Amz-Signature=3c9f0e",
		"size: 76000 bytes (0.1 MiB)",
		"expires: 2026-08-14T10:22:30Z",
	}
}

func TestExported(t *testing.T) {
	a := newAPI("completed")
	cfg := start(t, a)
	cfg.params.Version = "2024-06-01"
	cfg.params.Paths = []string{"index", "guides/getting-started"}
	var out strings.Builder
	if err := run(t.Context(), cfg, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	es := a.started()
	if len(es) != 1 || es[0].polls != len(timeline)+1 {
		t.Fatalf("exports %+v, want one, polled to its end", es)
	}
	wantBody := map[string]any{"domain": "docs.example.com", "version": "2024-06-01", "paths": []any{"index", "guides/getting-started"}}
	if fmt.Sprint(es[0].body) != fmt.Sprint(wantBody) {
		t.Errorf("start body %v, want %v", es[0].body, wantBody)
	}
	first, progress, rest := output(t, out.String())
	if first != "started a static export of docs.example.com: "+es[0].id ||
		!slices.Equal(progress, append(wantProgress, "completed 100%, 160 pages")) ||
		!slices.Equal(rest, a.wantLink(es[0].id)) {
		t.Errorf("output:\n%s", out.String())
	}
	if n := len(a.storageFetches()); n != 0 {
		t.Errorf("%d requests to the storage host without -download", n)
	}
}

// TestDownloaded replaces an older file with the bundle, fetched with no
// key: the storage host sees no Authorization header, nor the key anywhere.
func TestDownloaded(t *testing.T) {
	a := newAPI("completed")
	cfg := start(t, a)
	dir := t.TempDir()
	cfg.download = filepath.Join(dir, "site.tar.gz")
	if err := os.WriteFile(cfg.download, []byte("last week's bundle"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := run(t.Context(), cfg, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	_, _, rest := output(t, out.String())
	if want := append(a.wantLink(a.started()[0].id), "wrote "+cfg.download+" (76000 bytes)"); !slices.Equal(rest, want) {
		t.Errorf("output ends\n%s\nwant\n%s", strings.Join(rest, "\n"), strings.Join(want, "\n"))
	}
	if got, err := os.ReadFile(cfg.download); err != nil || !bytes.Equal(got, a.content) {
		t.Errorf("the file holds %d bytes (%v), want the bundle's %d", len(got), err, len(a.content))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %d files, want the bundle alone", len(entries))
	}
	fetches := a.storageFetches()
	if len(fetches) != 1 {
		t.Fatalf("%d requests to the storage host, want one", len(fetches))
	}
	for name, values := range fetches[0] {
		if strings.EqualFold(name, "Authorization") || strings.Contains(strings.Join(values, " "), adminKey) {
			t.Errorf("the storage host received %s: %q", name, values)
		}
	}
}

// A failed download leaves the directory as it was: no partial file, and
// the older file unchanged.
func TestDownloadFailedLeavesNoFile(t *testing.T) {
	for _, tt := range []struct {
		name  string
		serve func(w http.ResponseWriter, content []byte)
		says  string
	}{
		{"an expired link", func(w http.ResponseWriter, _ []byte) {
			http.Error(w, "<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>", http.StatusForbidden)
		}, "the storage host answered 403 Forbidden"},
		{"a connection cut", func(w http.ResponseWriter, c []byte) {
			w.Header().Set("Content-Length", strconv.Itoa(len(c)))
			w.Write(c[:len(c)/2]) // the server closes the connection short of its Content-Length
		}, "after 38000 bytes: unexpected EOF"},
		{"fewer bytes than advertised", func(w http.ResponseWriter, c []byte) {
			w.Write(c[:len(c)-1]) // ends cleanly, chunked: only the count tells
		}, "75999 of the bundle's 76000 bytes arrived: cut short"},
		{"too large, announced", func(w http.ResponseWriter, c []byte) {
			w.Header().Set("Content-Length", strconv.Itoa(len(c)+sizeMargin+1))
			w.Write(c)
		}, "the storage host offers 1124577 bytes; the bundle has 76000"},
		{"too large, unannounced", func(w http.ResponseWriter, c []byte) {
			w.Write(c)
			w.Write(make([]byte, sizeMargin+1))
		}, "the storage host sent more than the 76000 bytes of the bundle; stopped"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newAPI("completed")
			a.serve = tt.serve
			cfg := start(t, a)
			dir := t.TempDir()
			cfg.download = filepath.Join(dir, "site.tar.gz")
			if err := os.WriteFile(cfg.download, []byte("last week's bundle"), 0o644); err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			err := run(t.Context(), cfg, &out)
			if err == nil || !strings.Contains(err.Error(), "downloading the bundle: "+tt.says) {
				t.Errorf("run = %v, want a download error saying %q", err, tt.says)
			}
			entries, _ := os.ReadDir(dir)
			got, _ := os.ReadFile(cfg.download)
			if len(entries) != 1 || string(got) != "last week's bundle" {
				t.Errorf("the directory holds %d files and the file %d bytes (%.40q); want the older file alone, unchanged", len(entries), len(got), got)
			}
		})
	}
}

// A storage host that sends without end is cut off just past the bundle's
// size and the margin, not read to its end.
func TestDownloadStopsAtTheBound(t *testing.T) {
	const offered = 64 << 20
	sent := make(chan int64, 1)
	a := newAPI("completed")
	a.serve = func(w http.ResponseWriter, c []byte) {
		n, err := w.Write(c)
		total, chunk := int64(n), make([]byte, 32<<10)
		for err == nil && total < offered {
			n, err = w.Write(chunk)
			total += int64(n)
		}
		sent <- total
	}
	cfg := start(t, a)
	cfg.download = filepath.Join(t.TempDir(), "site.tar.gz")
	err := run(t.Context(), cfg, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "sent more than the 76000 bytes of the bundle; stopped") {
		t.Errorf("run = %v, want the download stopped", err)
	}
	select {
	case n := <-sent:
		if n >= offered {
			t.Errorf("the storage host sent all its %d bytes: the download read past its bound", n)
		}
	case <-time.After(time.Minute):
		t.Fatal("the storage host is still sending")
	}
}

func TestExportFailed(t *testing.T) {
	a := newAPI("failed")
	cfg := start(t, a)
	var out strings.Builder
	err := run(t.Context(), cfg, &out)
	var failed *docsapi.StaticExportFailedError
	if !errors.As(err, &failed) {
		t.Fatalf("run = %v, want a *docsapi.StaticExportFailedError", err)
	}
	want := "the export failed: docsapi: static export " + failed.Job.ID + " failed: Page guides/broken failed to render: unclosed <Tabs>"
	if err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	_, progress, rest := output(t, out.String())
	if !slices.Equal(progress, append(wantProgress, "failed 75%, 120 pages")) || len(rest) != 0 {
		t.Errorf("output:\n%s\nwant the progress alone", out.String())
	}
}

func TestTimeout(t *testing.T) {
	a := newAPI("") // no export ends
	cfg := start(t, a)
	cfg.wait.Timeout = 200 * time.Millisecond
	var out strings.Builder
	err := run(t.Context(), cfg, &out)
	var timedOut *docsapi.StaticExportWaitTimeoutError
	if !errors.As(err, &timedOut) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("run = %v, want a *docsapi.StaticExportWaitTimeoutError for the timeout", err)
	}
	id := a.started()[0].id
	want := regexp.MustCompile(`^gave up waiting: the export goes on on the server; follow it with -job ` + id +
		`: docsapi: stopped waiting for static export ` + id + ` \(last status running\) after \S+: context deadline exceeded$`)
	if !want.MatchString(err.Error()) {
		t.Errorf("message %q does not match %s", err, want)
	}
}

// TestInterrupted cancels the context during the first poll, as Ctrl-C
// would during the wait.
func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	a := newAPI("completed")
	a.onRead = cancel
	cfg := start(t, a)
	var out strings.Builder
	err := run(ctx, cfg, &out)
	if len(a.started()) != 1 {
		t.Fatalf("exports %+v, want the one started", a.started())
	}
	want := "interrupted: the export goes on on the server; follow it with -job " + a.started()[0].id + ": "
	if err == nil || !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("run = %v, want the interruption explained", err)
	}
}

// TestFollowJob follows an export started by an earlier run, with -job.
func TestFollowJob(t *testing.T) {
	a := newAPI("completed")
	cfg := start(t, a)
	var out strings.Builder
	if err := run(t.Context(), cfg, &out); err != nil {
		t.Fatalf("run: %v", err)
	}
	id := a.started()[0].id
	cfg.jobID, cfg.params = id, docsapi.StaticExportParams{}
	out.Reset()
	if err := run(t.Context(), cfg, &out); err != nil {
		t.Fatalf("run -job: %v\n%s", err, out.String())
	}
	first, progress, rest := output(t, out.String())
	if len(a.started()) != 1 || first != "following static export "+id ||
		!slices.Equal(progress, []string{"completed 100%, 160 pages"}) || !slices.Equal(rest, a.wantLink(id)) {
		t.Errorf("%d exports started; output:\n%s", len(a.started()), out.String())
	}
}

// A bundle refused after the wait leaves the export to a later run with
// -job; a bundle whose outcome is unknown is not asked for again.
func TestBundleRefused(t *testing.T) {
	for _, tt := range []struct {
		status int
		target error
		says   string
	}{
		{http.StatusConflict, docsapi.ErrConflict, "the service has no bundle of export %[1]s yet; try again later with -job %[1]s: " +
			"docsapi: POST /v1/static-export/jobs/%[1]s/bundle: 409 Conflict: The job has not finished yet"},
		{http.StatusBadGateway, docsapi.ErrServer, "asking for the bundle failed; try again with -job %[1]s: " +
			"docsapi: POST /v1/static-export/jobs/%[1]s/bundle: 502 Bad Gateway: upstream timed out"},
	} {
		t.Run(strconv.Itoa(tt.status), func(t *testing.T) {
			a := newAPI("completed")
			a.bundleStatus = tt.status
			cfg := start(t, a)
			var out strings.Builder
			err := run(t.Context(), cfg, &out)
			want := fmt.Sprintf(tt.says, a.started()[0].id)
			if !errors.Is(err, tt.target) || err.Error() != want {
				t.Errorf("run = %v\nwant %s", err, want)
			}
			a.mu.Lock()
			bundles := a.bundles
			a.mu.Unlock()
			if _, progress, rest := output(t, out.String()); len(progress) != 4 || len(rest) != 0 || bundles != 1 {
				t.Errorf("%d bundle requests; output:\n%s\nwant one request and the progress alone", bundles, out.String())
			}
		})
	}
}

// The start is sent once: a 5xx leaves its outcome unknown, which the
// program says instead of starting again.
func TestOutcomeUnknown(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		writeError(w, http.StatusBadGateway, "upstream timed out")
	}))
	t.Cleanup(srv.Close)
	var out strings.Builder
	cfg := config{key: adminKey, baseURL: srv.URL, wait: fast, params: docsapi.StaticExportParams{Domain: "docs.example.com"}}
	err := run(t.Context(), cfg, &out)
	if !errors.Is(err, docsapi.ErrServer) || !strings.HasPrefix(err.Error(), "the outcome is unknown; check the dashboard for an export under way before running again: ") {
		t.Errorf("run = %v, want the unknown outcome explained", err)
	}
	if n := posts.Load(); n != 1 || out.Len() != 0 {
		t.Errorf("%d requests, printed %q; want one request and nothing printed", n, out.String())
	}
}

func TestRefused(t *testing.T) {
	for _, tt := range []struct {
		name   string
		edit   func(*config)
		target error
		prefix string
	}{
		{"no key", func(c *config) { c.key = "" }, nil, "DOCSAPI_KEY is not set"},
		{"no domain", func(c *config) { c.params.Domain = "" }, nil, "-domain is required"},
		{"a job and a domain", func(c *config) { c.jobID = "se_1" }, nil, "-job follows an export already started"},
		{"a URL for a domain", func(c *config) { c.params.Domain = "https://docs.example.com/" }, docsapi.ErrInvalidParam,
			"docsapi: invalid domain: must be a hostname alone, without a scheme"},
		{"wrong key", func(c *config) { c.key = "mint_wrong" }, docsapi.ErrUnauthorized,
			"the key was refused (invalid, revoked or expired): docsapi: POST /v1/static-export/jobs: 401 Unauthorized: Authentication failed."},
		{"an assistant key", func(c *config) { c.key = "mint_dsc_public" }, docsapi.ErrInvalidParam,
			"docsapi: invalid apiKey: is an assistant key (mint_dsc_...); this call needs an admin API key (mint_...)"},
		{"no static export on the plan", func(c *config) { c.key = noPlanKey }, docsapi.ErrForbidden,
			"static export is not allowed with this key: docsapi: POST /v1/static-export/jobs: 403 Forbidden: Static export is not enabled for this organization."},
		{"a domain the service refuses", func(c *config) { c.params.Domain = "docs.example.org" }, docsapi.ErrBadRequest,
			"the service refused the export's parameters: docsapi: POST /v1/static-export/jobs: 400 Bad Request: docs.example.org is not a reachable hostname"},
		{"an unknown job", func(c *config) { c.jobID, c.params.Domain = "se_unknown", "" }, docsapi.ErrNotFound,
			"the service knows no static export se_unknown: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newAPI("completed")
			cfg := start(t, a)
			tt.edit(&cfg)
			var out strings.Builder
			err := run(t.Context(), cfg, &out)
			if err == nil || !strings.HasPrefix(err.Error(), tt.prefix) || (tt.target != nil && !errors.Is(err, tt.target)) {
				t.Errorf("run = %v, want an error starting %q (matching %v)", err, tt.prefix, tt.target)
			}
			if len(a.started()) != 0 || (cfg.jobID == "" && out.Len() != 0) {
				t.Errorf("printed %q and started %d exports before failing", out.String(), len(a.started()))
			}
		})
	}
}
