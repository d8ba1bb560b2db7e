package docsapi_test

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	docsapi "github.com/docsapi/docsapi-go"
)

// This file is a new user's first program, written from the README and the
// godoc alone, run against an in-test double of the API over real HTTP. The
// double follows the contract for one project and knows nothing of the SDK's
// types, so a wire mismatch on either side shows up here.

const (
	usageKey        = "mint_usageE2Ekey4b1d"
	usageProject    = "acme-docs"
	usageRepository = "github.com/acme/docs"
	usageCreatedAt  = "2026-01-02T10:00:00.000Z"
	usageViewCount  = 120
)

// usageJob is the double's record of one agent job.
type usageJob struct {
	id      string
	status  string
	prLink  string // "" is sent as null
	polls   int    // GETs since the job last became active
	prompts []string
}

// usageRow is one path's counts as the double stores them.
type usageRow struct {
	Path  string `json:"path"`
	Human int64  `json:"human"`
	AI    int64  `json:"ai"`
	Total int64  `json:"total"`
}

// usageAPI is the in-test double of the hosted service.
type usageAPI struct {
	mu           sync.Mutex
	jobs         map[string]*usageJob
	nextJob      int
	prs          int
	rows         []usageRow // in the order the export returns them
	viewsQueries []string
}

func newUsageAPI() *usageAPI {
	a := &usageAPI{jobs: make(map[string]*usageJob)}
	for i := range usageViewCount {
		// Counts repeat, so ties exercise the path tiebreak.
		h, ai := int64(i*37%50), int64(i*11%20)
		a.rows = append(a.rows, usageRow{Path: fmt.Sprintf("/docs/page-%03d", i), Human: h, AI: ai, Total: h + ai})
	}
	slices.SortFunc(a.rows, func(x, y usageRow) int {
		return cmp.Or(cmp.Compare(y.Total, x.Total), strings.Compare(x.Path, y.Path))
	})
	return a
}

func (a *usageAPI) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v2/agent/{projectId}/job", a.createJob)
	mux.HandleFunc("GET /v2/agent/{projectId}/job/{id}", a.getJob)
	mux.HandleFunc("POST /v2/agent/{projectId}/job/{id}/message", a.sendMessage)
	mux.HandleFunc("GET /v1/analytics/{projectId}/views", a.views)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+usageKey {
			usageWriteJSON(w, http.StatusUnauthorized, map[string]any{"error": "Invalid or expired API key"})
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func usageWriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// usageOwnProject answers 404 for any project but the double's one.
func usageOwnProject(w http.ResponseWriter, r *http.Request) bool {
	if r.PathValue("projectId") != usageProject {
		usageWriteJSON(w, http.StatusNotFound, map[string]any{"error": "Project not found"})
		return false
	}
	return true
}

// usageReadPrompt decodes {"prompt": string}, the only body field, with the
// contract's minLength 1.
func usageReadPrompt(w http.ResponseWriter, r *http.Request) (string, bool) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		usageWriteJSON(w, http.StatusBadRequest, map[string]any{"error": "Content-Type must be application/json"})
		return "", false
	}
	var body struct {
		Prompt *string `json:"prompt"`
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || body.Prompt == nil || *body.Prompt == "" {
		usageWriteJSON(w, http.StatusBadRequest, map[string]any{"error": "prompt is required"})
		return "", false
	}
	return *body.Prompt, true
}

func (j *usageJob) wire() map[string]any {
	var prLink any // nil encodes as null, as the hosted service sends it
	if j.prLink != "" {
		prLink = j.prLink
	}
	return map[string]any{
		"id":         j.id,
		"status":     j.status,
		"source":     map[string]any{"repository": usageRepository, "ref": nil},
		"model":      "claude-sonnet-4-5",
		"prLink":     prLink,
		"createdAt":  usageCreatedAt,
		"archivedAt": nil,
	}
}

