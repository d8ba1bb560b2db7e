//go:build unix

package procgroup

import (
	"errors"
	"os"
	"syscall"
)

// Attr starts a child in a process group of its own, so that one signal
// reaches everything it starts (save what leaves the group on purpose), and,
// where the kernel can, has the kernel kill it when the server's thread
// that started it dies, as it does when the server is killed.
func Attr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(a)
	return a
}

// DeathSignal adds to a, for a child that needs a group or session of its
// own set up otherwise, the kill by the kernel when the server's thread
// that started it dies; where the kernel has no such signal, nothing.
func DeathSignal(a *syscall.SysProcAttr) { setDeathSignal(a) }

// Kill kills the process group that p leads. A group already gone is
// os.ErrProcessDone.
func Kill(p *os.Process) error {
	if p == nil {
		return nil
	}
	err := syscall.Kill(-p.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}
