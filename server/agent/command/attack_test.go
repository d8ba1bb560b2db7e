//go:build unix

package command

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/agent/sandbox"
)

// These tests play a hostile agent: the program is chosen by a model, so
// it gets to try whatever the server's user can do. Each attack succeeds
// against an agent run without the sandbox.

// unique returns a string no other process carries by chance.
func unique(t *testing.T) string {
	t.Helper()
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "docsapi-test-" + hex.EncodeToString(b[:])
}

// markedProcesses returns the processes whose command line holds marker.
func markedProcesses(marker string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(marker)) && alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// assertNoMarkedProcess waits up to wait for every process carrying
// marker to end; those left are reported and killed.
func assertNoMarkedProcess(t *testing.T, marker string, wait time.Duration) {
	t.Helper()
	var pids []int
	for deadline := time.Now().Add(wait); ; time.Sleep(50 * time.Millisecond) {
		if pids = markedProcesses(marker); len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			break
		}
	}
	for _, pid := range pids {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		t.Errorf("process %d outlived the run: %q", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// waitFor waits for a file the agent writes when it is ready.
func waitFor(t *testing.T, path string, d time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(d); !exists(path); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within %s", path, d)
		}
	}
}

// TestAttackReadServerEnvironment: the server's environment (host tokens,
// the database's password) is what /proc shows of it, the environment it
// was started with, so the server here is this binary started anew with a
// canary in its environment.
func TestAttackReadServerEnvironment(t *testing.T) {
	canary := unique(t)
	t.Setenv("DOCSAPI_TEST_SERVER_SECRET", canary)
	hardened(t, Config{}) // skips as the sandbox tests do
	dir := workspace(t)
	body := `{
echo "PPID=$PPID"; env
cat /proc/$PPID/environ
for f in /proc/[0-9]*/environ; do echo "== $f"; cat "$f"; done
cat /proc/1/environ
} 2>&1 | tr '\0' '\n' > out.txt`
	if out, err := startServer(t, dir, t.TempDir(), sandbox.Required, body).CombinedOutput(); err != nil {
		t.Fatalf("the server failed: %v\n%s", err, out)
	}
	out := readFile(t, dir, "out.txt")
	if strings.Contains(out, canary) {
		t.Errorf("the agent read the server's environment:\n%s", excerpt(out, canary))
	}
	if !strings.Contains(out, "PPID=") {
		t.Errorf("the script did not run: %q", out)
	}
}

// startServer returns this test binary as a server that runs one agent, the
// shell script body, in dir, with the sandbox in mode (see serverRole).
func startServer(t *testing.T, dir, runs string, mode sandbox.Mode, body string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "test-server", dir, runs, string(mode), body)
	cmd.Env = append(os.Environ(), "GORACE="+noRaceExitSleep["GORACE"])
	return cmd
}

// excerpt shows the lines around the first occurrence of s.
func excerpt(text, s string) string {
	i := strings.Index(text, s)
	return text[max(0, i-200):min(len(text), i+len(s)+50)]
}

