package sandbox

import (
	"strings"
	"testing"
)

func TestLimitsCheck(t *testing.T) {
	if err := (Limits{}).Check(nil); err != nil {
		t.Errorf("the defaults: %v", err)
	}
	if err := (Limits{MaxProcesses: MinMaxProcesses, Memory: MinMemory, TmpSize: MinFSSize, ShmSize: MinFSSize, HomeSize: MinFSSize}).Check(nil); err != nil {
		t.Errorf("the smallest limits: %v", err)
	}
	keys := func(field string) string { return "sandbox." + strings.ToLower(field[:1]) + field[1:] }
	for _, tt := range []struct {
		l    Limits
		name func(string) string
		want string
	}{
		{Limits{MaxProcesses: -1}, nil, "MaxProcesses is -1; it must not be negative"},
		{Limits{MaxProcesses: 15}, keys, "sandbox.maxProcesses is 15; an agent needs at least 16"},
		{Limits{Memory: -1}, keys, "sandbox.memory is -1; it must not be negative (0 takes the default, 2 GiB)"},
		{Limits{Memory: 32 << 20}, nil, "Memory is 32 MiB; an agent needs at least 64 MiB"},
		{Limits{TmpSize: 1000}, keys, "sandbox.tmpSize is 1000 B; the smallest is 1 MiB"},
		{Limits{ShmSize: -5}, keys, "sandbox.shmSize is -5"},
		{Limits{HomeSize: 512 << 10}, nil, "HomeSize is 512 KiB; the smallest is 1 MiB"},
		{Limits{Memory: 800 << 20}, keys, "sandbox.tmpSize + sandbox.shmSize + sandbox.homeSize is 832 MiB, not below sandbox.memory (800 MiB)"},
		{Limits{Memory: 128 << 20, TmpSize: 64 << 20, ShmSize: 32 << 20, HomeSize: 32 << 20}, nil, "is 128 MiB, not below Memory (128 MiB)"},
	} {
		err := tt.l.Check(tt.name)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Check(%+v) = %v, want an error saying %q", tt.l, err, tt.want)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1000: "1000 B", 1024: "1 KiB", 3 << 20: "3 MiB", 1536 << 20: "1536 MiB", 2 << 30: "2 GiB", -1024: "-1 KiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestEnforcementString(t *testing.T) {
	for _, tt := range []struct {
		e    Enforcement
		want string
	}{
		{Enforcement{Processes: CgroupV1, Memory: CgroupV1, SwapCounted: true}, "processes by cgroup v1, memory by cgroup v1 (swap included)"},
		{Enforcement{Processes: CgroupV2, Memory: CgroupV2}, "processes by cgroup v2, memory by cgroup v2 (swap not counted)"},
		{Enforcement{Processes: RlimitNproc, Memory: Unenforced, Note: "no cgroup"}, "processes by RLIMIT_NPROC, memory by none; no cgroup"},
	} {
		if got := tt.e.String(); got != tt.want {
			t.Errorf("String = %q, want %q", got, tt.want)
		}
	}
}
