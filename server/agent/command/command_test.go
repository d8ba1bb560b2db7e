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
	"syscall"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/internal/scripttest"
)

// script writes a shell script acting as a coding agent and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "agent.sh")
	scripttest.Write(t, p, "#!/bin/sh\n"+body+"\n")
	return p
}

// workspace returns a folder with one page in it.
func workspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "docs", "page.md"), []byte("# Page\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func newAgent(t *testing.T, cfg Config) *Agent {
	t.Helper()
	a, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func task(dir string, prompts ...string) engine.Task {
	return engine.Task{JobID: "job_1", ProjectID: "proj_1", Dir: dir, Prompts: prompts, Model: "model-x"}
}

func TestRunEditsTheWorkspace(t *testing.T) {
	inModes(t, func(t *testing.T, mode func(Config) Config) {
		dir := workspace(t)
		a := newAgent(t, mode(Config{Command: script(t, `echo "Added by the agent." >> docs/page.md`)}))
		if err := a.Run(context.Background(), task(dir, "Add a sentence.")); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if got := readFile(t, dir, "docs/page.md"); got != "# Page\nAdded by the agent.\n" {
			t.Errorf("page = %q", got)
		}
	})
}

func TestPromptOnStdin(t *testing.T) {
	inModes(t, testPromptOnStdin)
}

func testPromptOnStdin(t *testing.T, mode func(Config) Config) {
	dir := workspace(t)
	a := newAgent(t, mode(Config{Command: script(t, `cat > received.txt`)}))
	if err := a.Run(context.Background(), task(dir, "Document the CLI.\n", "Add an example.")); err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := "Earlier instructions of this job, oldest first. They were given before\n" +
		"and their changes, if any, are already in the files; they are context\n" +
		"only:\n\n" +
		"[Instruction 1]\nDocument the CLI.\n\n" +
		"Carry out this new instruction now:\n\n" +
		"Add an example."
	if got := readFile(t, dir, "received.txt"); got != want {
		t.Errorf("stdin =\n%q\nwant\n%q", got, want)
	}
}

func TestArguments(t *testing.T) {
	inModes(t, testArguments)
}

func testArguments(t *testing.T, mode func(Config) Config) {
	// Each argument is written on its own, followed by a separator line,
	// so that an argument split by a shell would show.
	const dump = `for a in "$@"; do printf '%s\n--\n' "$a"; done > args.txt; cat > stdin.txt`
	tests := []struct {
		name   string
		cfg    Config
		task   engine.Task
		want   []string
		stdin  string
		errMsg string
	}{
		{
			name: "placeholders, in one pass and without a shell",
			cfg:  Config{Args: []string{"--model", "{model}", "--job={job}", "{project}", "{dir}", "{prompt}"}, PromptVia: PromptArg},
			task: engine.Task{JobID: "job_1", ProjectID: "proj_1", Prompts: []string{"Keep {dir} and $(id) as written; 'quotes' too"}, Model: "model-x"},
			want: []string{"--model", "model-x", "--job=job_1", "proj_1", "DIR", "Keep {dir} and $(id) as written; 'quotes' too"},
		},
		{
			name: "the prompt is appended when no argument holds it",
			cfg:  Config{Args: []string{"-p"}, PromptVia: PromptArg},
			task: engine.Task{Prompts: []string{"Fix typos."}},
			want: []string{"-p", "Fix typos."},
		},
		{
			name:  "with stdin the prompt is not appended",
			cfg:   Config{Args: []string{"-p"}},
			task:  engine.Task{Prompts: []string{"Fix typos."}},
			want:  []string{"-p"},
			stdin: "Fix typos.",
		},
		{
			name:  "the configured model when the task has none",
			cfg:   Config{Args: []string{"{model}"}, Model: "default-model"},
			task:  engine.Task{Prompts: []string{"x"}},
			want:  []string{"default-model"},
			stdin: "x",
		},
		{
			name:   "no model at all",
			cfg:    Config{Args: []string{"--model={model}"}},
			task:   engine.Task{Prompts: []string{"x"}},
			errMsg: "names a model",
		},
		{
			name:   "no prompt",
			cfg:    Config{},
			task:   engine.Task{},
			errMsg: "no prompt",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := workspace(t)
			tt.cfg.Command = script(t, dump)
			tt.task.Dir = dir
			err := newAgent(t, mode(tt.cfg)).Run(context.Background(), tt.task)
			if tt.errMsg != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errMsg) || !engine.IsPermanent(err) {
					t.Fatalf("Run = %v, want a permanent error about %q", err, tt.errMsg)
				}
				if _, serr := os.Stat(filepath.Join(dir, "args.txt")); serr == nil {
					t.Error("the command ran")
				}
				return
			}
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			var want strings.Builder
			for _, w := range tt.want {
				want.WriteString(strings.ReplaceAll(w, "DIR", dir) + "\n--\n")
			}
			if got := readFile(t, dir, "args.txt"); got != want.String() {
				t.Errorf("arguments =\n%s\nwant\n%s", got, want.String())
			}
			if got := readFile(t, dir, "stdin.txt"); got != tt.stdin {
				t.Errorf("stdin = %q, want %q", got, tt.stdin)
			}
		})
	}
}

