package main

import (
	"os"
	"testing"

	"github.com/docsapi/docsapi-go/server/agent/sandbox"
)

// requireSandbox skips a test that needs the agent sandbox where this
// machine cannot make one, and fails it instead where the test set-up
// (.ci/test-env.sh) found that it can: there a skip would hide a broken
// sandbox.
func requireSandbox(t *testing.T) {
	t.Helper()
	err := sandbox.Check(sandbox.DefaultBwrap)
	switch {
	case err == nil:
	case os.Getenv("DOCSAPI_TEST_SANDBOX") == "required":
		t.Fatalf("DOCSAPI_TEST_SANDBOX=required, but: %v", err)
	default:
		t.Skipf("the agent sandbox cannot run here: %v", err)
	}
}
