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
	return setRlimit(pid, rlimitNproc, uint64(n))
}

// setFileSize sets the RLIMIT_FSIZE of process pid, soft and hard, to n
// bytes, and its RLIMIT_CORE to 0. Its descendants inherit both, and
// cannot raise them: the kernel asks for CAP_SYS_RESOURCE in the initial
// user namespace, which no process of the sandbox has.
func setFileSize(pid int, n int64) error {
	if err := setRlimit(pid, syscall.RLIMIT_FSIZE, uint64(n)); err != nil {
		return err
	}
	return setRlimit(pid, syscall.RLIMIT_CORE, 0)
}

// setRlimit sets the limit resource of process pid, soft and hard, to n.
func setRlimit(pid, resource int, n uint64) error {
	lim := syscall.Rlimit{Cur: n, Max: n}
	_, _, errno := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), uintptr(resource), uintptr(unsafe.Pointer(&lim)), 0, 0, 0)
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
