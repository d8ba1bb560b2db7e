//go:build linux && (arm64 || riscv64 || loong64 || mips64 || mips64le)

package command

import "syscall"

// fstatat reads the status of the entry name of the folder dirfd, not
// following a symbolic link.
func fstatat(dirfd int, name string, st *syscall.Stat_t) error {
	return syscall.Fstatat(dirfd, name, st, atSymlinkNofollow)
}
