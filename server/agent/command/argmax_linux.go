package command

import "syscall"

// argMax is how many bytes of arguments and environment, their pointers
// included, Linux lets a program start with: a quarter of the stack limit
// the program inherits (this process's), at most 6 MiB and at least
// 128 KiB, as fs/exec.c computes it.
func argMax() int {
	const floor, ceiling = 128 << 10, 6 << 20
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_STACK, &rl); err != nil {
		return floor
	}
	if rl.Cur/4 < floor {
		return floor
	}
	return int(min(rl.Cur/4, ceiling))
}