func TestNonZeroExit(t *testing.T) {
	inModes(t, testNonZeroExit)
}

func testNonZeroExit(t *testing.T, mode func(Config) Config) {
	a := newAgent(t, mode(Config{Command: script(t, `echo "starting"; echo "fatal: the model is unavailable" >&2; exit 3`)}))
	err := a.Run(context.Background(), task(workspace(t), "x"))
	var ee *ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("Run = %v, want an *ExitError", err)
	}
	if ee.Code != 3 || ee.Dropped != 0 {
		t.Errorf("Code %d, Dropped %d", ee.Code, ee.Dropped)
	}
	for _, want := range []string{"exited with status 3", "starting\nfatal: the model is unavailable"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if engine.IsPermanent(err) {
		t.Error("a failed exit is permanent; it may be a passing failure")
	}
}

// alive reports whether a process exists and is not a zombie: in a
// container, nobody may reap an orphan that was killed.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}

// background is a shell command that starts a child carrying marker in its
// command line, which stays alive for 30 s unless killed.
func background(marker string) string {
	return fmt.Sprintf(`sh -c 'sleep 30; : %s' &`, marker)
}

func TestTimeoutKillsTheProcessGroup(t *testing.T) {
	inModes(t, func(t *testing.T, mode func(Config) Config) {
		dir := workspace(t)
		marker := unique(t)
		a := newAgent(t, mode(Config{
			Command: script(t, background(marker)+` echo "thinking"; sleep 30`),
			Timeout: 500 * time.Millisecond,
		}))
		start := time.Now()
		err := a.Run(context.Background(), task(dir, "x"))
		if elapsed := time.Since(start); elapsed > 10*time.Second {
			t.Errorf("Run took %s", elapsed)
		}
		if !engine.IsPermanent(err) || !strings.Contains(err.Error(), "timed out after 500ms") || !strings.Contains(err.Error(), "thinking") {
			t.Fatalf("Run = %v, want a permanent timeout with the output", err)
		}
		assertNoMarkedProcess(t, marker, 2*time.Second)
	})
}

func TestLeftoverProcessesAreKilled(t *testing.T) {
	// The background process keeps the output pipe open; Run must neither
	// wait for it nor leave it running.
	inModes(t, func(t *testing.T, mode func(Config) Config) {
		dir := workspace(t)
		marker := unique(t)
		a := newAgent(t, mode(Config{Command: script(t, background(marker)+` echo done`)}))
		start := time.Now()
		if err := a.Run(context.Background(), task(dir, "x")); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if elapsed := time.Since(start); elapsed > 10*time.Second {
			t.Errorf("Run took %s", elapsed)
		}
		assertNoMarkedProcess(t, marker, 2*time.Second)
	})
}

