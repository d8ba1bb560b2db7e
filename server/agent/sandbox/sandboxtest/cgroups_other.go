//go:build !linux

package sandboxtest

// OwnCgroups does nothing where there are no cgroups.
func OwnCgroups() (restore func(), err error) { return func() {}, nil }
