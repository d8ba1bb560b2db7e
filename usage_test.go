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

	// The other exports, as JSON objects: the double knows the contract,
	// not the SDK's types. queries records every export's raw query by path
	// suffix ("searches", "feedback", ...).
	searchRows    []map[string]any // most hits first
	feedbackList  []map[string]any
	conversations []map[string]any
	queries       map[string][]string
}

func newUsageAPI() *usageAPI {
	a := &usageAPI{jobs: make(map[string]*usageJob), queries: make(map[string][]string)}
	for i := range usageViewCount {
		// Counts repeat, so ties exercise the path tiebreak.
		h, ai := int64(i*37%50), int64(i*11%20)
		a.rows = append(a.rows, usageRow{Path: fmt.Sprintf("/docs/page-%03d", i), Human: h, AI: ai, Total: h + ai})
	}
	slices.SortFunc(a.rows, func(x, y usageRow) int {
		return cmp.Or(cmp.Compare(y.Total, x.Total), strings.Compare(x.Path, y.Path))
	})
	for i := range usageSearchCount {
		var top any // null: no result opened
		if i%4 != 0 {
			top = fmt.Sprintf("/docs/page-%03d", i%7)
		}
		a.searchRows = append(a.searchRows, map[string]any{
			"searchQuery": fmt.Sprintf("query %03d", i), "hits": usageSearchCount - i, "ctr": float64(i%5) / 4,
			"topClickedPage": top, "lastSearchedAt": fmt.Sprintf("2026-01-%02dT12:00:00Z", 1+i%28),
		})
	}
	sources := []string{"contextual", "code_snippet", "agent", "thumbs_only", "widget"}
	statuses := []string{"pending", "in_progress", "resolved", "dismissed"}
	for i := range usageFeedbackCount {
		e := map[string]any{
			"id": fmt.Sprintf("fb_%03d", i), "path": fmt.Sprintf("/docs/page-%03d", i%9),
			"comment": fmt.Sprintf("comment %d", i), "createdAt": fmt.Sprintf("2026-01-%02dT08:00:00Z", 1+i%28),
			"source": sources[i%len(sources)], "status": statuses[i%len(statuses)],
		}
		switch e["source"] {
		case "contextual":
			e["helpful"], e["contact"] = i%2 == 0, nil
		case "code_snippet":
			e["code"], e["filename"], e["lang"] = "go run .", nil, "bash"
		case "thumbs_only":
			e["comment"] = nil
		}
		a.feedbackList = append(a.feedbackList, e)
	}
	for i := range usageConversationCount {
		c := map[string]any{
			"id": fmt.Sprintf("01JH8Z%020d", i), "timestamp": fmt.Sprintf("2026-01-%02dT09:00:00Z", 1+i%28),
			"query": fmt.Sprintf("question %d", i), "response": fmt.Sprintf("answer %d", i),
			"sources":          []map[string]string{{"title": "Keys", "url": "https://docs.example.com/keys"}},
			"resolutionStatus": []string{"answered", "unanswered"}[i%2], "queryCategory": nil, "pageUrl": nil,
		}
		if i%3 == 1 { // otherwise absent, which means answer
			c["responseType"] = "clarifying_question"
		}
		a.conversations = append(a.conversations, c)
	}
	return a
}

const (
	usageSearchCount       = 230
	usageFeedbackCount     = 140
	usageConversationCount = 2500
)

func (a *usageAPI) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v2/agent/{projectId}/job", a.createJob)
	mux.HandleFunc("GET /v2/agent/{projectId}/job/{id}", a.getJob)
	mux.HandleFunc("POST /v2/agent/{projectId}/job/{id}/message", a.sendMessage)
	mux.HandleFunc("GET /v1/analytics/{projectId}/views", a.views)
	mux.HandleFunc("GET /v1/analytics/{projectId}/visitors", a.visitors)
	mux.HandleFunc("GET /v1/analytics/{projectId}/searches", a.searches)
	mux.HandleFunc("GET /v1/analytics/{projectId}/feedback", a.feedback)
	mux.HandleFunc("GET /v1/analytics/{projectId}/feedback/by-page", a.feedbackByPage)
	mux.HandleFunc("GET /v1/analytics/{projectId}/assistant", a.assistant)
	mux.HandleFunc("GET /v1/analytics/{projectId}/assistant/threads/{threadId}", a.assistantThread)
	mux.HandleFunc("GET /v1/analytics/{projectId}/assistant/caller-stats", a.callerStats)
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

