package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/docsapi/docsapi-go/server/agent/sandbox"
)

// Exit codes. Scripts rely on them, so they are part of the documented
// interface (see exitCodesHelp) and never change meaning.
const (
	exitOK          = 0
	exitFailure     = 1   // any failure, including an error answered by the API
	exitUsage       = 2   // a bad flag, argument or setting
	exitJobFailed   = 3   // with --wait or jobs wait: the job ended failed
	exitWaitTimeout = 4   // with --wait or jobs wait: time ran out, the job still runs
	exitInterrupted = 130 // interrupted by a signal (128 + SIGINT), as shells report it
)

const exitCodesHelp = `Exit codes:
  0    success
  1    failure, including an error answered by the API
  2    usage error: a bad flag, argument or setting
  3    the job ended failed (jobs create/message --wait, jobs wait)
  4    waiting timed out; the job is still running (same commands)
  130  interrupted (Ctrl-C or SIGTERM) while waiting
`

// stdio is what a command may touch of the outside world. Commands never
// use os.Stdout, os.Getenv and the like directly, so tests run them
// in-process with buffers and a fake environment.
type stdio struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

// runFunc runs a command once its flags are parsed; args are the positional
// arguments left.
type runFunc func(ctx context.Context, s *stdio, args []string) error

// command is one leaf of the command tree.
type command struct {
	name     string // the full path, such as "jobs create"
	args     string // the positional arguments in the usage line, such as "ID"
	summary  string // one line, for the command list
	help     string // what the command does, shown under the usage line
	examples string
	// setup defines the command's flags on fs and returns the function
	// that runs it, which sees the parsed values through its closure. Help
	// calls setup on a throwaway FlagSet just to list the flags.
	setup func(fs *flag.FlagSet) runFunc
}

// groups are the first words of multi-word commands, for group help.
var groups = map[string]string{
	"project":   "manage the projects in the server's storage",
	"key":       "manage the admin API keys in the server's storage",
	"site":      "manage the site tokens with which docs pages record feedback and searches",
	"assistant": "manage the assistant keys (mint_dsc_...) with which pages and backends call a project's search and page endpoints",
	"feedback":  "readers' feedback: export it through the API (client); list it and change its status on the server's storage",
	"jobs":      "start and follow agent jobs (client), and read why one failed on the server's storage",
	"views":     "export page-view analytics (client)",
	"visitors":  "export unique-visitor analytics (client)",
	"searches":  "export what readers searched for (client)",
	"gaps":      "what readers could not find, and agent jobs made from it (client, self-hosted)",
}

// commands lists every command, in the order help shows them.
func commands() []*command {
	return []*command{
		serveCommand(),
		projectCreateCommand(),
		projectListCommand(),
		keyCreateCommand(),
		keyListCommand(),
		keyRevokeCommand(),
		siteTokenCreateCommand(),
		siteTokenListCommand(),
		siteTokenRevokeCommand(),
		assistantKeyCreateCommand(),
		assistantKeyListCommand(),
		assistantKeyRevokeCommand(),
		feedbackListCommand(),
		feedbackSetStatusCommand(),
		jobsCreateCommand(),
		jobsGetCommand(),
		jobsWaitCommand(),
		jobsMessageCommand(),
		jobsListCommand(),
		jobsFailureCommand(),
		viewsExportCommand(),
		viewsSeriesCommand(),
		visitorsExportCommand(),
		searchCommand(),
		searchesExportCommand(),
		gapsListCommand(),
		gapsJobCommand(),
		feedbackExportCommand(),
		updateCommand(),
		versionCommand(),
	}
}

// usageError is a mistake in how the program was called: exit code 2, and a
// pointer to the command's help.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usagef makes a usageError; %w wraps as in fmt.Errorf.
func usagef(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// exitError ends the program with a given code. Its message, if any, has
// been printed already or is printed as is.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// hintError is a failure with advice on what to do about it.
type hintError struct {
	err  error
	hint string
}

func (e *hintError) Error() string { return e.err.Error() }
func (e *hintError) Unwrap() error { return e.err }

// run is the whole program: it parses args (without the program name), runs
// the command and returns the exit code. main only wires it to the process.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) > 0 && args[0] == bridgeCommand {
		// Not a command for people: the sandbox runs it (see parts.go).
		return sandbox.BridgeMain(args[1:])
	}
	s := &stdio{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	cmds := commands()
	if len(args) == 0 {
		fmt.Fprint(stderr, mainHelp(cmds))
		return exitUsage
	}
	switch {
	case isHelpFlag(args[0]):
		return helpCommand(s, cmds, args[1:])
	case args[0] == "-version" || args[0] == "--version":
		args = []string{"version"}
	}
	cmd, rest, group, err := findCommand(cmds, args)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "docsapi: %s\nRun 'docsapi help' for the list of commands.\n", err)
		return exitUsage
	case group != "":
		fmt.Fprint(stdout, groupUsage(cmds, group))
		return exitOK
	}
	return runCommand(ctx, s, cmd, rest)
}

