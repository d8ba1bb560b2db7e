//go:build unix

package command

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server/engine"
)

// A job's history grows with every follow-up; passed as an argument, it
// outgrows what the system lets a command line hold, and starting the
// program fails with E2BIG. That must fail the job at once, for good,
// saying why and what to change, not be retried into the same refusal.
func TestPromptArgPastTheCommandLineLimit(t *testing.T) {
	inModes(t, testPromptArgPastTheCommandLineLimit)
}

func testPromptArgPastTheCommandLineLimit(t *testing.T, mode func(Config) Config) {
	// Five prompts of 30,000 characters: 150 KB formatted, past the 128 KiB
	// one argument may hold. Non-ASCII, as any language but English is:
	// 128,000 characters of it take far more bytes.
	long := strings.Repeat("é", 15000)
	history := []string{long, long, long, long, long}
	for _, cfg := range []Config{
		{PromptVia: PromptArg},                             // the last argument
		{Args: []string{"-p", "--prompt={prompt}"}},        // in an argument, with stdin
		{PromptVia: PromptArg, Args: []string{"{prompt}"}}, // the whole argument
	} {
		dir := workspace(t)
		cfg.Command = script(t, `echo ran > ran.txt`)
		err := newAgent(t, mode(cfg)).Run(context.Background(), task(dir, history...))
		if err == nil || !engine.IsPermanent(err) {
			t.Fatalf("%+v: Run = %v, want a permanent error", cfg.Args, err)
		}
		for _, want := range []string{"the prompt", "bytes", "MAX_ARG_STRLEN", "promptVia stdin"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%+v: error %q does not say %q", cfg.Args, err, want)
			}
		}
		if strings.Contains(err.Error(), "éé") {
			t.Errorf("%+v: the error quotes the prompt", cfg.Args)
		}
		if _, serr := os.Stat(filepath.Join(dir, "ran.txt")); serr == nil {
			t.Errorf("%+v: the program ran", cfg.Args)
		}
	}

	// Arguments each short enough that together pass what the system
	// allows a command line.
	one := strings.Repeat("a", 100<<10)
	args := make([]string, argMax()/len(one)+2)
	for i := range args {
		args[i] = "{prompt}"
	}
	dir := workspace(t)
	err := newAgent(t, mode(Config{Command: script(t, `echo ran > ran.txt`), Args: args})).Run(context.Background(), task(dir, one))
	if err == nil || !engine.IsPermanent(err) || !strings.Contains(err.Error(), "ARG_MAX") || !strings.Contains(err.Error(), "promptVia stdin") {
		t.Fatalf("Run with %d copies of the prompt = %v, want a permanent error about ARG_MAX", len(args), err)
	}
	if _, serr := os.Stat(filepath.Join(dir, "ran.txt")); serr == nil {
		t.Error("the program ran")
	}

	// Just under the limit of one argument, the prompt goes through whole.
	fits := strings.Repeat("b", maxArgBytes)
	dir = workspace(t)
	cfg := mode(Config{Command: script(t, `printf '%s' "$1" > arg.txt`), PromptVia: PromptArg})
	if err := newAgent(t, cfg).Run(context.Background(), task(dir, fits)); err != nil {
		t.Fatalf("Run with a prompt of %d bytes: %v", len(fits), err)
	}
	if got := readFile(t, dir, "arg.txt"); got != fits {
		t.Errorf("the program got %d bytes, want %d", len(got), len(fits))
	}
}

// Passing the prompt on the command line shows it to every local user:
// New says so, at Warn, whichever way the configuration does it.
func TestPromptArgIsWarnedOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		warn bool
	}{
		{"stdin", Config{Args: []string{"-p"}}, false},
		{"arg", Config{PromptVia: PromptArg}, true},
		{"{prompt} with stdin", Config{Args: []string{"--prompt={prompt}"}}, true},
	} {
		var logs bytes.Buffer
		tc.cfg.Command = script(t, "true")
		tc.cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		newAgent(t, unsandboxed(t, tc.cfg))
		if got := strings.Contains(logs.String(), "every local user can read a process's arguments"); got != tc.warn {
			t.Errorf("%s: warned %v, want %v:\n%s", tc.name, got, tc.warn, logs.String())
		}
	}
}
