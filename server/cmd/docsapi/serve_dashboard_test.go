package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// serve serves the dashboard by default, on the API's listener, and not
// when told not to.
func TestServeServesTheDashboard(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want int
	}{
		{"by default", nil, http.StatusOK},
		{"turned off", []string{"--dashboard=false"}, http.StatusNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			env := map[string]string{"HOME": dir, "DOCSAPI_DATA": filepath.Join(dir, "data")}
			addr, logs, stop := serveInProcess(t, env, tt.args...)
			resp, err := http.Get("http://" + addr + "/dashboard/login")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if code := stop(); code != exitOK {
				t.Fatalf("serve exited %d:\n%s", code, logs)
			}
			if resp.StatusCode != tt.want {
				t.Errorf("GET /dashboard/login: %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
}

// dashboard: the flag over the file; on by default; the sessions' bounds
// from the file, else the server's defaults; a negative one refused.
func TestServeDashboardSetting(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "DOCSAPI_DATA": filepath.Join(dir, "data")}
	off := configFile(t, `{"dashboard": {"enabled": false, "sessionMaxAge": "2h", "sessionIdleTimeout": "10m"}}`)
	for _, tt := range []struct {
		name string
		args []string
		want map[string]any
	}{
		{"on by default", nil, map[string]any{"enabled": true, "sessionMaxAge": "12h", "sessionIdleTimeout": "1h"}},
		{"file", []string{"--config", off}, map[string]any{"enabled": false, "sessionMaxAge": "2h", "sessionIdleTimeout": "10m"}},
		{"flag over file", []string{"--config", off, "--dashboard"}, map[string]any{"enabled": true, "sessionMaxAge": "2h", "sessionIdleTimeout": "10m"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := printedConfig(t, env, tt.args...)["dashboard"].(map[string]any)
			for k, want := range tt.want {
				if got[k] != want {
					t.Errorf("dashboard.%s printed %v, want %v (all: %v)", k, got[k], want, got)
				}
			}
		})
	}
	bad := configFile(t, `{"dashboard": {"sessionIdleTimeout": "-1m"}}`)
	r := runCLI(t, env, "", "serve", "--print-config", "--config", bad)
	r.expect(t, exitUsage, `dashboard.sessionIdleTimeout: "-1m" is negative`)
	if strings.Contains(r.stdout, "dashboard") {
		t.Errorf("a refused configuration was printed:\n%s", r.stdout)
	}
}
