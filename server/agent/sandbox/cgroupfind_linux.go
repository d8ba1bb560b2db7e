package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// This file finds where this process may make cgroups for its runs: the
// folders of its own cgroups, in the unified hierarchy (v2) or in the v1
// pids and memory hierarchies, checked by making a cgroup there.

// cgroupServerLeaf is the v2 cgroup, beside the runs', that the server
// moves into when its own cgroup has to hand the controllers down: the
// kernel lets a cgroup do that only while it holds no process itself.
const cgroupServerLeaf = "docsapi-server"

// cgroupHost is where this process makes its runs' cgroups.
type cgroupHost struct {
	v2     bool
	pids   string // the folder of the runs' cgroups for the pids controller; "" when none
	memory string // the folder for the memory controller; "" when none (v2: pids's, when both)
	swap   bool   // the memory limit covers swap too
	note   string // why no cgroup, or only one of the two, is used
}

// cgroups finds, once per process, where runs' cgroups can be made, and
// checks that they can by making one.
var cgroups = sync.OnceValue(func() *cgroupHost {
	return findCgroups("/proc/self/mountinfo", "/proc/self/cgroup")
})

// findCgroups reads the mounts and this process's cgroups from the files
// given (/proc/self/... but in tests) and returns where runs' cgroups can
// be made.
func findCgroups(mountinfo, self string) *cgroupHost {
	mounts, err := readMounts(mountinfo)
	if err != nil {
		return &cgroupHost{note: "no cgroup: " + err.Error()}
	}
	own, err := readOwnCgroups(self)
	if err != nil {
		return &cgroupHost{note: "no cgroup: " + err.Error()}
	}
	var notes []string
	if dir := cgroupDir(mounts, own, "", func(m mountInfo) bool { return m.fstype == "cgroup2" }); dir != "" {
		h, err := setupV2(dir)
		if err == nil {
			return h
		}
		notes = append(notes, "cgroup v2: "+err.Error())
	}
	h := &cgroupHost{}
	if dir := cgroupDir(mounts, own, "pids", v1Hierarchy("pids")); dir != "" {
		if err := probeV1(dir, "pids.max", "max"); err != nil {
			notes = append(notes, "cgroup v1 pids: "+err.Error())
		} else {
			h.pids = dir
		}
	} else {
		notes = append(notes, "no cgroup v1 pids hierarchy")
	}
	if dir := cgroupDir(mounts, own, "memory", v1Hierarchy("memory")); dir != "" {
		if err := probeV1(dir, "memory.limit_in_bytes", strconv.Itoa(MinMemory)); err != nil {
			notes = append(notes, "cgroup v1 memory: "+err.Error())
		} else {
			h.memory = dir
			_, err := os.Stat(filepath.Join(dir, "memory.memsw.limit_in_bytes"))
			h.swap = err == nil
		}
	} else {
		notes = append(notes, "no cgroup v1 memory hierarchy")
	}
	if h.pids == "" || h.memory == "" {
		h.note = strings.Join(notes, "; ")
	}
	return h
}

// mountInfo is a line of /proc/self/mountinfo.
type mountInfo struct {
	root, point, fstype string
	super               []string // the super block's options: a v1 hierarchy's controllers
}

// readMounts parses a mountinfo file.
func readMounts(path string) ([]mountInfo, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []mountInfo
	for line := range strings.SplitSeq(string(data), "\n") {
		// ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER
		before, after, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(before), strings.Fields(after)
		if !ok || len(f) < 5 || len(g) < 3 {
			continue
		}
		out = append(out, mountInfo{root: unescapeMount(f[3]), point: unescapeMount(f[4]), fstype: g[0], super: strings.Split(g[2], ",")})
	}
	return out, nil
}

// unescapeMount undoes the octal escapes (\040 for a space) of mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// readOwnCgroups parses /proc/self/cgroup into each controller's path; the
// unified hierarchy's is under "".
func readOwnCgroups(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseOwn(data)
}

// v1Hierarchy matches the v1 mount of a controller.
func v1Hierarchy(controller string) func(mountInfo) bool {
	return func(m mountInfo) bool { return m.fstype == "cgroup" && slices.Contains(m.super, controller) }
}

// cgroupDir returns the folder of this process's cgroup for controller
// ("" for the unified hierarchy) in the first mount that match accepts, or
// "" when there is none.
func cgroupDir(mounts []mountInfo, own map[string]string, controller string, match func(mountInfo) bool) string {
	path, ok := own[controller]
	if !ok {
		return ""
	}
	for _, m := range mounts {
		if !match(m) {
			continue
		}
		// The mount shows the hierarchy from its root: in a cgroup
		// namespace, or a container's mount of a part of it.
		if !within(path, m.root) {
			continue
		}
		return filepath.Join(m.point, strings.TrimPrefix(path, m.root))
	}
	return ""
}

