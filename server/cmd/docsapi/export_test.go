package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/hll"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/store"
)

// The visitors, searches and feedback exports run against a real server
// (servertest: SQLite, every answer checked against the OpenAPI document)
// on project alpha, with the read-only key.

// exportEnv is a server with a site token for alpha, and the environment of
// a client that reads alpha's analytics.
func exportEnv(t *testing.T) (*servertest.Env, map[string]string) {
	e := servertest.NewSite(t, servertest.NoSiteBudget, func(c *server.Config) {
		// One test address sends everything: room for more than a page.
		c.Site.MaxQueriesPerAddress, c.Site.MaxQueriesPerNetwork = 1000, 1000
		c.Site.MaxFeedbackPerAddress, c.Site.MaxFeedbackPerNetwork = 1000, 1000
	})
	return e, map[string]string{"DOCSAPI_KEY": e.Keys["ro"], "DOCSAPI_BASE_URL": e.Serve(), "DOCSAPI_PROJECT": "alpha"}
}

// sketch is the encoded sketch of the visitors ids.
func sketch(ids ...uint64) []byte {
	if len(ids) == 0 {
		return nil
	}
	var s hll.Sketch
	for _, id := range ids {
		s.Insert(hll.Mix64(id))
	}
	return s.AppendBinary(nil)
}

// exportFormats runs the export of kind in every format, to stdout and to a
// file, and checks what each wrote and the closing line.
func exportFormats(t *testing.T, env map[string]string, kind, wantCSV, wantJSONL, closing string, extra ...string) {
	t.Helper()
	args := append([]string{kind, "export"}, extra...)
	r := runCLI(t, env, "", append(args, "--format", "csv")...)
	r.expect(t, exitOK)
	if r.stdout != wantCSV {
		t.Errorf("%s export --format csv:\n%s\nwant:\n%s", kind, r.stdout, wantCSV)
	}
	if want := "exported " + closing + "\n"; r.stderr != want {
		t.Errorf("stderr %q, want the closing line %q alone (stderr is not a terminal: no progress line)", r.stderr, want)
	}
	r = runCLI(t, env, "", args...)
	r.expect(t, exitOK)
	if r.stdout != wantJSONL {
		t.Errorf("%s export (JSON lines):\n%s\nwant:\n%s", kind, r.stdout, wantJSONL)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, kind+".csv")
	r = runCLI(t, env, "", append(args, "--format", "csv", "--output", out)...)
	count, totals, _ := strings.Cut(closing, ":")
	if totals != "" {
		totals = ":" + totals
	}
	r.expect(t, exitOK, "exported "+count+" to "+out+totals+"\n")
	if r.stdout != "" {
		t.Errorf("stdout %q, want nothing: the rows went to the file", r.stdout)
	}
	if got, err := os.ReadFile(out); err != nil || string(got) != wantCSV {
		t.Errorf("the file holds %q, %v; want %q", got, err, wantCSV)
	}
	onlyFile(t, dir, kind+".csv")
}

// exportMistakes checks a bad flag, a bad format and a bad date, each told
// before any request, and an error the API answers: a key for another
// project, with the advice that goes with it.
func exportMistakes(t *testing.T, e *servertest.Env, env map[string]string, kind string) {
	t.Helper()
	runCLI(t, env, "", kind, "export", "--limit", "5").expect(t, exitUsage, "provided but not defined: -limit", "docsapi "+kind+" export --help")
	runCLI(t, env, "", kind, "export", "--format", "xml").expect(t, exitUsage, `unknown format "xml": use jsonl or csv`)
	runCLI(t, env, "", kind, "export", "--from", "October").expect(t, exitUsage, `--from "October"`)
	runCLI(t, env, "", kind, "export", "--from", "2026-11-05", "--to", "2026-11-01").expect(t, exitUsage, "--from", "--to")
	dir := t.TempDir()
	out := filepath.Join(dir, "x.csv")
	r := runCLI(t, withEnv(env, "DOCSAPI_KEY", e.Keys["beta"]), "", kind, "export", "--output", out)
	r.expect(t, exitFailure, "403", "it must be bound to project alpha and have the read (or write) scope")
	if r.stdout != "" {
		t.Errorf("a refused export wrote %q", r.stdout)
	}
	onlyFile(t, dir)
}

