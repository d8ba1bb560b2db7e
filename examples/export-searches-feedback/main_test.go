package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
)

// The tests run the program against a double of the hosted service's
// searches and feedback exports, which follows the contract: cursors, null
// fields, every feedback source (agent feedback included, which the
// self-hosted server never records), filters, the error body.

const testKey = "mint_exportSearchesFeedbackTest"

// api is the double. Its cursors are opaque to the client ("p<index>").
type api struct {
	searches []map[string]any
	feedback []map[string]any
	// fail, if set, answers instead of the export when it returns true.
	fail func(w http.ResponseWriter, r *http.Request) bool

	mu      sync.Mutex
	queries []string // path?query of every request
}

func newAPI() *api {
	a := &api{}
	for i := range 230 {
		var top any // null: no result opened
		if i%3 != 0 {
			top = fmt.Sprintf("/docs/page-%d", i%7)
		}
		a.searches = append(a.searches, map[string]any{
			"searchQuery": fmt.Sprintf("query %03d", i), "hits": 1000 - i, "ctr": float64(i%4) / 8,
			"topClickedPage": top, "lastSearchedAt": "2026-03-02T10:00:00Z",
		})
	}
	a.searches[1]["searchQuery"] = `"quoted", with a comma`
	sources := []string{"contextual", "code_snippet", "agent", "thumbs_only", "widget"}
	statuses := []string{"pending", "in_progress", "resolved", "dismissed"}
	for i := range 130 {
		e := map[string]any{
			"id": fmt.Sprintf("fb_%03d", i), "path": fmt.Sprintf("/docs/page-%d", i%5),
			"comment": fmt.Sprintf("comment %d", i), "createdAt": "2026-03-03T08:30:00.5Z",
			"source": sources[i%5], "status": statuses[i%4],
		}
		switch e["source"] {
		case "contextual":
			e["helpful"], e["contact"] = i%2 == 0, nil
			if i == 0 {
				e["contact"] = "ada@example.com"
				e["comment"] = "line one\nline two"
			}
		case "code_snippet":
			e["code"], e["filename"], e["lang"] = "go run .", nil, "bash"
		case "thumbs_only":
			e["comment"], e["createdAt"] = nil, nil
			// The self-hosted server sends the vote; the hosted service
			// does not.
			if i%3 == 0 {
				e["helpful"] = i%2 == 0
			}
		}
		a.feedback = append(a.feedback, e)
	}
	return a
}

func write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func badQuery(w http.ResponseWriter, msg string) {
	write(w, http.StatusBadRequest, map[string]any{"error": "Invalid query", "details": []map[string]string{{"message": msg}}})
}

// page cuts items at the request's cursor.
func page(w http.ResponseWriter, r *http.Request, items []map[string]any) ([]map[string]any, any, bool) {
	q := r.URL.Query()
	limit := 50
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			badQuery(w, "limit must be between 1 and 100")
			return nil, nil, false
		}
		limit = n
	}
	start := 0
	if c := q.Get("cursor"); c != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(c, "p"))
		if err != nil || n > len(items) {
			badQuery(w, "invalid cursor")
			return nil, nil, false
		}
		start = n
	}
	end := min(start+limit, len(items))
	var next any
	if end < len(items) {
		next = fmt.Sprintf("p%d", end)
	}
	return items[start:end], next, true
}

func (a *api) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.queries = append(a.queries, r.URL.Path+"?"+r.URL.RawQuery)
	a.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+testKey {
		write(w, http.StatusUnauthorized, map[string]any{"error": "Invalid or expired API key"})
		return
	}
	if a.fail != nil && a.fail(w, r) {
		return
	}
	q := r.URL.Query()
	if q.Get("dateFrom") != "2026-03-01" || q.Get("dateTo") != "2026-03-08" {
		badQuery(w, "unexpected dates")
		return
	}
	switch r.URL.Path {
	case "/v1/analytics/handbook/searches":
		items, next, ok := page(w, r, a.searches)
		if ok {
			write(w, http.StatusOK, map[string]any{"searches": items, "totalSearches": 123456, "nextCursor": next})
		}
	case "/v1/analytics/handbook/feedback":
		var kept []map[string]any
		statuses := strings.Split(q.Get("status"), ",")
		for _, e := range a.feedback {
			if (q.Get("source") == "" || e["source"] == q.Get("source")) && (q.Get("status") == "" || slices.Contains(statuses, e["status"].(string))) {
				kept = append(kept, e)
			}
		}
		items, next, ok := page(w, r, kept)
		if ok {
			write(w, http.StatusOK, map[string]any{"feedback": items, "nextCursor": next, "hasMore": next != nil})
		}
	default:
		write(w, http.StatusNotFound, map[string]any{"error": "Project not found"})
	}
}

func (a *api) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.queries)
}

func start(t *testing.T, a *api) config {
	t.Helper()
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	return config{key: testKey, baseURL: srv.URL, project: "handbook", from: "2026-03-01", to: "2026-03-08", dir: t.TempDir()}
}