// findCommand matches the command named at the start of args. For a group
// followed by a help flag ("jobs --help") it returns the group instead.
func findCommand(cmds []*command, args []string) (cmd *command, rest []string, group string, err error) {
	for _, c := range cmds {
		words := strings.Fields(c.name)
		if len(args) >= len(words) && strings.Join(args[:len(words)], " ") == c.name {
			return c, args[len(words):], "", nil
		}
	}
	if _, ok := groups[args[0]]; ok {
		list := strings.TrimRight(subcommandList(cmds, args[0]), "\n")
		if len(args) == 1 {
			return nil, nil, "", usagef("%q needs a subcommand:\n%s", args[0], list)
		}
		if isHelpFlag(args[1]) {
			return nil, nil, args[0], nil
		}
		return nil, nil, "", usagef("unknown command %q; %q has:\n%s", args[0]+" "+args[1], args[0], list)
	}
	if strings.HasPrefix(args[0], "-") {
		return nil, nil, "", usagef("flags come after the command, as in 'docsapi jobs get --project P ID': %q", args[0])
	}
	return nil, nil, "", usagef("unknown command %q", args[0])
}

func isHelpFlag(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// runCommand parses the command's flags and runs it, turning its error into
// a message on stderr and an exit code.
func runCommand(ctx context.Context, s *stdio, cmd *command, args []string) int {
	fs := flag.NewFlagSet("docsapi "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported below, in our words
	runIt := cmd.setup(fs)
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(s.stdout, commandHelp(cmd))
		return exitOK
	}
	if err == nil {
		err = runIt(ctx, s, pos)
	}
	return report(ctx, s, cmd, err)
}

// report prints err for the user and returns the exit code it stands for.
func report(ctx context.Context, s *stdio, cmd *command, err error) int {
	prefix := "docsapi " + cmd.name + ": "
	var (
		ue   *usageError
		ee   *exitError
		hint *hintError
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(s.stderr, "%s%s\nRun 'docsapi %s --help' for usage.\n", prefix, ue, cmd.name)
		return exitUsage
	case errors.As(err, &ee):
		if ee.msg != "" {
			fmt.Fprintf(s.stderr, "%s%s\n", prefix, ee.msg)
		}
		return ee.code
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		fmt.Fprintf(s.stderr, "%sinterrupted\n", prefix)
		return exitInterrupted
	case errors.As(err, &hint):
		fmt.Fprintf(s.stderr, "%s%s\n  %s\n", prefix, hint.err, hint.hint)
		return exitFailure
	}
	fmt.Fprintf(s.stderr, "%s%s\n", prefix, err)
	return exitFailure
}

// parseInterspersed parses flags wherever they appear among the positional
// arguments ("jobs get ID --project P" as well as "jobs get --project P ID"),
// which the flag package alone does not allow. "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			// The flag package's errors have no structure to build a message
			// from, only text starting "flag ", which the command's name in
			// front of the message already says. This is the one error the
			// program edits as text.
			return nil, usagef("%s", strings.TrimPrefix(err.Error(), "flag "))
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// wantArgs checks the number of positional arguments.
func wantArgs(args []string, names ...string) error {
	switch {
	case len(args) < len(names):
		return usagef("missing argument %s", names[len(args)])
	case len(args) > len(names):
		return usagef("unexpected argument %q", args[len(names)])
	}
	return nil
}

// helpCommand serves "docsapi help [command...]".
func helpCommand(s *stdio, cmds []*command, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(s.stdout, mainHelp(cmds))
		return exitOK
	}
	if _, ok := groups[args[0]]; ok && len(args) == 1 {
		fmt.Fprint(s.stdout, groupUsage(cmds, args[0]))
		return exitOK
	}
	cmd, _, group, err := findCommand(cmds, args)
	switch {
	case err != nil:
		fmt.Fprintf(s.stderr, "docsapi help: %s\nRun 'docsapi help' for the list of commands.\n", err)
		return exitUsage
	case group != "":
		fmt.Fprint(s.stdout, groupUsage(cmds, group))
		return exitOK
	}
	fmt.Fprint(s.stdout, commandHelp(cmd))
	return exitOK
}

