package main

import (
	"cmp"
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

// The tests run the program against a double of the service's views export,
// which follows the contract (the API document, server/api/openapi.yaml):
// it keeps view counts per hour and answers a date range [dateFrom, dateTo)
// with the totals over the range and one page of per-path rows (human and
// AI traffic; bots in neither; paths without such views left out), ordered
// by total, then path, as the self-hosted server orders them; it checks the
// key, its project and the query, and answers errors with the analytics
// endpoints' body. The SDK module cannot import the self-hosted server.

const testKey = "mint_exportViewsCSVTest" // a read key for project "handbook"

// The range the tests export: March 1 to 7, 2026.
const from, to = "2026-03-01", "2026-03-08"

// hourCount is the views of one path in one hour, as the double keeps them.
type hourCount struct {
	path           string
	hour           time.Time
	human, ai, bot int64
}

// api is the double of the views export of project "handbook".
type api struct {
	counts []hourCount
	// foreign answers a project the key is not bound to: 403 as the
	// self-hosted server does, or 404 as the hosted service does.
	foreign int
	// fail, if set, answers instead of the export when it returns true.
	fail func(w http.ResponseWriter, r *http.Request) bool

	mu    sync.Mutex
	pages []string // limit@offset of each export request, as the double read them
}

func newAPI() *api { return &api{foreign: http.StatusForbidden} }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string, details ...string) {
	body := map[string]any{"error": msg}
	if details != nil {
		var list []map[string]string
		for _, d := range details {
			list = append(list, map[string]string{"message": d})
		}
		body["details"] = list
	}
	writeJSON(w, status, body)
}

// handler serves the double.
func (a *api) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/analytics/{project}/views", a.views)
	return mux
}

// parseBound reads a date bound in the two forms the contract's examples
// start with: a date (midnight UTC) or an RFC 3339 date-time.
func parseBound(s string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339, s)
}

// query reads the views query, listing every problem as the contract's 400
// does. Omitted bounds leave that side open, as on the self-hosted server.
func query(r *http.Request) (since, until time.Time, limit, offset int, problems []string) {
	q := r.URL.Query()
	limit, until = 50, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, p := range []struct {
		name string
		into *time.Time
	}{{"dateFrom", &since}, {"dateTo", &until}} {
		if v, ok := q[p.name]; ok {
			t, err := parseBound(v[0])
			if len(v) > 1 || err != nil {
				problems = append(problems, fmt.Sprintf("%s %q is neither a date nor an ISO 8601 date-time", p.name, v[0]))
			}
			*p.into = t
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 250 {
			problems = append(problems, "limit must be between 1 and 250")
		}
		limit = n
	}
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			problems = append(problems, "offset must be a whole number, 0 or more")
		}
		offset = n
	}
	if since.After(until) {
		problems = append(problems, "dateFrom is after dateTo")
	}
	return since, until, limit, offset, problems
}

// row is a row of the export, or its totals.
type row struct {
	Path  string `json:"path"`
	Human int64  `json:"human"`
	AI    int64  `json:"ai"`
	Total int64  `json:"total"`
}

