package sandbox

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
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
	"time"
)

// This file gives each run cgroups of its own, which bound its processes
// and memory: one folder in the unified hierarchy (cgroup v2), or one in
// each of the pids and memory hierarchies (cgroup v1). They are made as
// children of the server's own cgroups, where the server may write, and
// removed when the run ends.
//
// The sandbox must be in its cgroups from its first instruction: a program
// that could fork before it is moved in would escape the limits. With v2,
// bubblewrap is cloned straight into the cgroup (clone3 with
// CLONE_INTO_CGROUP, which os/exec does with SysProcAttr.UseCgroupFD). V1
// has no such clone, but it lets a single thread change cgroups, and a
// child is born in the cgroups of the thread that forks it: the server
// starts bubblewrap from a thread of its own that joins the run's cgroups
// just before the fork and leaves them just after.

// cgroupPrefix begins the name of every run's cgroup, which goes on with
// the server's process id and start time and a random part:
// docsapi-sandbox-PID-START-RANDOM. The first two let a sweep tell the
// cgroups of a dead server from those of a live one.
const cgroupPrefix = "docsapi-sandbox-"

// cgroupServerLeaf is the v2 cgroup, beside the runs', that the server
// moves into when its own cgroup has to hand the controllers down: the
// kernel lets a cgroup do that only while it holds no process itself.
const cgroupServerLeaf = "docsapi-server"

// cgroupRemoveTimeout bounds the wait for a cgroup's processes to die so
// that the cgroup can be removed.
const cgroupRemoveTimeout = 5 * time.Second

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
	rc, err := h.newRun(Limits{}.withDefaults())
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

// selfTag is this process's id and start time, as a run's cgroup name
// holds them.
var selfTag = sync.OnceValue(func() string {
	start, _ := startTime(os.Getpid())
	return strconv.Itoa(os.Getpid()) + "-" + start
})

// startTime returns the start time of process pid (in clock ticks since
// boot), which tells it from a later process given the same id.
func startTime(pid int) (string, error) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", err
	}
	// The name, in parentheses, may hold spaces; the fields after it
	// begin with the state, field 3. The start time is field 22.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return "", errors.New("unreadable stat")
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 20 {
		return "", errors.New("unreadable stat")
	}
	return f[19], nil
}

// cgroupName returns a new name for a run's cgroup.
func cgroupName() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return cgroupPrefix + selfTag() + "-" + hex.EncodeToString(b[:])
}

