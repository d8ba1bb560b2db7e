//go:build linux

package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// wantCgroups reports whether this machine lets this process make cgroups
// with the pids controller, judged apart from the package's own probe: a
// v1 pids hierarchy, or a v2 one with pids delegated, whose folder for this
// process is writable. There the sandbox must use them.
func wantCgroups(t *testing.T) bool {
	t.Helper()
	mounts, err := readMounts("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	own, err := readOwnCgroups("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	if dir := cgroupDir(mounts, own, "pids", v1Hierarchy("pids")); dir != "" && syscall.Access(dir, 2 /* W_OK */) == nil {
		return true
	}
	dir := cgroupDir(mounts, own, "", func(m mountInfo) bool { return m.fstype == "cgroup2" })
	return dir != "" && slices.Contains(readWords(filepath.Join(dir, "cgroup.controllers")), "pids") && syscall.Access(dir, 2) == nil
}

// TestLimitsReported: where this process can make cgroups, the sandbox
// uses them for both limits, and says so.
func TestLimitsReported(t *testing.T) {
	s := newSandbox(t, Config{})
	l, e := s.Limits()
	if l != (Limits{}).WithDefaults() {
		t.Errorf("Limits = %+v, want the defaults", l)
	}
	t.Logf("here: %s", e)
	if !wantCgroups(t) {
		if e.Processes == CgroupV1 || e.Processes == CgroupV2 || e.Note == "" {
			t.Errorf("no cgroup can be made here, yet: %s", e)
		}
		return
	}
	if e.Processes != CgroupV1 && e.Processes != CgroupV2 || e.Memory != e.Processes || len(e.Cgroups) == 0 {
		t.Errorf("cgroups can be made here, yet the limits are enforced by: %s", e)
	}
	if !strings.HasPrefix(e.String(), "processes by "+string(e.Processes)+", memory by "+string(e.Memory)) {
		t.Errorf("String = %q", e.String())
	}
}

// requireCgroups returns a Sandbox with cfg that makes cgroups for its
// runs, skipping where this machine lets no process make them.
func requireCgroups(t *testing.T, cfg Config) *Sandbox {
	t.Helper()
	s := newSandbox(t, cfg)
	if !wantCgroups(t) {
		t.Skip("this process cannot make cgroups here")
	}
	if s.cgroups == nil || s.cgroups.pids == "" {
		t.Fatalf("cgroups can be made here, yet the sandbox makes none: %s", s.enforced)
	}
	return s
}

// sandboxCgroup returns the path of the cgroup of process pid in the pids
// controller (v1) or the unified hierarchy (v2), as /proc shows it.
func sandboxCgroup(t *testing.T, pid int, v2 bool) string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	own, err := parseOwn(data)
	if err != nil {
		t.Fatal(err)
	}
	if v2 {
		return own[""]
	}
	return own["pids"]
}

