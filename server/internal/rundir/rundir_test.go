package rundir

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
)

// childEnv makes the test binary a process that makes a run folder, prints
// its path, and waits to be killed.
const childEnv = "RUNDIR_TEST_CHILD_PARENT"

func TestMain(m *testing.M) {
	if path := os.Getenv(lockChildEnv); path != "" {
		holdLock(path)
	}
	if parent := os.Getenv(childEnv); parent != "" {
		d, err := New(parent, "run")
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println(d.Path())
		select {} // until killed
	}
	os.Exit(m.Run())
}

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Lstat(path)
	return err == nil
}

func TestNewMakesAPrivateLockedFolder(t *testing.T) {
	parent := t.TempDir()
	d, err := New(parent, "run")
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(d.Path())
	if err != nil {
		t.Fatal(err)
	}
	if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("mode %v, want a 0700 folder", fi.Mode())
	}
	if !strings.HasPrefix(filepath.Base(d.Path()), "run-") {
		t.Errorf("name %q lacks the prefix", d.Path())
	}
	if !exists(t, d.Path()+lockSuffix) {
		t.Error("no lock file beside the folder")
	}
	// A live folder survives a sweep, even of this very process: flock
	// locks belong to open files, and the sweep opens the file anew.
	removed, err := Sweep(parent, "run")
	if err != nil || len(removed) != 0 || !exists(t, d.Path()) {
		t.Fatalf("Sweep removed %v (err %v); a live run's folder must stay", removed, err)
	}
	if err := d.Remove(); err != nil {
		t.Fatal(err)
	}
	if err := d.Remove(); err != nil {
		t.Fatalf("second Remove: %v", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestRemoveEmptiesReadOnlyFolders(t *testing.T) {
	d, err := New(t.TempDir(), "run")
	if err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(d.Path(), "cache", "pkg")
	if err := os.MkdirAll(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ro, "f"), []byte("x"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	if err := d.Remove(); err != nil {
		t.Fatal(err)
	}
	if exists(t, d.Path()) {
		t.Error("the folder is still there")
	}
}

// TestRemoveKeepsNothingOutside: a run may leave a symbolic link to a
// folder outside; removing the run's folder must not follow it.
func TestRemoveKeepsNothingOutside(t *testing.T) {
	outside := t.TempDir()
	keep := filepath.Join(outside, "keep")
	if err := os.WriteFile(keep, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := New(t.TempDir(), "run")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(d.Path(), "link")); err != nil {
		t.Fatal(err)
	}
	if err := d.Remove(); err != nil {
		t.Fatal(err)
	}
	if !exists(t, keep) {
		t.Error("Remove followed a link out of the folder")
	}
}

// TestSweepRemovesWhatAKilledProcessLeft kills a process holding a run
// folder with SIGKILL, as a crash would: its folder goes at the next sweep,
// while the folder of a live run, with the same prefix, stays.
func TestSweepRemovesWhatAKilledProcessLeft(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock")
	}
	parent := t.TempDir()
	live, err := New(parent, "run")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Remove()

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+parent)
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
	dead := strings.TrimSpace(line)
	if !exists(t, dead) {
		t.Fatalf("child said %q", dead)
	}
	// While the child lives, its folder stays.
	if removed, err := Sweep(parent, "run"); err != nil || len(removed) != 0 {
		t.Fatalf("Sweep with the child alive removed %v (err %v)", removed, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	removed, err := Sweep(parent, "run")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []string{dead}) {
		t.Errorf("Sweep removed %v, want just %s", removed, dead)
	}
	if exists(t, dead) || exists(t, dead+lockSuffix) {
		t.Error("the dead run's folder or lock is still there")
	}
	if !exists(t, live.Path()) {
		t.Error("the live run's folder was removed")
	}
}

func TestSweepLeftovers(t *testing.T) {
	parent := t.TempDir()
	mk := func(name string) string {
		p := filepath.Join(parent, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	nolock := mk("run-aaaa")                               // its owner died while removing it
	other := mk("other-bbbb")                              // another prefix: never touched
	bare := mk("run")                                      // not of New's form
	orphan := filepath.Join(parent, "run-cccc"+lockSuffix) // a lock without its folder
	if err := os.WriteFile(orphan, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	removed, err := Sweep(parent, "run")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []string{nolock}) {
		t.Errorf("removed %v, want %v", removed, []string{nolock})
	}
	for _, p := range []string{other, bare} {
		if !exists(t, p) {
			t.Errorf("%s was removed", p)
		}
	}
	if exists(t, orphan) {
		t.Error("an orphaned lock file stayed")
	}
	if removed, err := Sweep(filepath.Join(parent, "missing"), "run"); err != nil || removed != nil {
		t.Errorf("a missing parent: %v, %v", removed, err)
	}
}

func TestBadPrefix(t *testing.T) {
	for _, p := range []string{"", "a/b", `a\b`, ".", ".."} {
		if _, err := New(t.TempDir(), p); err == nil {
			t.Errorf("New accepted prefix %q", p)
		}
		if _, err := Sweep(t.TempDir(), p); err == nil {
			t.Errorf("Sweep accepted prefix %q", p)
		}
	}
}