// usageQuery checks the parameters every export shares, limit included
// (1 to max, def when absent), and records the raw query under name.
func (a *usageAPI) usageQuery(w http.ResponseWriter, r *http.Request, name string, max, def int) (limit int, ok bool) {
	if !usageOwnProject(w, r) {
		return 0, false
	}
	q := r.URL.Query()
	for _, p := range []string{"dateFrom", "dateTo"} {
		if s, ok := q[p]; ok {
			if _, valid := usageParseDate(s[0]); !valid {
				usageBadQuery(w, p+" must be YYYY-MM-DD or an ISO 8601 timestamp")
				return 0, false
			}
		}
	}
	limit = def
	if s, ok := q["limit"]; ok {
		n, err := strconv.Atoi(s[0])
		if err != nil || n < 1 || n > max {
			usageBadQuery(w, fmt.Sprintf("limit must be an integer between 1 and %d", max))
			return 0, false
		}
		limit = n
	}
	a.mu.Lock()
	a.queries[name] = append(a.queries[name], r.URL.RawQuery)
	a.mu.Unlock()
	return limit, true
}

// usageCursorPage cuts items at the cursor ("cur-<index>", opaque to the
// client) and returns the page and the next cursor, or nil for the last page.
func usageCursorPage(w http.ResponseWriter, r *http.Request, items []map[string]any, limit int) ([]map[string]any, any, bool) {
	start := 0
	if c := r.URL.Query().Get("cursor"); c != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(c, "cur-"))
		if err != nil || !strings.HasPrefix(c, "cur-") || n < 0 || n > len(items) {
			usageBadQuery(w, "invalid cursor")
			return nil, nil, false
		}
		start = n
	}
	end := min(start+limit, len(items))
	var next any // null
	if end < len(items) {
		next = fmt.Sprintf("cur-%d", end)
	}
	return items[start:end], next, true
}

func (a *usageAPI) visitors(w http.ResponseWriter, r *http.Request) {
	limit, ok := a.usageQuery(w, r, "visitors", 250, 50)
	if !ok {
		return
	}
	offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
	// Visitors are the views rows halved, total de-duplicated below h + ai.
	var rows []map[string]any
	for _, row := range a.rows {
		h, ai := row.Human/2, row.AI/2
		rows = append(rows, map[string]any{"path": row.Path, "human": h, "ai": ai, "total": h + ai - min(h, ai)/2})
	}
	start, end := min(offset, len(rows)), min(offset+limit, len(rows))
	usageWriteJSON(w, http.StatusOK, map[string]any{
		"totals":   map[string]int64{"human": 1000, "ai": 400, "total": 1300},
		"visitors": rows[start:end],
		"hasMore":  end < len(rows),
	})
}

func (a *usageAPI) searches(w http.ResponseWriter, r *http.Request) {
	limit, ok := a.usageQuery(w, r, "searches", 100, 50)
	if !ok {
		return
	}
	page, next, ok := usageCursorPage(w, r, a.searchRows, limit)
	if !ok {
		return
	}
	total := 0
	for _, s := range a.searchRows {
		total += s["hits"].(int)
	}
	usageWriteJSON(w, http.StatusOK, map[string]any{"searches": page, "totalSearches": total, "nextCursor": next})
}

// usageFeedbackFilter keeps the entries of the query's source and statuses.
func usageFeedbackFilter(w http.ResponseWriter, r *http.Request, all []map[string]any) ([]map[string]any, bool) {
	q := r.URL.Query()
	var statuses []string
	if s := q.Get("status"); s != "" {
		statuses = strings.Split(s, ",")
		for _, st := range statuses {
			if !slices.Contains([]string{"pending", "in_progress", "resolved", "dismissed"}, st) {
				usageBadQuery(w, "invalid status "+st)
				return nil, false
			}
		}
	}
	var kept []map[string]any
	for _, e := range all {
		if src := q.Get("source"); src != "" && e["source"] != src {
			continue
		}
		if len(statuses) > 0 && !slices.Contains(statuses, e["status"].(string)) {
			continue
		}
		kept = append(kept, e)
	}
	return kept, true
}