func TestCancellation(t *testing.T) {
	inModes(t, func(t *testing.T, mode func(Config) Config) {
		dir := workspace(t)
		marker := unique(t)
		a := newAgent(t, mode(Config{Command: script(t, background(marker)+` sleep 30`)}))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { // cancelled once the agent's child runs
			for ctx.Err() == nil && len(markedProcesses(marker)) == 0 {
				time.Sleep(20 * time.Millisecond)
			}
			cancel()
		}()
		start := time.Now()
		err := a.Run(ctx, task(dir, "x"))
		if elapsed := time.Since(start); elapsed > 10*time.Second {
			t.Errorf("Run took %s", elapsed)
		}
		if !errors.Is(err, context.Canceled) || engine.IsPermanent(err) {
			t.Fatalf("Run = %v, want a cancellation that is not permanent", err)
		}
		assertNoMarkedProcess(t, marker, 2*time.Second)
	})
}

func TestOutputBound(t *testing.T) {
	inModes(t, testOutputBound)
}

func testOutputBound(t *testing.T, mode func(Config) Config) {
	var all strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&all, "line %d\n", i)
	}
	all.WriteString("LAST LINE\n")
	a := newAgent(t, mode(Config{
		Command:        script(t, `i=0; while [ $i -lt 2000 ]; do echo "line $i"; i=$((i+1)); done; echo "LAST LINE" >&2; exit 1`),
		MaxOutputBytes: 1000,
	}))
	err := a.Run(context.Background(), task(workspace(t), "x"))
	var ee *ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("Run = %v, want an *ExitError", err)
	}
	if want := int64(all.Len() - 1000); ee.Dropped != want {
		t.Errorf("Dropped = %d, want %d", ee.Dropped, want)
	}
	text := all.String()
	marker := fmt.Sprintf("\n[… %d bytes of output dropped …]\n", ee.Dropped)
	if want := text[:500] + marker + text[len(text)-500:]; ee.Output != want {
		t.Errorf("Output =\n%q\nwant\n%q", ee.Output, want)
	}
	if msg := err.Error(); !strings.HasSuffix(msg, "LAST LINE") || len(msg) > errorTailBytes+200 {
		t.Errorf("error is %d bytes and ends %q", len(msg), msg[max(0, len(msg)-40):])
	}
}

func TestMinimalEnvironment(t *testing.T) {
	inModes(t, testMinimalEnvironment)
}