func TestVisitorsExport(t *testing.T) {
	e, env := exportEnv(t)
	h := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	counts := []store.VisitorCount{
		{ProjectID: "alpha", Path: "/guide", Hour: h, Human: sketch(1, 2, 3), AI: sketch(3)},
		{ProjectID: "alpha", Path: "/a,b \"quoted\"", Hour: h, Human: sketch(4), AI: sketch(5, 6)},
		{ProjectID: "alpha", Path: "/faq", Hour: h.Add(24 * time.Hour), Human: sketch(1)},
		{ProjectID: "beta", Path: "/beta-only", Hour: h, Human: sketch(8)},
	}
	var views []store.ViewCount
	for _, c := range counts {
		views = append(views, store.ViewCount{ProjectID: c.ProjectID, Path: c.Path, Hour: c.Hour, Human: 1})
	}
	if err := e.Store.AddViews(t.Context(), views); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.AddVisitors(t.Context(), counts); err != nil {
		t.Fatal(err)
	}
	// Visitor 3 is human and AI on /guide: once in its total, which ties
	// with the other path's, first by path.
	exportFormats(t, env, "visitors",
		"path,human,ai,total\n\"/a,b \"\"quoted\"\"\",1,2,3\n/guide,3,1,3\n/faq,1,0,1\n",
		`{"path":"/a,b \"quoted\"","human":1,"ai":2,"total":3}
{"path":"/guide","human":3,"ai":1,"total":3}
{"path":"/faq","human":1,"ai":0,"total":1}
`, "3 paths")
	// A range: the first day only.
	r := runCLI(t, env, "", "visitors", "export", "--from", "2026-08-01", "--to", "2026-08-02", "--format", "csv")
	if r.expect(t, exitOK, "exported 2 paths"); strings.Contains(r.stdout, "/faq") {
		t.Errorf("the range let the next day in:\n%s", r.stdout)
	}
	exportMistakes(t, e, env, "visitors")
}

func TestSearchesExport(t *testing.T) {
	e, env := exportEnv(t)
	for range 3 {
		e.MustPost("searches", `{"query": "install", "clickedPath": "/install"}`)
	}
	e.MustPost("searches", `{"query": "install"}`)
	e.Clock.Advance(time.Hour)
	// Readers type anything: a formula is kept as text in CSV, and as
	// sent in JSON (the server keeps queries in lower case).
	e.MustPost("searches", `{"query": "=HYPERLINK(\"https://evil.example\")"}`)
	e.Clock.Advance(time.Hour)
	e.MustPost("searches", `{"query": "-v, verbose", "clickedPath": "/cli"}`)

	exportFormats(t, env, "searches",
		"query,hits,ctr,top_clicked_page,last_searched_at\n"+
			"install,4,0.75,/install,2026-08-14T09:00:00Z\n"+
			"\"'-v, verbose\",1,1,/cli,2026-08-14T11:00:00Z\n"+
			"\"'=hyperlink(\"\"https://evil.example\"\")\",1,0,,2026-08-14T10:00:00Z\n",
		`{"searchQuery":"install","hits":4,"ctr":0.75,"topClickedPage":"/install","lastSearchedAt":"2026-08-14T09:00:00Z"}
{"searchQuery":"-v, verbose","hits":1,"ctr":1,"topClickedPage":"/cli","lastSearchedAt":"2026-08-14T11:00:00Z"}
{"searchQuery":"=hyperlink(\"https://evil.example\")","hits":1,"ctr":0,"topClickedPage":null,"lastSearchedAt":"2026-08-14T10:00:00Z"}
`, "3 queries: 6 searches")

	// Every page: more queries than a page holds (100).
	for i := range 120 {
		e.MustPost("searches", fmt.Sprintf(`{"query": "q%03d"}`, i))
	}
	r := runCLI(t, env, "", "searches", "export")
	if r.expect(t, exitOK, "exported 123 queries: 126 searches"); strings.Count(r.stdout, "\n") != 123 {
		t.Errorf("%d lines, want 123", strings.Count(r.stdout, "\n"))
	}
	exportMistakes(t, e, env, "searches")
}