func (a *usageAPI) feedback(w http.ResponseWriter, r *http.Request) {
	limit, ok := a.usageQuery(w, r, "feedback", 100, 50)
	if !ok {
		return
	}
	kept, ok := usageFeedbackFilter(w, r, a.feedbackList)
	if !ok {
		return
	}
	page, next, ok := usageCursorPage(w, r, kept, limit)
	if !ok {
		return
	}
	usageWriteJSON(w, http.StatusOK, map[string]any{"feedback": page, "nextCursor": next, "hasMore": next != nil})
}

func (a *usageAPI) feedbackByPage(w http.ResponseWriter, r *http.Request) {
	limit, ok := a.usageQuery(w, r, "feedback/by-page", 100, 10)
	if !ok {
		return
	}
	kept, ok := usageFeedbackFilter(w, r, a.feedbackList)
	if !ok {
		return
	}
	byPath := map[string]map[string]any{}
	var paths []string
	for _, e := range kept {
		p := e["path"].(string)
		row, seen := byPath[p]
		if !seen {
			row = map[string]any{"path": p, "thumbsUp": 0, "thumbsDown": 0, "code": 0, "total": 0}
			byPath[p] = row
			paths = append(paths, p)
		}
		switch {
		case e["source"] == "code_snippet":
			row["code"] = row["code"].(int) + 1
		case e["helpful"] == true:
			row["thumbsUp"] = row["thumbsUp"].(int) + 1
		default:
			row["thumbsDown"] = row["thumbsDown"].(int) + 1
		}
		row["total"] = row["total"].(int) + 1
	}
	slices.Sort(paths)
	rows := []map[string]any{}
	for _, p := range paths[:min(limit, len(paths))] {
		rows = append(rows, byPath[p])
	}
	usageWriteJSON(w, http.StatusOK, map[string]any{"feedback": rows, "hasMore": len(paths) > limit})
}

func (a *usageAPI) assistant(w http.ResponseWriter, r *http.Request) {
	limit, ok := a.usageQuery(w, r, "assistant", 1000, 100)
	if !ok {
		return
	}
	page, next, ok := usageCursorPage(w, r, a.conversations, limit)
	if !ok {
		return
	}
	usageWriteJSON(w, http.StatusOK, map[string]any{"conversations": page, "nextCursor": next, "hasMore": next != nil})
}

func (a *usageAPI) assistantThread(w http.ResponseWriter, r *http.Request) {
	if _, ok := a.usageQuery(w, r, "assistant/threads", 1, 1); !ok {
		return
	}
	for i, c := range a.conversations {
		if usageThreadID(i) == r.PathValue("threadId") {
			usageWriteJSON(w, http.StatusOK, map[string]any{
				"threadId": usageThreadID(i), "createdAt": c["timestamp"],
				"messages": []map[string]any{
					{"id": "m1", "role": "user", "content": c["query"], "createdAt": c["timestamp"]},
					{"id": "m2", "role": "assistant", "content": c["response"], "createdAt": c["timestamp"]},
				},
			})
			return
		}
	}
	usageWriteJSON(w, http.StatusNotFound, map[string]any{"error": "Thread not found"})
}

// usageThreadID names the thread of conversation i. The contract does not
// say how a conversation's id relates to a thread's, so the double keeps
// them apart and the test learns thread IDs from the double.
func usageThreadID(i int) string { return fmt.Sprintf("01JHTH%020d", i) }

func (a *usageAPI) callerStats(w http.ResponseWriter, r *http.Request) {
	if _, ok := a.usageQuery(w, r, "assistant/caller-stats", 1, 1); !ok {
		return
	}
	usageWriteJSON(w, http.StatusOK, map[string]any{"web": 2000, "api": 450.0, "other": 50, "total": 2500})
}

func (a *usageAPI) queriesOf(name string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.queries[name])
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

