//go:build unix

package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readmeBlocks returns the shell blocks that follow the marker comments
// "<!-- marker N of M" in the server's guide (server/README.md), in order,
// checking that there are M of them.
func readmeBlocks(t *testing.T, marker string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	markerRE := regexp.MustCompile(`<!-- ` + regexp.QuoteMeta(marker) + ` (\d+) of (\d+)`)
	var blocks []string
	total := 0
	rest := string(b)
	for {
		loc := markerRE.FindStringSubmatchIndex(rest)
		if loc == nil {
			break
		}
		n, _ := strconv.Atoi(rest[loc[2]:loc[3]])
		total, _ = strconv.Atoi(rest[loc[4]:loc[5]])
		if n != len(blocks)+1 {
			t.Fatalf("server/README.md: %s block %d comes where %d should", marker, n, len(blocks)+1)
		}
		rest = rest[loc[1]:]
		_, after, ok := strings.Cut(rest, "```sh\n")
		if !ok {
			t.Fatalf("server/README.md: no shell block after %s marker %d", marker, n)
		}
		block, after, ok := strings.Cut(after, "```")
		if !ok {
			t.Fatalf("server/README.md: the shell block after %s marker %d does not end", marker, n)
		}
		blocks, rest = append(blocks, block), after
	}
	if len(blocks) == 0 || len(blocks) != total {
		t.Fatalf("server/README.md has %d %s blocks, marked as %d", len(blocks), marker, total)
	}
	return blocks
}

// freePort is a TCP port of 127.0.0.1 that nothing listened on a moment
// ago.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// The server guide's offline recipe, run as written with bash from a new
// folder and the freshly built docsapi on PATH: it makes its repository,
// starts the server, and its job completes and pushes its branch. Only the
// port differs (8080 may be taken on a shared machine). The agent runs in
// the sandbox, as the recipe says.
func TestReadmeOfflineRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a server")
	}
	requireSandbox(t)
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	bin := buildDocsapi(ctx, t)
	blocks := readmeBlocks(t, "offline-recipe")
	if len(blocks) != 3 {
		t.Fatalf("the recipe has %d blocks; this test runs three: set-up, serve, client", len(blocks))
	}
	port := freePort(t)
	for i := range blocks {
		blocks[i] = strings.ReplaceAll(blocks[i], "127.0.0.1:8080", "127.0.0.1:"+port)
	}

	dir := t.TempDir()
	// A reader's environment: docsapi on PATH, a home with nothing in it,
	// and the git identity a reader has configured.
	env := []string{
		"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + t.TempDir(), "LANG=C.UTF-8", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Reader", "GIT_AUTHOR_EMAIL=reader@example.com",
		"GIT_COMMITTER_NAME=Reader", "GIT_COMMITTER_EMAIL=reader@example.com",
	}
	shell := func(block string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, bash, "-e", "-u", "-o", "pipefail", "-c", block)
		cmd.Dir, cmd.Env = dir, env
		return cmd
	}
	if out, err := shell(blocks[0]).CombinedOutput(); err != nil {
		t.Fatalf("block 1: %v\n%s", err, out)
	}

	// Block 2 runs until it is interrupted, as in a terminal: Ctrl-C
	// signals the foreground process group.
	logs := &syncBuffer{}
	serve := shell(blocks[1])
	serve.Stdout, serve.Stderr = logs, logs
	serve.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- serve.Wait() }()
	defer func() {
		syscall.Kill(-serve.Process.Pid, syscall.SIGKILL) // whatever is left, should the test fail first
	}()
	for {
		resp, err := http.Get("http://127.0.0.1:" + port + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-served:
			t.Fatalf("block 2 ended (%v) before the server answered:\n%s", err, logs)
		case <-ctx.Done():
			t.Fatalf("the server did not answer in time:\n%s", logs)
		case <-time.After(50 * time.Millisecond):
		}
	}

	out, err := shell(blocks[2]).CombinedOutput()
	if err != nil {
		t.Fatalf("block 3: %v\n%s\nthe server's log:\n%s", err, out, logs)
	}
	jobID := regexp.MustCompile(`job_[A-Za-z0-9]+`).FindString(string(out))
	if jobID == "" || !strings.Contains(string(out), "completed") {
		t.Fatalf("block 3 shows no completed job:\n%s", out)
	}
	// The job's branch, in the repository the recipe made, holds the
	// agent's change; the recipe's last line showed it.
	branch := "docs-agent/" + jobID
	if !strings.Contains(string(out), "origin/"+branch) {
		t.Errorf("block 3 does not show the branch %s:\n%s", branch, out)
	}
	if got := gitOut(t, gitBin, dir, "--git-dir", "handbook.git", "show", branch+":README.md"); got != "# Handbook\nSay hello to new readers.\n" {
		t.Errorf("README.md on %s:\n%s", branch, got)
	}

	if err := syscall.Kill(-serve.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("block 2 after Ctrl-C: %v\n%s", err, logs)
		}
	case <-ctx.Done():
		t.Fatalf("the server did not stop after Ctrl-C:\n%s", logs)
	}
}
