package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/procgroup"
)

// checkTimeout bounds the trial run of Check; a sandbox starts in
// milliseconds.
const checkTimeout = 10 * time.Second

// Check reports whether bwrap (a path, or a name looked up in PATH) can make
// the sandbox on this machine: it starts a trivial sandbox with the
// namespaces and mounts of a real run, running true. Its error wraps
// ErrUnavailable and says what is missing and what to do: install
// bubblewrap, or allow unprivileged user namespaces, naming the kernel
// settings that forbid them here.
func Check(bwrap string) error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("%w: the sandbox needs Linux and bubblewrap, and this is %s; set the sandbox's Mode to %q explicitly to run the agent unsandboxed", ErrUnavailable, runtime.GOOS, Off)
	}
	path, err := exec.LookPath(bwrap)
	if err != nil {
		return fmt.Errorf("%w: bubblewrap is not installed (%v): install the bubblewrap package (Debian, Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), or set the sandbox's Mode to %q explicitly to run the agent unsandboxed", ErrUnavailable, err, Off)
	}
	out, err := trial(path)
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %s cannot make the sandbox's namespaces (%v: %s); %s; or set the sandbox's Mode to %q explicitly to run the agent unsandboxed",
		ErrUnavailable, path, err, bytes.TrimSpace(out), diagnose("/proc"), Off)
}

// trial runs true in a sandbox made as a run's is, and returns bwrap's
// output.
func trial(bwrap string) ([]byte, error) {
	truePath := "/usr/bin/true"
	if _, err := os.Stat(truePath); err != nil {
		truePath = "/bin/true"
	}
	root, _ := rootArgs("", Limits{}.WithDefaults())
	args := append(append(append([]string(nil), namespaceArgs...), root...), "--remount-ro", "/", "--", truePath)
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bwrap, args...)
	cmd.Env = []string{}
	cmd.SysProcAttr = procgroup.Attr()
	cmd.Cancel = func() error { return procgroup.Kill(cmd.Process) }
	return cmd.CombinedOutput()
}

// diagnose names the kernel settings under proc (/proc but in tests) that
// forbid unprivileged user namespaces, with the way to allow them, or says
// that none does.
func diagnose(proc string) string {
	type setting struct {
		file, name string
		bad        func(int) bool
		fix        string
	}
	settings := []setting{
		{"sys/kernel/unprivileged_userns_clone", "kernel.unprivileged_userns_clone", func(v int) bool { return v == 0 },
			"Debian's switch for unprivileged user namespaces is off: sysctl -w kernel.unprivileged_userns_clone=1"},
		{"sys/user/max_user_namespaces", "user.max_user_namespaces", func(v int) bool { return v == 0 },
			"no user namespace may be made: sysctl -w user.max_user_namespaces=10000"},
		{"sys/kernel/apparmor_restrict_unprivileged_userns", "kernel.apparmor_restrict_unprivileged_userns", func(v int) bool { return v != 0 },
			"AppArmor (Ubuntu 23.10 and later) restricts unprivileged user namespaces: give bwrap an AppArmor profile with the userns permission, or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"},
	}
	var found, bad []string
	for _, s := range settings {
		data, err := os.ReadFile(proc + "/" + s.file)
		if err != nil {
			found = append(found, s.name+" absent")
			continue
		}
		v, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			found = append(found, fmt.Sprintf("%s %q", s.name, bytes.TrimSpace(data)))
			continue
		}
		found = append(found, fmt.Sprintf("%s = %d", s.name, v))
		if s.bad(v) {
			bad = append(bad, fmt.Sprintf("%s is %d: %s", s.name, v, s.fix))
		}
	}
	if len(bad) > 0 {
		return strings.Join(bad, "; ")
	}
	return "no kernel setting forbids user namespaces here (" + strings.Join(found, ", ") +
		"); in a container, the container's seccomp profile or missing privileges may forbid them: allow unshare and user namespaces for the container, or run the server outside it"
}
