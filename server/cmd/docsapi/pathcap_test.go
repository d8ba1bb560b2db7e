//go:build unix

package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestServeCapsPathsPerDay: pageViews.maxPathsPerDay reaches the store, so
// that a day's paths past the cap are counted under "/(other pages)" and
// the totals stay exact.
func TestServeCapsPathsPerDay(t *testing.T) {
	data := t.TempDir()
	env := map[string]string{"DOCSAPI_DATA": data, "HOME": t.TempDir()}
	runCLI(t, env, "", "project", "create", "--id", "handbook", "--repository", "https://git.example.com/h.git").expect(t, exitOK)
	r := runCLI(t, env, "", "key", "create", "--project", "handbook", "--scope", "write", "--name", "cap")
	r.expect(t, exitOK)
	key := strings.TrimSpace(r.stdout)
	config := configFile(t, `{"pageViews": {"maxPathsPerDay": 2}}`)
	addr, logs, stop := serveInProcess(t, env, "--config", config)
	defer stop()

	views := `{"views": [
	  {"path": "/a", "userAgent": "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0"},
	  {"path": "/b", "userAgent": "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0"},
	  {"path": "/c", "userAgent": "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0", "count": 3}
	]}`
	if status, body := apiCall(t.Context(), t, http.MethodPost, "http://"+addr+"/v1/analytics/handbook/views", key, views); status != http.StatusAccepted {
		t.Fatalf("ingestion: %d %s\n%s", status, body, logs)
	}
	_, body := apiCall(t.Context(), t, http.MethodGet, "http://"+addr+"/v1/analytics/handbook/views", key, "")
	for _, want := range []string{`"path":"/(other pages)","human":3`, `"path":"/a","human":1`, `"path":"/b","human":1`, `"total":5`} {
		if !strings.Contains(body, want) {
			t.Errorf("the export lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, `"/c"`) {
		t.Errorf("the third path of the day was kept past a cap of 2:\n%s", body)
	}
}
