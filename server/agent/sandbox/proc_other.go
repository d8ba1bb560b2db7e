//go:build !linux

package sandbox

import (
	"os"
	"syscall"
)

// sysProcAttr has nothing to add where bubblewrap does not run: Check
// fails there, so no sandbox is ever started.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// killGroup kills the process only.
func killGroup(p *os.Process) error {
	if p == nil {
		return nil
	}
	return p.Kill()
}

// closeInheritedOnExec does nothing where no sandbox is started.
func closeInheritedOnExec() {}
