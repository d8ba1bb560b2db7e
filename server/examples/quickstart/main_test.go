package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestMain lets the test binary play the local agent: the job engine runs
// os.Executable() with the argument "agent", as it runs the quickstart.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "agent" {
		if err := runAgent(os.Stdin, "."); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		// Not os.Exit: built with -race, it waits a second for the race
		// detector first, and the agent's environment (the sandbox's) has
		// no GORACE to say otherwise.
		syscall.Exit(0)
	}
	if os.Getenv(asMain) == "1" {
		// The quickstart as its users run it: flags, signals and all.
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// asMain, set to 1, makes the test binary run the quickstart's main.
const asMain = "QUICKSTART_TEST_MAIN"

// TestQuickstart runs the quickstart as the README's first command does and
// checks what it shows: the job's final state, the pushed change, and the
// views export.
func TestQuickstart(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	var out bytes.Buffer
	if err := run(context.Background(), &out, options{}); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{
		// source.ref is the branch the agent worked on.
		"final state: status completed, model quickstart-local-agent, source acme-docs.git@docs-agent/job_",
		"prLink: null (push-only",
		"quickstart.md | 6 ++++++",
		"+## Troubleshooting",
		`Add a troubleshooting section to the quickstart guide"_`,
		"/quickstart                   3      2      5",
		"/reference                    1      1      2",
		"/                             1      0      1",
		"(totals)                      5      3      8",
		"Done.",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(text)
	}
}

func TestAgentNeedsAnInstruction(t *testing.T) {
	if err := runAgent(strings.NewReader("\n  \n"), t.TempDir()); err == nil {
		t.Fatal("the agent accepted empty input")
	}
}
