//go:build linux && !(mips || mipsle || mips64 || mips64le)

package sandbox

// rlimitNproc is RLIMIT_NPROC's number.
const rlimitNproc = 6
