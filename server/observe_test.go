package server_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/docsapi/docsapi-go/server"
)

// heard keeps what a hook was told, for the test to read.
type heard[T comparable] struct {
	mu  sync.Mutex
	got []T
}

func (h *heard[T]) add(v T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got = append(h.got, v)
}

// check compares what the hook was told with want.
func (h *heard[T]) check(t *testing.T, hook string, want []T) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.got) != len(want) {
		t.Fatalf("%s was called %d times, want %d: %+v", hook, len(h.got), len(want), h.got)
	}
	for i := range want {
		if h.got[i] != want[i] {
			t.Errorf("%s call %d got %+v, want %+v", hook, i, h.got[i], want[i])
		}
	}
}

// OnRequest hears of every request with its route's pattern, never its
// path, and the status answered.
func TestOnRequestTellsRouteAndStatus(t *testing.T) {
	var requests heard[server.RequestInfo]
	e := newEnv(t, func(c *server.Config) { c.OnRequest = requests.add })
	// Some requests are outside the document by definition, so they skip
	// the validator.
	e.Handler = e.Server
	e.Do("ro", "GET", "/v2/agent/alpha/job/missing", "")
	e.Do("", "GET", "/v2/agent/alpha/job/missing", "")
	e.Do("ro", "GET", "/healthz", "")
	e.Do("ro", "GET", "/made/up/path", "")
	e.Do("ro", "PUT", "/v2/agent/alpha/job", "")
	requests.check(t, "OnRequest", []server.RequestInfo{
		{Route: "GET /v2/agent/{projectId}/job/{id}", Status: http.StatusNotFound},
		{Route: "GET /v2/agent/{projectId}/job/{id}", Status: http.StatusUnauthorized},
		{Route: "GET /healthz", Status: http.StatusOK},
		{Route: "", Status: http.StatusNotFound},
		{Route: "", Status: http.StatusMethodNotAllowed},
	})
}

// OnIngestCommit hears of each commit of ingested views, with the views
// and requests it stored.
func TestOnIngestCommitTellsViewsAndRequests(t *testing.T) {
	var commits heard[server.IngestCommitInfo]
	e := newEnv(t, func(c *server.Config) { c.OnIngestCommit = commits.add })
	resp, body := e.Do("rw", "POST", "/v1/analytics/alpha/views", `{"views": [{"path": "/a"}, {"path": "/b"}, {"path": "/a"}]}`)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("ingest: %d %s", resp.StatusCode, body)
	}
	commits.check(t, "OnIngestCommit", []server.IngestCommitInfo{{Requests: 1, Views: 3}})
}