// ownerAlive reports whether the server that made the cgroup called name
// still runs.
func ownerAlive(name string) bool {
	f := strings.Split(strings.TrimPrefix(name, cgroupPrefix), "-")
	if len(f) != 3 {
		return false
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 {
		return false
	}
	start, err := startTime(pid)
	return err == nil && start == f[1]
}

// runCgroup is the cgroups of one run.
type runCgroup struct {
	host   *cgroupHost
	name   string
	pids   string   // the run's folder for the pids controller, or ""
	memory string   // for the memory controller, or "" (v2: pids's)
	dir    *os.File // v2: the folder, for clone3
}

// folders returns the run's cgroup folders, without repeats.
func (rc *runCgroup) folders() []string {
	var out []string
	for _, d := range []string{rc.pids, rc.memory} {
		if d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// newRun makes the cgroups of a run and writes its limits.
func (h *cgroupHost) newRun(l Limits) (rc *runCgroup, err error) {
	rc = &runCgroup{host: h, name: cgroupName()}
	if h.pids != "" {
		rc.pids = filepath.Join(h.pids, rc.name)
	}
	if h.memory != "" {
		rc.memory = filepath.Join(h.memory, rc.name)
	}
	defer func() {
		if err != nil {
			_ = rc.remove()
		}
	}()
	for _, d := range rc.folders() {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, fmt.Errorf("sandbox: making the run's cgroup: %w", err)
		}
	}
	if rc.pids != "" {
		if err := writeCgroup(rc.pids, "pids.max", strconv.Itoa(l.MaxProcesses)); err != nil {
			return nil, fmt.Errorf("sandbox: the run's process limit: %w", err)
		}
	}
	if rc.memory != "" {
		mem := strconv.FormatInt(l.Memory, 10)
		var writes [][2]string
		switch {
		case h.v2:
			writes = append(writes, [2]string{"memory.max", mem})
			if _, err := os.Stat(filepath.Join(rc.memory, "memory.swap.max")); err == nil {
				writes = append(writes, [2]string{"memory.swap.max", "0"})
			}
		default:
			// The limit of memory and swap together may not be below
			// that of memory, so memory first.
			writes = append(writes, [2]string{"memory.limit_in_bytes", mem})
			if h.swap {
				writes = append(writes, [2]string{"memory.memsw.limit_in_bytes", mem})
			}
		}
		for _, w := range writes {
			if err := writeCgroup(rc.memory, w[0], w[1]); err != nil {
				return nil, fmt.Errorf("sandbox: the run's memory limit: %w", err)
			}
		}
	}
	if h.v2 {
		if rc.dir, err = os.Open(rc.pids); err != nil {
			return nil, fmt.Errorf("sandbox: opening the run's cgroup: %w", err)
		}
	}
	return rc, nil
}

// start runs start, which forks bubblewrap, so that bubblewrap is born in
// the run's cgroups. With v2 the caller has set the command's
// SysProcAttr.CgroupFD to rc.dir, and start needs nothing more.
func (rc *runCgroup) start(start func() error) error {
	if rc.host.v2 {
		return start()
	}
	errc := make(chan error, 1)
	go func() {
		// os/exec forks from the calling thread, which this goroutine
		// keeps to itself until it has left the run's cgroups again.
		runtime.LockOSThread()
		tid := strconv.Itoa(syscall.Gettid())
		joined := 0
		var err error
		for _, d := range rc.folders() {
			if err = writeCgroup(d, "tasks", tid); err != nil {
				err = fmt.Errorf("sandbox: joining the run's cgroup: %w", err)
				break
			}
			joined++
		}
		if err == nil {
			err = start()
		}
		var back error
		for _, d := range rc.folders()[:joined] {
			// The run's cgroups are children of the server's.
			back = errors.Join(back, writeCgroup(filepath.Dir(d), "tasks", tid))
		}
		if back != nil {
			// The goroutine ends locked, and its thread with it: a thread
			// of the server must not stay in the run's cgroups. Whatever
			// it started dies with it (its parent-death signal).
			errc <- errors.Join(err, fmt.Errorf("sandbox: leaving the run's cgroup: %w", back))
			return
		}
		runtime.UnlockOSThread()
		errc <- err
	}()
	return <-errc
}

// holds reports whether process pid is in the run's cgroups.
func (rc *runCgroup) holds(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return false
	}
	own, err := parseOwn(data)
	if err != nil {
		return false
	}
	in := func(c string) bool { return strings.HasSuffix(own[c], "/"+rc.name) }
	if rc.host.v2 {
		return in("")
	}
	return (rc.pids == "" || in("pids")) && (rc.memory == "" || in("memory"))
}

// parseOwn parses the content of a /proc/PID/cgroup file.
func parseOwn(data []byte) (map[string]string, error) {
	own := map[string]string{}
	s := bufio.NewScanner(bytes.NewReader(data))
	for s.Scan() {
		f := strings.SplitN(s.Text(), ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			own[""] = f[2]
			continue
		}
		for c := range strings.SplitSeq(f[1], ",") {
			own[c] = f[2]
		}
	}
	return own, s.Err()
}

// exhaustion reads how often the run reached its limits.
func (rc *runCgroup) exhaustion() Exhaustion {
	var e Exhaustion
	if rc.pids != "" {
		e.ForksRefused = counter(filepath.Join(rc.pids, "pids.events"), "max")
	}
	if rc.memory != "" {
		if rc.host.v2 {
			e.OOMKills = counter(filepath.Join(rc.memory, "memory.events"), "oom_kill")
		} else {
			e.OOMKills = counter(filepath.Join(rc.memory, "memory.oom_control"), "oom_kill")
		}
	}
	return e
}

// counter returns the value of the line "name N" of a cgroup file, or 0.
func counter(path, name string) int {
	data, _ := os.ReadFile(path)
	for line := range strings.SplitSeq(string(data), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == name {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// remove kills what is left in the run's cgroups and removes them.
func (rc *runCgroup) remove() error {
	var err error
	for _, d := range rc.folders() {
		err = errors.Join(err, removeCgroup(d))
	}
	if rc.dir != nil {
		rc.dir.Close()
	}
	return err
}

// removeCgroup kills the processes in the cgroup folder d and removes it.
// A folder already gone is no error.
func removeCgroup(d string) error {
	deadline := time.Now().Add(cgroupRemoveTimeout)
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		err := syscall.Rmdir(d)
		if err == nil || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("sandbox: removing the cgroup %s: %w", d, err)
		}
		// The sandbox dies with bubblewrap; what is left here is still
		// dying, or escaped that (it cannot leave the cgroup).
		if writeCgroup(d, "cgroup.kill", "1") != nil {
			for _, p := range readWords(filepath.Join(d, "cgroup.procs")) {
				if pid, err := strconv.Atoi(p); err == nil && pid > 0 {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		time.Sleep(delay)
	}
}

// sweep removes the runs' cgroups that a dead server left in h's folders,
// killing what they still hold, and returns the folders it removed.
func (h *cgroupHost) sweep() ([]string, error) {
	var removed []string
	var errs []error
	for i, parent := range []string{h.pids, h.memory} {
		if parent == "" || i == 1 && parent == h.pids {
			continue
		}
		entries, err := os.ReadDir(parent)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, e := range entries {
			path := filepath.Join(parent, e.Name())
			if !e.IsDir() || !strings.HasPrefix(e.Name(), cgroupPrefix) || ownerAlive(e.Name()) || slices.Contains(removed, path) {
				continue
			}
			if err := removeCgroup(path); err != nil {
				errs = append(errs, err)
				continue
			}
			removed = append(removed, path)
		}
	}
	return removed, errors.Join(errs...)
}
