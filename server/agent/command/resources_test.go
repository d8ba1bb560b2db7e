//go:build linux

package command

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/agent/sandbox"
)

// These tests play an agent that takes the machine's resources rather
// than its secrets: memory through the sandbox's file systems, the server's
// disk through its home, the server user's processes through a fork bomb.

func init() {
	roles["test-agent-alloc"] = agentAlloc
	roles["test-server-as"] = serverAsRole
}

// agentAlloc allocates args[0] MiB, touching every page, and writes how far
// it got to alloc.txt after each 16 MiB.
func agentAlloc(args []string) int {
	mib, err := strconv.Atoi(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var keep [][]byte
	for i := 1; i <= mib; i++ {
		b := make([]byte, 1<<20)
		for j := range len(b) / 4096 {
			b[j*4096] = 1
		}
		keep = append(keep, b)
		if i%16 == 0 {
			_ = os.WriteFile("alloc.txt", []byte(strconv.Itoa(i)+" MiB\n"), 0o644)
		}
	}
	fmt.Printf("allocated %d MiB (%d chunks)\n", mib, len(keep))
	return 0
}

// meminfo returns a field of /proc/meminfo, in bytes.
func meminfo(t *testing.T, field string) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if name, rest, ok := strings.Cut(line, ":"); ok && name == field {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/meminfo", field)
	return 0
}

// writtenSizes parses the lines "path bytes" a script wrote.
func writtenSizes(t *testing.T, out string) map[string]int64 {
	t.Helper()
	sizes := map[string]int64{}
	for line := range strings.SplitSeq(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "size" {
			n, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			sizes[f[1]] = n
		}
	}
	return sizes
}

// fill is a shell function that writes up to $2 MiB of zeros to the file
// $1 and reports the size it reached ("size PATH BYTES") and dd's errors.
const fill = `fill() {
  dd if=/dev/zero of="$1" bs=1M count="$2" 2>>errors.txt
  echo "size $1 $(cat "$1" 2>/dev/null | wc -c)" >> sizes.txt
}
`

// TestAttackFillDevShm: /dev/shm, and /dev itself, are memory; an agent
// that fills them must hit a small cap or a read-only file system, not
// take the host's memory.
func TestAttackFillDevShm(t *testing.T) {
	dir := workspace(t)
	a := newAgent(t, hardened(t, Config{Command: script(t, fill+`
fill /dev/shm/fill 400
rm -f /dev/shm/fill
fill /dev/fill 400
fill /dev/shm/../fill2 400
exit 0`)}))
	before := meminfo(t, "Shmem")
	if err := a.Run(context.Background(), task(dir, "x")); err != nil {
		t.Fatalf("Run: %v", err)
	}
	after := meminfo(t, "Shmem")
	sizes := writtenSizes(t, readFile(t, dir, "sizes.txt"))
	errs := readFile(t, dir, "errors.txt")
	if len(sizes) != 3 {
		t.Fatalf("the agent reported %v; errors:\n%s", sizes, errs)
	}
	for path, n := range sizes {
		if n >= 100<<20 {
			t.Errorf("the agent wrote %d MiB to %s", n>>20, path)
		}
	}
	if !strings.Contains(errs, "No space left on device") || !strings.Contains(errs, "Read-only file system") {
		t.Errorf("dd did not fail for want of space in /dev/shm and on a read-only /dev:\n%s", errs)
	}
	// The sandbox's file systems go with it: at most /dev/shm's cap could
	// linger. Other programs (a browser) may use shared memory meanwhile,
	// hence the margin; the attack leaves 800 MiB where nothing caps it.
	if grown := after - before; grown > 350<<20 {
		t.Errorf("the host's shared memory grew by %d MiB during the run and stayed so", grown>>20)
	}
}

// diskUsage sums the space the files under root take on disk.
func diskUsage(t *testing.T, root string) int64 {
	t.Helper()
	var total int64
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // a run's folder removed meanwhile
			}
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err == nil {
			total += st.Blocks * 512
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return total
}

// TestAttackFillHome: the home and TMPDIR take a capped amount of memory,
// and nothing of what the agent writes there reaches the server's disk.
func TestAttackFillHome(t *testing.T) {
	dir := workspace(t)
	runs := t.TempDir()
	a := newAgent(t, hardened(t, Config{Dir: runs, Command: script(t, fill+`
fill "$HOME/fill" 1024
fill "$TMPDIR/fill" 1024
echo ready > ready
while [ ! -e done ]; do sleep 0.05; done
exit 0`)}))
	done := make(chan error, 1)
	go func() { done <- a.Run(context.Background(), task(dir, "x")) }()
	waitFor(t, filepath.Join(dir, "ready"), time.Minute)
	// The agent holds its files now.
	used := diskUsage(t, runs)
	if err := os.WriteFile(filepath.Join(dir, "done"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if used > 16<<20 {
		t.Errorf("the runs' folder holds %d MiB of the agent's files on the server's disk", used>>20)
	}
	sizes := writtenSizes(t, readFile(t, dir, "sizes.txt"))
	if len(sizes) != 2 {
		t.Fatalf("the agent reported %v; errors:\n%s", sizes, readFile(t, dir, "errors.txt"))
	}
	for path, n := range sizes {
		if n >= 1<<30 {
			t.Errorf("the agent wrote %d MiB to %s", n>>20, path)
		}
	}
	if errs := readFile(t, dir, "errors.txt"); strings.Count(errs, "No space left on device") != 2 {
		t.Errorf("dd did not stop at a cap in the home and TMPDIR:\n%s", errs)
	}
}

// sleepMarker returns a duration for sleep that no other process uses: the
// command line of the sleeps an agent starts then marks them.
func sleepMarker() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("3%03d.%09d", binary.BigEndian.Uint16(b[:2])%1000, binary.BigEndian.Uint32(b[2:6])%1000000000)
}

// forkBomb is an agent (a Perl program: a shell gives up when it cannot
// fork) that starts 400 sleeps marked with the duration in its variable
// SLEEP_FOR, writes ready when it has or when the kernel refuses one,
// saying how many it had started then, and goes on trying, so that it
// takes back at once any process slot that frees up. Only the sleeps carry
// the marker.
func forkBomb() (program string, args []string) {
	return "/usr/bin/perl", []string{"-e", `my ($n, $ready) = (0, 0);
sub ready {
  return if $ready;
  open(my $f, ">", "ready.new") or die; print $f $n; close $f;
  rename("ready.new", "ready") or die; $ready = 1;
}
while (1) {
  if ($n < 400) {
    my $p = fork();
    if (!defined $p) { ready(); select(undef, undef, undef, 0.01); next }
    if ($p == 0) { exec "sleep", $ENV{SLEEP_FOR}; exit 1 }
    $n++;
  } else { ready(); sleep 1 }
}`}
}

// requirePerl skips a test whose agent is a Perl program where there is
// no Perl.
func requirePerl(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/perl"); err != nil {
		t.Skip("perl is not installed")
	}
}

// bombed returns how many sleeps the fork bomb in dir had started when it
// wrote ready (when the kernel first refused it a process, or it had all
// 400), once that many run, carrying marker: forked processes take a
// moment to become sleeps.
func bombed(dir, marker string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "ready"))
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(string(b))
	if err != nil {
		return 0, fmt.Errorf("the fork bomb's ready file: %w", err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		running := len(markedProcesses(marker))
		if running >= n {
			return n, nil
		}
		if time.Now().After(deadline) {
			return n, fmt.Errorf("%d of the %d sleeps started run after a minute", running, n)
		}
	}
}