func TestAttackSecretFilesAndWritesOutside(t *testing.T) {
	canary := unique(t)
	secrets := t.TempDir() // as a tokenFile would be
	token := filepath.Join(secrets, "github-token")
	if err := os.WriteFile(token, []byte(canary+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir() // the server's data folder
	listed := "listed-only-" + canary
	for _, name := range []string{"docsapi.db", listed} {
		if err := os.WriteFile(filepath.Join(data, name), []byte(canary), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dir := workspace(t)
	escape := "escape-" + unique(t)
	escapes := []string{
		filepath.Join(os.TempDir(), escape), // the host's /tmp
		filepath.Join(filepath.Dir(dir), escape),
		filepath.Join(data, escape),
		filepath.Join(secrets, escape),
		"/usr/" + escape,
	}
	t.Cleanup(func() {
		for _, p := range escapes {
			os.Remove(p)
		}
	})
	body := fmt.Sprintf(`{
cat %[1]q; ls -la %[2]q; cat %[2]q/docsapi.db; cat %[2]q/*
for f in %[3]s; do echo x > "$f" && echo "wrote $f"; done
} > out.txt 2>&1
exit 0`, token, data, strings.Join(escapes, " "))
	a := newAgent(t, hardened(t, Config{Command: script(t, body)}))
	if err := a.Run(context.Background(), task(dir, "x")); err != nil {
		t.Fatalf("Run: %v", err)
	}
	out := readFile(t, dir, "out.txt")
	if strings.Contains(out, canary) {
		t.Errorf("the agent read a secret file or listed the data folder:\n%s", out)
	}
	for _, p := range escapes {
		if exists(p) {
			t.Errorf("the agent wrote %s outside the workspace", p)
		}
	}
}

// TestAttackSetsidGrandchild: a grandchild that leaves the process group
// and the session must still die with the run.
func TestAttackSetsidGrandchild(t *testing.T) {
	for _, how := range []string{"timeout", "cancel"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			dir := workspace(t)
			marker := filepath.Join(dir, unique(t))
			// The grandchild says when it has left the session, writes the
			// marker file after a while, and carries the marker in its
			// command line until it does.
			cfg := Config{Command: script(t, fmt.Sprintf(`setsid sh -c 'echo > left; sleep 3; touch %[1]s; : %[1]s' &
sleep 30`, marker))}
			left := filepath.Join(dir, "left")
			ctx := context.Background()
			if how == "timeout" {
				cfg.Timeout = 1500 * time.Millisecond
			} else {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
				go func() { // cancelled once the grandchild has left the session
					for ctx.Err() == nil && !exists(left) {
						time.Sleep(20 * time.Millisecond)
					}
					cancel()
				}()
			}
			a := newAgent(t, hardened(t, cfg))
			err := a.Run(ctx, task(dir, "x"))
			if err == nil {
				t.Fatal("Run succeeded; the agent sleeps past the end")
			}
			if !exists(left) {
				t.Fatalf("the agent's grandchild did not leave the session before the run ended: %v", err)
			}
			// Once no process carries the marker, none can write the
			// file: a grandchild that outlived the run is still there, or
			// wrote it before it ended.
			assertNoMarkedProcess(t, marker, 10*time.Second)
			if exists(marker) {
				t.Error("the setsid grandchild outlived the run and wrote its marker")
			}
		})
	}
}

// TestAttackServerDeath kills the server while its agent runs: nothing of
// the agent may survive it.
func TestAttackServerDeath(t *testing.T) {
	dir := workspace(t)
	runs := t.TempDir()
	marker := unique(t)
	body := fmt.Sprintf(`setsid sh -c 'sleep 60; : %[1]s' &
echo ready > ready; sleep 60; : %[1]s`, marker)
	hardened(t, Config{}) // skips as the sandbox tests do
	server := startServer(t, dir, runs, sandbox.Required, body)
	var stderr bytes.Buffer
	server.Stderr = &stderr
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Process.Kill(); _ = server.Wait() })
	waitFor(t, filepath.Join(dir, "ready"), 15*time.Second)
	if n := len(markedProcesses(marker)); n < 2 {
		t.Fatalf("%d processes carry the marker, want the agent and its grandchild; server: %s", n, stderr.String())
	}
	if err := server.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = server.Wait()
	assertNoMarkedProcess(t, marker, 5*time.Second)
	cgroups := leftCgroups(t, stderr.String(), server.Process.Pid)
	logs := checkLeftoverSwept(t, runs)
	for _, p := range cgroups {
		if !strings.Contains(logs, "removed the cgroup of a run whose server died") || !strings.Contains(logs, p) {
			t.Errorf("New did not log the removal of the cgroup %s:\n%s", p, logs)
		}
		if exists(p) {
			t.Errorf("the dead server's cgroup %s is left", p)
		}
	}
}

// leftCgroups returns the cgroups of runs that the killed server pid left,
// in the folders its log (stderr) names; none where it made no cgroup.
func leftCgroups(t *testing.T, stderr string, pid int) []string {
	t.Helper()
	if !strings.Contains(stderr, "command agent: sandbox limits") {
		t.Errorf("the server did not say how it enforces the sandbox's limits:\n%s", stderr)
	}
	_, after, ok := strings.Cut(stderr, `cgroups="`)
	if !ok {
		t.Logf("the server made no cgroup here:\n%s", stderr)
		return nil
	}
	parents, _, _ := strings.Cut(after, `"`)
	var left []string
	for _, parent := range strings.Fields(parents) {
		found, _ := filepath.Glob(filepath.Join(parent, fmt.Sprintf("docsapi-sandbox-%d-*", pid)))
		if len(found) == 0 {
			t.Errorf("the killed server left no cgroup in %s; the test proves nothing", parent)
		}
		left = append(left, found...)
	}
	return left
}

// TestUnsandboxedServerDeath: with the sandbox off, the agent itself still
// dies with the server (its descendants in other sessions may not: that is
// what the sandbox adds).
func TestUnsandboxedServerDeath(t *testing.T) {
	dir := workspace(t)
	marker := unique(t)
	server := startServer(t, dir, t.TempDir(), sandbox.Off, "echo ready > ready; sleep 60; : "+marker)
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Process.Kill(); _ = server.Wait() })
	waitFor(t, filepath.Join(dir, "ready"), 15*time.Second)
	if len(markedProcesses(marker)) == 0 {
		t.Fatal("the agent is not running")
	}
	if err := server.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = server.Wait()
	assertNoMarkedProcess(t, marker, 5*time.Second)
}

// TestAttackNetwork: the agent reaches no listener of the host, not even
// one on the loopback interface.
func TestAttackNetwork(t *testing.T) {
	addr := lineServer(t, "hello from the host")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := workspace(t)
	a := newAgent(t, hardened(t, Config{Command: exe, Args: []string{"test-agent-dial", addr}, Env: noRaceExitSleep}))
	if err := a.Run(context.Background(), task(dir, "x")); err != nil {
		t.Fatalf("Run: %v", err)
	}
	out := readFile(t, dir, "net.txt")
	if !strings.Contains(out, "failed") || strings.Contains(out, "hello") {
		t.Errorf("the agent reached the host's loopback listener: %s", out)
	}
}

// lineServer listens on the loopback interface and writes one line to
// each connection.
func lineServer(t *testing.T, line string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			fmt.Fprintln(c, line)
			c.Close()
		}
	}()
	return l.Addr().String()
}
