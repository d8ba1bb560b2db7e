package sandbox

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
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

// cgroupRemoveTimeout bounds the wait for a cgroup's processes to die so
// that the cgroup can be removed.
const cgroupRemoveTimeout = 5 * time.Second

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
// still runs. It sees the processes of this process's PID namespace only:
// servers in other namespaces must not share the folder of the runs'
// cgroups (they do not when each runs in a cgroup of its own, as
// containers and services do).
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

// newRun makes the cgroups of a run and writes its limits; on an error,
// it removes what it made.
func (h *cgroupHost) newRun(l Limits) (*runCgroup, error) {
	rc := &runCgroup{host: h, name: cgroupName()}
	if h.pids != "" {
		rc.pids = filepath.Join(h.pids, rc.name)
	}
	if h.memory != "" {
		rc.memory = filepath.Join(h.memory, rc.name)
	}
	if err := rc.make(l); err != nil {
		return nil, errors.Join(err, rc.remove())
	}
	return rc, nil
}

// make makes the run's cgroup folders and writes the limits.
func (rc *runCgroup) make(l Limits) error {
	h := rc.host
	for _, d := range rc.folders() {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("sandbox: making the run's cgroup: %w", err)
		}
	}
	if rc.pids != "" {
		if err := writeCgroup(rc.pids, "pids.max", strconv.Itoa(l.MaxProcesses)); err != nil {
			return fmt.Errorf("sandbox: the run's process limit: %w", err)
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
				return fmt.Errorf("sandbox: the run's memory limit: %w", err)
			}
		}
	}
	if h.v2 {
		dir, err := os.Open(rc.pids)
		if err != nil {
			return fmt.Errorf("sandbox: opening the run's cgroup: %w", err)
		}
		rc.dir = dir
	}
	return nil
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
		// keeps to itself until it has left the run's cgroups again. The
		// runtime makes no thread from a locked one (it asks its
		// template thread), so no other thread of the server is born in
		// the run's cgroups.
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
		// dying, or escaped that (it cannot leave the cgroup). This
		// process is never among them: a thread of its own left in the
		// cgroup (which start does not let happen) makes its id appear
		// in cgroup.procs, and the cgroup then stays, with an error.
		if writeCgroup(d, "cgroup.kill", "1") != nil {
			for _, p := range readWords(filepath.Join(d, "cgroup.procs")) {
				if pid, err := strconv.Atoi(p); err == nil && pid > 0 && pid != os.Getpid() {
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