func TestNewUserExportsVisitors(t *testing.T) {
	api, client := startUsage(t, usageKey)
	ctx := t.Context()

	page, err := client.Analytics.Visitors(ctx, "", docsapi.VisitorsParams{Limit: 5})
	if err != nil {
		t.Fatalf("Visitors: %v", err)
	}
	// The total is de-duplicated, so less than human + ai, and kept as sent.
	if want := (docsapi.VisitorCounts{Human: 1000, AI: 400, Total: 1300}); page.Totals != want || len(page.Visitors) != 5 || !page.HasMore {
		t.Errorf("page: totals %+v, %d rows, hasMore %v; want %+v, 5 rows, more", page.Totals, len(page.Visitors), page.HasMore, want)
	}
	rows, err := docsapi.Collect(client.Analytics.AllVisitors(ctx, "", docsapi.VisitorsParams{Limit: 50}))
	if err != nil {
		t.Fatalf("AllVisitors: %v", err)
	}
	if len(rows) != usageViewCount || rows[0].Path != api.rows[0].Path {
		t.Errorf("AllVisitors: %d rows starting %q, want %d starting %q", len(rows), rows[0].Path, usageViewCount, api.rows[0].Path)
	}
	want := []string{"limit=5", "limit=50", "limit=50&offset=50", "limit=50&offset=100"}
	if diff := gocmp.Diff(want, api.queriesOf("visitors")); diff != "" {
		t.Errorf("queries mismatch (-want +got):\n%s", diff)
	}
}

func TestNewUserExportsAllSearches(t *testing.T) {
	api, client := startUsage(t, usageKey)
	ctx := t.Context()

	var got []docsapi.Search
	for s, err := range client.Analytics.AllSearches(ctx, "", docsapi.SearchesParams{DateFrom: docsapi.Day(2026, time.January, 1)}) {
		if err != nil {
			t.Fatalf("AllSearches: %v", err)
		}
		got = append(got, s)
	}
	if len(got) != usageSearchCount {
		t.Fatalf("got %d searches, want %d", len(got), usageSearchCount)
	}
	for i, s := range got {
		w := api.searchRows[i]
		top, _ := w["topClickedPage"].(string) // nil (null) is ""
		if s.Query != w["searchQuery"] || s.Hits != int64(w["hits"].(int)) || s.CTR != w["ctr"] || s.TopClickedPage != top ||
			s.LastSearchedAt.Format(time.RFC3339) != w["lastSearchedAt"] {
			t.Fatalf("search %d = %+v, want %v", i, s, w)
		}
	}
	want := []string{"dateFrom=2026-01-01&limit=100", "cursor=cur-100&dateFrom=2026-01-01&limit=100", "cursor=cur-200&dateFrom=2026-01-01&limit=100"}
	if diff := gocmp.Diff(want, api.queriesOf("searches")); diff != "" {
		t.Errorf("queries mismatch (-want +got):\n%s", diff)
	}

	// One page at a time, by hand, with the page's cursor.
	page, err := client.Analytics.Searches(ctx, "", docsapi.SearchesParams{Limit: 100, Cursor: "cur-200"})
	if err != nil {
		t.Fatalf("Searches: %v", err)
	}
	if len(page.Searches) != 30 || page.NextCursor != "" || page.TotalSearches != int64(usageSearchCount*(usageSearchCount+1)/2) {
		t.Errorf("last page: %d rows, next %q, total %d", len(page.Searches), page.NextCursor, page.TotalSearches)
	}
}

