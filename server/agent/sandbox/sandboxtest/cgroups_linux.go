package sandboxtest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// OwnCgroups moves this process into cgroups of its own, made as children
// of the ones it is in, in the hierarchies a sandbox makes its runs'
// cgroups in (cgroup v2, and v1's pids and memory), where it may. It
// returns a function that moves the process back and removes them.
//
// Call it from TestMain before m.Run in a package whose tests check the
// sweep of a dead server's cgroups. A sandbox makes its runs' cgroups
// beside its own process and sweeps those of dead processes found there;
// go test runs several packages' test binaries at once, and without this
// one binary's sandboxes would sweep the cgroups another binary's test
// left on purpose, failing that test for a reason that is not the code's.
// A server in a service of its own is placed the same way.
func OwnCgroups() (restore func(), err error) {
	dirs, err := ownCgroupDirs()
	if err != nil {
		return func() {}, err
	}
	name := "docsapi-test-" + strconv.Itoa(os.Getpid())
	pid := []byte(strconv.Itoa(os.Getpid()))
	var moved []string // the original folders the process left
	var made []string
	restore = func() {
		for i, dir := range moved {
			_ = os.WriteFile(filepath.Join(dir, "cgroup.procs"), pid, 0)
			removeTree(made[i])
		}
	}
	for _, dir := range dirs {
		removeStale(dir)
		child := filepath.Join(dir, name)
		if err := os.Mkdir(child, 0o755); err != nil {
			continue // not ours to write: the sandbox makes no cgroup here either
		}
		if err := os.WriteFile(filepath.Join(child, "cgroup.procs"), pid, 0); err != nil {
			_ = os.Remove(child)
			continue
		}
		moved, made = append(moved, dir), append(made, child)
	}
	return restore, nil
}

// removeStale removes the cgroups that test binaries now gone left in dir:
// those that held a process at their end (a test's detached child) could
// not be removed then.
func removeStale(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		n, ok := strings.CutPrefix(e.Name(), "docsapi-test-")
		pid, err := strconv.Atoi(n)
		if !ok || err != nil || !e.IsDir() {
			continue
		}
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); os.IsNotExist(err) {
			removeTree(filepath.Join(dir, e.Name()))
		}
	}
}

// removeTree removes the cgroup dir and the cgroups in it, deepest first.
// A cgroup that still holds a process stays.
func removeTree(dir string) {
	var all []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			all = append(all, p)
		}
		return nil
	})
	slices.Reverse(all)
	for _, p := range all {
		_ = os.Remove(p)
	}
}

// ownCgroupDirs returns the folders of this process's cgroups in cgroup
// v2 and in v1's pids and memory hierarchies, as mounted here.
func ownCgroupDirs() ([]string, error) {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var dirs []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(self)), "\n") {
		// ID:CONTROLLERS:PATH; v2's line is 0::PATH.
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("/proc/self/cgroup: unexpected line %q", line)
		}
		controllers, path := strings.Split(parts[1], ","), parts[2]
		v2 := parts[0] == "0" && parts[1] == ""
		if !v2 && !slices.Contains(controllers, "pids") && !slices.Contains(controllers, "memory") {
			continue
		}
		if point := cgroupMount(string(mounts), v2, controllers); point != "" {
			dirs = append(dirs, filepath.Join(point, path))
		}
	}
	return dirs, nil
}

// cgroupMount returns where the hierarchy with controllers (or v2's) is
// mounted with its root at the hierarchy's root, "" if nowhere.
func cgroupMount(mountinfo string, v2 bool, controllers []string) string {
	for line := range strings.SplitSeq(mountinfo, "\n") {
		// ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER
		before, after, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(before), strings.Fields(after)
		if !ok || len(f) < 5 || len(g) < 3 || f[3] != "/" {
			continue
		}
		switch {
		case v2 && g[0] == "cgroup2":
			return f[4]
		case !v2 && g[0] == "cgroup":
			super := strings.Split(g[2], ",")
			if !slices.ContainsFunc(controllers, func(c string) bool { return !slices.Contains(super, c) }) {
				return f[4]
			}
		}
	}
	return ""
}
