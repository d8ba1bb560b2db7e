package sandbox

import (
	"os"
	"strconv"
	"syscall"
)

// closeInheritedOnExec marks every descriptor of this process above
// standard error close-on-exec. Go opens its own so, but not those the
// server inherited when it started (a socket handed over by systemd, a
// pipe of its supervisor), which every child would get: through one, a
// sandboxed program could accept the server's connections or write to
// its supervisor. Descriptors given to a child on purpose (ExtraFiles)
// are passed all the same.
func closeInheritedOnExec() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
