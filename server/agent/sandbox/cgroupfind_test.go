//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCgroupDir: the folder of this process's cgroup, from mountinfo and
// /proc/self/cgroup as the kernel writes them, mounts of a part of a
// hierarchy and escaped paths included.
func TestCgroupDir(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"mountinfo": `22 1 254:0 / / rw,relatime - ext4 /dev/vda rw
30 25 0:26 / /sys/fs/cgroup/pids rw,nosuid,nodev,noexec,relatime shared:9 - cgroup cgroup rw,pids
31 25 0:27 /machine.slice /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory
32 25 0:28 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw,nsdelegate
33 25 0:29 / /mnt/cpu\040and\040more rw - cgroup cgroup rw,cpu,cpuacct
`,
		"cgroup": "9:cpu,cpuacct:/a\n8:pids:/a/b\n4:memory:/machine.slice/x\n1:blkio:/\n0::/srv.service\n",
	})
	mounts, err := readMounts(filepath.Join(dir, "mountinfo"))
	if err != nil {
		t.Fatal(err)
	}
	own, err := readOwnCgroups(filepath.Join(dir, "cgroup"))
	if err != nil {
		t.Fatal(err)
	}
	v2 := func(m mountInfo) bool { return m.fstype == "cgroup2" }
	for _, tt := range []struct {
		controller string
		match      func(mountInfo) bool
		want       string
	}{
		{"pids", v1Hierarchy("pids"), "/sys/fs/cgroup/pids/a/b"},
		{"memory", v1Hierarchy("memory"), "/sys/fs/cgroup/memory/x"},
		{"", v2, "/sys/fs/cgroup/unified/srv.service"},
		{"cpuacct", v1Hierarchy("cpuacct"), "/mnt/cpu and more/a"},
		{"blkio", v1Hierarchy("blkio"), ""},     // not mounted
		{"devices", v1Hierarchy("devices"), ""}, // not in the process's list
	} {
		if got := cgroupDir(mounts, own, tt.controller, tt.match); got != tt.want {
			t.Errorf("cgroupDir(%q) = %q, want %q", tt.controller, got, tt.want)
		}
	}
	// A cgroup outside the part of the hierarchy a mount shows.
	own["memory"] = "/elsewhere/x"
	if got := cgroupDir(mounts, own, "memory", v1Hierarchy("memory")); got != "" {
		t.Errorf("cgroupDir of a cgroup the mount does not show = %q", got)
	}
}

// TestSetupV2Refuses: without the pids controller, or in a cgroup shared
// with other processes, the unified hierarchy is not used, and the reason
// says what to do. (The kernel's own files cannot be played here: these
// are ordinary files.)
func TestSetupV2Refuses(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"cgroup.controllers": "cpu memory\n", "cgroup.subtree_control": "", "cgroup.procs": "1\n"})
	if _, err := setupV2(dir); err == nil || !strings.Contains(err.Error(), "pids controller is not delegated") || !strings.Contains(err.Error(), "Delegate=yes") {
		t.Errorf("setupV2 without pids = %v", err)
	}
	writeFiles(t, dir, map[string]string{"cgroup.controllers": "cpu memory pids\n", "cgroup.procs": strconv.Itoa(os.Getpid()) + "\n4242\n"})
	if _, err := setupV2(dir); err == nil || !strings.Contains(err.Error(), "holds other processes (4242") {
		t.Errorf("setupV2 in a shared cgroup = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, cgroupServerLeaf)); err == nil {
		t.Error("setupV2 made a leaf in a cgroup it shares")
	}
}

// TestHandDown: alone in its cgroup, the server moves into a leaf of its
// own, then enables the controllers for the children.
func TestHandDown(t *testing.T) {
	dir := t.TempDir()
	self := strconv.Itoa(os.Getpid())
	writeFiles(t, dir, map[string]string{"cgroup.subtree_control": "", "cgroup.procs": self + "\n",
		cgroupServerLeaf + "/cgroup.procs": ""})
	if err := handDown(dir, []string{"pids", "memory"}); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{filepath.Join(cgroupServerLeaf, "cgroup.procs"): self, "cgroup.subtree_control": "+pids +memory"} {
		if got, _ := os.ReadFile(filepath.Join(dir, file)); string(got) != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
}

func TestRootOfTheHost(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"initial": "         0          0 4294967295\n", "mapped": "         0     100000      65536\n"})
	root := os.Getuid() == 0
	for file, want := range map[string]bool{"initial": root, "mapped": false, "missing": root} {
		if got := rootOfTheHost(filepath.Join(dir, file)); got != want {
			t.Errorf("rootOfTheHost(%s) = %v, want %v", file, got, want)
		}
	}
}

func TestSandboxPath(t *testing.T) {
	node, bare := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(node, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	got := sandboxPath([]string{node, bare, node})
	if want := filepath.Join(node, "bin") + ":/usr/local/bin:/usr/bin:/bin"; got != want {
		t.Errorf("sandboxPath = %q, want %q", got, want)
	}
}

// TestNewRunFailure: a run's cgroup whose limit cannot be written (here, a
// folder that is no cgroup) is removed again, and the error says why.
func TestNewRunFailure(t *testing.T) {
	parent := t.TempDir()
	h := &cgroupHost{pids: parent, memory: parent}
	rc, err := h.newRun(Limits{}.WithDefaults())
	if err == nil || rc != nil || !strings.Contains(err.Error(), "the run's process limit") {
		t.Fatalf("newRun = %v, %v; want an error about the process limit", rc, err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) > 0 {
		t.Errorf("newRun left %v", entries)
	}
}