func TestNewUserFiltersFeedback(t *testing.T) {
	api, client := startUsage(t, usageKey)
	ctx := t.Context()

	params := docsapi.FeedbackParams{
		Limit:  10,
		Source: docsapi.FeedbackSourceContextual,
		Status: []docsapi.FeedbackStatus{docsapi.FeedbackStatusPending, docsapi.FeedbackStatusResolved},
	}
	entries, err := docsapi.Collect(client.Analytics.AllFeedback(ctx, "", params))
	if err != nil {
		t.Fatalf("AllFeedback: %v", err)
	}
	var wantIDs []string
	for _, e := range api.feedbackList {
		if e["source"] == "contextual" && (e["status"] == "pending" || e["status"] == "resolved") {
			wantIDs = append(wantIDs, e["id"].(string))
		}
	}
	var gotIDs []string
	for _, e := range entries {
		gotIDs = append(gotIDs, e.ID)
		if e.Source != docsapi.FeedbackSourceContextual || e.Comment == nil || e.Contact != "" || e.Code != "" {
			t.Errorf("entry %+v: want a contextual entry with a comment and no contact", e)
		}
	}
	if diff := gocmp.Diff(wantIDs, gotIDs); diff != "" {
		t.Errorf("entries mismatch (-want +got):\n%s", diff)
	}
	if n := len(api.queriesOf("feedback")); n != (len(wantIDs)+9)/10 {
		t.Errorf("%d requests for %d entries in pages of 10", n, len(wantIDs))
	}

	// Every source, by hand: unknown sources and all three shapes come through.
	page, err := client.Analytics.Feedback(ctx, "", docsapi.FeedbackParams{Limit: 5})
	if err != nil {
		t.Fatalf("Feedback: %v", err)
	}
	if !page.HasMore || page.NextCursor != "cur-5" || len(page.Feedback) != 5 {
		t.Fatalf("page: %d entries, next %q, more %v", len(page.Feedback), page.NextCursor, page.HasMore)
	}
	code, thumbs, unknown := page.Feedback[1], page.Feedback[3], page.Feedback[4]
	if code.Source != docsapi.FeedbackSourceCodeSnippet || code.Code != "go run ." || code.Lang != "bash" || code.Filename != "" {
		t.Errorf("code-snippet entry = %+v", code)
	}
	if thumbs.Source != docsapi.FeedbackSourceThumbsOnly || thumbs.Comment != nil {
		t.Errorf("thumbs-only entry = %+v, want a nil Comment", thumbs)
	}
	if unknown.Source != "widget" || unknown.Source.Known() {
		t.Errorf("entry from an unknown source = %+v, want it kept as widget", unknown)
	}

	// The server refuses a status it does not know; the SDK lets it through.
	_, err = client.Analytics.Feedback(ctx, "", docsapi.FeedbackParams{Status: []docsapi.FeedbackStatus{"escalated"}})
	var apiErr *docsapi.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || len(apiErr.Details) != 1 {
		t.Errorf("unknown status: error = %v, want the server's 400 with its details", err)
	}
}

func TestNewUserReadsFeedbackByPage(t *testing.T) {
	api, client := startUsage(t, usageKey)

	res, err := client.Analytics.FeedbackByPage(t.Context(), "", docsapi.FeedbackByPageParams{Limit: 3})
	if err != nil {
		t.Fatalf("FeedbackByPage: %v", err)
	}
	if len(res.Feedback) != 3 || !res.HasMore {
		t.Fatalf("%d rows, hasMore %v; want 3 and more", len(res.Feedback), res.HasMore)
	}
	var total int64
	for _, e := range api.feedbackList {
		if e["path"] == res.Feedback[0].Path {
			total++
		}
	}
	r := res.Feedback[0]
	if r.Total != total || r.ThumbsUp+r.ThumbsDown+r.Code != total {
		t.Errorf("row %+v, want a total of %d", r, total)
	}
	if diff := gocmp.Diff([]string{"limit=3"}, api.queriesOf("feedback/by-page")); diff != "" {
		t.Errorf("queries mismatch (-want +got):\n%s", diff)
	}
}

