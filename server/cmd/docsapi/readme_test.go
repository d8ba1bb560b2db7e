package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
)

// readmeBlock returns the code block that follows the marker comment in
// the server's guide (server/README.md).
func readmeBlock(t *testing.T, marker string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "<!-- "+marker)
	if !ok {
		t.Fatalf("server/README.md has no %q marker", marker)
	}
	_, rest, _ = strings.Cut(rest, "```json\n")
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatalf("server/README.md has no code block after the %q marker", marker)
	}
	return block
}

// The server guide's offline configuration is accepted by serve as written,
// beside the bare repository it names; and, where the sandbox works, a job
// runs through it: the agent's change is pushed to the job's branch.
func TestReadmeOfflineConfigRunsAJob(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	config := writeFile(t, filepath.Join(dir, "docsapi.json"), readmeBlock(t, "offline-config"))
	bare := filepath.Join(dir, "handbook.git")
	gitOut(t, gitBin, dir, "init", "--bare", bare)
	scratch := filepath.Join(dir, "scratch")
	gitOut(t, gitBin, dir, "clone", bare, scratch)
	writeFile(t, filepath.Join(scratch, "README.md"), "# Handbook\n")
	gitOut(t, gitBin, scratch, "add", "README.md")
	gitOut(t, gitBin, scratch, "commit", "-m", "Initial docs")
	gitOut(t, gitBin, scratch, "push", "origin", "HEAD:main")
	env := map[string]string{"HOME": dir}
	runCLI(t, env, "", "serve", "--config", config, "--print-config").expect(t, exitOK, "the configuration is valid")

	requireSandbox(t)
	addr, logs, stop := serveInProcess(t, env, "--config", config)
	defer func() {
		if code := stop(); code != exitOK {
			t.Errorf("exit %d:\n%s", code, logs)
		}
	}()
	// serve made the project; a key for it, in the data folder the file names.
	r := runCLI(t, withEnv(env, "DOCSAPI_DATA", filepath.Join(dir, "data")), "", "key", "create", "--project", "handbook", "--scope", "write")
	r.expect(t, exitOK)
	c, err := docsapi.NewClient(strings.TrimSpace(r.stdout), docsapi.WithBaseURL("http://"+addr), docsapi.WithProjectID("handbook"))
	if err != nil {
		t.Fatal(err)
	}
	job, err := c.AgentJobs.CreateAndWait(t.Context(), "", docsapi.CreateJobParams{Prompt: "Say hello to new readers."},
		docsapi.WaitParams{MinInterval: 20 * time.Millisecond, MaxInterval: 200 * time.Millisecond, Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatalf("the job: %v\n%s", err, logs)
	}
	got := gitOut(t, gitBin, dir, "--git-dir", bare, "show", job.Source.Ref+":README.md")
	if got != "# Handbook\nSay hello to new readers.\n" {
		t.Errorf("README.md on %s:\n%s", job.Source.Ref, got)
	}
}