// TestRunCgroups: each run is in cgroups of its own, made with its limits
// before bwrap starts, and removed when the run is closed.
func TestRunCgroups(t *testing.T) {
	s := requireCgroups(t, Config{Limits: Limits{MaxProcesses: 100, Memory: 900 << 20}})
	type started struct {
		c    *Cmd
		name string
	}
	var runs []started
	for range 2 {
		dir, home, private := folders(t)
		c, err := s.Command(context.Background(), Run{Program: "/bin/sh", Args: []string{"-c", "echo ready > ready; exec sleep 60"},
			Dir: dir, Home: home, Private: private})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the program did not start")
			}
		}
		cg := sandboxCgroup(t, c.Process.Pid, s.cgroups.v2)
		if !strings.Contains(filepath.Base(cg), cgroupPrefix+selfTag()+"-") {
			t.Fatalf("bwrap is in the cgroup %q, want one of this run's", cg)
		}
		runs = append(runs, started{c, filepath.Base(cg)})
	}
	if runs[0].name == runs[1].name {
		t.Fatalf("two runs share the cgroup %s", runs[0].name)
	}
	for _, r := range runs {
		pids := filepath.Join(s.cgroups.pids, r.name)
		if got := strings.TrimSpace(string(must(os.ReadFile(filepath.Join(pids, "pids.max"))))); got != "100" {
			t.Errorf("pids.max = %q, want 100", got)
		}
		memFile := "memory.limit_in_bytes"
		if s.cgroups.v2 {
			memFile = "memory.max"
		}
		if got := strings.TrimSpace(string(must(os.ReadFile(filepath.Join(s.cgroups.memory, r.name, memFile))))); got != strconv.Itoa(900<<20) {
			t.Errorf("%s = %q, want %d", memFile, got, 900<<20)
		}
		// The server's own threads are back home: only the sandbox's
		// processes are in the run's cgroup.
		for _, p := range readWords(filepath.Join(pids, "cgroup.procs")) {
			if p == strconv.Itoa(os.Getpid()) {
				t.Errorf("the server's process is in the run's cgroup %s", pids)
			}
		}
	}
	for _, r := range runs {
		_ = r.c.Process.Kill()
		_ = r.c.Wait()
		if err := r.c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		for _, parent := range []string{s.cgroups.pids, s.cgroups.memory} {
			if _, err := os.Stat(filepath.Join(parent, r.name)); !os.IsNotExist(err) {
				t.Errorf("the run's cgroup %s is left after Close: %v", filepath.Join(parent, r.name), err)
			}
		}
	}
	for _, p := range []string{s.cgroups.pids, s.cgroups.memory} {
		if cg := sandboxCgroup(t, os.Getpid(), s.cgroups.v2); strings.Contains(cg, cgroupPrefix) {
			t.Errorf("the server is in %s after the runs (%s)", cg, p)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestStartWithoutTheGate: a run started by the embedded exec.Cmd's own
// Start, which puts no limit in place, never runs its program.
func TestStartWithoutTheGate(t *testing.T) {
	s := newSandbox(t, Config{})
	dir, home, private := folders(t)
	c, err := s.Command(context.Background(), Run{Program: "/bin/sh", Args: []string{"-c", "echo ran > ran"}, Dir: dir, Home: home, Private: private})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The sandbox made, its process waits at the gate, where nothing but
	// the gate's opening lets it go on; or, were there no gate, it goes on
	// to run the program.
	pid, err := sandboxPid(c.gate.info)
	if err != nil {
		t.Fatal(err)
	}
	ran := filepath.Join(dir, "ran")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(ran); err == nil {
			t.Fatal("the program ran without the run's limits")
		}
		at, err := atTheGate(pid, c.gate.open)
		if err != nil {
			t.Fatal(err)
		}
		if at {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sandbox's process %d neither waited at the gate nor ran the program within a minute", pid)
		}
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	_ = c.Wait()
	// Once the sandbox's process is dead, nothing of it can write.
	for deadline := time.Now().Add(time.Minute); !dead(pid); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the sandbox's process %d outlived Close", pid)
		}
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the program ran without the run's limits")
	}
}

// atTheGate reports whether process pid is blocked reading the pipe whose
// writing end is gate, as the kernel shows it (/proc/pid/syscall: the
// number of the call and its arguments).
func atTheGate(pid int, gate *os.File) (bool, error) {
	call, err := os.ReadFile(fmt.Sprintf("/proc/%d/syscall", pid))
	if err != nil {
		return false, err
	}
	f := strings.Fields(string(call))
	if len(f) < 2 || f[0] != strconv.Itoa(syscall.SYS_READ) {
		return false, nil // running, or in another call
	}
	fd, err := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 31)
	if err != nil {
		return false, fmt.Errorf("reading /proc/%d/syscall %q: %w", pid, call, err)
	}
	reads, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd))
	if err != nil {
		return false, nil // closed meanwhile
	}
	st, err := gate.Stat()
	if err != nil {
		return false, err
	}
	return reads == fmt.Sprintf("pipe:[%d]", st.Sys().(*syscall.Stat_t).Ino), nil
}

