//go:build !unix

package gitrepo

import "os/exec"

// setProcessGroup keeps exec's default elsewhere: on timeout git itself is
// killed, and WaitDelay bounds the wait for any helper it started.
func setProcessGroup(*exec.Cmd) {}