// readWords returns the words of a cgroup file.
func readWords(path string) []string {
	data, _ := os.ReadFile(path)
	return strings.Fields(string(data))
}

// writeCgroup writes value to a cgroup file.
func writeCgroup(dir, file, value string) error {
	// O_WRONLY without O_CREATE: a missing file is an error, not a new file.
	f, err := os.OpenFile(filepath.Join(dir, file), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	return errors.Join(err, f.Close())
}

// setupV2 makes dir, the server's cgroup in the unified hierarchy, able to
// hold runs' cgroups with the pids controller (and memory, when it is
// delegated too), and returns where they go.
func setupV2(dir string) (*cgroupHost, error) {
	available := readWords(filepath.Join(dir, "cgroup.controllers"))
	if !slices.Contains(available, "pids") {
		return nil, fmt.Errorf("the pids controller is not delegated to the server's cgroup %s (it has %q): under systemd, set Delegate=yes in the service", dir, available)
	}
	want := []string{"pids"}
	if slices.Contains(available, "memory") {
		want = append(want, "memory")
	}
	enabled := readWords(filepath.Join(dir, "cgroup.subtree_control"))
	if !allIn(want, enabled) {
		if err := handDown(dir, want); err != nil {
			return nil, err
		}
	}
	h := &cgroupHost{v2: true, pids: dir}
	if slices.Contains(want, "memory") {
		h.memory = dir
	} else {
		h.note = fmt.Sprintf("cgroup v2: the memory controller is not delegated to the server's cgroup %s", dir)
	}
	// A run's cgroup made and removed, to be sure that the writes of the
	// limits work; it also shows whether swap can be limited.
	rc, err := h.newRun(Limits{}.WithDefaults())
	if err != nil {
		return nil, err
	}
	if h.memory != "" {
		_, err := os.Stat(filepath.Join(rc.memory, "memory.swap.max"))
		h.swap = err == nil
	}
	if err := rc.remove(); err != nil {
		return nil, err
	}
	return h, nil
}

// handDown enables the controllers want for dir's children. The kernel
// allows it only while dir holds no process, so the server first moves
// into a child of its own (as systemd's documentation of Delegate= asks of
// a service); a cgroup shared with other processes is left alone.
func handDown(dir string, want []string) error {
	self := strconv.Itoa(os.Getpid())
	for _, p := range readWords(filepath.Join(dir, "cgroup.procs")) {
		if p != self {
			return fmt.Errorf("the server's cgroup %s holds other processes (%s among them), so it cannot hand the pids controller down: give the server a cgroup of its own (under systemd, a service with Delegate=yes)", dir, p)
		}
	}
	leaf := filepath.Join(dir, cgroupServerLeaf)
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if err := writeCgroup(leaf, "cgroup.procs", self); err != nil {
		return fmt.Errorf("moving the server into %s: %w", leaf, err)
	}
	var b strings.Builder
	for _, c := range want {
		b.WriteString("+" + c + " ")
	}
	if err := writeCgroup(dir, "cgroup.subtree_control", strings.TrimSpace(b.String())); err != nil {
		_ = writeCgroup(dir, "cgroup.procs", self)
		_ = os.Remove(leaf)
		return fmt.Errorf("enabling %s for the children of %s: %w", strings.Join(want, " and "), dir, err)
	}
	return nil
}

func allIn(want, have []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// probeV1 checks that runs' cgroups can be made in dir, a v1 hierarchy's
// folder, with value written to limit (a file of the controller), and a
// thread of this process moved in and back out.
func probeV1(dir, limit, value string) error {
	path := filepath.Join(dir, cgroupName())
	if err := os.Mkdir(path, 0o755); err != nil {
		return err
	}
	defer syscall.Rmdir(path)
	if err := writeCgroup(path, limit, value); err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		tid := strconv.Itoa(syscall.Gettid())
		if err := writeCgroup(path, "tasks", tid); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("moving a thread into a cgroup: %w", err)
			return
		}
		if err := writeCgroup(dir, "tasks", tid); err != nil {
			// Still locked: the thread ends with this goroutine rather
			// than linger in the probe's cgroup.
			errc <- fmt.Errorf("moving a thread back to the server's cgroup: %w", err)
			return
		}
		runtime.UnlockOSThread()
		errc <- nil
	}()
	return <-errc
}
