package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

// selfHosted serves a self-hosted server on SQLite with the project
// handbook, whose clock moves a second each time it is read, and returns
// the client commands' environment and the store.
func selfHosted(t *testing.T) (map[string]string, *sqlite.Store) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var mu sync.Mutex
	now := time.Date(2026, 8, 14, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Second)
		return now
	}
	srv, err := server.New(server.Config{Store: st, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.CreateProject(ctx, store.Project{ID: "handbook", Repository: "https://git.example.com/handbook.git", Model: "m"}); err != nil {
		t.Fatal(err)
	}
	key, err := srv.CreateKey(ctx, server.KeyParams{Name: "cli", Projects: []string{"handbook"}, Scopes: []store.Scope{store.ScopeWrite}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return map[string]string{"DOCSAPI_KEY": key.Secret, "DOCSAPI_BASE_URL": ts.URL, "DOCSAPI_PROJECT": "handbook"}, st
}

func TestJobsList(t *testing.T) {
	env, _ := selfHosted(t)
	var ids []string
	for range 3 {
		r := runCLI(t, env, "", "jobs", "create", "--prompt", "Document the flag")
		var job docsapi.Job
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &job) != nil {
			t.Fatalf("jobs create: %d %s %s", r.code, r.stdout, r.stderr)
		}
		ids = append([]string{job.ID}, ids...) // newest first
	}
	r := runCLI(t, env, "", "jobs", "list", "--format", "json", "--limit", "0")
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var job docsapi.Job
		if err := json.Unmarshal([]byte(line), &job); err != nil {
			t.Fatalf("jobs list --format json: line %q: %v", line, err)
		}
		got = append(got, job.ID)
	}
	if r.code != 0 || strings.Join(got, " ") != strings.Join(ids, " ") {
		t.Fatalf("jobs list: %d, jobs %v, want %v; stderr %s", r.code, got, ids, r.stderr)
	}
	r = runCLI(t, env, "", "jobs", "list", "--limit", "2", "--status", "active,completed", "--from", "2026-08-14")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "ID ") || !strings.HasPrefix(lines[1], ids[0]+" ") ||
		!strings.Contains(lines[1], "Z  active  m      -             -") {
		t.Fatalf("jobs list --limit 2: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, env, "", "jobs", "list", "--status", "archived"); r.code != 0 || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("no archived job: %d %q", r.code, r.stdout)
	}
	for args, want := range map[string]string{
		"--status paused": `docsapi jobs list: unknown --status "paused": use active, completed, archived or failed`,
		"--from tomorrow": `docsapi jobs list: --from "tomorrow": use a date such as 2026-10-01 or a time such as 2026-10-01T12:00:00Z`,
		"--limit -1":      `docsapi jobs list: --limit -1: must be 0 (all) or more`,
	} {
		r := runCLI(t, env, "", append([]string{"jobs", "list"}, strings.Fields(args)...)...)
		if r.code != exitUsage || !strings.HasPrefix(r.stderr, want+"\n") {
			t.Errorf("jobs list %s: %d %q, want %q", args, r.code, r.stderr, want)
		}
	}
}

func TestViewsSeries(t *testing.T) {
	env, st := selfHosted(t)
	h := time.Date(2026, 8, 13, 23, 0, 0, 0, time.UTC)
	if err := st.AddViews(t.Context(), []store.ViewCount{
		{ProjectID: "handbook", Path: "/quickstart", Hour: h, Human: 5, AI: 1, Bot: 2},
		{ProjectID: "handbook", Path: "/faq", Hour: h.Add(time.Hour), Human: 1, Bot: 40},
	}); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, env, "", "views", "series", "--interval", "hour", "--from", "2026-08-13T23:00:00Z", "--to", "2026-08-14T01:00:00Z", "--format", "csv")
	if want := "at,human,ai,total,bots\n2026-08-13T23:00:00Z,5,1,6,2\n2026-08-14T00:00:00Z,1,0,1,40\n"; r.code != 0 || r.stdout != want {
		t.Errorf("views series --format csv: %d\n%s%s\nwant\n%s", r.code, r.stdout, r.stderr, want)
	}
	r = runCLI(t, env, "", "views", "series", "--from", "2026-08-13", "--to", "2026-08-15", "--path", "/quickstart/")
	want := `AT          HUMAN  AI  TOTAL  BOTS
2026-08-13  5      1   6      2
2026-08-14  0      0   0      0
`
	if r.code != 0 || r.stdout != want {
		t.Errorf("views series: %d\n%s%s\nwant\n%s", r.code, r.stdout, r.stderr, want)
	}
	r = runCLI(t, env, "", "views", "series", "--from", "2026-08-14", "--format", "json")
	if want := `{"at":"2026-08-14T00:00:00Z","human":1,"ai":0,"total":1,"bots":40}` + "\n"; r.code != 0 || r.stdout != want {
		t.Errorf("views series --format json: %d\n%s%s\nwant\n%s", r.code, r.stdout, r.stderr, want)
	}
	r = runCLI(t, env, "", "views", "series", "--interval", "hour", "--from", "2026-01-01")
	if want := "invalid query parameters (dateFrom (2026-01-01T00:00:00Z) to dateTo (2026-08-14T10:00:00Z) holds 5410 hours; a series has at most 1000 points: narrow the range, or ask for interval=day)"; r.code != exitFailure || !strings.Contains(r.stderr, want) {
		t.Errorf("too many points: %d %q, want %q", r.code, r.stderr, want)
	}
	if r := runCLI(t, env, "", "views", "series", "--interval", "week"); r.code != exitUsage || !strings.HasPrefix(r.stderr, `docsapi views series: unknown --interval "week": use hour or day`+"\n") {
		t.Errorf("--interval week: %d %q", r.code, r.stderr)
	}
}