func (a *api) views(w http.ResponseWriter, r *http.Request) {
	switch project := r.PathValue("project"); {
	case r.Header.Get("Authorization") != "Bearer "+testKey:
		writeError(w, http.StatusUnauthorized, "invalid or expired API key")
		return
	case project != "handbook" && a.foreign == http.StatusNotFound:
		writeError(w, http.StatusNotFound, "Project not found")
		return
	case project != "handbook":
		writeError(w, http.StatusForbidden, fmt.Sprintf("this API key is not allowed to use project %q", project))
		return
	}
	since, until, limit, offset, problems := query(r)
	if problems != nil {
		writeError(w, http.StatusBadRequest, "invalid query parameters", problems...)
		return
	}
	a.mu.Lock()
	a.pages = append(a.pages, fmt.Sprintf("%d@%d", limit, offset))
	a.mu.Unlock()
	if a.fail != nil && a.fail(w, r) {
		return
	}

	byPath := map[string]*row{}
	var totals row
	for _, c := range a.counts {
		if c.hour.Before(since) || !c.hour.Before(until) || c.human+c.ai == 0 {
			continue
		}
		x := byPath[c.path]
		if x == nil {
			x = &row{Path: c.path}
			byPath[c.path] = x
		}
		x.Human += c.human
		x.AI += c.ai
		x.Total += c.human + c.ai
		totals.Human += c.human
		totals.AI += c.ai
	}
	rows := make([]row, 0, len(byPath))
	for _, x := range byPath {
		rows = append(rows, *x)
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Or(cmp.Compare(b.Total, a.Total), strings.Compare(a.Path, b.Path)) })
	page := rows[min(offset, len(rows)):min(offset+limit, len(rows))]
	writeJSON(w, http.StatusOK, map[string]any{
		"totals":  map[string]int64{"human": totals.Human, "ai": totals.AI, "total": totals.Human + totals.AI},
		"views":   page,
		"hasMore": offset+limit < len(rows),
	})
}

// requests returns limit@offset of each export request so far.
func (a *api) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.pages)
}

