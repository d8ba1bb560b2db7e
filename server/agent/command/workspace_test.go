//go:build linux

package command

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/engine"
)

// These tests play an agent that fills the server's disk through its
// workspace, the one folder of the server's disk it may write to.

// testGrowth is the workspace's limit in these tests: small, to keep them
// fast.
const testGrowth = 64 << 20

// overshoot is what a run may add past its limit before it is stopped, on
// this machine: what the agent writes in the time WorkspaceLimits states
// (50 ms and three walks of a small tree, and the kill), at the speed of a
// page cache, with room for a loaded machine. The agent would write 1 GiB
// unchecked.
const overshoot = 256 << 20

// blocksOf returns the disk space the entries under root take, counted
// without the code under test: every entry's st_blocks, through paths.
func blocksOf(t *testing.T, root string) int64 {
	t.Helper()
	var total int64
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			return err
		}
		total += st.Blocks * 512
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return total
}

// limited returns cfg with the tests' workspace limit.
func limited(cfg Config) Config {
	cfg.Workspace.MaxGrowth = testGrowth
	return cfg
}

// wantBreach checks that err is the permanent failure of a workspace past
// its limit, saying all of want.
func wantBreach(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("Run succeeded; the workspace is past its limit")
	}
	if !engine.IsPermanent(err) {
		t.Errorf("Run = %v, want a permanent failure: the same job would do the same", err)
	}
	for _, w := range append(want, "the workspace grew past its limit", "nothing of the run is published") {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the error does not say %q: %v", w, err)
		}
	}
}

// TestAttackFillWorkspace: an agent that writes 1 GiB into its workspace,
// in files each below the limit, is stopped soon after the limit, and the
// job fails saying which limit and which setting. It only adds files, so
// the workspace's use after the run is the most it reached.
func TestAttackFillWorkspace(t *testing.T) {
	inModes(t, func(t *testing.T, mode func(Config) Config) {
		dir := workspace(t)
		before := blocksOf(t, dir)
		a := newAgent(t, limited(mode(Config{Command: script(t, `i=0
while [ $i -lt 64 ]; do
  dd if=/dev/zero of=fill$i bs=1M count=16 2>/dev/null
  i=$((i+1))
done
echo finished > finished
exit 0`)})))
		err := a.Run(context.Background(), task(dir, "x"))
		wantBreach(t, err, "a run may add at most 64 MiB", "agent.maxWorkspaceGrowth", "the agent was stopped")
		grown := blocksOf(t, dir) - before
		t.Logf("the workspace grew by %s under a limit of %s", sizeText(grown), sizeText(testGrowth))
		if exists(filepath.Join(dir, "finished")) {
			t.Error("the agent wrote its 1 GiB to the end")
		}
		if grown > testGrowth+overshoot {
			t.Errorf("the workspace grew by %s, past the limit (%s) and the overshoot (%s)", sizeText(grown), sizeText(testGrowth), sizeText(overshoot))
		}
	})
}