func TestNewUserReadsAssistantConversationsAndThreads(t *testing.T) {
	api, client := startUsage(t, usageKey)
	ctx := t.Context()

	var conversations []docsapi.AssistantConversation
	for c, err := range client.Analytics.AllAssistantConversations(ctx, "", docsapi.AssistantConversationsParams{}) {
		if err != nil {
			t.Fatalf("AllAssistantConversations: %v", err)
		}
		conversations = append(conversations, c)
	}
	if len(conversations) != usageConversationCount {
		t.Fatalf("got %d conversations, want %d", len(conversations), usageConversationCount)
	}
	if diff := gocmp.Diff([]string{"limit=1000", "cursor=cur-1000&limit=1000", "cursor=cur-2000&limit=1000"}, api.queriesOf("assistant")); diff != "" {
		t.Errorf("queries mismatch (-want +got):\n%s", diff)
	}
	first, second := conversations[0], conversations[1]
	if first.ResponseType != docsapi.AssistantResponseAnswer || second.ResponseType != docsapi.AssistantResponseClarifyingQuestion {
		t.Errorf("response types %q, %q; want answer (absent on the wire) and clarifying_question", first.ResponseType, second.ResponseType)
	}
	if first.ResolutionStatus != docsapi.AssistantAnswered || len(first.Sources) != 1 || first.PageURL != "" {
		t.Errorf("first conversation = %+v", first)
	}

	page, err := client.Analytics.AssistantConversations(ctx, "", docsapi.AssistantConversationsParams{Limit: 10, Cursor: "cur-2495"})
	if err != nil || len(page.Conversations) != 5 || page.HasMore || page.NextCursor != "" {
		t.Fatalf("last page by hand: %+v, %v", page, err)
	}

	thread, err := client.Analytics.AssistantThread(ctx, "", usageThreadID(0))
	if err != nil {
		t.Fatalf("AssistantThread: %v", err)
	}
	want := &docsapi.AssistantThread{
		ThreadID:  usageThreadID(0),
		CreatedAt: first.Timestamp,
		Messages: []docsapi.AssistantMessage{
			{ID: "m1", Role: docsapi.AssistantRoleUser, Content: first.Query, CreatedAt: first.Timestamp},
			{ID: "m2", Role: docsapi.AssistantRoleAssistant, Content: first.Response, CreatedAt: first.Timestamp},
		},
	}
	if diff := gocmp.Diff(want, thread); diff != "" {
		t.Errorf("thread mismatch (-want +got):\n%s", diff)
	}
	if _, err := client.Analytics.AssistantThread(ctx, "", "01JH8ZNOSUCHTHREAD"); !errors.Is(err, docsapi.ErrNotFound) {
		t.Errorf("unknown thread: error = %v, want ErrNotFound", err)
	}
}

func TestNewUserReadsAssistantCallerStats(t *testing.T) {
	api, client := startUsage(t, usageKey)

	stats, err := client.Analytics.AssistantCallerStats(t.Context(), "", docsapi.AssistantCallerStatsParams{
		DateFrom: docsapi.Day(2026, time.January, 1),
		DateTo:   docsapi.Day(2026, time.February, 1),
	})
	if err != nil {
		t.Fatalf("AssistantCallerStats: %v", err)
	}
	if want := (docsapi.AssistantCallerStats{Web: 2000, API: 450, Other: 50, Total: 2500}); *stats != want {
		t.Errorf("stats = %+v, want %+v", *stats, want)
	}
	if diff := gocmp.Diff([]string{"dateFrom=2026-01-01&dateTo=2026-02-01"}, api.queriesOf("assistant/caller-stats")); diff != "" {
		t.Errorf("queries mismatch (-want +got):\n%s", diff)
	}
}

// A wrong key is refused the same way by every export.
func TestNewUserWithWrongKeyIsRefusedByEveryExport(t *testing.T) {
	_, client := startUsage(t, "mint_notTheRightKey")
	ctx := t.Context()
	a := client.Analytics
	errs := map[string]error{}
	_, errs["Visitors"] = a.Visitors(ctx, "", docsapi.VisitorsParams{})
	_, errs["AllVisitors"] = docsapi.Collect(a.AllVisitors(ctx, "", docsapi.VisitorsParams{}))
	_, errs["Searches"] = a.Searches(ctx, "", docsapi.SearchesParams{})
	_, errs["AllSearches"] = docsapi.Collect(a.AllSearches(ctx, "", docsapi.SearchesParams{}))
	_, errs["Feedback"] = a.Feedback(ctx, "", docsapi.FeedbackParams{})
	_, errs["AllFeedback"] = docsapi.Collect(a.AllFeedback(ctx, "", docsapi.FeedbackParams{}))
	_, errs["FeedbackByPage"] = a.FeedbackByPage(ctx, "", docsapi.FeedbackByPageParams{})
	_, errs["AssistantConversations"] = a.AssistantConversations(ctx, "", docsapi.AssistantConversationsParams{})
	_, errs["AllAssistantConversations"] = docsapi.Collect(a.AllAssistantConversations(ctx, "", docsapi.AssistantConversationsParams{}))
	_, errs["AssistantThread"] = a.AssistantThread(ctx, "", "01JH8Z")
	_, errs["AssistantCallerStats"] = a.AssistantCallerStats(ctx, "", docsapi.AssistantCallerStatsParams{})
	for name, err := range errs {
		if !errors.Is(err, docsapi.ErrUnauthorized) {
			t.Errorf("%s: error = %v, want one matching ErrUnauthorized", name, err)
		}
	}
}