// TestAttackForkBomb: the sandbox's processes stop at its own limit, the
// server can still start git while they run, and all of them die with the
// run.
func TestAttackForkBomb(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	requirePerl(t)
	dir := workspace(t)
	marker := sleepMarker()
	prog, args := forkBomb()
	a := newAgent(t, hardened(t, Config{Command: prog, Args: args, Env: map[string]string{"SLEEP_FOR": marker}}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, task(dir, "x")) }()
	waitFor(t, filepath.Join(dir, "ready"), time.Minute)
	n, err := bombed(dir, marker)
	if err != nil {
		t.Error(err)
	}
	if out, err := exec.Command(gitBin, "--version").CombinedOutput(); err != nil {
		t.Errorf("the server could not start git while the agent's processes ran: %v %s", err, out)
	}
	cancel()
	<-done
	if n > sandbox.DefaultMaxProcesses || n == 0 {
		t.Errorf("the agent started %d of its 400 processes, want at most %d", n, sandbox.DefaultMaxProcesses)
	}
	assertNoMarkedProcess(t, marker, 10*time.Second)
}

// serverAsRole runs one agent as the server would under an unprivileged
// user with a process limit: args are the user id, that user's
// RLIMIT_NPROC, the workspace, the folder of the runs and the agent's
// shell script. When the agent has written ready, it starts git, says on
// standard output whether it could, and ends the run.
func serverAsRole(args []string) int {
	if len(args) < 5 {
		fmt.Fprintln(os.Stderr, "test-server-as: want uid, nproc, workspace, run folder, program and its arguments")
		return 2
	}
	uid, err1 := strconv.Atoi(args[0])
	nproc, err2 := strconv.ParseUint(args[1], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	dir, runs, prog := args[2], args[3], args[4]
	marker := os.Getenv("DOCSAPI_TEST_MARKER")
	lim := syscall.Rlimit{Cur: nproc, Max: nproc}
	if err := syscall.Setrlimit(6 /* RLIMIT_NPROC */, &lim); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		return 1
	}
	if err := syscall.Setgroups(nil); err != nil {
		fmt.Fprintln(os.Stderr, "setgroups:", err)
		return 1
	}
	if err := errors.Join(syscall.Setgid(uid), syscall.Setuid(uid)); err != nil {
		fmt.Fprintln(os.Stderr, "setuid:", err)
		return 1
	}
	a, err := New(Config{Command: prog, Args: args[5:], Dir: runs, Env: map[string]string{"SLEEP_FOR": marker},
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, task(dir, "x")) }()
	for deadline := time.Now().Add(time.Minute); !exists(filepath.Join(dir, "ready")); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			fmt.Fprintln(os.Stderr, "test-server-as: the agent did not get ready")
			cancel()
			<-done
			return 1
		}
	}
	if out, err := exec.Command("git", "--version").CombinedOutput(); err != nil {
		fmt.Printf("git: failed: %v %s\n", err, out)
	} else {
		fmt.Println("git: ok")
	}
	if n, err := bombed(dir, marker); err != nil {
		fmt.Printf("sleeps: 0 (the bomb said %d: %v)\n", n, err)
	} else {
		fmt.Printf("sleeps: %d\n", n)
	}
	cancel()
	fmt.Fprintln(os.Stderr, "test-server-as: Run returned:", <-done)
	return 0
}

