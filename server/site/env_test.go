package site_test

import (
	"testing"
	"time"

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

// newSiteEnv is newEnv with a site token of alpha: servertest.NewSite.
func newSiteEnv(t testing.TB, mutate ...func(*server.Config)) *env {
	t.Helper()
	return &env{servertest.NewSite(t, mutate...)}
}

// client is a client of e's server (env.Serve) as the key named key.
func (e *env) client(key string, opts ...docsapi.Option) *docsapi.Client {
	e.T.Helper()
	base := []docsapi.Option{
		docsapi.WithBaseURL(e.Serve()),
		docsapi.WithProjectID("alpha"),
		docsapi.WithRetryDelays(time.Millisecond, 5*time.Millisecond),
	}
	c, err := docsapi.NewClient(e.Keys[key], append(base, opts...)...)
	if err != nil {
		e.T.Fatalf("NewClient: %v", err)
	}
	return c
}
