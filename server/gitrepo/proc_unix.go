//go:build unix

package gitrepo

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup runs git in a session of its own, for two reasons: on
// timeout the whole group is killed, helpers included (git-remote-https,
// ssh), not just git; and without a controlling terminal no helper can
// open /dev/tty to ask for a password and hang a server.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error {
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
}