// TestAttackForkBombStarvesNoServerUser: the server runs as an unprivileged
// user with a process limit (as under systemd, or a shared host). The
// agent's fork bomb counts against that user's processes, but only up to
// the sandbox's own limit, so the server can still start git.
func TestAttackForkBombStarvesNoServerUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("playing an unprivileged server needs root")
	}
	requirePerl(t)
	hardened(t, Config{}) // skips as the sandbox tests do
	var b [2]byte
	_, _ = rand.Read(b[:])
	// A user of its own, with no other process on the machine.
	uid := 40000 + int(binary.BigEndian.Uint16(b[:]))%20000
	root, err := os.MkdirTemp("", "docsapi-forkbomb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	dir, runs := filepath.Join(root, "ws"), filepath.Join(root, "runs")
	for _, d := range []string{root, dir, runs} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	marker := sleepMarker()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	prog, args := forkBomb()
	server := exec.Command(exe, append([]string{"test-server-as", strconv.Itoa(uid), "350", dir, runs, prog}, args...)...)
	server.Env = append(os.Environ(), "DOCSAPI_TEST_MARKER="+marker, "GORACE="+noRaceExitSleep["GORACE"])
	var stdout, stderr bytes.Buffer
	server.Stdout, server.Stderr = &stdout, &stderr
	if err := server.Run(); err != nil {
		t.Fatalf("the server failed: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "git: ok") {
		t.Errorf("the server could not start git while the agent's processes ran:\n%s\n%s", stdout.String(), stderr.String())
	}
	// No cgroup can be made by that user here: the limit is the
	// sandbox's RLIMIT_NPROC.
	if want := fmt.Sprintf(`processes="%d by RLIMIT_NPROC"`, sandbox.DefaultMaxProcesses); !strings.Contains(stderr.String(), want) {
		t.Errorf("the server did not log %s:\n%s", want, stderr.String())
	}
	var n int
	if _, err := fmt.Sscanf(stdout.String()[strings.Index(stdout.String(), "sleeps: "):], "sleeps: %d", &n); err != nil || n == 0 || n > sandbox.DefaultMaxProcesses {
		t.Errorf("the agent started %d of its 400 processes (%v), want at most %d:\n%s", n, err, sandbox.DefaultMaxProcesses, stdout.String())
	}
	assertNoMarkedProcess(t, marker, 10*time.Second)
}

// smallLimits cap memory low enough for a test to reach the cap quickly.
var smallLimits = sandbox.Limits{Memory: 128 << 20, TmpSize: 16 << 20, ShmSize: 16 << 20, HomeSize: 16 << 20}

// TestAttackMemory: a process of the agent that allocates past the
// sandbox's memory cap is killed, and the run's error says why.
func TestAttackMemory(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := workspace(t)
	cfg := hardened(t, Config{Command: exe, Args: []string{"test-agent-alloc", "1024"}, Env: noRaceExitSleep})
	cfg.Sandbox.Limits = smallLimits
	a := newAgent(t, cfg)
	err = a.Run(context.Background(), task(dir, "x"))
	var ee *ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("Run = %v, want an *ExitError", err)
	}
	if ee.Code != 128+int(syscall.SIGKILL) {
		t.Errorf("exit status %d, want %d (killed)", ee.Code, 128+int(syscall.SIGKILL))
	}
	for _, want := range []string{"memory cap", "128 MiB", "sandbox.memory"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	got, _ := os.ReadFile(filepath.Join(dir, "alloc.txt"))
	if n, _ := strconv.Atoi(strings.Fields(string(got) + " 0")[0]); n >= 256 {
		t.Errorf("the agent allocated %d MiB under a cap of 128 MiB", n)
	}
}

// TestSandboxPath: the sandbox's PATH is its own, whatever the server's is,
// while the program is still looked up in the server's PATH.
func TestSandboxPath(t *testing.T) {
	hostBin := t.TempDir()
	t.Setenv("PATH", hostBin+":"+os.Getenv("PATH"))
	agent := filepath.Join(hostBin, "docsapi-test-path-agent")
	if err := os.WriteFile(agent, []byte("#!/bin/sh\necho \"$PATH\" > path.txt\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	opt := t.TempDir()
	if err := os.Mkdir(filepath.Join(opt, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		readOnly []string
		want     string
	}{
		{"plain", nil, "/usr/local/bin:/usr/bin:/bin"},
		{"with a runtime", []string{opt}, filepath.Join(opt, "bin") + ":/usr/local/bin:/usr/bin:/bin"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := workspace(t)
			cfg := hardened(t, Config{Command: "docsapi-test-path-agent"})
			cfg.Sandbox.ReadOnly = tt.readOnly
			if err := newAgent(t, cfg).Run(context.Background(), task(dir, "x")); err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := strings.TrimSpace(readFile(t, dir, "path.txt")); got != tt.want {
				t.Errorf("PATH in the sandbox = %q, want %q", got, tt.want)
			}
		})
	}
}