// TestAttackBigFile: in the sandbox, one file cannot outgrow the limit
// between two walks: its writer gets SIGXFSZ, and the error says why.
func TestAttackBigFile(t *testing.T) {
	dir := workspace(t)
	a := newAgent(t, limited(hardened(t, Config{Command: script(t, `exec dd if=/dev/zero of=big bs=1M count=1024`)})))
	err := a.Run(context.Background(), task(dir, "x"))
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 128+int(syscall.SIGXFSZ) {
		t.Fatalf("Run = %v, want an *ExitError with status %d (SIGXFSZ)", err, 128+int(syscall.SIGXFSZ))
	}
	for _, want := range []string{"SIGXFSZ", "64 MiB", "agent.maxWorkspaceGrowth"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if info, err := os.Stat(filepath.Join(dir, "big")); err != nil || info.Size() != testGrowth {
		t.Errorf("the file written: %v %v, want %d bytes", info, err, testGrowth)
	}
}

// TestAttackSparseWorkspace: sparse files take little of the disk, but git
// add would read (and compress) them whole, so their sizes count against
// the limit too. In the sandbox, a file of 10 GiB cannot even be made; a
// few below the limit that together pass it fail the job. Without the
// sandbox the 10 GiB file is made, and fails the job.
func TestAttackSparseWorkspace(t *testing.T) {
	inModes(t, func(t *testing.T, mode func(Config) Config) {
		dir := workspace(t)
		before := blocksOf(t, dir)
		a := newAgent(t, limited(mode(Config{Command: script(t, `truncate -s 10G sparse; echo "truncate $?" > out.txt
for i in 1 2 3 4 5 6 7 8; do truncate -s 48M sparse$i; done
exit 0`)})))
		err := a.Run(context.Background(), task(dir, "x"))
		wantBreach(t, err, "the sizes of its files", "a sparse file counts whole", "agent.maxWorkspaceGrowth")
		if grown := blocksOf(t, dir) - before; grown > 1<<20 {
			t.Errorf("the sparse files took %s of the disk", sizeText(grown))
		}
		info, statErr := os.Stat(filepath.Join(dir, "sparse"))
		switch sandboxed := mode(Config{}).Sandbox.Mode == ""; {
		case sandboxed && (statErr != nil || info.Size() != 0 || !strings.Contains(readFile(t, dir, "out.txt"), "truncate 153")):
			t.Errorf("in the sandbox, truncate to 10 GiB: %v %v, output %q; want an empty file and SIGXFSZ (153)", info, statErr, readFile(t, dir, "out.txt"))
		case !sandboxed && (statErr != nil || info.Size() != 10<<30):
			t.Errorf("without the sandbox, the 10 GiB sparse file: %v %v", info, statErr)
		}
	})
}

// TestSparseFileBelowTheLimit: a sparse file whose size is below the limit
// fails nothing.
func TestSparseFileBelowTheLimit(t *testing.T) {
	inModes(t, func(t *testing.T, mode func(Config) Config) {
		a := newAgent(t, limited(mode(Config{Command: script(t, `truncate -s 48M sparse`)})))
		if err := a.Run(context.Background(), task(workspace(t), "x")); err != nil {
			t.Fatalf("Run: %v", err)
		}
	})
}

// manyFiles is an agent that makes 100,000 empty files in one folder, a
// folder nested 1,000 deep with a file of 1 MiB at the bottom, and exits.
const manyFiles = `mkdir many && cd many && seq 100000 | xargs touch && cd .. || exit 1
mkdir -p "$(printf 'd/%.0s' $(seq 1000))" || exit 1
dd if=/dev/zero of="$(printf 'd/%.0s' $(seq 1000))bottom" bs=1M count=1 2>/dev/null || exit 1`

// TestWorkspaceManyFilesAndDeepNesting: many empty files and deep nesting
// neither break the check nor pass for free: they count as their blocks
// do (the folders' own), and as names against maxWorkspaceFiles. (In the
// sandbox only: the walk is the same without it, and the tree is slow to
// make.)
func TestWorkspaceManyFilesAndDeepNesting(t *testing.T) {
	dir := workspace(t)
	before := blocksOf(t, dir)
	if err := newAgent(t, limited(hardened(t, Config{Command: script(t, manyFiles)}))).Run(context.Background(), task(dir, "x")); err != nil {
		t.Fatalf("Run: %v", err)
	}
	start := time.Now()
	base, err := measure(dir, unbounded)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a walk of the tree took %s", time.Since(start))
	// The tree's blocks, counted without the code under test: the
	// folders' and the file at the bottom.
	if want := blocksOf(t, dir); base.blocks != want {
		t.Errorf("measure counted %d bytes of disk, the entries take %d", base.blocks, want)
	}
	if want := int64(2 + 100_000 + 1 + 1_000 + 1); base.files != want {
		t.Errorf("measure counted %d names, want %d", base.files, want)
	}
	t.Logf("the tree takes %s more of the disk", sizeText(base.blocks-before))

	// The same tree with fewer names allowed fails the job.
	dir = workspace(t)
	cfg := limited(hardened(t, Config{Command: script(t, manyFiles)}))
	cfg.Workspace.MaxFiles = 10_000
	err = newAgent(t, cfg).Run(context.Background(), task(dir, "x"))
	wantBreach(t, err, "more files, folders and links than when the run started", "a run may add at most 10000", "agent.maxWorkspaceFiles")
}

// TestMeasure: what a walk counts, on trees the test makes itself.
func TestMeasure(t *testing.T) {
	t.Run("a sparse file", func(t *testing.T) {
		dir := t.TempDir()
		f, err := os.Create(filepath.Join(dir, "sparse"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte("end"), 10<<30); err != nil {
			t.Fatal(err)
		}
		f.Close()
		u, err := measure(dir, unbounded)
		if err != nil {
			t.Fatal(err)
		}
		if u.size != 10<<30+3 || u.blocks > 1<<20 || u.files != 1 {
			t.Errorf("a 10 GiB sparse file counted %+v, want its size and few blocks", u)
		}
	})
	t.Run("hard links", func(t *testing.T) {
		dir := t.TempDir()
		writeBytes(t, filepath.Join(dir, "a"), 1<<20)
		for _, name := range []string{"b", "c"} {
			if err := os.Link(filepath.Join(dir, "a"), filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		u, err := measure(dir, unbounded)
		if err != nil {
			t.Fatal(err)
		}
		root := blocksOf(t, dir) - 3*(1<<20)
		if u.blocks != root+1<<20 || u.size != 3<<20 || u.files != 3 {
			t.Errorf("one file of three names counted %+v, want its blocks once (%d with the folder's) and its size thrice", u, root+1<<20)
		}
	})
	t.Run("links are not followed", func(t *testing.T) {
		dir, outside := t.TempDir(), t.TempDir()
		writeBytes(t, filepath.Join(outside, "big"), 4<<20)
		for name, target := range map[string]string{"to-folder": outside, "to-file": filepath.Join(outside, "big"), "to-root": "/", "to-itself": "."} {
			if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		u, err := measure(dir, unbounded)
		if err != nil {
			t.Fatal(err)
		}
		wantSize := int64(len(outside) + len(outside) + len("/big") + 1 + 1)
		if u.files != 4 || u.size != wantSize || u.blocks > 64<<10 {
			t.Errorf("four links counted %+v, want 4 names of %d bytes of targets and no target's blocks", u, wantSize)
		}
	})
	t.Run("deeper than a path can name", func(t *testing.T) {
		// 100 folders of 200-byte names: a path to the bottom is 20 KB,
		// which no path-based call accepts (PATH_MAX is 4096).
		dir := t.TempDir()
		name := strings.Repeat("n", 200)
		fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		for range 100 {
			if err := syscall.Mkdirat(fd, name, 0o755); err != nil {
				t.Fatal(err)
			}
			next, err := syscall.Openat(fd, name, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
			syscall.Close(fd)
			if err != nil {
				t.Fatal(err)
			}
			fd = next
		}
		file, err := syscall.Openat(fd, "bottom", syscall.O_WRONLY|syscall.O_CREAT, 0o644)
		syscall.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := syscall.Write(file, make([]byte, 1<<20)); err != nil {
			t.Fatal(err)
		}
		syscall.Close(file)
		u, err := measure(dir, unbounded)
		if err != nil {
			t.Fatal(err)
		}
		if u.files != 101 || u.size != 1<<20 || u.blocks < 1<<20 {
			t.Errorf("the deep tree counted %+v, want 101 names and the 1 MiB file at the bottom", u)
		}
	})
	t.Run("a walk stops at its limit", func(t *testing.T) {
		dir := t.TempDir()
		for i := range 3000 {
			writeBytes(t, filepath.Join(dir, strconv.Itoa(i)), 0)
		}
		// Every name read is counted as it is read, so a walk that went
		// on past its limit would count all 3,000.
		u, err := measure(dir, usage{blocks: unbounded.blocks, size: unbounded.size, files: 100})
		if err != nil || u.files != 101 {
			t.Errorf("a walk told to stop past 100 names counted %+v (%v), want 101", u, err)
		}
	})
}

// writeBytes writes a file of n zero bytes.
func writeBytes(t *testing.T, path string, n int) {
	t.Helper()
	if err := os.WriteFile(path, make([]byte, n), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWorkspaceLimitsCheck: the limits' checks and defaults.
func TestWorkspaceLimitsCheck(t *testing.T) {
	if err := (WorkspaceLimits{}).Check(nil); err != nil {
		t.Errorf("the defaults: %v", err)
	}
	if got := (WorkspaceLimits{}).WithDefaults(); got != (WorkspaceLimits{MaxGrowth: 1 << 30, MaxFiles: 200_000}) {
		t.Errorf("the defaults are %+v", got)
	}
	key := func(field string) string { return "agent." + field }
	for _, tt := range []struct {
		l    WorkspaceLimits
		want string
	}{
		{WorkspaceLimits{MaxGrowth: -1}, "agent.MaxGrowth is -1; it must not be negative (0 takes the default, 1 GiB)"},
		{WorkspaceLimits{MaxFiles: -1}, "agent.MaxFiles is -1; it must not be negative"},
		{WorkspaceLimits{MaxGrowth: 512 << 10}, "agent.MaxGrowth is 512 KiB; the smallest is 1 MiB"},
		{WorkspaceLimits{MaxFiles: 10}, "agent.MaxFiles is 10; the smallest is 100"},
	} {
		if err := tt.l.Check(key); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Check(%+v) = %v, want %q", tt.l, err, tt.want)
		}
	}
	if _, err := New(Config{Command: "true", Dir: t.TempDir(), Workspace: WorkspaceLimits{MaxGrowth: -5}}); err == nil || !strings.Contains(err.Error(), "Workspace.MaxGrowth is -5") {
		t.Errorf("New with a negative limit: %v", err)
	}
}

// TestBreachText: the reasons a job fails with.
func TestBreachText(t *testing.T) {
	w := &workspaceWatch{limits: WorkspaceLimits{MaxGrowth: 64 << 20, MaxFiles: 1000}, base: usage{blocks: 1 << 20, size: 1 << 20, files: 10}}
	w.stop = usage{blocks: w.base.blocks + 64<<20, size: w.base.size + 64<<20, files: w.base.files + 1000}
	for _, tt := range []struct {
		u    usage
		err  error
		want string
	}{
		{usage{blocks: 70 << 20}, nil, "its files take at least 69.0 MiB more of the disk"},
		{usage{size: 1 << 40}, nil, "add up to at least 1024.0 GiB more"},
		{usage{files: 1011}, nil, "at least 1001 more files, folders and links"},
		{usage{}, &measureError{"x", syscall.EACCES}, `cannot be measured against its limits: "x": permission denied`},
		{usage{}, nil, ""},
	} {
		got := w.breach(tt.u, tt.err, "when")
		if (got == nil) != (tt.want == "") || got != nil && !strings.Contains(got.Error(), tt.want) {
			t.Errorf("breach(%+v, %v) = %v, want %q", tt.u, tt.err, got, tt.want)
		}
	}
}
