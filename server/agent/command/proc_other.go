//go:build !unix

package command

import (
	"os"
	"os/exec"
)

// setProcessGroup does nothing where process groups are not available.
func setProcessGroup(*exec.Cmd) {}

// killGroup kills the program only: without process groups its descendants
// cannot be reached in one step.
func killGroup(p *os.Process) error {
	if p == nil {
		return nil
	}
	return p.Kill()
}
