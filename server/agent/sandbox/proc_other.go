//go:build !linux

package sandbox

// closeInheritedOnExec does nothing where no sandbox is started.
func closeInheritedOnExec() {}
