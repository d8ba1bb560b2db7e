package sandbox

import (
	"errors"
	"os"
	"strconv"
	"syscall"
)

// sysProcAttr starts bwrap in a process group of its own, so that one
// signal reaches it and whatever it started outside the sandbox, and has
// the kernel kill it when the server's thread that started it dies: the
// server killed by SIGKILL takes its sandboxes along.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills bwrap's process group. bwrap's death kills the
// sandbox's first process (--die-with-parent), and with it every process
// of the sandbox's PID namespace.
func killGroup(p *os.Process) error {
	if p == nil {
		return nil
	}
	err := syscall.Kill(-p.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

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
