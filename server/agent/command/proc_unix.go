//go:build unix

package command

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup starts the program in a process group of its own, so that
// one signal reaches everything it started: coding agents run shells, test
// runners and language servers that would otherwise outlive a timeout.
// Where the kernel can, the program is also killed when the server dies.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
}

// killGroup kills the program's process group.
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
