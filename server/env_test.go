package server_test

import (
	"encoding/json"
	"testing"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/store"
)

// env is the tests' server (package servertest), with the helpers of this
// package's tests as its methods.
type env struct{ *servertest.Env }

// newEnv is a server on a new SQLite file: servertest.New.
func newEnv(t testing.TB, mutate ...func(*server.Config)) *env {
	t.Helper()
	return &env{servertest.New(t, mutate...)}
}

// newEnvOn is newEnv on the store st, which the caller closes.
func newEnvOn(t testing.TB, st store.Store, mutate ...func(*server.Config)) *env {
	t.Helper()
	return &env{servertest.NewOn(t, st, mutate...)}
}

// newSiteEnv is newEnv with a site token of alpha: servertest.NewSite.
func newSiteEnv(t testing.TB, mutate ...func(*server.Config)) *env {
	t.Helper()
	return &env{servertest.NewSite(t, mutate...)}
}

// analyticsDetails decodes an analytics error's details.
func analyticsDetails(t *testing.T, body []byte) []docsapi.ErrorDetail {
	t.Helper()
	var e struct {
		Error   string                `json:"error"`
		Details []docsapi.ErrorDetail `json:"details"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
		t.Fatalf("body %s is not an analytics error: %v", body, err)
	}
	return e.Details
}