func mainHelp(cmds []*command) string {
	var b strings.Builder
	b.WriteString(`docsapi starts and follows documentation agent jobs and exports page-view
analytics, against the hosted service or a self-hosted server, and runs that
self-hosted server.

Usage:
  docsapi <command> [flags] [arguments]

`)
	section := func(title string, side commandSide) {
		b.WriteString(title + ":\n")
		for _, c := range cmds {
			if sideOf(c) == side {
				fmt.Fprintf(&b, "  %-*s  %s\n", nameWidth(cmds), c.name, c.summary)
			}
		}
		b.WriteByte('\n')
	}
	section("Self-hosting (on the server's storage)", onStorage)
	section("Client (any API base URL; key in DOCSAPI_KEY)", throughAPI)
	section("Other", elsewhere)
	b.WriteString(`Environment:
  DOCSAPI_KEY, DOCSAPI_BASE_URL
      the client commands' admin API key and server
  DOCSAPI_PROJECT
      the project of every command that takes --project
  DOCSAPI_ASSISTANT_KEY, DOCSAPI_DOMAIN
      search's assistant key (else DOCSAPI_KEY, if it holds one) and site
  DOCSAPI_LISTEN, DOCSAPI_DATA, DOCSAPI_DATABASE_URL, DOCSAPI_CONFIG
      serve's address, and the storage and configuration file of every
      self-hosting command

`)
	b.WriteString(exitCodesHelp)
	b.WriteString("\nRun 'docsapi <command> --help' for a command's flags and examples.\n")
	return b.String()
}

// commandSide is what a command works on, which sorts the command list:
// a group such as feedback has commands on both sides.
type commandSide int

const (
	onStorage  commandSide = iota // the server's storage (--data, --database)
	throughAPI                    // the API, with a key (--base-url)
	elsewhere                     // neither, such as version
)

// sideOf tells a command's side by its flags, so that the list cannot
// disagree with what the command needs.
func sideOf(c *command) commandSide {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	c.setup(fs)
	switch {
	case fs.Lookup("base-url") != nil:
		return throughAPI
	case fs.Lookup("data") != nil:
		return onStorage
	}
	return elsewhere
}

func subcommandList(cmds []*command, group string) string {
	var b strings.Builder
	for _, c := range cmds {
		if strings.HasPrefix(c.name, group+" ") {
			fmt.Fprintf(&b, "  %-*s  %s\n", nameWidth(cmds), c.name, c.summary)
		}
	}
	return b.String()
}

// nameWidth is the length of the longest command name, so that every
// summary in a list starts in the same column.
func nameWidth(cmds []*command) int {
	w := 0
	for _, c := range cmds {
		w = max(w, len(c.name))
	}
	return w
}

func groupUsage(cmds []*command, group string) string {
	return fmt.Sprintf("docsapi %s: %s\n\nCommands:\n%s\nRun 'docsapi %s <command> --help' for a command's flags and examples.\n",
		group, groups[group], subcommandList(cmds, group), group)
}

// commandHelp is the full help of a command: usage, description, flags
// (with two dashes, as users type them), examples.
func commandHelp(cmd *command) string {
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	cmd.setup(fs)
	var b strings.Builder
	usage := "docsapi " + cmd.name
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		usage += " [flags]"
	}
	if cmd.args != "" {
		usage += " " + cmd.args
	}
	fmt.Fprintf(&b, "Usage: %s\n\n%s\n", usage, strings.TrimSpace(cmd.help))
	if hasFlags {
		b.WriteString("\nFlags:\n")
		b.WriteString(flagHelp(fs))
	}
	if cmd.examples != "" {
		b.WriteString("\nExamples:\n")
		for _, line := range strings.Split(strings.Trim(cmd.examples, "\n"), "\n") {
			b.WriteString("  " + line + "\n")
		}
	}
	return b.String()
}

// flagHelp lists the flags sorted by name, each with its value type and
// default, in the two-dash spelling the help text uses everywhere.
func flagHelp(fs *flag.FlagSet) string {
	var flags []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) { flags = append(flags, f) })
	sort.Slice(flags, func(i, j int) bool { return flags[i].Name < flags[j].Name })
	var b strings.Builder
	for _, f := range flags {
		typ, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if typ != "" {
			line += " " + typ
		}
		b.WriteString(line + "\n")
		for _, l := range strings.Split(usage, "\n") {
			b.WriteString("        " + l + "\n")
		}
		if def := f.DefValue; def != "" && def != "false" && def != "0" && def != "0s" && def != "[]" {
			fmt.Fprintf(&b, "        (default %s)\n", def)
		}
	}
	return b.String()
}

// listFlag is a flag that may be repeated; each value may also hold several
// items separated by commas ("--scope read,write").
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			*l = append(*l, item)
		}
	}
	return nil
}

// given reports whether the flag was given on the command line.
func given(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// or is s, or def when s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
