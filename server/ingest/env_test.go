package ingest_test

import (
	"encoding/json"
	"net/http"
	"testing"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
)

// env is the tests' server (package servertest), with the helpers of this
// package's tests as its methods.
type env struct{ *servertest.Env }

// newEnv is a server on a new SQLite file: servertest.New.
func newEnv(t testing.TB, mutate ...func(*server.Config)) *env {
	t.Helper()
	return &env{servertest.New(t, mutate...)}
}

// views exports alpha's views as the named key sees them, decoded by the
// SDK.
func (e *env) views(key, query string) docsapi.ViewsPage {
	e.T.Helper()
	resp, body := e.Do(key, "GET", "/v1/analytics/alpha/views"+query, "")
	if resp.StatusCode != http.StatusOK {
		e.T.Fatalf("views%s: %d %s", query, resp.StatusCode, body)
	}
	var page docsapi.ViewsPage
	if err := json.Unmarshal(body, &page); err != nil {
		e.T.Fatalf("views%s: %v", query, err)
	}
	return page
}
