//go:build !linux

package sandbox

import (
	"os"
	"syscall"
)

// closeInheritedOnExec does nothing where no sandbox is started.
func closeInheritedOnExec() {}

// waitGone has nothing to wait for where no sandbox is started.
func waitGone(int) {}

// cloneInto has nothing to do where there are no cgroups.
func cloneInto(*syscall.SysProcAttr, *os.File) {}