func (a *usageAPI) createJob(w http.ResponseWriter, r *http.Request) {
	if !usageOwnProject(w, r) {
		return
	}
	prompt, ok := usageReadPrompt(w, r)
	if !ok {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.nextJob++
	j := &usageJob{id: fmt.Sprintf("job_%d", a.nextJob), status: "active", prompts: []string{prompt}}
	a.jobs[j.id] = j
	usageWriteJSON(w, http.StatusCreated, j.wire())
}

// getJob reports a job active for its first two polls and completed, with a
// new pull request, from the third on.
func (a *usageAPI) getJob(w http.ResponseWriter, r *http.Request) {
	if !usageOwnProject(w, r) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	j, ok := a.jobs[r.PathValue("id")]
	if !ok {
		usageWriteJSON(w, http.StatusNotFound, map[string]any{"error": "Job not found"})
		return
	}
	j.polls++
	if j.status == "active" && j.polls > 2 {
		a.prs++
		j.status, j.prLink = "completed", fmt.Sprintf("https://%s/pull/%d", usageRepository, a.prs)
	}
	usageWriteJSON(w, http.StatusOK, j.wire())
}

func (a *usageAPI) sendMessage(w http.ResponseWriter, r *http.Request) {
	if !usageOwnProject(w, r) {
		return
	}
	a.mu.Lock()
	j, ok := a.jobs[r.PathValue("id")]
	a.mu.Unlock()
	if !ok {
		usageWriteJSON(w, http.StatusNotFound, map[string]any{"error": "Job not found"})
		return
	}
	prompt, ok := usageReadPrompt(w, r)
	if !ok {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	j.prompts = append(j.prompts, prompt)
	j.status, j.prLink, j.polls = "active", "", 0 // prLink is null while active
	usageWriteJSON(w, http.StatusOK, j.wire())
}

func usageBadQuery(w http.ResponseWriter, message string) {
	usageWriteJSON(w, http.StatusBadRequest, map[string]any{
		"error":   "Invalid query parameters",
		"details": []map[string]string{{"message": message}},
	})
}

// usageParseDate accepts what the contract does: YYYY-MM-DD or ISO 8601.
func usageParseDate(s string) (time.Time, bool) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, true
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

func (a *usageAPI) views(w http.ResponseWriter, r *http.Request) {
	if !usageOwnProject(w, r) {
		return
	}
	q := r.URL.Query()
	limit, offset := 50, 0
	if s, ok := q["limit"]; ok {
		n, err := strconv.Atoi(s[0])
		if err != nil || n < 1 || n > 250 {
			usageBadQuery(w, "limit must be an integer between 1 and 250")
			return
		}
		limit = n
	}
	if s, ok := q["offset"]; ok {
		n, err := strconv.Atoi(s[0])
		if err != nil || n < 0 {
			usageBadQuery(w, "offset must be a non-negative integer")
			return
		}
		offset = n
	}
	var from, to time.Time
	for _, p := range []struct {
		name string
		dst  *time.Time
	}{{"dateFrom", &from}, {"dateTo", &to}} {
		if s, ok := q[p.name]; ok {
			t, valid := usageParseDate(s[0])
			if !valid {
				usageBadQuery(w, p.name+" must be YYYY-MM-DD or an ISO 8601 timestamp")
				return
			}
			*p.dst = t
		}
	}
	if !from.IsZero() && !to.IsZero() && from.After(to) {
		usageBadQuery(w, "dateFrom must not be after dateTo")
		return
	}

	a.mu.Lock()
	defer a.mu.Unlock()
	a.viewsQueries = append(a.viewsQueries, r.URL.RawQuery)
	var totals usageRow
	for _, row := range a.rows {
		totals.Human += row.Human
		totals.AI += row.AI
		totals.Total += row.Total
	}
	start := min(offset, len(a.rows))
	end := min(offset+limit, len(a.rows))
	usageWriteJSON(w, http.StatusOK, map[string]any{
		"totals":  map[string]int64{"human": totals.Human, "ai": totals.AI, "total": totals.Total},
		"views":   a.rows[start:end],
		"hasMore": end < len(a.rows),
	})
}

func (a *usageAPI) job(id string) usageJob {
	a.mu.Lock()
	defer a.mu.Unlock()
	if j, ok := a.jobs[id]; ok {
		j := *j
		j.prompts = slices.Clone(j.prompts)
		return j
	}
	return usageJob{}
}

// startUsage serves a fresh double and returns a client for it built the way
// the README shows, plus wait parameters short enough for a test.
func startUsage(t *testing.T, key string) (*usageAPI, *docsapi.Client) {
	t.Helper()
	api := newUsageAPI()
	srv := httptest.NewServer(api.handler())
	t.Cleanup(srv.Close)
	client, err := docsapi.NewClient(key,
		docsapi.WithBaseURL(srv.URL),
		docsapi.WithProjectID(usageProject),
	)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return api, client
}

// Real sockets rule out synctest, so intervals are short instead; nothing
// here asserts how long anything took.
var usageWait = docsapi.WaitParams{MinInterval: 10 * time.Millisecond, MaxInterval: 20 * time.Millisecond, Timeout: 30 * time.Second}

func TestNewUserCreatesJobAndWaitsForPullRequest(t *testing.T) {
	api, client := startUsage(t, usageKey)

	var seen []docsapi.JobStatus
	wait := usageWait
	wait.OnUpdate = func(j *docsapi.Job) { seen = append(seen, j.Status) }
	job, err := client.AgentJobs.CreateAndWait(t.Context(), "",
		docsapi.CreateJobParams{Prompt: "Document the new --verbose flag of the CLI"}, wait)
	if err != nil {
		t.Fatalf("CreateAndWait: %v", err)
	}
	want := &docsapi.Job{
		ID:        "job_1",
		Status:    docsapi.JobStatusCompleted,
		Source:    docsapi.JobSource{Repository: usageRepository}, // ref was null
		Model:     "claude-sonnet-4-5",
		PRLink:    "https://github.com/acme/docs/pull/1",
		CreatedAt: time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC),
	}
	if diff := gocmp.Diff(want, job); diff != "" {
		t.Errorf("job mismatch (-want +got):\n%s", diff)
	}
	// The create's answer, then two active polls, then the completed one.
	wantSeen := []docsapi.JobStatus{docsapi.JobStatusActive, docsapi.JobStatusActive, docsapi.JobStatusActive, docsapi.JobStatusCompleted}
	if diff := gocmp.Diff(wantSeen, seen); diff != "" {
		t.Errorf("OnUpdate statuses mismatch (-want +got):\n%s", diff)
	}
	server := api.job("job_1")
	if server.polls != 3 {
		t.Errorf("server saw %d polls, want 3", server.polls)
	}
	if diff := gocmp.Diff([]string{"Document the new --verbose flag of the CLI"}, server.prompts); diff != "" {
		t.Errorf("prompts received mismatch (-want +got):\n%s", diff)
	}
}

func TestNewUserSendsFollowUpAndWaitsAgain(t *testing.T) {
	api, client := startUsage(t, usageKey)
	ctx := t.Context()

	first, err := client.AgentJobs.CreateAndWait(ctx, "", docsapi.CreateJobParams{Prompt: "Add a troubleshooting page"}, usageWait)
	if err != nil {
		t.Fatalf("CreateAndWait: %v", err)
	}
	job, err := client.AgentJobs.SendMessage(ctx, "", first.ID, docsapi.SendMessageParams{Prompt: "Link it from the FAQ"})
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	if job.ID != first.ID || job.Status != docsapi.JobStatusActive || job.PRLink != "" {
		t.Errorf("after SendMessage: id %q status %q prLink %q, want %q active with no prLink", job.ID, job.Status, job.PRLink, first.ID)
	}
	job, err = client.AgentJobs.Wait(ctx, "", job.ID, usageWait)
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if job.Status != docsapi.JobStatusCompleted || job.PRLink != "https://github.com/acme/docs/pull/2" {
		t.Errorf("after Wait: status %q prLink %q, want completed with pull/2", job.Status, job.PRLink)
	}
	if diff := gocmp.Diff([]string{"Add a troubleshooting page", "Link it from the FAQ"}, api.job(first.ID).prompts); diff != "" {
		t.Errorf("prompts received mismatch (-want +got):\n%s", diff)
	}
}

func TestNewUserExportsAllViewsPageByPage(t *testing.T) {
	api, client := startUsage(t, usageKey)

	params := docsapi.ViewsParams{
		DateFrom: docsapi.Day(2026, time.January, 1),
		DateTo:   docsapi.Day(2026, time.February, 1),
		Limit:    50,
	}
	var got []docsapi.PageView
	for view, err := range client.Analytics.AllViews(t.Context(), "", params) {
		if err != nil {
			t.Fatalf("AllViews: %v", err)
		}
		got = append(got, view)
	}

	want := make([]docsapi.PageView, len(api.rows))
	for i, r := range api.rows {
		want[i] = docsapi.PageView{Path: r.Path, Human: r.Human, AI: r.AI, Total: r.Total}
	}
	if len(got) != usageViewCount {
		t.Errorf("got %d rows, want %d", len(got), usageViewCount)
	}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("rows mismatch (-want +got):\n%s", diff)
	}
	const dates = "dateFrom=2026-01-01&dateTo=2026-02-01"
	wantQueries := []string{dates + "&limit=50", dates + "&limit=50&offset=50", dates + "&limit=50&offset=100"}
	api.mu.Lock()
	queries := slices.Clone(api.viewsQueries)
	api.mu.Unlock()
	if diff := gocmp.Diff(wantQueries, queries); diff != "" {
		t.Errorf("pages requested mismatch (-want +got):\n%s", diff)
	}
}

