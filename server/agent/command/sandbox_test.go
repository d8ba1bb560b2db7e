//go:build unix

package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/agent/sandbox"
	"github.com/docsapi/docsapi-go/server/agent/sandbox/sandboxtest"
	"github.com/docsapi/docsapi-go/server/engine"
)

var sandboxCheck = sync.OnceValue(func() error { return sandbox.Check(sandbox.DefaultBwrap) })

// requireSandbox skips a test of the sandbox where this machine cannot run
// it (bwrap missing, user namespaces off), or fails it where the test set-up
// says the machine can (sandboxtest.Require).
func requireSandbox(t testing.TB) {
	t.Helper()
	sandboxtest.Require(t, sandboxCheck())
}

// hardened returns cfg for a run in the sandbox, with its runs' folders in
// a folder of the test.
func hardened(t testing.TB, cfg Config) Config {
	t.Helper()
	requireSandbox(t)
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	return cfg
}

// unsandboxed returns cfg with the sandbox off.
func unsandboxed(t testing.TB, cfg Config) Config {
	t.Helper()
	cfg.Sandbox.Mode = sandbox.Off
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	return cfg
}

// inModes runs a test in the sandbox and with the sandbox off: mode
// prepares its configuration.
func inModes(t *testing.T, test func(t *testing.T, mode func(Config) Config)) {
	t.Run("sandboxed", func(t *testing.T) {
		// Skip (or fail) here, before the test starts: it may call mode in
		// subtests of its own, and a skip of this t from one of them would
		// not end this t but fail the subtest.
		requireSandbox(t)
		test(t, func(c Config) Config { return hardened(t, c) })
	})
	t.Run("off", func(t *testing.T) {
		test(t, func(c Config) Config { return unsandboxed(t, c) })
	})
}

// noRaceExitSleep spares the test binary, run as the agent, the bridge or
// the server, the second the race detector waits at exit.
var noRaceExitSleep = map[string]string{"GORACE": "atexit_sleep_ms=0"}

// checkLeftoverSwept checks that the folder of the run a killed server left
// in runs is removed by the next New, and returns that New's log.
func checkLeftoverSwept(t *testing.T, runs string) string {
	t.Helper()
	left, _ := filepath.Glob(filepath.Join(runs, runPrefix+"-*"))
	if len(left) == 0 {
		t.Fatal("the killed server left no run folder; the test proves nothing")
	}
	var logs bytes.Buffer
	newAgent(t, hardened(t, Config{Command: "true", Dir: runs, Logger: slog.New(slog.NewTextHandler(&logs, nil))}))
	if rest, _ := filepath.Glob(filepath.Join(runs, runPrefix+"-*")); len(rest) > 0 {
		t.Errorf("New left %v", rest)
	}
	if !strings.Contains(logs.String(), "removed the folder of a run whose server died") || !strings.Contains(logs.String(), left[0]) {
		t.Errorf("New did not log the removal of %s:\n%s", left[0], logs.String())
	}
	return logs.String()
}

// loopback is the AllowAddresses of tests whose allowed hosts listen on
// the loopback interface, which the proxy dials only when told.
var loopback = []string{"127.0.0.1"}

func TestSandboxAllowHosts(t *testing.T) {
	allowed := lineServer(t, "hello through the proxy")
	refused := lineServer(t, "never read")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := workspace(t)
	var logs bytes.Buffer
	a := newAgent(t, hardened(t, Config{
		Command: exe,
		Args:    []string{"test-agent-connect", allowed, refused},
		Env:     noRaceExitSleep,
		Sandbox: sandbox.Config{AllowHosts: []string{allowed}, AllowAddresses: loopback, Bridge: []string{exe, "sandbox-bridge"}},
		Logger:  slog.New(slog.NewTextHandler(&logs, nil)),
	}))
	if err := a.Run(context.Background(), task(dir, "x")); err != nil {
		t.Fatalf("Run: %v", err)
	}
	out := readFile(t, dir, "net.txt")
	for _, want := range []string{
		`env HTTPS_PROXY="http://127.0.0.1:3128" true`, `env HTTP_PROXY="http://127.0.0.1:3128" true`,
		`env https_proxy="http://127.0.0.1:3128" true`, `env http_proxy="http://127.0.0.1:3128" true`,
		`env ALL_PROXY="http://127.0.0.1:3128" true`, `env NO_PROXY="" true`, `env no_proxy="" true`,
		allowed + ": HTTP/1.1 200 ", allowed + ": through the tunnel: hello through the proxy",
		refused + ": HTTP/1.1 403 ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the agent's report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "never read") {
		t.Errorf("the agent reached a port not allowed:\n%s", out)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "job_id=job_1") || !strings.Contains(logs.String(), refused) {
		t.Errorf("the refusal is not logged at Warn with the job:\n%s", logs.String())
	}
}

