package main

import (
	"sync"
	"testing"

	"github.com/docsapi/docsapi-go/server/agent/sandbox"
	"github.com/docsapi/docsapi-go/server/agent/sandbox/sandboxtest"
)

var sandboxCheck = sync.OnceValue(func() error { return sandbox.Check(sandbox.DefaultBwrap) })

// requireSandbox skips a test that needs the agent sandbox where this
// machine cannot make one, or fails it where the test set-up
// (.ci/test-env.sh) found that it can (sandboxtest.Require).
func requireSandbox(t *testing.T) {
	t.Helper()
	sandboxtest.Require(t, sandboxCheck())
}