// csvField quotes a field as encoding/csv does.
func csvField(s string) string {
	if strings.ContainsAny(s, "\",\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func expectedSearches(a *api) string {
	var b strings.Builder
	b.WriteString("query,hits,ctr,top_clicked_page,last_searched_at\n")
	for _, s := range a.searches {
		fmt.Fprintf(&b, "%s,%d,%s,%s,%s\n", csvField(s["searchQuery"].(string)), s["hits"],
			strconv.FormatFloat(s["ctr"].(float64), 'f', -1, 64), str(s["topClickedPage"]), s["lastSearchedAt"])
	}
	return b.String()
}

func expectedFeedback(entries []map[string]any) string {
	var b strings.Builder
	b.WriteString("id,created_at,path,source,status,comment,helpful,contact,code,filename,lang\n")
	for _, e := range entries {
		helpful := ""
		switch e["helpful"] {
		case true:
			helpful = "yes"
		case false:
			helpful = "no"
		}
		fields := []string{str(e["id"]), str(e["createdAt"]), str(e["path"]), str(e["source"]), str(e["status"]),
			str(e["comment"]), helpful, str(e["contact"]), str(e["code"]), str(e["filename"]), str(e["lang"])}
		for i := range fields {
			fields[i] = csvField(fields[i])
		}
		b.WriteString(strings.Join(fields, ",") + "\n")
	}
	return b.String()
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestExport(t *testing.T) {
	a := newAPI()
	cfg := start(t, a)
	var out strings.Builder
	if err := run(t.Context(), cfg, &out); err != nil {
		t.Fatalf("run: %v", err)
	}
	if got, want := readFile(t, filepath.Join(cfg.dir, "searches.csv")), expectedSearches(a); got != want {
		t.Errorf("searches.csv differs\n got %.400q\nwant %.400q", got, want)
	}
	if got, want := readFile(t, filepath.Join(cfg.dir, "feedback.csv")), expectedFeedback(a.feedback); got != want {
		t.Errorf("feedback.csv differs\n got %.600q\nwant %.600q", got, want)
	}
	wantOut := fmt.Sprintf("wrote 230 searches to %s (2026-03-01 up to 2026-03-08, exclusive)\nwrote 130 feedback entries to %s\n",
		filepath.Join(cfg.dir, "searches.csv"), filepath.Join(cfg.dir, "feedback.csv"))
	if out.String() != wantOut {
		t.Errorf("output = %q\n     want %q", out.String(), wantOut)
	}
	const dates = "dateFrom=2026-03-01&dateTo=2026-03-08"
	want := []string{
		"/v1/analytics/handbook/searches?" + dates + "&limit=100",
		"/v1/analytics/handbook/searches?cursor=p100&" + dates + "&limit=100",
		"/v1/analytics/handbook/searches?cursor=p200&" + dates + "&limit=100",
		"/v1/analytics/handbook/feedback?" + dates + "&limit=100",
		"/v1/analytics/handbook/feedback?cursor=p100&" + dates + "&limit=100",
	}
	if got := a.requests(); !slices.Equal(got, want) {
		t.Errorf("requests =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if runtime.GOOS != "windows" {
		if info, err := os.Stat(filepath.Join(cfg.dir, "feedback.csv")); err != nil || info.Mode().Perm() != 0o644 {
			t.Errorf("feedback.csv mode %v (%v), want 0644", info.Mode(), err)
		}
	}
	checkOnlyFiles(t, cfg.dir, "feedback.csv", "searches.csv")
}

func TestExportFiltersFeedback(t *testing.T) {
	a := newAPI()
	cfg := start(t, a)
	cfg.source, cfg.statuses = "contextual", "pending, resolved"
	if err := run(t.Context(), cfg, new(strings.Builder)); err != nil {
		t.Fatalf("run: %v", err)
	}
	var kept []map[string]any
	for _, e := range a.feedback {
		if e["source"] == "contextual" && (e["status"] == "pending" || e["status"] == "resolved") {
			kept = append(kept, e)
		}
	}
	if got, want := readFile(t, filepath.Join(cfg.dir, "feedback.csv")), expectedFeedback(kept); got != want {
		t.Errorf("feedback.csv differs\n got %q\nwant %q", got, want)
	}
	reqs := a.requests()
	if last := reqs[len(reqs)-1]; !strings.HasSuffix(last, "&limit=100&source=contextual&status=pending%2Cresolved") {
		t.Errorf("feedback request %q, want the filters as source and a comma-separated status", last)
	}
}

// A failure part-way leaves the files of an earlier run as they were, and
// no temporary file behind.
func TestFailedExportLeavesTheEarlierFiles(t *testing.T) {
	tests := []struct {
		name   string
		fail   func(w http.ResponseWriter, r *http.Request) bool
		prefix string
		target error
	}{
		{
			name: "the feedback's second page is rate limited",
			fail: func(w http.ResponseWriter, r *http.Request) bool {
				if strings.HasSuffix(r.URL.Path, "/feedback") && r.URL.Query().Get("cursor") == "p100" {
					w.Header().Set("Retry-After", "3600")
					write(w, http.StatusTooManyRequests, map[string]any{"error": "rate limit exceeded"})
					return true
				}
				return false
			},
			prefix: "rate limited: try again in 1h0m0s: feedback, after 100 rows: ",
			target: docsapi.ErrRateLimited,
		},
		{
			name: "the searches hand out a cursor twice",
			fail: func(w http.ResponseWriter, r *http.Request) bool {
				if strings.HasSuffix(r.URL.Path, "/searches") && r.URL.Query().Get("cursor") == "p100" {
					write(w, http.StatusOK, map[string]any{"searches": []map[string]any{{"searchQuery": "again"}}, "nextCursor": "p100"})
					return true
				}
				return false
			},
			prefix: `searches, after 101 rows: docsapi: GET /v1/analytics/handbook/searches: page 2: nextCursor "p100" was already used`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAPI()
			a.fail = tt.fail
			cfg := start(t, a)
			const earlier = "from an earlier run\n"
			for _, name := range []string{"searches.csv", "feedback.csv"} {
				if err := os.WriteFile(filepath.Join(cfg.dir, name), []byte(earlier), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var out strings.Builder
			err := run(t.Context(), cfg, &out)
			if err == nil || !strings.HasPrefix(err.Error(), tt.prefix) || (tt.target != nil && !errors.Is(err, tt.target)) {
				t.Fatalf("run = %v, want an error starting %q", err, tt.prefix)
			}
			if out.Len() != 0 {
				t.Errorf("printed %q", out.String())
			}
			for _, name := range []string{"searches.csv", "feedback.csv"} {
				if got := readFile(t, filepath.Join(cfg.dir, name)); got != earlier {
					t.Errorf("%s is now %.100q, want it untouched", name, got)
				}
			}
			checkOnlyFiles(t, cfg.dir, "feedback.csv", "searches.csv")
		})
	}
}

func TestRefusedBeforeAnyFile(t *testing.T) {
	for _, tt := range []struct {
		name   string
		edit   func(*config)
		target error
		prefix string
	}{
		{"wrong key", func(c *config) { c.key = "mint_wrong" }, docsapi.ErrUnauthorized, "the key was refused"},
		{"another project", func(c *config) { c.project = "other" }, docsapi.ErrNotFound, `no project "other"`},
		{"no key", func(c *config) { c.key = "" }, nil, "DOCSAPI_KEY is not set"},
		{"no project", func(c *config) { c.project = "" }, nil, "DOCSAPI_PROJECT is not set"},
		{"bad date", func(c *config) { c.to = "8 March" }, nil, `-to "8 March" is not a date as YYYY-MM-DD`},
		{"empty status", func(c *config) { c.statuses = "pending,,resolved" }, nil, `-status "pending,,resolved" has an empty entry`},
		{"one status (the control: accepted)", func(c *config) { c.statuses = "pending" }, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := start(t, newAPI())
			tt.edit(&cfg)
			err := run(t.Context(), cfg, new(strings.Builder))
			if tt.prefix == "" {
				if err != nil {
					t.Fatalf("run: %v", err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.prefix) || (tt.target != nil && !errors.Is(err, tt.target)) {
				t.Errorf("run = %v, want an error starting %q (matching %v)", err, tt.prefix, tt.target)
			}
			checkOnlyFiles(t, cfg.dir)
		})
	}
}

func checkOnlyFiles(t *testing.T, dir string, want ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, want) {
		t.Errorf("the folder holds %q, want %q", names, want)
	}
}

func TestDateRange(t *testing.T) {
	now := time.Date(2026, time.March, 30, 22, 0, 0, 0, time.FixedZone("EST", -5*3600)) // March 31 in UTC
	for _, tt := range []struct {
		from, to, wantFrom, wantTo, err string
	}{
		{"", "", "2026-03-02", "2026-04-01", ""},
		{"2026-01-01", "2026-02-01", "2026-01-01", "2026-02-01", ""},
		{"2026-02-01", "2026-02-01", "", "", "-from 2026-02-01 is not before -to 2026-02-01 (-to is exclusive)"},
		{"2026-02-30", "", "", "", `-from "2026-02-30" is not a date as YYYY-MM-DD`},
	} {
		gotFrom, gotTo, err := dateRange(tt.from, tt.to, now)
		switch {
		case tt.err != "":
			if err == nil || err.Error() != tt.err {
				t.Errorf("dateRange(%q, %q) = %v, want the error %q", tt.from, tt.to, err, tt.err)
			}
		case err != nil || gotFrom.String() != tt.wantFrom || gotTo.String() != tt.wantTo:
			t.Errorf("dateRange(%q, %q) = %s, %s, %v; want %s, %s", tt.from, tt.to, gotFrom, gotTo, err, tt.wantFrom, tt.wantTo)
		}
	}
}
