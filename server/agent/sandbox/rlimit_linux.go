package sandbox

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// setNproc sets the RLIMIT_NPROC of process pid, soft and hard, to n. The
// sandbox's first process gets it before it starts the program: being in
// the sandbox's user namespace already, it and its descendants are counted
// in that namespace, apart from the server user's other processes (the
// kernel counts RLIMIT_NPROC per user namespace and user, and checks each
// enclosing namespace's count against the limit its creator had; see
// is_rlimit_overlimit in the kernel's ucount.c). Set on bubblewrap before it
// makes the namespace, the limit would instead apply to all of the server
// user's processes.
func setNproc(pid, n int) error {
	lim := syscall.Rlimit{Cur: uint64(n), Max: uint64(n)}
	_, _, errno := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), rlimitNproc, uintptr(unsafe.Pointer(&lim)), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// rootOfTheHost reports whether this process's real user is the host's root
// (user id 0 in the initial user namespace), whose processes RLIMIT_NPROC
// does not bind: the kernel lets root's forks past the limit. uidMap is
// /proc/self/uid_map but in tests.
func rootOfTheHost(uidMap string) bool {
	if os.Getuid() != 0 {
		return false
	}
	data, err := os.ReadFile(uidMap)
	if err != nil {
		return true // no user namespaces: the initial one
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		// INSIDE OUTSIDE COUNT: this namespace's 0 is OUTSIDE + 0 in the
		// parent's.
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "0" {
			outside, err := strconv.Atoi(f[1])
			return err == nil && outside == 0
		}
	}
	return false
}
