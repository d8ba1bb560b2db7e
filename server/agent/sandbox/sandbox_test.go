//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/agent/sandbox/sandboxtest"
)

var check = sync.OnceValue(func() error { return Check(DefaultBwrap) })

// newSandbox returns a Sandbox for cfg, skipping the test where this
// machine cannot run one, or failing it where the test set-up says it can
// (sandboxtest.Require).
func newSandbox(t *testing.T, cfg Config) *Sandbox {
	t.Helper()
	sandboxtest.Require(t, check())
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// folders returns a workspace, a home and a private folder.
func folders(t *testing.T) (dir, home, private string) {
	t.Helper()
	root := t.TempDir()
	dir, home, private = filepath.Join(root, "ws"), filepath.Join(root, "run", "home"), filepath.Join(root, "run")
	for _, d := range []string{dir, home} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return dir, home, private
}

// run runs a shell script in s and returns its output and exit status.
func run(t *testing.T, s *Sandbox, script string, env ...string) (string, int, *exec.Cmd) {
	t.Helper()
	dir, home, private := folders(t)
	c, err := s.Command(context.Background(), Run{Program: "/bin/sh", Args: []string{"-c", script}, Env: env,
		Dir: dir, Home: home, Private: private})
	if err != nil {
		t.Fatalf("Command: %v", err)
	}
	defer c.Close()
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	err = c.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("Run: %v", err)
	}
	return out.String(), c.ProcessState.ExitCode(), c.Cmd
}

func TestSandboxEnvironment(t *testing.T) {
	s := newSandbox(t, Config{})
	const secret = "sk-secret-value-0123456789"
	out, code, cmd := run(t, s, `env | sort; echo "pid1 $(wc -c < /proc/1/environ)"; exit 3`, "A=1", "KEY="+secret, "EMPTY=", "PATH=/server/bin")
	if code != 3 {
		t.Errorf("exit status %d, want 3; output:\n%s", code, out)
	}
	want := "A=1\nEMPTY=\nKEY=" + secret + "\nPATH=" + s.Path() + "\nPWD="
	if !strings.HasPrefix(out, want) {
		t.Errorf("the program's environment:\n%s\nwant exactly A, EMPTY, KEY and the shell's PWD", out)
	}
	if !strings.Contains(out, "pid1 0\n") {
		t.Errorf("the sandbox's first process has variables:\n%s", out)
	}
	if len(cmd.Env) != 0 || cmd.Env == nil {
		t.Errorf("bwrap's environment is %q, want empty and not nil", cmd.Env)
	}
	if slices.ContainsFunc(cmd.Args, func(a string) bool { return strings.Contains(a, secret) }) {
		t.Errorf("a variable is on bwrap's command line: %q", cmd.Args)
	}
}

// TestSandboxFileSystemsBounded: /tmp, /dev/shm and the home are memory,
// so an agent filling them must hit their caps, not the host's memory; /dev
// itself takes no file.
func TestSandboxFileSystemsBounded(t *testing.T) {
	s := newSandbox(t, Config{Limits: Limits{TmpSize: 5 << 20, ShmSize: 3 << 20, HomeSize: 7 << 20}})
	dir, home, private := folders(t)
	c, err := s.Command(context.Background(), Run{Program: "/bin/sh", Args: []string{"-c", `for f in /tmp/fill /dev/shm/fill "$HOME/fill" /dev/fill; do
  dd if=/dev/zero of=$f bs=1M count=20 2>/dev/null; echo "$f $? $(cat $f 2>/dev/null | wc -c)"
done`}, Env: []string{"HOME=" + home}, Dir: dir, Home: home, Private: private})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var buf bytes.Buffer
	c.Stdout, c.Stderr = &buf, &buf
	if err := c.Run(); err != nil {
		t.Fatalf("Run: %v\n%s", err, buf.String())
	}
	out := buf.String()
	want := []string{"/tmp/fill 1 5242880", "/dev/shm/fill 1 3145728", home + "/fill 1 7340032", "/dev/fill 1 0"}
	for _, w := range want {
		if !strings.Contains(out, w+"\n") {
			t.Errorf("the run's output lacks %q (path, dd's status, bytes written):\n%s", w, out)
		}
	}
	if entries, _ := os.ReadDir(home); len(entries) > 0 {
		t.Errorf("the home's files reached the host: %v", entries)
	}
}