// TestSandboxRequired: a machine without bubblewrap fails New, unless the
// configuration turns the sandbox off.
func TestSandboxRequired(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "bwrap")
	_, err := New(Config{Command: "true", Dir: t.TempDir(), Sandbox: sandbox.Config{Bwrap: missing}})
	if !errors.Is(err, sandbox.ErrUnavailable) {
		t.Fatalf("New = %v, want sandbox.ErrUnavailable", err)
	}
	for _, want := range []string{"bubblewrap is not installed", "apt-get install bubblewrap", `Mode to "off" explicitly`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not say %q", err, want)
		}
	}
	var logs bytes.Buffer
	dir := workspace(t)
	a := newAgent(t, Config{Command: script(t, "echo unsandboxed > mode.txt"), Dir: t.TempDir(),
		Sandbox: sandbox.Config{Mode: sandbox.Off, Bwrap: missing}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err := a.Run(context.Background(), task(dir, "x")); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if readFile(t, dir, "mode.txt") != "unsandboxed\n" {
		t.Error("the agent did not run")
	}
	for _, want := range []string{"level=WARN msg=\"command agent: the sandbox is off", "sandboxed=false"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the logs lack %q:\n%s", want, logs.String())
		}
	}
}

// TestSandboxSecretsNotOnCommandLines: every user can read every process's
// command line; the variables passed to the agent (its API key) must not
// appear in bwrap's.
func TestSandboxSecretsNotOnCommandLines(t *testing.T) {
	const key = "sk-test-key-not-for-command-lines-0123456789"
	t.Setenv("AGENT_API_KEY", key)
	dir := workspace(t)
	marker := unique(t)
	a := newAgent(t, hardened(t, Config{
		Command: script(t, `test "$AGENT_API_KEY" = "`+key+`" && echo ready > ready; sleep 30; : `+marker),
		PassEnv: []string{"AGENT_API_KEY"},
	}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, task(dir, "x")) }()
	waitFor(t, filepath.Join(dir, "ready"), 10*time.Second)
	entries, _ := os.ReadDir("/proc")
	var seen int
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if bytes.Contains(cmdline, []byte("bwrap")) {
			seen++
		}
		if bytes.Contains(cmdline, []byte(key)) {
			t.Errorf("process %s has the key on its command line: %q", e.Name(), cmdline)
		}
	}
	if seen == 0 {
		t.Error("no bwrap process found while the agent ran")
	}
	cancel()
	<-done
	assertNoMarkedProcess(t, marker, 5*time.Second)
}