func testMinimalEnvironment(t *testing.T, mode func(Config) Config) {
	const sentinel = "sentinel-server-secret-5f3a"
	const token = "tok-passed-to-the-agent-0123456789"
	t.Setenv("DOCSAPI_TEST_SERVER_SECRET", sentinel)
	t.Setenv("AGENT_API_KEY", token)
	t.Setenv("HOME", t.TempDir())
	var logs bytes.Buffer
	dir := workspace(t)
	a := newAgent(t, mode(Config{
		Command: script(t, `env > env.txt; pwd -P > pwd.txt; echo "$HOME" > home.txt
test -d "$HOME" && test -d "$TMPDIR" && echo ok > dirs.txt
env; exit 1`),
		PassEnv: []string{"AGENT_API_KEY", "NOT_SET_ANYWHERE"},
		Env:     map[string]string{"AGENT_REGION": "eu"},
		Logger:  slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}))
	err := a.Run(context.Background(), task(dir, "x"))
	if err == nil {
		t.Fatal("Run succeeded; the script exits 1")
	}

	env := readFile(t, dir, "env.txt")
	vars := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(env), "\n") {
		k, v, _ := strings.Cut(line, "=")
		vars[k] = v
	}
	// The shell adds a few of its own.
	allowed := map[string]bool{"PATH": true, "HOME": true, "TMPDIR": true, "LANG": true, "DOCSAPI_JOB_ID": true,
		"DOCSAPI_PROJECT_ID": true, "DOCSAPI_MODEL": true, "AGENT_API_KEY": true, "AGENT_REGION": true,
		"PWD": true, "OLDPWD": true, "SHLVL": true, "_": true}
	for k := range vars {
		if !allowed[k] {
			t.Errorf("the agent received %s", k)
		}
	}
	if strings.Contains(env, sentinel) {
		t.Error("the agent saw the server's secret")
	}
	// In the sandbox, PATH is the sandbox's, and TMPDIR its /tmp; the
	// server's PATH names folders the sandbox does not have.
	path, tmpdir := os.Getenv("PATH"), ""
	if a.sandbox != nil {
		path, tmpdir = a.sandbox.Path(), "/tmp"
	}
	checks := map[string]string{"AGENT_API_KEY": token, "AGENT_REGION": "eu", "DOCSAPI_JOB_ID": "job_1",
		"DOCSAPI_PROJECT_ID": "proj_1", "DOCSAPI_MODEL": "model-x", "PATH": path}
	for k, want := range checks {
		if vars[k] != want {
			t.Errorf("%s = %q, want %q", k, vars[k], want)
		}
	}
	if vars["LANG"] == "" {
		t.Error("LANG is not set")
	}
	home := strings.TrimSpace(readFile(t, dir, "home.txt"))
	if home == os.Getenv("HOME") || vars["HOME"] != home || tmpdir == "" && !strings.HasPrefix(vars["TMPDIR"], home) || tmpdir != "" && vars["TMPDIR"] != tmpdir {
		t.Errorf("HOME %q, TMPDIR %q: want a private folder", home, vars["TMPDIR"])
	}
	if readFile(t, dir, "dirs.txt") != "ok\n" {
		t.Error("HOME or TMPDIR did not exist during the run")
	}
	if _, err := os.Stat(home); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the private home folder is left after the run: %v", err)
	}
	realDir, _ := filepath.EvalSymlinks(dir)
	if got := strings.TrimSpace(readFile(t, dir, "pwd.txt")); got != realDir {
		t.Errorf("working folder %q, want %q", got, realDir)
	}
	// The error and the logs quote the output, which printed the
	// environment: passed values are redacted, and the server's secret was
	// never there.
	for name, text := range map[string]string{"error": err.Error(), "logs": logs.String()} {
		if strings.Contains(text, sentinel) || strings.Contains(text, token) {
			t.Errorf("the %s contain a secret:\n%s", name, text)
		}
		if !strings.Contains(text, "AGENT_API_KEY=[redacted]") {
			t.Errorf("the %s do not show the redacted key:\n%s", name, text)
		}
	}
}

func TestNew(t *testing.T) {
	ok := script(t, "true")
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no command", Config{}, "Command is empty"},
		{"a missing program", Config{Command: "docsapi-no-such-agent"}, "not found"},
		{"an unknown placeholder", Config{Command: ok, Args: []string{"--x={promt}"}}, "unknown placeholder {promt}"},
		{"a bad prompt mode", Config{Command: ok, PromptVia: "file"}, "PromptVia"},
		{"a negative timeout", Config{Command: ok, Timeout: -1}, "negative"},
		{"HOME cannot be passed", Config{Command: ok, PassEnv: []string{"HOME"}}, "HOME is set by the agent"},
		{"PATH cannot be set", Config{Command: ok, Env: map[string]string{"PATH": "/x"}}, "PATH is set by the agent"},
		{"a bad variable name", Config{Command: ok, Env: map[string]string{"A=B": "x"}}, "invalid environment variable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Dir = t.TempDir()
			_, err := New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, want an error about %q", err, tt.want)
			}
		})
	}
	// Braces that are not placeholders pass through.
	if _, err := New(unsandboxed(t, Config{Command: ok, Args: []string{`{"json": true}`, "{}"}})); err != nil {
		t.Errorf("New with literal braces: %v", err)
	}
}
