package gitrepo

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/internal/rundir"
)

// holdEnv makes the test binary a process that makes a workspace folder as
// Open does, fills it, prints its path and waits to be killed.
const holdEnv = "GITREPO_TEST_HOLD_WORKSPACE"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(runChild(spec))
	}
	if parent := os.Getenv(holdEnv); parent != "" {
		d, err := rundir.New(parent, workspacePrefix)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		// A clone's read-only pack folder, as git leaves them.
		pack := filepath.Join(d.Path(), "git", "objects", "pack")
		if err := os.MkdirAll(pack, 0o755); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		_ = os.WriteFile(filepath.Join(pack, "p.pack"), []byte("x"), 0o444)
		_ = os.Chmod(pack, 0o555)
		fmt.Println(d.Path())
		select {} // until killed
	}
	code := m.Run()
	if remote.dir != "" {
		os.RemoveAll(remote.dir)
	}
	os.Exit(code)
}

// New removes the workspaces of runs whose process died (killed with
// SIGKILL, say), and keeps those of live runs sharing the folder.
func TestNewRemovesDeadRunsWorkspaces(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no flock")
	}
	parent := t.TempDir()
	remote := newRemote(t, "", "docs.git")
	r, _ := newRepos(t, Config{Dir: parent})
	live := open(t, r, engine.RepoSpec{Repository: "file://" + remote, Ref: "main", Branch: "job-live"})

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+parent)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the child's folder: %v", err)
	}
	killed := strings.TrimSpace(line)
	if !isDir(killed) {
		t.Fatalf("the child said %q", line)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	// A folder of the workspaces' form that nobody holds.
	orphan := filepath.Join(parent, workspacePrefix+"-0123456789abcdef")
	writeFile(t, filepath.Join(orphan, "tree", "README.md"), "left\n")

	var logs logBuffer
	if _, err := New(Config{Dir: parent, Logger: logs.logger()}); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{killed, orphan} {
		if _, err := os.Lstat(gone); err == nil {
			t.Errorf("%s is still there", gone)
		}
		if !strings.Contains(logs.String(), gone) {
			t.Errorf("the logs do not name %s:\n%s", gone, logs.String())
		}
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	// The mirrors stay too: the sweep is of run folders only.
	liveRoot := filepath.Base(filepath.Dir(live.Dir()))
	if want := []string{MirrorFolder, liveRoot, liveRoot + ".lock"}; !slices.Equal(names, want) {
		t.Errorf("the folder holds %v, want %v", names, want)
	}
	// The live run goes on.
	writeFile(t, filepath.Join(live.Dir(), "a.md"), "a\n")
	publish(t, live, true)
}
