//go:build linux && (386 || arm || mips || mipsle)

package command

import (
	"syscall"
	"unsafe"
)

// fstatat reads the status of the entry name of the folder dirfd, not
// following a symbolic link, with fstatat64, whose result is Stat_t here.
func fstatat(dirfd int, name string, st *syscall.Stat_t) error {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return err
	}
	_, _, errno := syscall.Syscall6(syscall.SYS_FSTATAT64, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(st)), atSymlinkNofollow, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