func hour(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

type counts struct{ human, ai int64 }

// seed adds views of 600 pages in the range's first and last hours, plus
// views just outside the range and bot views, which the export must leave
// out. It returns the counts the export should show, by path.
func seed(a *api) map[string]counts {
	want := map[string]counts{}
	add := func(path, at string, human, ai, bot int64, inRange bool) {
		a.counts = append(a.counts, hourCount{path: path, hour: hour(at), human: human, ai: ai, bot: bot})
		if inRange {
			c := want[path]
			want[path] = counts{c.human + human, c.ai + ai}
		}
	}
	for i := range 600 {
		path := fmt.Sprintf("/docs/page-%03d", i)
		add(path, "2026-03-01T00:00:00Z", int64(i%13), int64(i%5), 7, true)
		add(path, "2026-03-07T23:00:00Z", int64(i%3), int64(i/7%4), 0, true)
		add(path, "2026-02-28T23:00:00Z", 1000, 0, 0, false) // before the range
		add(path, "2026-03-08T00:00:00Z", 0, 1000, 0, false) // dateTo is exclusive
	}
	add(`/docs/a,"quoted" page`, "2026-03-03T12:00:00Z", 2, 1, 0, true)
	add("/docs/bots-only", "2026-03-03T12:00:00Z", 0, 0, 50, true)
	for path, c := range want {
		if c.human+c.ai == 0 {
			delete(want, path) // pages without human or AI views have no row
		}
	}
	return want
}

// expectedCSV writes want as the export should: the header, then the rows
// by total (most first), then path.
func expectedCSV(want map[string]counts) (csv string, totals counts) {
	paths := make([]string, 0, len(want))
	for path, c := range want {
		paths = append(paths, path)
		totals.human += c.human
		totals.ai += c.ai
	}
	slices.SortFunc(paths, func(a, b string) int {
		ca, cb := want[a], want[b]
		return cmp.Or(cmp.Compare(cb.human+cb.ai, ca.human+ca.ai), strings.Compare(a, b))
	})
	var b strings.Builder
	b.WriteString("path,human,ai,total\n")
	for _, path := range paths {
		field := path
		if strings.ContainsAny(path, `,"`) {
			field = `"` + strings.ReplaceAll(path, `"`, `""`) + `"`
		}
		c := want[path]
		fmt.Fprintf(&b, "%s,%d,%d,%d\n", field, c.human, c.ai, c.human+c.ai)
	}
	return b.String(), totals
}

// start serves a and returns the program's configuration for it, writing
// to views.csv in a folder of the test's own.
func start(t *testing.T, a *api) config {
	t.Helper()
	srv := httptest.NewServer(a.handler())
	t.Cleanup(srv.Close)
	out := filepath.Join(t.TempDir(), "views.csv")
	return config{key: testKey, baseURL: srv.URL, project: "handbook", from: from, to: to, out: out}
}

func TestExport(t *testing.T) {
	a := newAPI()
	want := seed(a)
	wantCSV, totals := expectedCSV(want)
	cfg := start(t, a)

	var out strings.Builder
	if err := run(t.Context(), cfg, &out); err != nil {
		t.Fatalf("run: %v", err)
	}
	got, err := os.ReadFile(cfg.out)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != wantCSV {
		t.Errorf("the CSV file differs from the expected export\n got %d bytes, starting %.300q\nwant %d bytes, starting %.300q",
			len(got), got, len(wantCSV), wantCSV)
	}
	wantOut := fmt.Sprintf("wrote %d rows to %s (2026-03-01 up to 2026-03-08, exclusive)\ntotals: %d views, %d human, %d AI\n",
		len(want), cfg.out, totals.human+totals.ai, totals.human, totals.ai)
	if out.String() != wantOut {
		t.Errorf("output = %q\n     want %q", out.String(), wantOut)
	}
	// One request for the totals, then pages of 250 rows, each once and
	// none past the last: the program's budget, as its doc comment counts
	// it. In any order, should the SDK ask for pages ahead.
	if len(want) <= 500 || len(want) > 750 {
		t.Fatalf("the test needs 501 to 750 rows, for three pages; it has %d", len(want))
	}
	pages := a.requests()
	slices.Sort(pages)
	if want := []string{"1@0", "250@0", "250@250", "250@500"}; !slices.Equal(pages, want) {
		t.Errorf("requests (limit@offset) = %q, want %q", pages, want)
	}
	if runtime.GOOS != "windows" {
		if info, err := os.Stat(cfg.out); err != nil || info.Mode().Perm() != 0o644 {
			t.Errorf("the file's mode is %v (%v), want 0644", info.Mode(), err)
		}
	}
	checkOnlyFiles(t, filepath.Dir(cfg.out), "views.csv")
}

// A range without views gives a file with the header alone.
func TestEmptyRange(t *testing.T) {
	a := newAPI()
	seed(a)
	cfg := start(t, a)
	cfg.from, cfg.to = "2026-01-01", "2026-02-01"
	var out strings.Builder
	if err := run(t.Context(), cfg, &out); err != nil {
		t.Fatalf("run: %v", err)
	}
	if got, err := os.ReadFile(cfg.out); err != nil || string(got) != "path,human,ai,total\n" {
		t.Errorf("the file holds %q (%v), want the header alone", got, err)
	}
	wantOut := "wrote 0 rows to " + cfg.out + " (2026-01-01 up to 2026-02-01, exclusive)\ntotals: 0 views, 0 human, 0 AI\n"
	if out.String() != wantOut {
		t.Errorf("output = %q\n     want %q", out.String(), wantOut)
	}
}

// TestFailedExportLeavesNoFile refuses the third page, as a server whose
// hourly budget ran out does, and checks that the file from an earlier
// export is left untouched and no temporary file remains.
func TestFailedExportLeavesNoFile(t *testing.T) {
	a := newAPI()
	seed(a)
	a.fail = func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Query().Get("offset") != "500" {
			return false
		}
		w.Header().Set("Retry-After", "3600")
		writeError(w, http.StatusTooManyRequests, "Rate limit exceeded", "100 analytics requests per hour")
		return true
	}
	cfg := start(t, a)
	const earlier = "path,human,ai,total\n/old,1,0,1\n"
	if err := os.WriteFile(cfg.out, []byte(earlier), 0o644); err != nil {
		t.Fatal(err)
	}

	var out strings.Builder
	err := run(t.Context(), cfg, &out)
	if !errors.Is(err, docsapi.ErrRateLimited) || !strings.HasPrefix(err.Error(), "rate limited: try again in 1h0m0s: after 500 rows: ") {
		t.Fatalf("run = %v, want the rate limit after 500 rows, with the server's Retry-After", err)
	}
	if out.Len() != 0 {
		t.Errorf("printed %q", out.String())
	}
	if got, err := os.ReadFile(cfg.out); err != nil || string(got) != earlier {
		t.Errorf("the earlier export is now %q (%v), want it untouched", got, err)
	}
	checkOnlyFiles(t, filepath.Dir(cfg.out), "views.csv")
}

