package main

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

// The range the tests export: March 1 to 7, 2026.
const from, to = "2026-03-01", "2026-03-08"

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
func seed(t *testing.T, st store.Store) map[string]counts {
	t.Helper()
	want := map[string]counts{}
	var views []store.ViewCount
	add := func(path, at string, human, ai, bot int64, inRange bool) {
		views = append(views, store.ViewCount{ProjectID: "handbook", Path: path, Hour: hour(at), Human: human, AI: ai, Bot: bot})
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
	if err := st.AddViews(t.Context(), views); err != nil {
		t.Fatal(err)
	}
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

// newTestServer starts the real server on SQLite, its handler wrapped by
// wrap if not nil, with a read key for project "handbook".
func newTestServer(t *testing.T, wrap func(http.Handler) http.Handler) (config, store.Store) {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docsapi.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv, err := server.New(server.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.CreateProject(ctx, store.Project{ID: "handbook"}); err != nil {
		t.Fatal(err)
	}
	key, err := srv.CreateKey(ctx, server.KeyParams{Name: "test", Projects: []string{"handbook"}, Scopes: []store.Scope{store.ScopeRead}})
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = srv
	if wrap != nil {
		h = wrap(srv)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	out := filepath.Join(t.TempDir(), "views.csv")
	return config{key: key.Secret, baseURL: ts.URL, project: "handbook", from: from, to: to, out: out}, st
}

func TestExport(t *testing.T) {
	var (
		mu    sync.Mutex
		pages []string // limit@offset of each request
	)
	cfg, st := newTestServer(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			pages = append(pages, r.URL.Query().Get("limit")+"@"+r.URL.Query().Get("offset"))
			mu.Unlock()
			next.ServeHTTP(w, r)
		})
	})
	want := seed(t, st)
	wantCSV, totals := expectedCSV(want)

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
	// One request for the totals, then pages of 250 rows.
	if len(want) <= 500 || len(want) > 750 {
		t.Fatalf("the test needs 501 to 750 rows, for three pages; it has %d", len(want))
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"1@", "250@", "250@250", "250@500"}; !slices.Equal(pages, want) {
		t.Errorf("requests (limit@offset) = %q, want %q", pages, want)
	}
	if runtime.GOOS != "windows" {
		if info, err := os.Stat(cfg.out); err != nil || info.Mode().Perm() != 0o644 {
			t.Errorf("the file's mode is %v (%v), want 0644", info.Mode(), err)
		}
	}
}

// TestFailedExportLeavesNoFile refuses the third page, as a server whose
// hourly budget ran out does, and checks that the file from an earlier
// export is left untouched and no temporary file remains.
func TestFailedExportLeavesNoFile(t *testing.T) {
	cfg, st := newTestServer(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("offset") == "500" {
				w.Header().Set("Retry-After", "3600")
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTooManyRequests)
				w.Write([]byte(`{"error": "rate limit exceeded", "details": []}`))
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	seed(t, st)
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
		name   string
		edit   func(*config)
		target error
		prefix string
	}{
		{"wrong key", func(c *config) { c.key = "mint_wrong" }, docsapi.ErrUnauthorized, "the key was refused"},
		{"another project", func(c *config) { c.project = "other" }, docsapi.ErrForbidden, `the key may not read project "other"`},
		{"no key", func(c *config) { c.key = "" }, nil, "DOCSAPI_KEY is not set"},
		{"bad date", func(c *config) { c.from = "1 March" }, nil, `-from "1 March" is not a date as YYYY-MM-DD`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _ := newTestServer(t, nil)
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
