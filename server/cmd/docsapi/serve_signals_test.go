package main

import (
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Views sent to the ingestion endpoint are the only views docsapi serve
// takes (the recorder's middleware serves a program's own pages): its
// page-view metrics and its last log line must count them, or an operator
// reads a server that stored thousands of views as one that stored none.
func TestServeCountsIngestedViews(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "DOCSAPI_DATA": filepath.Join(dir, "data")}
	runCLI(t, env, "", "project", "create", "--id", "handbook", "--repository", "https://git.example.com/handbook.git").expect(t, exitOK)
	created := runCLI(t, env, "", "key", "create", "--project", "handbook", "--scope", "write", "--name", "ingest")
	created.expect(t, exitOK)
	key := strings.TrimSpace(created.stdout)

	config := configFile(t, `{"metricsListen": "127.0.0.1:0"}`)
	addr, logs, stop := serveInProcess(t, env, "--config", config)
	m := metricsListeningRE.FindStringSubmatch(logs.String())
	if m == nil {
		stop()
		t.Fatalf("serve logged no metrics address:\n%s", logs)
	}
	ingest := func(body string, want int) {
		t.Helper()
		req, err := http.NewRequest("POST", "http://"+addr+"/v1/analytics/handbook/views", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("ingest %s: %s, want %d", body, resp.Status, want)
		}
	}
	ingest(`{"views": [{"path": "/a"}, {"path": "/b", "count": 40}]}`, http.StatusAccepted)
	ingest(`{"views": [{"path": "/a", "count": 2}]}`, http.StatusAccepted)
	ingest(`{"views": [{"path": "/a", "count": 0}]}`, http.StatusBadRequest) // stores nothing

	lines := scrapeLines(t, "http://"+m[1]+"/metrics")
	for _, want := range []string{
		`docsapi_pageviews_recorded_total{source="ingest"} 43`,
		`docsapi_pageviews_flushed_total{source="ingest"} 43`,
		`docsapi_pageviews_recorded_total{source="middleware"} 0`,
		`docsapi_public_requests_total{endpoint="ingest",outcome="accepted"} 2`,
		`docsapi_public_requests_total{endpoint="ingest",outcome="bad_body"} 1`,
		`docsapi_dashboard_signins_total{result="ok"} 0`,
	} {
		if !hasLine(lines, want) {
			t.Errorf("the scrape lacks %s:\n%s", want, strings.Join(lines, "\n"))
		}
	}

	// Which build runs: serve's own version.
	build := false
	for _, l := range lines {
		build = build || strings.HasPrefix(l, "docsapi_build_info{") && strings.Contains(l, `version="`+cliVersion()+`"`) && strings.HasSuffix(l, "} 1")
	}
	if !build {
		t.Errorf("the scrape lacks docsapi_build_info of version %s:\n%s", cliVersion(), strings.Join(lines, "\n"))
	}

	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d:\n%s", code, logs)
	}
	stopped := regexp.MustCompile(`"msg":"docsapi: stopped".*`).FindString(logs.String())
	for _, f := range []string{"page_views_recorded", "page_views_written", "page_views_ingested"} {
		got := regexp.MustCompile(`"` + f + `":(\d+)`).FindStringSubmatch(stopped)
		if got == nil || got[1] != strconv.Itoa(43) {
			t.Errorf("the last line's %s: %v, want 43: %s", f, got, stopped)
		}
	}
}

// hasLine reports whether lines holds want.
func hasLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}
