package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
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

// TestServeLogsSandboxLimits: serve says at start, for each sandboxed
// agent, its limits and what enforces them on this machine.
func TestServeLogsSandboxLimits(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed") // the runner checks git at start-up
	}
	sb, err := sandbox.New(sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	_, here := sb.Limits()
	dir := t.TempDir()
	config := configFile(t, `{"projects": [
	  {"id": "handbook", "repository": "https://git.example.com/handbook.git",
	   "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh", "sandbox": {"maxProcesses": 99, "memory": "1GiB"}}}]}`)
	_, logs, stop := serveInProcess(t, map[string]string{"HOME": dir}, "--data", filepath.Join(dir, "data"), "--config", config)
	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d:\n%s", code, logs)
	}
	for _, want := range []string{
		`"msg":"command agent: sandbox limits`,
		fmt.Sprintf(`"processes":"99 by %s"`, here.Processes),
		fmt.Sprintf(`"memory":"1 GiB by %s"`, here.Memory),
		`"tmp":"256 MiB","shm":"64 MiB","home":"512 MiB","path":"/usr/local/bin:/usr/bin:/bin"`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %s:\n%s", want, logs)
		}
	}
}
