//go:build !linux

package sandbox

import (
	"errors"
	"os"
)

// The sandbox runs on Linux only (Check fails elsewhere); these stand in
// for the Linux code so that the package builds everywhere.

type cgroupHost struct {
	v2           bool
	pids, memory string
	swap         bool
	note         string
}

type runCgroup struct{ dir *os.File }

var errNotLinux = errors.New("sandbox: cgroups are Linux's")

func cgroups() *cgroupHost { return &cgroupHost{note: "cgroups are Linux's"} }

func (*cgroupHost) newRun(Limits) (*runCgroup, error) { return nil, errNotLinux }
func (*cgroupHost) sweep() ([]string, error)          { return nil, nil }
func (*runCgroup) start(start func() error) error     { return start() }
func (*runCgroup) holds(int) bool                     { return false }
func (*runCgroup) exhaustion() Exhaustion             { return Exhaustion{} }
func (*runCgroup) remove() error                      { return nil }

func setNproc(int, int) error      { return errNotLinux }
func setFileSize(int, int64) error { return errNotLinux }
func rootOfTheHost(string) bool    { return true }
