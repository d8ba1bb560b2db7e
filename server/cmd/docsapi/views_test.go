package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server/internal/wire"
)

// viewsAPI serves pages of views by offset: pages[0] at offset 0,
// pages[1] at offset 250 (the SDK's page size), and so on. failAt, when set,
// makes the request for that page answer 400.
type viewsAPI struct {
	pages  [][]docsapi.PageView
	failAt int

	mu      sync.Mutex
	queries []string
}

func (v *viewsAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/analytics/handbook/views" || r.Header.Get("Authorization") != "Bearer "+testKey {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":"not found"}`)
		return
	}
	v.mu.Lock()
	v.queries = append(v.queries, r.URL.RawQuery)
	v.mu.Unlock()
	var offset int
	fmt.Sscan(r.URL.Query().Get("offset"), &offset)
	page := offset / docsapi.AllViewsLimit
	if v.failAt > 0 && page == v.failAt {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":"invalid query","details":[{"message":"offset is too large"}]}`)
		return
	}
	// The page in the API's shape, as a server sends it.
	out := wire.ViewsPage{Views: make([]wire.PageView, len(v.pages[page])), HasMore: page < len(v.pages)-1}
	for i, row := range v.pages[page] {
		out.Views[i] = wire.PageView{Path: row.Path, Human: row.Human, AI: row.AI, Total: row.Total}
	}
	json.NewEncoder(w).Encode(out)
}

func (v *viewsAPI) serve(t *testing.T) map[string]string {
	ts := httptest.NewServer(v)
	t.Cleanup(ts.Close)
	return map[string]string{"DOCSAPI_KEY": testKey, "DOCSAPI_BASE_URL": ts.URL, "DOCSAPI_PROJECT": "handbook"}
}

var twoPages = [][]docsapi.PageView{
	{{Path: "/guide", Human: 5, AI: 3, Total: 8}, {Path: "/a,b \"quoted\"", Human: 2, AI: 0, Total: 2}},
	{{Path: "/faq", Human: 0, AI: 1, Total: 1}},
}

const twoPagesCSV = "path,human,ai,total\n/guide,5,3,8\n\"/a,b \"\"quoted\"\"\",2,0,2\n/faq,0,1,1\n"

const twoPagesJSONL = `{"path":"/guide","human":5,"ai":3,"total":8}
{"path":"/a,b \"quoted\"","human":2,"ai":0,"total":2}
{"path":"/faq","human":0,"ai":1,"total":1}
`

func TestViewsExportFormats(t *testing.T) {
	api := &viewsAPI{pages: twoPages}
	env := api.serve(t)

	r := runCLI(t, env, "", "views", "export", "--format", "csv", "--from", "2026-10-01", "--to", "2026-11-01")
	r.expect(t, exitOK)
	if r.stdout != twoPagesCSV {
		t.Errorf("CSV:\n%s\nwant:\n%s", r.stdout, twoPagesCSV)
	}
	if want := "exported 3 paths: human 7, ai 4, total 11\n"; r.stderr != want {
		t.Errorf("stderr %q, want the totals line %q (and no progress line: stderr is not a terminal)", r.stderr, want)
	}
	api.mu.Lock()
	if len(api.queries) != 2 || api.queries[0] != "dateFrom=2026-10-01&dateTo=2026-11-01&limit=250" {
		t.Errorf("queries: %q", api.queries)
	}
	api.mu.Unlock()

	r = runCLI(t, env, "", "views", "export")
	r.expect(t, exitOK)
	if r.stdout != twoPagesJSONL {
		t.Errorf("JSON lines:\n%s\nwant:\n%s", r.stdout, twoPagesJSONL)
	}
}

func TestViewsExportEmpty(t *testing.T) {
	api := &viewsAPI{pages: [][]docsapi.PageView{{}}}
	r := runCLI(t, api.serve(t), "", "views", "export", "--format", "csv")
	r.expect(t, exitOK, "exported 0 paths")
	if r.stdout != "path,human,ai,total\n" {
		t.Errorf("an empty CSV export is %q, want the header alone", r.stdout)
	}
}

func TestViewsExportToFile(t *testing.T) {
	api := &viewsAPI{pages: twoPages}
	env := api.serve(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "views.csv")
	r := runCLI(t, env, "", "views", "export", "--format", "csv", "--output", out)
	r.expect(t, exitOK, "exported 3 paths to "+out)
	if r.stdout != "" {
		t.Errorf("stdout %q, want nothing: the rows went to the file", r.stdout)
	}
	got, err := os.ReadFile(out)
	if err != nil || string(got) != twoPagesCSV {
		t.Fatalf("the file holds %q, %v", got, err)
	}
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %s, want 0644", fi.Mode().Perm())
	}
	onlyFile(t, dir, "views.csv")
}

func TestViewsExportFailureLeavesNoPartialFile(t *testing.T) {
	api := &viewsAPI{pages: twoPages, failAt: 1}
	env := api.serve(t)
	dir := t.TempDir()

	out := filepath.Join(dir, "new.jsonl")
	r := runCLI(t, env, "", "views", "export", "--output", out)
	r.expect(t, exitFailure, "offset is too large")
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed export created %s: %v", out, err)
	}
	onlyFile(t, dir)

	// An existing file is left as it was.
	old := writeFile(t, filepath.Join(dir, "old.jsonl"), "yesterday's export\n")
	runCLI(t, env, "", "views", "export", "--output", old).expect(t, exitFailure)
	if got, _ := os.ReadFile(old); string(got) != "yesterday's export\n" {
		t.Errorf("a failed export changed the existing file: %q", got)
	}
	onlyFile(t, dir, "old.jsonl")

	// A folder that does not exist fails before any request.
	runCLI(t, env, "", "views", "export", "--output", filepath.Join(dir, "no", "such", "x.csv")).expect(t, exitFailure, "creating the output file")
}

// onlyFile checks that dir holds exactly the named files: no temporary file
// was left behind.
func onlyFile(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("%s holds %q, want %q", dir, got, names)
	}
}
