package sandbox

import (
	"fmt"
	"strings"
)

// Defaults of Limits. They fit a coding agent: a Node.js command-line agent
// takes a few hundred MiB and, with its shells, its language servers and
// their threads, tens of processes; a test run or a build may take a few
// times that.
const (
	DefaultMaxProcesses = 256
	DefaultMemory       = 2 << 30
	DefaultTmpSize      = 256 << 20
	DefaultShmSize      = 64 << 20
	DefaultHomeSize     = 512 << 20
)

// The smallest limits New accepts: below them, an agent's runtime hardly
// starts, and a limit so small is more likely a unit mistaken.
const (
	MinMaxProcesses = 16
	MinMemory       = 64 << 20
	MinFSSize       = 1 << 20
)

// Limits bound what one run may take of the machine. A zero field takes
// its default. The file systems (/tmp, /dev/shm, the home) live in memory
// and count against Memory where it is enforced, so together they must
// stay below it.
type Limits struct {
	// MaxProcesses bounds the processes the run has at once, their
	// threads included (the kernel counts each thread as a task); default
	// DefaultMaxProcesses. A fork past it fails (EAGAIN) inside the
	// sandbox, and the server's user keeps the rest of its own limit.
	MaxProcesses int
	// Memory bounds the memory of the run in bytes: its processes' and
	// what they store in /tmp, /dev/shm and the home (and swap, where the
	// kernel counts it); default DefaultMemory. Past it the kernel kills a
	// process of the run (the largest).
	Memory int64
	// TmpSize caps /tmp, in bytes; default DefaultTmpSize.
	TmpSize int64
	// ShmSize caps /dev/shm (POSIX shared memory), in bytes; default
	// DefaultShmSize.
	ShmSize int64
	// HomeSize caps the run's home, in bytes; default DefaultHomeSize.
	HomeSize int64
}

// WithDefaults returns l with its zero fields set to their defaults.
func (l Limits) WithDefaults() Limits {
	if l.MaxProcesses == 0 {
		l.MaxProcesses = DefaultMaxProcesses
	}
	if l.Memory == 0 {
		l.Memory = DefaultMemory
	}
	if l.TmpSize == 0 {
		l.TmpSize = DefaultTmpSize
	}
	if l.ShmSize == 0 {
		l.ShmSize = DefaultShmSize
	}
	if l.HomeSize == 0 {
		l.HomeSize = DefaultHomeSize
	}
	return l
}

// Check reports the first of l's limits (its defaults applied) that is out
// of range. Its error names each field by name(field), field being the Go
// name ("MaxProcesses", "Memory", "TmpSize", "ShmSize", "HomeSize"), so
// that a configuration can report its own keys; a nil name keeps the Go
// names.
func (l Limits) Check(name func(field string) string) error {
	if name == nil {
		name = func(field string) string { return field }
	}
	if l.MaxProcesses < 0 {
		return fmt.Errorf("sandbox: %s is %d; it must not be negative (0 takes the default, %d)", name("MaxProcesses"), l.MaxProcesses, DefaultMaxProcesses)
	}
	sizes := []struct {
		field string
		value int64
		def   int64
	}{{"Memory", l.Memory, DefaultMemory}, {"TmpSize", l.TmpSize, DefaultTmpSize}, {"ShmSize", l.ShmSize, DefaultShmSize}, {"HomeSize", l.HomeSize, DefaultHomeSize}}
	for _, s := range sizes {
		if s.value < 0 {
			return fmt.Errorf("sandbox: %s is %d; it must not be negative (0 takes the default, %s)", name(s.field), s.value, FormatBytes(s.def))
		}
	}
	l = l.WithDefaults()
	if l.MaxProcesses < MinMaxProcesses {
		return fmt.Errorf("sandbox: %s is %d; an agent needs at least %d processes and threads", name("MaxProcesses"), l.MaxProcesses, MinMaxProcesses)
	}
	if l.Memory < MinMemory {
		return fmt.Errorf("sandbox: %s is %s; an agent needs at least %s", name("Memory"), FormatBytes(l.Memory), FormatBytes(MinMemory))
	}
	for _, s := range []struct {
		field string
		value int64
	}{{"TmpSize", l.TmpSize}, {"ShmSize", l.ShmSize}, {"HomeSize", l.HomeSize}} {
		if s.value < MinFSSize {
			return fmt.Errorf("sandbox: %s is %s; the smallest is %s", name(s.field), FormatBytes(s.value), FormatBytes(MinFSSize))
		}
	}
	if sum := l.TmpSize + l.ShmSize + l.HomeSize; sum >= l.Memory {
		return fmt.Errorf("sandbox: %s + %s + %s is %s, not below %s (%s): the files stored there are memory of the run, so the run would be killed before they filled up; lower them or raise %s",
			name("TmpSize"), name("ShmSize"), name("HomeSize"), FormatBytes(sum), name("Memory"), FormatBytes(l.Memory), name("Memory"))
	}
	return nil
}

// FormatBytes writes n as the largest binary unit that divides it:
// 536870912 is "512 MiB", 1000 is "1000 B".
func FormatBytes(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d B", n)
}

// Mechanism names what enforces a limit on this machine.
type Mechanism string

// The mechanisms, strongest first.
const (
	// CgroupV2 is a cgroup of the run in the unified hierarchy, which
	// bubblewrap is started in (clone3 with CLONE_INTO_CGROUP).
	CgroupV2 Mechanism = "cgroup v2"
	// CgroupV1 is a cgroup of the run in the pids or memory hierarchy of
	// cgroup version 1. Bubblewrap is forked by a thread of the server
	// that has joined the run's cgroups, so it is born in them.
	CgroupV1 Mechanism = "cgroup v1"
	// RlimitNproc is RLIMIT_NPROC, set on the sandbox's first process
	// after the sandbox's user namespace is made: the kernel then counts
	// the processes of that namespace only. It binds no process of a
	// server running as root, which the kernel exempts.
	RlimitNproc Mechanism = "RLIMIT_NPROC"
	// Unenforced means nothing enforces the limit here.
	Unenforced Mechanism = "none"
)

// Enforcement says how a Sandbox enforces its Limits on this machine. The
// file systems' caps are enforced everywhere (they are tmpfs mounts of the
// sandbox's own).
type Enforcement struct {
	// Processes enforces Limits.MaxProcesses.
	Processes Mechanism
	// Memory enforces Limits.Memory.
	Memory Mechanism
	// SwapCounted reports that Limits.Memory bounds swap too (the run's
	// memory cannot spill into swap past it).
	SwapCounted bool
	// Cgroups lists the folders in which the runs' cgroups are made.
	Cgroups []string
	// Note says why a weaker mechanism than a cgroup is in use, and what
	// to do about it; empty when cgroups enforce both limits.
	Note string
}

// String describes e in one line, for a log.
func (e Enforcement) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "processes by %s, memory by %s", e.Processes, e.Memory)
	if e.Memory != Unenforced {
		if e.SwapCounted {
			b.WriteString(" (swap included)")
		} else {
			b.WriteString(" (swap not counted)")
		}
	}
	if e.Note != "" {
		b.WriteString("; " + e.Note)
	}
	return b.String()
}

// Exhaustion says which of its limits a run reached.
type Exhaustion struct {
	// OOMKills counts the processes of the run that the kernel killed at
	// the memory limit.
	OOMKills int
	// ForksRefused counts the processes (or threads) the run could not
	// start at the process limit.
	ForksRefused int
}
