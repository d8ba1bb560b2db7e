package main

import (
	"bufio"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var metricsListeningRE = regexp.MustCompile(`"msg":"docsapi: metrics listening","addr":"([^"]+)"`)

// scrapeLines gets url and returns its lines that are samples, not
// comments.
func scrapeLines(t *testing.T, url string) []string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines
}

// With metricsListen in its configuration, serve answers GET /metrics on a
// listener of its own, counting the API's requests, and closes it when it
// stops.
func TestServeMetricsOnTheirOwnListener(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "DOCSAPI_DATA": filepath.Join(dir, "data")}
	config := configFile(t, `{"metricsListen": "127.0.0.1:0"}`)
	addr, logs, stop := serveInProcess(t, env, "--config", config)
	m := metricsListeningRE.FindStringSubmatch(logs.String())
	if m == nil {
		stop()
		t.Fatalf("serve logged no metrics address:\n%s", logs)
	}
	metricsAddr := m[1]
	if metricsAddr == addr {
		t.Fatalf("the metrics share the API's address %s", addr)
	}
	for _, path := range []string{"/healthz", "/healthz", "/v2/agent/handbook/job/j1"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	// The API does not serve the metrics, which need no key.
	if resp, err := http.Get("http://" + addr + "/metrics"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics on the API's listener: %v %v, want 404", resp.StatusCode, err)
	} else {
		resp.Body.Close()
	}

	lines := scrapeLines(t, "http://"+metricsAddr+"/metrics")
	for _, want := range []string{
		`docsapi_http_requests_total{code="200",route="GET /healthz"} 2`,
		`docsapi_http_requests_total{code="401",route="GET /v2/agent/{projectId}/job/{id}"} 1`,
		`docsapi_http_requests_total{code="404",route="unmatched"} 1`,
		`docsapi_jobs{status="active"} 0`,
		`docsapi_jobs_queued 0`,
		`docsapi_jobs_read_ok 1`,
		`docsapi_job_run_duration_seconds_count{outcome="completed"} 0`,
		`docsapi_ingest_views_total{result="ok"} 0`,
	} {
		found := false
		for _, l := range lines {
			found = found || l == want
		}
		if !found {
			t.Errorf("the scrape lacks %s:\n%s", want, strings.Join(lines, "\n"))
		}
	}

	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d:\n%s", code, logs)
	}
	if c, err := net.DialTimeout("tcp", metricsAddr, 5*time.Second); err == nil {
		c.Close()
		t.Errorf("the metrics listener %s still accepts after serve stopped", metricsAddr)
	}
}

// Without metricsListen, serve opens no metrics listener.
func TestServeMetricsAreOffByDefault(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "DOCSAPI_DATA": filepath.Join(dir, "data")}
	addr, logs, stop := serveInProcess(t, env)
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d:\n%s", code, logs)
	}
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics on the API's listener: %d, want 404", resp.StatusCode)
	}
	if strings.Contains(logs.String(), "metrics listening") {
		t.Errorf("serve listened for metrics without being asked:\n%s", logs)
	}
}

// metricsListen: the flag over the environment over the file; off by
// default; an address that is not host:port is refused.
func TestServeMetricsListenSetting(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "DOCSAPI_DATA": filepath.Join(dir, "data")}
	config := configFile(t, `{"metricsListen": "127.0.0.1:9464"}`)
	for _, tt := range []struct {
		name string
		env  map[string]string
		args []string
		want any
	}{
		{"off by default", env, nil, nil},
		{"file", env, []string{"--config", config}, "127.0.0.1:9464"},
		{"environment over file", withEnv(env, "DOCSAPI_METRICS_LISTEN", ":9100"), []string{"--config", config}, ":9100"},
		{"flag over environment", withEnv(env, "DOCSAPI_METRICS_LISTEN", ":9100"), []string{"--config", config, "--metrics-listen", "127.0.0.1:9200"}, "127.0.0.1:9200"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := printedConfig(t, tt.env, tt.args...)["metricsListen"]; got != tt.want {
				t.Errorf("metricsListen printed %v, want %v", got, tt.want)
			}
		})
	}
	runCLI(t, env, "", "serve", "--print-config", "--metrics-listen", "9464").expect(t, exitUsage, `metricsListen address "9464" (from --metrics-listen) must be host:port`)
	bad := configFile(t, `{"metricsListen": "localhost"}`)
	runCLI(t, env, "", "serve", "--print-config", "--config", bad).expect(t, exitUsage, "metricsListen", "configuration file")
}
