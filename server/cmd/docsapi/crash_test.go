//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/gitrepo"
)

// TestKilledServerLeavesNoAgentBehind is the crash an operator fears most
// while an agent runs: "kill -9" of serve. The sandboxed agent, and the
// grandchild it detached with setsid, must die with the server (no second
// copy of the run may go on working while another replica takes the job
// over), and the next start must remove the dead run's folders.
func TestKilledServerLeavesNoAgentBehind(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a server")
	}
	requireSandbox(t)
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()

	work := t.TempDir()
	bin := buildDocsapi(ctx, t)
	bare := bareRepo(t, gitBin)
	marker := fmt.Sprintf("docsapi-crash-marker-%d", time.Now().UnixNano())
	// The agent detaches a grandchild into a session of its own, says it
	// has started (a file in its workspace), and then works "forever".
	// Both carry the marker in their command line, for the search below.
	agent := writeExecutable(t, filepath.Join(work, "agent.sh"), `#!/bin/sh
setsid sh -c 'while :; do sleep 0.2; done' `+marker+`-grandchild </dev/null >/dev/null 2>&1 &
touch started
exec sh -c 'while :; do sleep 0.2; done' `+marker+`-agent
`)
	workDir := filepath.Join(work, "runs")
	config := writeFile(t, filepath.Join(work, "docsapi.json"), fmt.Sprintf(`{
  "engine": {"pollInterval": "50ms", "leaseFor": "10m"},
  "git": {"workDir": %q},
  "projects": [
    {"id": "handbook", "repository": %q, "ref": "main",
     "host": {"kind": "push-only"},
     "agent": {"kind": "command", "command": %q, "timeout": "10m"}}
  ]
}`, workDir, bare, agent))
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work, "LANG=C.UTF-8", "DOCSAPI_DATA=" + filepath.Join(work, "data")}
	args := []string{"serve", "--config", config, "--listen", "127.0.0.1:0", "--log-format", "json"}

	srv := startServe(ctx, t, bin, env, args...)
	keyCmd := exec.CommandContext(ctx, bin, "key", "create", "--project", "handbook", "--scope", "write", "--name", "crash")
	keyCmd.Env = env
	var keyOut, keyErr bytes.Buffer
	keyCmd.Stdout, keyCmd.Stderr = &keyOut, &keyErr
	if err := keyCmd.Run(); err != nil {
		t.Fatalf("key create: %v\n%s", err, keyErr.String())
	}
	status, body := apiCall(ctx, t, http.MethodPost, "http://"+srv.addr+"/v2/agent/handbook/job",
		strings.TrimSpace(keyOut.String()), `{"prompt": "Work until the server dies"}`)
	if status != http.StatusCreated {
		t.Fatalf("creating the job: %d %s", status, body)
	}

	started := waitForFile(t, workDir, "started", 2*time.Minute, srv)
	// The agent touches its file before it execs into its marked command,
	// and the grandchild may not have exec'd yet either: wait for both.
	deadline := time.Now().Add(30 * time.Second)
	for n := markedProcesses(marker); n < 2; n = markedProcesses(marker) {
		if time.Now().After(deadline) {
			t.Fatalf("found %d marked processes while the agent runs, want the agent and its grandchild", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	runFolder := filepath.Join(workDir, strings.Split(must(filepath.Rel(workDir, started)), string(filepath.Separator))[0])

	if err := srv.cmd.Process.Kill(); err != nil { // SIGKILL: no clean-up runs
		t.Fatal(err)
	}
	<-srv.done
	deadline = time.Now().Add(10 * time.Second)
	for markedProcesses(marker) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d agent processes outlived the killed server", markedProcesses(marker))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Stat(runFolder); err != nil {
		t.Fatalf("the dead run's folder %s should still be there before the restart: %v", runFolder, err)
	}

	// The next start removes what the dead run left: its workspace and its
	// agent's home; the repository's mirror is kept for the next job. The
	// job's lease (10m) keeps the job from running again meanwhile, so
	// nothing new appears.
	srv = startServe(ctx, t, bin, env, args...)
	defer srv.stop(t, 30*time.Second)
	entries, err := os.ReadDir(workDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != gitrepo.MirrorFolder {
			t.Errorf("left in the runs folder after a restart: %s", e.Name())
		}
	}
	if !strings.Contains(srv.logs(), filepath.Base(runFolder)) {
		t.Errorf("the restart did not log the leftover it removed:\n%s", srv.logs())
	}
}

// waitForFile waits for a file of that name to appear anywhere below root.
func waitForFile(t *testing.T, root, name string, limit time.Duration, srv *served) string {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		var found string
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Name() == name && !d.IsDir() {
				found = p
				return fs.SkipAll
			}
			return nil
		})
		if found != "" {
			return found
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s appeared below %s in %s; server log:\n%s", name, root, limit, srv.logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// markedProcesses counts the processes whose command line holds marker.
func markedProcesses(marker string) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(marker)) {
			n++
		}
	}
	return n
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
