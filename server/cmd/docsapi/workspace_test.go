package main

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
)

// TestServeBoundsTheWorkspace: a job whose agent fills its workspace past
// agent.maxWorkspaceGrowth fails, saying so in the log, and pushes
// nothing; with the sandbox on and off.
func TestServeBoundsTheWorkspace(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	for _, sandboxSetting := range []string{`{}`, `"off"`} {
		t.Run("sandbox "+sandboxSetting, func(t *testing.T) {
			if sandboxSetting == `{}` {
				requireSandbox(t)
			}
			dir := t.TempDir()
			bare := bareRepo(t, gitBin)
			// 256 MiB in files of 4 MiB, under a limit of 8 MiB.
			config := configFile(t, fmt.Sprintf(`{"data": %q, "git": {"workDir": %q}, "projects": [
			  {"id": "handbook", "repository": %q, "ref": "main", "model": "local-agent", "host": {"kind": "push-only"},
			   "agent": {"kind": "command", "command": "sh", "sandbox": %s, "maxWorkspaceGrowth": "8MiB",
			             "args": ["-c", "i=0; while [ $i -lt 64 ]; do dd if=/dev/zero of=fill$i bs=1M count=4 2>/dev/null; i=$((i+1)); done"]}}]}`,
				filepath.Join(dir, "data"), filepath.Join(dir, "work"), bare, sandboxSetting))
			env := map[string]string{"HOME": dir}
			addr, logs, stop := serveInProcess(t, env, "--config", config)
			defer func() {
				if code := stop(); code != exitOK {
					t.Errorf("exit %d:\n%s", code, logs)
				}
			}()
			r := runCLI(t, withEnv(env, "DOCSAPI_DATA", filepath.Join(dir, "data")), "", "key", "create", "--project", "handbook", "--scope", "write")
			r.expect(t, exitOK)
			c, err := docsapi.NewClient(strings.TrimSpace(r.stdout), docsapi.WithBaseURL("http://"+addr), docsapi.WithProjectID("handbook"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.AgentJobs.CreateAndWait(t.Context(), "", docsapi.CreateJobParams{Prompt: "Fill the disk."},
				docsapi.WaitParams{MinInterval: 20 * time.Millisecond, MaxInterval: 200 * time.Millisecond, Timeout: 2 * time.Minute})
			var failed *docsapi.JobFailedError
			if !errors.As(err, &failed) {
				t.Fatalf("the job: %v, want it failed\n%s", err, logs)
			}
			// The engine logs a failure once it has stored it, so the log
			// may trail the job's status by a moment: wait for it, bounded.
			for deadline := time.Now().Add(30 * time.Second); !strings.Contains(logs.String(), `"msg":"engine: job failed"`) && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			for _, want := range []string{`"msg":"engine: job failed"`, "the workspace grew past its limit", "a run may add at most 8 MiB", "agent.maxWorkspaceGrowth"} {
				if !strings.Contains(logs.String(), want) {
					t.Errorf("the log lacks %s:\n%s", want, logs)
				}
			}
			if refs := gitOut(t, gitBin, dir, "--git-dir", bare, "for-each-ref", "--format=%(refname)"); refs != "refs/heads/main\n" {
				t.Errorf("the job pushed: the repository's refs are\n%s", refs)
			}
		})
	}
}
