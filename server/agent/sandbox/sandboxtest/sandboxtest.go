// Package sandboxtest holds the rule that tests needing the agent sandbox
// (package sandbox, bubblewrap) follow on a machine that cannot run it. It
// is for tests only.
//
// The sandbox needs bubblewrap and unprivileged user namespaces, which a
// developer's machine or a CI runner may lack, so such a test skips there,
// saying why. A skip is also what a broken sandbox would look like, though:
// where the test set-up found that bubblewrap works (.ci/test-env.sh sets
// DOCSAPI_TEST_SANDBOX=required), the same test fails instead, so that the
// sandbox's tests cannot all pass by skipping.
//
// The package does not import package sandbox, so that package's own tests
// can use it: the caller passes the result of
// sandbox.Check(sandbox.DefaultBwrap), cached with sync.OnceValue where a
// package asks often (it starts bubblewrap each time).
package sandboxtest

import (
	"os"
	"testing"
)

// variable is the environment variable that turns a skip for want of the
// sandbox into a failure, when it holds required.
const (
	variable = "DOCSAPI_TEST_SANDBOX"
	required = "required"
)

// Require lets t go on when unavailable, the result of
// sandbox.Check(sandbox.DefaultBwrap), is nil. Otherwise it skips t, giving
// the reason, or, where the environment says this machine can run the
// sandbox (DOCSAPI_TEST_SANDBOX=required), fails it: there a skip would hide
// a broken sandbox.
func Require(t testing.TB, unavailable error) {
	t.Helper()
	switch {
	case unavailable == nil:
	case os.Getenv(variable) == required:
		t.Fatalf("%s=%s (the test set-up found that the agent sandbox runs here), yet: %v", variable, required, unavailable)
	default:
		t.Skipf("skipped: %v", unavailable)
	}
}
