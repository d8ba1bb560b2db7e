package command

import (
	"fmt"
	"strings"
)

// What a command line can hold. A prompt passed as an argument (PromptArg,
// or {prompt} in an argument) grows with the job's history, and the system
// refuses to start a program whose arguments are too large (E2BIG): Linux
// refuses any one argument longer than maxArgBytes, and arguments and
// environment together past argMax (see argmax_*.go). Run checks both
// before it starts anything, so that such a job fails at once, for good,
// saying why, rather than being retried into the same refusal.

// maxArgBytes is the longest argument Linux passes to a program:
// MAX_ARG_STRLEN, 32 pages of 4 KiB, with the terminating NUL.
const maxArgBytes = 32*4096 - 1

// execHeadroom is room kept, beyond the program's own command line and
// environment, for what the sandbox adds around them: bwrap's and the
// network bridge's arguments, the proxy's variables.
const execHeadroom = 8 << 10

// pointerBytes is the size of each argument's and variable's pointer on
// the new program's stack, which the system counts with the strings.
const pointerBytes = 8

// checkCommandLine returns why the system would refuse to start program
// with args and env, or nil. prompt is the text passed where an argument
// holds it, "" if none does. The error names sizes and what to change,
// never an argument's text: it may hold the prompts.
func checkCommandLine(program string, args, env []string, prompt string) error {
	fix := "shorten the configured arguments"
	if prompt != "" {
		fix = "the job's prompts are too long to pass as an argument: configure promptVia stdin, which has no such limit, or start a new job"
	}
	for i, arg := range args {
		if len(arg) > maxArgBytes {
			what := fmt.Sprintf("argument %d", i+1)
			if prompt != "" && strings.Contains(arg, prompt) {
				what += " (the prompt)"
			}
			return fmt.Errorf("command agent: %s is %d bytes, and the system refuses to pass an argument longer than %d bytes (Linux's MAX_ARG_STRLEN); %s",
				what, len(arg), maxArgBytes, fix)
		}
	}
	size := execHeadroom
	for _, s := range append(append([]string{program}, args...), env...) {
		size += len(s) + 1 + pointerBytes
	}
	if limit := argMax(); size > limit {
		return fmt.Errorf("command agent: the arguments and environment come to %d bytes, and the system refuses to start a program with more than %d (ARG_MAX, a quarter of the stack limit); %s",
			size, limit, fix)
	}
	return nil
}
