package ingest_test

import (
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
	var page docsapi.ViewsPage
	e.GetJSON(key, "/v1/analytics/alpha/views"+query, &page)
	return page
}