func TestFeedbackExport(t *testing.T) {
	e, env := exportEnv(t)
	for _, body := range []string{
		`{"path": "/quickstart", "helpful": true}`,
		`{"path": "/quickstart", "helpful": false}`,
		`{"path": "/guide", "helpful": false, "comment": "@SUM(1+1) is what the page says", "contact": "ada@example.com"}`,
		`{"path": "/api", "code": "go run .", "filename": "main.go", "lang": "go", "comment": ""}`,
	} {
		e.MustPost("feedback", body)
		e.Clock.Advance(time.Minute)
	}
	ids := map[string]string{} // path and vote → id
	for _, f := range e.Stored() {
		ids[fmt.Sprintf("%s %v", f.Path, f.Helpful)] = f.ID
	}
	up, down, guide, api := ids["/quickstart true"], ids["/quickstart false"], ids["/guide false"], ids["/api false"]
	exportFormats(t, env, "feedback",
		"id,created_at,path,source,status,comment,helpful,contact,code,filename,lang\n"+
			api+",2026-08-14T09:03:00Z,/api,code_snippet,pending,,,,go run .,main.go,go\n"+
			guide+",2026-08-14T09:02:00Z,/guide,contextual,pending,'@SUM(1+1) is what the page says,no,ada@example.com,,,\n"+
			down+",2026-08-14T09:01:00Z,/quickstart,thumbs_only,pending,,no,,,,\n"+
			up+",2026-08-14T09:00:00Z,/quickstart,thumbs_only,pending,,yes,,,,\n",
		`{"id":"`+api+`","path":"/api","comment":"","createdAt":"2026-08-14T09:03:00Z","source":"code_snippet","status":"pending","code":"go run .","filename":"main.go","lang":"go"}
{"id":"`+guide+`","path":"/guide","comment":"@SUM(1+1) is what the page says","createdAt":"2026-08-14T09:02:00Z","source":"contextual","status":"pending","helpful":false,"contact":"ada@example.com"}
{"id":"`+down+`","path":"/quickstart","comment":null,"createdAt":"2026-08-14T09:01:00Z","source":"thumbs_only","status":"pending","helpful":false}
{"id":"`+up+`","path":"/quickstart","comment":null,"createdAt":"2026-08-14T09:00:00Z","source":"thumbs_only","status":"pending","helpful":true}
`, "4 entries: votes 1 yes, 2 no")

	// The API's filters: source and statuses, sent as given.
	r := runCLI(t, env, "", "feedback", "export", "--source", "thumbs_only", "--format", "csv")
	if r.expect(t, exitOK, "exported 2 entries: votes 1 yes, 1 no"); strings.Contains(r.stdout, "/guide") {
		t.Errorf("--source thumbs_only:\n%s", r.stdout)
	}
	if _, err := e.Server.SetFeedbackStatus(t.Context(), "alpha", guide, store.FeedbackStatusResolved); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, env, "", "feedback", "export", "--status", "resolved", "--status", "dismissed")
	if r.expect(t, exitOK, "exported 1 entries"); !strings.Contains(r.stdout, guide) {
		t.Errorf("--status resolved:\n%s", r.stdout)
	}
	runCLI(t, env, "", "feedback", "export", "--source", "widget").expect(t, exitFailure, "source must be one of")

	// Every page: more entries than a page holds (100), in the order
	// the server keeps, each once.
	for i := range 110 {
		e.MustPost("feedback", fmt.Sprintf(`{"path": "/p%03d", "helpful": true}`, i))
		e.Clock.Advance(time.Second)
	}
	r = runCLI(t, env, "", "feedback", "export")
	r.expect(t, exitOK, "exported 114 entries: votes 111 yes, 2 no")
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var entry struct{ ID string }
		if err := json.Unmarshal([]byte(line), &entry); err != nil || seen[entry.ID] {
			t.Fatalf("line %q: %v, or a repeated entry", line, err)
		}
		seen[entry.ID] = true
	}
	exportMistakes(t, e, env, "feedback")
}