// dead reports whether process pid has ended (gone, or a zombie).
func dead(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

func init() { roles["test-leave-cgroup"] = leaveCgroup }

// leaveCgroup plays a server killed during a run: it starts a run that
// sleeps, prints the folder of its files and its cgroup folders, and waits
// to be killed.
func leaveCgroup() int {
	s, err := New(Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	root, err := os.MkdirTemp("", "docsapi-leftover-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, private := filepath.Join(root, "ws"), filepath.Join(root, "run")
	for _, d := range []string{dir, private} {
		if err := os.Mkdir(d, 0o700); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	c, err := s.Command(context.Background(), Run{Program: "/bin/sh", Args: []string{"-c", "exec sleep 60"}, Dir: dir,
		Home: filepath.Join(private, "home"), Private: private})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := c.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(root)
	fmt.Println(strings.Join(c.cgroup.folders(), "\n"))
	fmt.Println("ready")
	time.Sleep(time.Minute)
	return 0
}

// TestLeftoverCgroupSwept: the cgroups of a run whose server was killed
// stay (nobody removes them); the next New removes them and says so, and
// leaves alone those of a live server.
func TestLeftoverCgroupSwept(t *testing.T) {
	s := requireCgroups(t, Config{})
	// A live run of this process, which no sweep may take.
	dir, home, private := folders(t)
	live, err := s.Command(context.Background(), Run{Program: "/bin/true", Dir: dir, Home: home, Private: private})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	server := exec.Command(exe, "test-leave-cgroup")
	server.Stderr = os.Stderr
	out, err := server.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Process.Kill(); _ = server.Wait() })
	var left []string
	for lines := bufio.NewScanner(out); lines.Scan() && lines.Text() != "ready"; {
		left = append(left, lines.Text())
	}
	if len(left) > 0 {
		root := left[0]
		t.Cleanup(func() { os.RemoveAll(root) })
		left = left[1:]
	}
	if err := server.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = server.Wait()
	if len(left) == 0 {
		t.Fatal("the killed server had no cgroup")
	}
	for _, p := range left {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("the killed server's cgroup %s is not left: %v; the test proves nothing", p, err)
		}
	}

	again := newSandbox(t, Config{})
	swept, err := again.Swept()
	if err != nil {
		t.Errorf("Swept: %v", err)
	}
	for _, p := range left {
		if !slices.Contains(swept, p) {
			t.Errorf("New did not report removing %s: %q", p, swept)
		}
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("the leftover %s is still there: %v", p, err)
		}
	}
	for _, p := range live.cgroup.folders() {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("the sweep took the cgroup %s of a live run: %v", p, err)
		}
	}
}

// TestCgroupV2CloneInto: a child started with cloneInto is in the v2
// cgroup from its start, as holds sees it. It runs where this process may
// make a cgroup in the unified hierarchy, with or without controllers.
func TestCgroupV2CloneInto(t *testing.T) {
	mounts, err := readMounts("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	own, err := readOwnCgroups("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	parent := cgroupDir(mounts, own, "", func(m mountInfo) bool { return m.fstype == "cgroup2" })
	if parent == "" || syscall.Access(parent, 2) != nil {
		t.Skip("no writable cgroup v2 folder here")
	}
	name := cgroupName()
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot make a v2 cgroup here: %v", err)
	}
	rc := &runCgroup{host: &cgroupHost{v2: true, pids: parent}, name: name, pids: dir}
	defer func() {
		if err := rc.remove(); err != nil {
			t.Error(err)
		}
	}()
	if rc.dir, err = os.Open(dir); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	cloneInto(cmd.SysProcAttr, rc.dir)
	if err := rc.start(cmd.Start); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if !rc.holds(cmd.Process.Pid) {
		t.Errorf("the child is not in %s: %s", dir, must(os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", cmd.Process.Pid))))
	}
	if got := readWords(filepath.Join(dir, "cgroup.procs")); !slices.Equal(got, []string{strconv.Itoa(cmd.Process.Pid)}) {
		t.Errorf("the cgroup holds %q, want the child only", got)
	}
}
