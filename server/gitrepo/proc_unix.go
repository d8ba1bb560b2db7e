//go:build unix

package gitrepo

import (
	"errors"
	"os"
	"os/exec"
	"syscall"

	"github.com/docsapi/docsapi-go/server/internal/procgroup"
)

// setProcessGroup runs git in a session of its own, for two reasons: on
// timeout the whole group is killed, helpers included (git-remote-https,
// ssh), not just git; and without a controlling terminal no helper can
// open /dev/tty to ask for a password and hang a server. Git dies with the
// server, too, where the kernel can see to it: a fetch into a mirror must
// not go on updating its refs once the server, and the mirror's lock, are
// gone (see mirror).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	procgroup.DeathSignal(cmd.SysProcAttr)
	cmd.Cancel = func() error {
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
}