// TestSandboxFileSizeLimit: every process of the sandbox is held to
// Run.MaxFileSize, cannot raise it, and writes no core dump.
func TestSandboxFileSizeLimit(t *testing.T) {
	s := newSandbox(t, Config{})
	dir, home, private := folders(t)
	c, err := s.Command(context.Background(), Run{Program: "/bin/sh", Args: []string{"-c", `grep -E '^Max (file|core file) size' /proc/self/limits
dd if=/dev/zero of=big bs=1M count=3 2>/dev/null; echo "dd $?"
sh -c 'ulimit -f unlimited' 2>/dev/null; echo "raise $?"
echo "size $(wc -c < big)"`}, Dir: dir, Home: home, Private: private, MaxFileSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var buf bytes.Buffer
	c.Stdout, c.Stderr = &buf, &buf
	if err := c.Run(); err != nil {
		t.Fatalf("Run: %v\n%s", err, buf.String())
	}
	out := strings.Join(strings.Fields(buf.String()), " ")
	// dd dies of SIGXFSZ (153 as the shell reports it) at 1 MiB.
	for _, want := range []string{"Max file size 1048576 1048576 bytes", "Max core file size 0 0 bytes", "dd 153", "size 1048576"} {
		if !strings.Contains(out, want) {
			t.Errorf("the run's output lacks %q:\n%s", want, buf.String())
		}
	}
	if strings.Contains(out, "raise 0") {
		t.Errorf("a process of the sandbox raised its file size limit:\n%s", buf.String())
	}
}

// TestSandboxInheritsNoDescriptors: a descriptor the server holds without
// close-on-exec (as it inherits them) does not reach the program, nor do
// bwrap's argument file, gate and information pipe (descriptors 3 to 5).
func TestSandboxInheritsNoDescriptors(t *testing.T) {
	s := newSandbox(t, Config{})
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(p[0])
	defer syscall.Close(p[1])
	// The shell's own test, which opens nothing: a listing of the folder
	// would also show the descriptors the shell holds for a pipeline.
	out, code, _ := run(t, s, fmt.Sprintf(`for n in 0 3 4 5 %d %d; do test -e /proc/$$/fd/$n && echo "holds $n"; done; true`, p[0], p[1]))
	if code != 0 || out != "holds 0\n" {
		t.Errorf("the program: %q (status %d), want only descriptor 0 among 0, 3, 4, 5 and the server's pipe %v", out, code, p)
	}
}

func TestSandboxSignalStatus(t *testing.T) {
	s := newSandbox(t, Config{})
	if _, code, _ := run(t, s, `kill -9 $$`); code != 128+9 {
		t.Errorf("exit status %d, want %d", code, 128+9)
	}
}

// TestSandboxCancel: the context's end kills the sandbox, and Wait
// returns although a process of the sandbox holds the output open.
func TestSandboxCancel(t *testing.T) {
	s := newSandbox(t, Config{})
	dir, home, private := folders(t)
	ctx, cancel := context.WithCancel(context.Background())
	c, err := s.Command(ctx, Run{Program: "/bin/sh", Args: []string{"-c", "setsid sleep 60 & echo > started; sleep 60"}, Dir: dir, Home: home, Private: private})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the program did not start within a minute")
		}
	}
	cancel()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Wait succeeded; the sandbox was killed")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the sandbox survived its context")
	}
}

func TestSandboxSocketPathTooLong(t *testing.T) {
	allow, err := parseAllowlist([]string{"example.com"})
	if err != nil {
		t.Fatal(err)
	}
	s := &Sandbox{bwrap: "/nonexistent/bwrap", allow: allow, bridge: []string{"/bin/true"}}
	dir, home, _ := folders(t)
	private := filepath.Join(t.TempDir(), strings.Repeat("p", 100))
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err = s.Command(context.Background(), Run{Program: "/bin/true", Dir: dir, Home: home, Private: private})
	if err == nil || !strings.Contains(err.Error(), "shorter folder") {
		t.Errorf("Command = %v, want an error about the socket's path", err)
	}
}

func TestSandboxRunChecks(t *testing.T) {
	s := &Sandbox{bwrap: "/nonexistent/bwrap"}
	dir, home, private := folders(t)
	for _, r := range []Run{
		{Program: "sh", Dir: dir, Home: home, Private: private},
		{Program: "/bin/sh", Dir: "ws", Home: home, Private: private},
		{Program: "/bin/sh", Dir: dir, Home: home, Private: private, Env: []string{"NOEQUALS"}},
		{Program: "/bin/sh", Dir: dir, Home: home, Private: private, Env: []string{"=x"}},
		{Program: "/bin/sh", Dir: dir, Home: home, Private: private, Env: []string{"A=x\x00y"}},
		{Program: "/bin/sh", Dir: dir, Home: home, Private: filepath.Join(home, "private")},
		{Program: "/bin/sh", Dir: dir, Home: home, Private: dir},
		{Program: "/bin/sh", Dir: filepath.Join(dir, "missing"), Home: home, Private: private},
		{Program: "/bin/sh", Dir: dir, Home: "/", Private: private},
		{Program: "/bin/sh", Dir: dir, Home: "/tmp", Private: private},
		{Program: "/bin/sh", Dir: dir, Home: "/usr/local", Private: private},
		{Program: "/bin/sh", Dir: dir, Home: "/dev/home", Private: private},
		{Program: "/bin/sh", Dir: dir, Home: filepath.Join(dir, "home"), Private: private},
		{Program: "/bin/sh", Dir: dir, Home: filepath.Dir(dir), Private: private},
		{Program: "/bin/sh", Dir: dir, Home: "/run", Private: private},
		{Program: "/bin/sh", Dir: dir, Home: "relative", Private: private},
		{Program: "/bin/sh", Dir: dir, Home: home, Private: private, MaxFileSize: -1},
	} {
		if _, err := s.Command(context.Background(), r); err == nil {
			t.Errorf("Command(%+v) succeeded", r)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Mode: Off}, "Mode is off"},
		{Config{Mode: "on"}, "neither"},
		{Config{ReadOnly: []string{"rel"}}, "relative"},
		{Config{AllowHosts: []string{"example.com"}}, "AllowHosts needs Bridge"},
		{Config{AllowHosts: []string{"example.com"}, Bridge: []string{"/nonexistent/docsapi"}}, "Bridge"},
		{Config{AllowHosts: []string{"http://example.com"}, Bridge: []string{"/bin/true"}}, "not a URL"},
		{Config{Limits: Limits{MaxProcesses: 2}}, "MaxProcesses is 2"},
		{Config{Limits: Limits{Memory: 512 << 20}}, "not below Memory (512 MiB)"},
	}
	for _, tt := range tests {
		if _, err := New(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, want an error about %q", tt.cfg, err, tt.want)
		}
	}
}