// TestSandboxView checks what the sandbox shows: the workspace and the
// home writable, the system read-only, and nothing of the host's users,
// state or devices.
func TestSandboxView(t *testing.T) {
	dir := workspace(t)
	opt := t.TempDir()
	if err := os.WriteFile(filepath.Join(opt, "runtime.txt"), []byte("runtime\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, hardened(t, Config{
		Command: script(t, fmt.Sprintf(`{
hostname; id -u
for p in /home /root /var /run/docsapi /sys /srv /etc/shadow /etc/ssl/private; do test -e $p && echo "visible $p"; done
test -r /etc/passwd && echo "passwd readable"
cat %[1]s/runtime.txt; touch %[1]s/x 2>/dev/null && echo "wrote the read-only path"
touch "$HOME/h" "$TMPDIR/t" docs/w /tmp/t && echo "wrote the home, the workspace and /tmp"
touch /etc/x /x 2>/dev/null && echo "wrote the root"
ls /
} > out.txt 2>&1`, opt)),
		Sandbox: sandbox.Config{ReadOnly: []string{opt}},
	}))
	if err := a.Run(context.Background(), task(dir, "x")); err != nil {
		t.Fatalf("Run: %v", err)
	}
	out := readFile(t, dir, "out.txt")
	for _, want := range []string{sandbox.Hostname + "\n", "passwd readable", "runtime\n", "wrote the home, the workspace and /tmp"} {
		if !strings.Contains(out, want) {
			t.Errorf("the sandbox's view lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"visible", "wrote the read-only path", "wrote the root"} {
		if strings.Contains(out, bad) {
			t.Errorf("the sandbox's view has %q:\n%s", bad, out)
		}
	}
}

// TestSandboxNew covers the configurations New refuses.
func TestSandboxNew(t *testing.T) {
	ok := script(t, "true")
	bridge := []string{"/bin/true"}
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"an unknown mode", Config{Sandbox: sandbox.Config{Mode: "maybe"}}, `Mode "maybe" is neither`},
		{"off with hosts", Config{Sandbox: sandbox.Config{Mode: sandbox.Off, AllowHosts: []string{"example.com"}}}, "apply only in the sandbox"},
		{"off with addresses", Config{Sandbox: sandbox.Config{Mode: sandbox.Off, AllowAddresses: []string{"10.0.0.0/8"}}}, "apply only in the sandbox"},
		{"hosts without a bridge", Config{Sandbox: sandbox.Config{AllowHosts: []string{"example.com"}}}, "AllowHosts needs Bridge"},
		{"a bad host", Config{Sandbox: sandbox.Config{AllowHosts: []string{"https://example.com"}, Bridge: bridge}}, "not a URL"},
		{"a relative read-only path", Config{Sandbox: sandbox.Config{ReadOnly: []string{"opt/node"}}}, "is relative"},
		{"a proxy variable", Config{PassEnv: []string{"HTTPS_PROXY"}, Sandbox: sandbox.Config{AllowHosts: []string{"example.com"}, Bridge: bridge}}, "HTTPS_PROXY is set by the sandbox"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Command = ok
			tt.cfg.Dir = t.TempDir()
			_, err := New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, want an error about %q", err, tt.want)
			}
		})
	}
	t.Run("a read-only path holding the runs", func(t *testing.T) {
		runs := t.TempDir()
		_, err := New(hardened(t, Config{Command: ok, Dir: filepath.Join(runs, "agents"), Sandbox: sandbox.Config{ReadOnly: []string{runs}}}))
		if err == nil || !strings.Contains(err.Error(), "holds the folder of the runs") {
			t.Errorf("New = %v", err)
		}
	})
}

// TestSandboxConcurrentRuns: one agent runs several jobs at once, each in
// its own sandbox with its own proxy.
func TestSandboxConcurrentRuns(t *testing.T) {
	allowed := lineServer(t, "hello")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, hardened(t, Config{
		Command: exe, Args: []string{"test-agent-connect", allowed}, Env: noRaceExitSleep,
		Sandbox: sandbox.Config{AllowHosts: []string{allowed}, AllowAddresses: loopback, Bridge: []string{exe, "sandbox-bridge"}},
	}))
	dirs := make([]string, 4)
	var wg sync.WaitGroup
	for i := range dirs {
		dirs[i] = workspace(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.Run(context.Background(), task(dirs[i], "x")); err != nil {
				t.Errorf("Run %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	for _, dir := range dirs {
		if out := readFile(t, dir, "net.txt"); !strings.Contains(out, "through the tunnel: hello") {
			t.Errorf("a run did not get through:\n%s", out)
		}
	}
}

// TestSandboxMissingWorkspace: a workspace that is not there fails the run
// for good, as it does without the sandbox, rather than as the program's
// exit status.
func TestSandboxMissingWorkspace(t *testing.T) {
	a := newAgent(t, hardened(t, Config{Command: "true"}))
	err := a.Run(context.Background(), task(filepath.Join(t.TempDir(), "missing"), "x"))
	if err == nil || !engine.IsPermanent(err) || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("Run = %v, want a permanent error", err)
	}
}

func benchmarkRun(b *testing.B, cfg Config) {
	a, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	b.ResetTimer()
	for b.Loop() {
		if err := a.Run(context.Background(), task(dir, "x")); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunSandboxed and BenchmarkRunUnsandboxed give what the sandbox
// adds to starting an agent: the difference of their times per run.
func BenchmarkRunSandboxed(b *testing.B) {
	benchmarkRun(b, hardened(b, Config{Command: "/bin/true"}))
}

func BenchmarkRunUnsandboxed(b *testing.B) {
	benchmarkRun(b, unsandboxed(b, Config{Command: "/bin/true"}))
}
