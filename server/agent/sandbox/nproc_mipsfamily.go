//go:build linux && (mips || mipsle || mips64 || mips64le)

package sandbox

// rlimitNproc is RLIMIT_NPROC's number on MIPS.
const rlimitNproc = 8