func TestNewUserReadsTotalsFromOnePage(t *testing.T) {
	api, client := startUsage(t, usageKey)

	page, err := client.Analytics.Views(t.Context(), "", docsapi.ViewsParams{
		DateFrom: docsapi.Instant(time.Date(2026, 1, 1, 9, 30, 0, 0, time.FixedZone("UTC+1", 60*60))),
		Limit:    10,
	})
	if err != nil {
		t.Fatalf("Views: %v", err)
	}
	var want docsapi.ViewCounts
	for _, r := range api.rows {
		want.Human += r.Human
		want.AI += r.AI
		want.Total += r.Total
	}
	if diff := gocmp.Diff(want, page.Totals); diff != "" {
		t.Errorf("totals mismatch (-want +got):\n%s", diff)
	}
	if len(page.Views) != 10 || !page.HasMore {
		t.Fatalf("page: %d rows, hasMore %v; want 10 rows and hasMore", len(page.Views), page.HasMore)
	}
	if page.Views[0].Path != api.rows[0].Path {
		t.Errorf("first row %q, want the most viewed, %q", page.Views[0].Path, api.rows[0].Path)
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	if diff := gocmp.Diff([]string{"dateFrom=" + url.QueryEscape("2026-01-01T08:30:00Z") + "&limit=10"}, api.viewsQueries); diff != "" {
		t.Errorf("query mismatch (-want +got):\n%s", diff)
	}
}

func TestNewUserWithWrongKeyIsUnauthorized(t *testing.T) {
	_, client := startUsage(t, "mint_notTheRightKey")
	ctx := t.Context()

	_, err := client.AgentJobs.Get(ctx, "", "job_1")
	if !errors.Is(err, docsapi.ErrUnauthorized) {
		t.Errorf("Get: error = %v, want one matching ErrUnauthorized", err)
	}
	var apiErr *docsapi.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnauthorized || apiErr.Message != "Invalid or expired API key" {
		t.Errorf("Get: error = %v, want a 401 *APIError with the server's message", err)
	}

	_, err = docsapi.Collect(client.Analytics.AllViews(ctx, "", docsapi.ViewsParams{}))
	if !errors.Is(err, docsapi.ErrUnauthorized) {
		t.Errorf("AllViews: error = %v, want one matching ErrUnauthorized", err)
	}

	_, err = client.AgentJobs.CreateAndWait(ctx, "", docsapi.CreateJobParams{Prompt: "anything"}, usageWait)
	if !errors.Is(err, docsapi.ErrUnauthorized) {
		t.Errorf("CreateAndWait: error = %v, want one matching ErrUnauthorized", err)
	}
}

func TestNewUserGetsNotFoundForMissingJobAndProject(t *testing.T) {
	_, client := startUsage(t, usageKey)
	ctx := t.Context()

	_, err := client.AgentJobs.Get(ctx, "", "job_404")
	if !errors.Is(err, docsapi.ErrNotFound) {
		t.Errorf("Get: error = %v, want one matching ErrNotFound", err)
	}
	var apiErr *docsapi.APIError
	if !errors.As(err, &apiErr) || apiErr.Message != "Job not found" || apiErr.Path != "/v2/agent/acme-docs/job/job_404" {
		t.Errorf("Get: error = %v, want a 404 *APIError for /v2/agent/acme-docs/job/job_404", err)
	}

	// Waiting on a job that does not exist stops at once rather than polling.
	job, err := client.AgentJobs.Wait(ctx, "", "job_404", usageWait)
	if job != nil || !errors.Is(err, docsapi.ErrNotFound) {
		t.Errorf("Wait: job %v, error %v; want nil and one matching ErrNotFound", job, err)
	}

	_, err = client.Analytics.Views(ctx, "someone-elses-docs", docsapi.ViewsParams{})
	if !errors.Is(err, docsapi.ErrNotFound) {
		t.Errorf("Views of another project: error = %v, want one matching ErrNotFound", err)
	}
}
