//go:build !linux

package command

// argMax is a bound on the bytes of arguments and environment a program
// may start with that every system this runs on allows (POSIX's smallest
// ARG_MAX is 4 KiB, but the BSDs and macOS allow 256 KiB or more).
func argMax() int { return 256 << 10 }