func TestRefusedBeforeAnyFile(t *testing.T) {
	for _, tt := range []struct {
		name    string
		edit    func(*config)
		foreign int // how the service answers a project the key may not use; 0: 403
		target  error
		prefix  string
	}{
		{"wrong key", func(c *config) { c.key = "mint_wrong" }, 0, docsapi.ErrUnauthorized, "the key was refused"},
		{"another project", func(c *config) { c.project = "other" }, 0, docsapi.ErrForbidden, `the key may not read project "other"`},
		{"no such project (hosted)", func(c *config) { c.project = "other" }, http.StatusNotFound, docsapi.ErrNotFound, `no project "other"`},
		{"no key", func(c *config) { c.key = "" }, 0, nil, "DOCSAPI_KEY is not set"},
		{"no project", func(c *config) { c.project = "" }, 0, nil, "DOCSAPI_PROJECT is not set"},
		{"bad date", func(c *config) { c.from = "1 March" }, 0, nil, `-from "1 March" is not a date as YYYY-MM-DD`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newAPI()
			seed(a)
			if tt.foreign != 0 {
				a.foreign = tt.foreign
			}
			cfg := start(t, a)
			tt.edit(&cfg)
			err := run(t.Context(), cfg, new(strings.Builder))
			if err == nil || !strings.HasPrefix(err.Error(), tt.prefix) || (tt.target != nil && !errors.Is(err, tt.target)) {
				t.Errorf("run = %v, want an error starting %q (matching %v)", err, tt.prefix, tt.target)
			}
			checkOnlyFiles(t, filepath.Dir(cfg.out))
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
	// Late evening in New York is already the next day in UTC: today is
	// March 31, so the default range ends at the start of April 1.
	ny := time.FixedZone("EST", -5*3600)
	now := time.Date(2026, time.March, 30, 22, 0, 0, 0, ny)
	for _, tt := range []struct {
		from, to         string
		wantFrom, wantTo string
		err              string
	}{
		{"", "", "2026-03-02", "2026-04-01", ""},
		{"2026-01-01", "", "2026-01-01", "2026-04-01", ""},
		{"", "2026-02-01", "2026-01-02", "2026-02-01", ""},
		{"2026-01-01", "2026-02-01", "2026-01-01", "2026-02-01", ""},
		{"2026-02-01", "2026-02-01", "", "", "-from 2026-02-01 is not before -to 2026-02-01 (-to is exclusive)"},
		{"2026-02-01", "2026-01-01", "", "", "-from 2026-02-01 is not before -to 2026-01-01 (-to is exclusive)"},
		{"2026-02-30", "", "", "", `-from "2026-02-30" is not a date as YYYY-MM-DD`},
		{"", "2026-03-01T00:00:00Z", "", "", `-to "2026-03-01T00:00:00Z" is not a date as YYYY-MM-DD`},
	} {
		gotFrom, gotTo, err := dateRange(tt.from, tt.to, now)
		switch {
		case tt.err != "":
			if err == nil || err.Error() != tt.err {
				t.Errorf("dateRange(%q, %q) = %v, want the error %q", tt.from, tt.to, err, tt.err)
			}
		case err != nil:
			t.Errorf("dateRange(%q, %q): %v", tt.from, tt.to, err)
		case gotFrom.String() != tt.wantFrom || gotTo.String() != tt.wantTo || !gotFrom.IsDate() || !gotTo.IsDate():
			t.Errorf("dateRange(%q, %q) = %s, %s; want the dates %s, %s", tt.from, tt.to, gotFrom, gotTo, tt.wantFrom, tt.wantTo)
		}
	}
}
