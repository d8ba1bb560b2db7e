//go:build linux && (amd64 || ppc64 || ppc64le || s390x)

package command

import (
	"syscall"
	"unsafe"
)

// fstatat reads the status of the entry name of the folder dirfd, not
// following a symbolic link. The standard library has it only as
// newfstatat's raw call on these architectures.
func fstatat(dirfd int, name string, st *syscall.Stat_t) error {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return err
	}
	_, _, errno := syscall.Syscall6(syscall.SYS_NEWFSTATAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(st)), atSymlinkNofollow, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
