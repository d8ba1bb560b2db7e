package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The command prints a job in the API's own shape, whatever the SDK's Go
// types look like: the names of the API, null for what the job lacks
// (createdAt too, which the hosted service may leave out), a status it does
// not know as sent, and the JSON escaping of the encoder.
func TestJobsPrintTheAPIShape(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		args       []string
		want       string
	}{
		{"every field", `{"id":"job_1","status":"completed","source":{"repository":"https://git.example.com/a.git","ref":"docs-agent/job_1"},` +
			`"model":"claude","prLink":"https://git.example.com/a/pull/1?x=<y>&z","createdAt":"2026-10-01T12:00:00.5+02:00","archivedAt":"2026-10-02T00:00:00Z"}`,
			[]string{"jobs", "get", "job_1"}, `{
  "id": "job_1",
  "status": "completed",
  "source": {
    "repository": "https://git.example.com/a.git",
    "ref": "docs-agent/job_1"
  },
  "model": "claude",
  "prLink": "https://git.example.com/a/pull/1?x=\u003cy\u003e\u0026z",
  "createdAt": "2026-10-01T10:00:00.5Z",
  "archivedAt": "2026-10-02T00:00:00Z"
}
`},
		{"what the hosted service may leave out", `{"id":"job_1","status":"paused"}`,
			[]string{"jobs", "get", "job_1"}, `{
  "id": "job_1",
  "status": "paused",
  "source": {
    "repository": "",
    "ref": null
  },
  "model": "",
  "prLink": null,
  "createdAt": null,
  "archivedAt": null
}
`},
		{"a line of the list", `{"jobs":[{"id":"job_1","status":"active","source":{"repository":"r","ref":null},"model":"m","prLink":null,"createdAt":"2026-10-01T12:00:00Z","archivedAt":null}],"nextCursor":null,"hasMore":false}`,
			[]string{"jobs", "list", "--format", "json"},
			`{"id":"job_1","status":"active","source":{"repository":"r","ref":null},"model":"m","prLink":null,"createdAt":"2026-10-01T12:00:00Z","archivedAt":null}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, tc.body)
			}))
			t.Cleanup(ts.Close)
			env := map[string]string{"DOCSAPI_KEY": testKey, "DOCSAPI_BASE_URL": ts.URL, "DOCSAPI_PROJECT": "handbook"}
			r := runCLI(t, env, "", tc.args...)
			r.expect(t, exitOK)
			if r.stdout != tc.want {
				t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, tc.want)
			}
		})
	}
}
