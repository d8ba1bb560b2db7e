package sandbox

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// closeInheritedOnExec marks every descriptor of this process above
// standard error close-on-exec. Go opens its own so, but not those the
// server inherited when it started (a socket handed over by systemd, a
// pipe of its supervisor), which every child would get: through one, a
// sandboxed program could accept the server's connections or write to
// its supervisor. Descriptors given to a child on purpose (ExtraFiles)
// are passed all the same.
func closeInheritedOnExec() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}

// waitGone waits, for a bounded time, until process pid has ended (a
// zombie has).
func waitGone(pid int) {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return
		}
	}
}

// cloneInto has a child started with attr cloned straight into the cgroup
// whose folder is dir (clone3 with CLONE_INTO_CGROUP).
func cloneInto(attr *syscall.SysProcAttr, dir *os.File) {
	attr.UseCgroupFD = true
	attr.CgroupFD = int(dir.Fd())
}
