//go:build !unix

package procgroup

import (
	"os"
	"syscall"
)

// Attr has nothing to add where process groups are not available.
func Attr() *syscall.SysProcAttr { return nil }

// Kill kills the process only: without process groups its descendants
// cannot be reached in one step.
func Kill(p *os.Process) error {
	if p == nil {
		return nil
	}
	return p.Kill()
}
