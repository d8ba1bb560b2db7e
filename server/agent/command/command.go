// Package command runs a command-line coding agent (any program that edits
// files in its working folder when given an instruction) as the agent of a
// job.
//
// The program runs in the job's workspace with a minimal environment: the
// server's own environment holds secrets (database passwords, host tokens,
// the keys of other projects) that an agent driven by a prompt must never
// see. Only PATH, LANG, a private HOME and TMPDIR that are removed after the
// run, a few DOCSAPI_* variables describing the job, and the variables the
// configuration lists are passed. In the sandbox, PATH is the sandbox's own
// (sandbox.Sandbox.Path), HOME a file system in memory of a capped size,
// and TMPDIR the sandbox's /tmp; without it, PATH is the server's and HOME
// and TMPDIR are folders of the run on disk.
//
// # The sandbox
//
// The program's actions are chosen by a model, from text that anyone able
// to open a job or edit the documentation may have written, so it runs in a
// sandbox (package sandbox, with bubblewrap) unless the configuration turns
// it off in so many words (Config.Sandbox.Mode = sandbox.Off). In the
// sandbox it sees a read-only system (/usr and a few files of /etc), writes
// only to the workspace and its private home, reaches no network but the
// hosts Config.Sandbox.AllowHosts names, cannot read the server's
// environment, files or processes, and dies whole with the run: at the
// timeout, when the run's context ends, and when the server dies. Its
// processes, memory and file systems are bounded by
// Config.Sandbox.Limits; New logs how this machine enforces them. New fails
// where the sandbox cannot run (bubblewrap missing, user namespaces off),
// saying what to do.
//
// # The workspace
//
// The workspace is a folder of the server's disk, and the program may write
// to it, so what a run may add to it is bounded (Config.Workspace): the disk
// its files take, the sizes of its files (a sparse file counts whole, as git
// would read it) and how many names it holds. The workspace is measured
// before the program starts, walked while it runs (every second, and
// sooner when the disk fills fast), and measured again when it has ended;
// past a limit the program is killed and the job fails for good, before
// anything is published. Between two walks the program writes at the
// disk's speed; in the sandbox, no single file may grow past the limit
// (RLIMIT_FSIZE). Without the sandbox the bound holds all the same, but the
// program can write anywhere else the server can. See WorkspaceLimits.
//
// # The prompt
//
// The program receives one text, built from the job's prompts: a job with one
// prompt passes it unchanged; a job with follow-ups passes the earlier
// prompts as context and the newest last:
//
//	Earlier instructions of this job, oldest first. They were given before
//	and their changes, if any, are already in the files; they are context
//	only:
//
//	[Instruction 1]
//	<first prompt>
//
//	[Instruction 2]
//	<second prompt>
//
//	Carry out this new instruction now:
//
//	<newest prompt>
//
// Each prompt is trimmed of surrounding white space. The text reaches the
// program on its standard input (PromptStdin, the default), or as an
// argument (PromptArg), where every local user can read it and its size is
// bounded; see PromptArg.
//
// # Placeholders
//
// These placeholders are replaced in each argument, in one pass (a prompt
// containing "{dir}" stays as written), and never through a shell:
//
//	{prompt}   the prompt text above
//	{model}    Task.Model, or Config.Model when the task has none
//	{job}      the job id
//	{project}  the project id
//	{dir}      the workspace folder (also the working folder)
//
// For example, to run Claude Code non-interactively:
//
//	command.Config{
//		Command: "claude",
//		Args:    []string{"-p", "--model", "{model}", "--permission-mode", "acceptEdits"},
//		PassEnv: []string{"ANTHROPIC_API_KEY"},
//		Sandbox: sandbox.Config{
//			ReadOnly:   []string{"/opt/node"},
//			AllowHosts: []string{"api.anthropic.com"},
//			Bridge:     []string{"/usr/local/bin/docsapi", "sandbox-bridge"},
//		},
//	}
package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/docsapi/docsapi-go/server/agent/internal/prompt"
	"github.com/docsapi/docsapi-go/server/agent/sandbox"
	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/internal/procgroup"
	"github.com/docsapi/docsapi-go/server/internal/rundir"
)

// Defaults of Config.
const (
	DefaultTimeout        = 20 * time.Minute
	DefaultMaxOutputBytes = 64 << 10
	DefaultLang           = "C.UTF-8"
)

// runPrefix names the runs' private folders in Config.Dir. Releases before
// the folders were locked named their homes "docsapi-agent-home-…"; a name
// that does not begin like that keeps New from sweeping the live homes of
// such a release running beside this one during an upgrade.
const runPrefix = "docsapi-agentrun"

// errorTailBytes is how much of the captured output an error quotes: enough
// for the last messages of a failing agent, small enough for a failure
// reason.
const errorTailBytes = 2 << 10

// drainTimeout bounds the wait for the output pipe after the program ended.
// The whole process group is killed by then, so the pipe closes at once
// unless a descendant left the group on purpose.
const drainTimeout = 2 * time.Second

// PromptVia says how the program receives the prompt.
type PromptVia string

// The ways of passing the prompt.
const (
	// PromptStdin writes the prompt to the program's standard input. It
	// has no size limit, unlike an argument (128 KiB on Linux).
	PromptStdin PromptVia = "stdin"
	// PromptArg passes the prompt as an argument: where an argument holds
	// {prompt}, or else as the last argument. Standard input is empty.
	//
	// Every local user can read a process's arguments (/proc/PID/cmdline,
	// ps), the sandbox's included: the sandbox hides the host from the
	// agent, not the agent from the host. With PromptArg, or {prompt} in an
	// argument, the job's prompts are readable by them while the agent
	// runs, and New logs PromptArgWarning. A job whose prompts no longer
	// fit on a command line (an argument above 128 KiB on Linux) fails
	// before the program starts, for good, saying so.
	PromptArg PromptVia = "arg"
)

// PromptArgWarning is what New logs, at Warn, when the prompt is passed
// as an argument.
const PromptArgWarning = "the prompt is passed as an argument (promptVia arg, or {prompt} in args): " +
	"every local user can read a process's arguments (/proc/PID/cmdline, ps), so the prompts of every job are visible to them while its agent runs; " +
	"a job whose prompts pass 128 KiB fails; use promptVia stdin unless the program cannot read its standard input"

// Config configures an Agent. Command is required.
type Config struct {
	// Command is the program: a path, or a name looked up in the server's
	// PATH when New is called.
	Command string
	// Args are the program's arguments, with placeholders (see the package
	// documentation).
	Args []string
	// PromptVia says how the prompt is passed; default PromptStdin.
	PromptVia PromptVia
	// Model fills {model} when the task names no model. The engine passes
	// the job's model, which is the project's configured model, in the
	// task, so that the job reports the model actually used.
	Model string
	// Timeout bounds one run; default DefaultTimeout. A run that takes
	// longer is killed and fails the job for good: running it again would
	// most likely take as long.
	Timeout time.Duration
	// MaxOutputBytes bounds the standard output and error kept from one run
	// (they are captured together): the first and last halves are kept,
	// the middle counted and dropped. Default DefaultMaxOutputBytes.
	MaxOutputBytes int
	// PassEnv names variables of the server's environment that the program
	// receives, such as its API key. Unset ones are skipped.
	PassEnv []string
	// Env sets variables for the program; it wins over PassEnv.
	Env map[string]string
	// Workspace bounds what a run may add to its workspace (task.Dir),
	// with the sandbox or without it; zero fields take their defaults.
	// Past a limit the program is killed and the job fails for good,
	// before anything is published. See WorkspaceLimits.
	Workspace WorkspaceLimits
	// Sandbox confines the program. Its zero value requires the sandbox:
	// New fails where it cannot run. See package sandbox for what an
	// unsandboxed agent (sandbox.Off) can do.
	Sandbox sandbox.Config
	// Dir is the folder in which each run gets a private folder, holding
	// the program's home and the sandbox's proxy socket, removed after
	// the run; default os.TempDir(). New removes the ones a server that
	// died left there.
	Dir string
	// Logger receives one event per run (metadata at Info, the captured
	// output at Debug) and the sandbox proxy's refusals (at Warn). The
	// default discards them.
	Logger *slog.Logger
}

// Agent runs a command-line agent. It is safe for concurrent use: each Run
// starts its own process.
type Agent struct {
	cfg     Config
	path    string           // the resolved program, absolute
	sandbox *sandbox.Sandbox // nil when Config.Sandbox.Mode is Off
	dir     string           // Config.Dir, absolute
	env     []string
	secrets *strings.Replacer // hides passed values in output and errors
	log     *slog.Logger
	// promptInArgs: an argument holds the prompt (PromptArg, or
	// {prompt} in Config.Args).
	promptInArgs bool
}

var _ engine.Agent = (*Agent)(nil)

// reserved variables are set by the agent for every run; letting the
// configuration replace them would defeat the private home folder.
var reserved = map[string]bool{"HOME": true, "TMPDIR": true, "PATH": true,
	"DOCSAPI_JOB_ID": true, "DOCSAPI_PROJECT_ID": true, "DOCSAPI_MODEL": true}

var placeholderRE = regexp.MustCompile(`\{[a-z_]+\}`)

var placeholders = map[string]bool{"{prompt}": true, "{model}": true, "{job}": true, "{project}": true, "{dir}": true}

// New checks cfg, looks the program up, checks that the sandbox can run
// (unless it is off), removes the folders of runs that a dead server left
// in Config.Dir, and returns an Agent.
func New(cfg Config) (*Agent, error) {
	if cfg.Command == "" {
		return nil, errors.New("command agent: Command is empty")
	}
	switch cfg.PromptVia {
	case "":
		cfg.PromptVia = PromptStdin
	case PromptStdin, PromptArg:
	default:
		return nil, fmt.Errorf("command agent: PromptVia %q is neither %q nor %q", cfg.PromptVia, PromptStdin, PromptArg)
	}
	if cfg.Timeout < 0 || cfg.MaxOutputBytes < 0 {
		return nil, errors.New("command agent: Timeout and MaxOutputBytes must not be negative")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxOutputBytes == 0 {
		cfg.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if err := cfg.Workspace.Check(func(field string) string { return "Workspace." + field }); err != nil {
		return nil, fmt.Errorf("command agent: %w", err)
	}
	cfg.Workspace = cfg.Workspace.WithDefaults()
	// A misspelt placeholder would reach the program literally and fail
	// every job in a confusing way; catch it while configuring.
	for _, arg := range cfg.Args {
		for _, p := range placeholderRE.FindAllString(arg, -1) {
			if !placeholders[p] {
				return nil, fmt.Errorf("command agent: unknown placeholder %s in argument %q", p, arg)
			}
		}
	}
	path, err := exec.LookPath(cfg.Command)
	if err != nil {
		return nil, fmt.Errorf("command agent: %w", err)
	}
	if path, err = filepath.Abs(path); err != nil {
		return nil, fmt.Errorf("command agent: %w", err)
	}
	vars := map[string]string{}
	for _, name := range cfg.PassEnv {
		if err := checkName(name, cfg.Sandbox); err != nil {
			return nil, err
		}
		if v, ok := os.LookupEnv(name); ok {
			vars[name] = v
		}
	}
	for name, v := range cfg.Env {
		if err := checkName(name, cfg.Sandbox); err != nil {
			return nil, err
		}
		vars[name] = v
	}
	if _, ok := vars["LANG"]; !ok {
		vars["LANG"] = DefaultLang
		if v := os.Getenv("LANG"); v != "" {
			vars["LANG"] = v
		}
	}
	var env, hide []string
	for name, v := range vars {
		env = append(env, name+"="+v)
		// Short values (a flag, a region) would blank out ordinary words;
		// keys and tokens are long.
		if len(v) >= 8 {
			hide = append(hide, v, "[redacted]")
		}
	}
	sort.Strings(env)
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	inArgs := cfg.PromptVia == PromptArg || slices.ContainsFunc(cfg.Args, func(arg string) bool { return strings.Contains(arg, "{prompt}") })
	if inArgs {
		log.Warn("command agent: " + PromptArgWarning)
	}
	dir := cfg.Dir
	if dir == "" {
		dir = os.TempDir()
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, fmt.Errorf("command agent: %w", err)
	}
	sb, err := newSandbox(cfg.Sandbox, dir)
	if err != nil {
		return nil, err
	}
	if sb == nil {
		log.Warn("command agent: the sandbox is off: the agent runs as the server's user and can read what the server can")
		// The program runs on the host, where the server's folders are.
		env = append(env, "PATH="+os.Getenv("PATH"))
	} else {
		logLimits(log, sb)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("command agent: the folder of the runs: %w", err)
	}
	swept, err := rundir.Sweep(dir, runPrefix)
	for _, p := range swept {
		log.Info("command agent: removed the folder of a run whose server died", slog.String("path", p))
	}
	if err != nil {
		log.Warn("command agent: removing the folders of dead runs", slog.Any("error", err))
	}
	return &Agent{cfg: cfg, path: path, sandbox: sb, dir: dir, env: env, secrets: strings.NewReplacer(hide...), log: log, promptInArgs: inArgs}, nil
}

// logLimits logs the limits of the sandbox's runs and what enforces them
// here, at Warn when something is not enforced, and the cgroups of dead
// servers' runs that the sandbox removed.
func logLimits(log *slog.Logger, sb *sandbox.Sandbox) {
	l, e := sb.Limits()
	attrs := []any{
		slog.String("processes", fmt.Sprintf("%d by %s", l.MaxProcesses, e.Processes)),
		slog.String("memory", fmt.Sprintf("%s by %s", sandbox.FormatBytes(l.Memory), e.Memory)),
		slog.Bool("swap_counted", e.SwapCounted),
		slog.String("tmp", sandbox.FormatBytes(l.TmpSize)), slog.String("shm", sandbox.FormatBytes(l.ShmSize)),
		slog.String("home", sandbox.FormatBytes(l.HomeSize)), slog.String("path", sb.Path()),
	}
	if len(e.Cgroups) > 0 {
		attrs = append(attrs, slog.String("cgroups", strings.Join(e.Cgroups, " ")))
	}
	if e.Note != "" {
		attrs = append(attrs, slog.String("note", e.Note))
	}
	if e.Processes == sandbox.Unenforced || e.Memory == sandbox.Unenforced {
		log.Warn("command agent: sandbox limits, not all enforced on this machine", attrs...)
	} else {
		log.Info("command agent: sandbox limits", attrs...)
	}
	swept, err := sb.Swept()
	for _, p := range swept {
		log.Info("command agent: removed the cgroup of a run whose server died", slog.String("path", p))
	}
	if err != nil {
		log.Warn("command agent: removing the cgroups of dead runs", slog.Any("error", err))
	}
}

// newSandbox returns the sandbox cfg asks for, or nil when it is off. dir
// is where the runs' folders are made.
func newSandbox(cfg sandbox.Config, dir string) (*sandbox.Sandbox, error) {
	if cfg.Mode == sandbox.Off {
		// Settings that only the sandbox applies would be ignored, and the
		// operator believe the agent confined.
		if len(cfg.ReadOnly) > 0 || len(cfg.AllowHosts) > 0 || len(cfg.AllowAddresses) > 0 || len(cfg.Bridge) > 0 || cfg.Limits != (sandbox.Limits{}) {
			return nil, errors.New("command agent: Sandbox.Mode is off, yet ReadOnly, AllowHosts, AllowAddresses, Bridge or Limits is set: they apply only in the sandbox; remove them or turn the sandbox on")
		}
		return nil, nil
	}
	sb, err := sandbox.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("command agent: %w", err)
	}
	for _, p := range sb.ReadOnly() {
		if within(dir, p) {
			return nil, fmt.Errorf("command agent: Sandbox.ReadOnly path %s holds the folder of the runs (%s): every run would read the others' homes", p, dir)
		}
	}
	return sb, nil
}

// within reports whether path is root or lies under it; both are clean and
// absolute.
func within(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func checkName(name string, sc sandbox.Config) error {
	switch {
	case name == "" || strings.ContainsAny(name, "=\x00"):
		return fmt.Errorf("command agent: invalid environment variable name %q", name)
	case reserved[name]:
		return fmt.Errorf("command agent: %s is set by the agent and cannot be configured", name)
	}
	if sc.Mode != sandbox.Off && len(sc.AllowHosts) > 0 {
		for _, v := range sandbox.ProxyVariables() {
			if strings.EqualFold(name, v) {
				return fmt.Errorf("command agent: %s is set by the sandbox to its proxy for Sandbox.AllowHosts and cannot be configured", name)
			}
		}
	}
	return nil
}

// errTimedOut is the cause of a run's context when Config.Timeout passed.
var errTimedOut = errors.New("the agent command timed out")

// ExitError reports a program that ended with a non-zero status.
type ExitError struct {
	// Code is the exit status, or -1 if a signal ended the program. In
	// the sandbox, a signal that ends the program gives 128 plus its
	// number, as a shell reports it.
	Code int
	// Limits says which of the sandbox's limits the run reached, if any
	// (a process killed at the memory limit, forks refused at the process
	// limit): the likely cause of the failure.
	Limits string
	// Output is the captured output (see Config.MaxOutputBytes), with the
	// values of passed variables redacted.
	Output string
	// Dropped counts the output bytes that were not kept.
	Dropped int64
}

func (e *ExitError) Error() string {
	what := fmt.Sprintf("exited with status %d", e.Code)
	if e.Code < 0 {
		what = "was killed by a signal"
	}
	if e.Limits != "" {
		what += " (" + e.Limits + ")"
	}
	return "the agent command " + what + tailOf(e.Output)
}

// tailOf quotes the end of the output for an error message.
func tailOf(output string) string {
	output = strings.TrimSpace(output)
	if output == "" {
		return "; it printed nothing"
	}
	if len(output) > errorTailBytes {
		output = "…" + strings.ToValidUTF8(output[len(output)-errorTailBytes:], "")
	}
	return "; the end of its output:\n" + output
}

// Run runs the program once in task.Dir and waits for it to end.
//
// A non-zero exit is an *ExitError, which the engine retries (an agent may
// fail on a passing network problem). A program that cannot be started, a
// missing model, a timeout and a workspace past Config.Workspace's limits
// (while the program runs, which kills it, or when it has ended, whatever
// its status) are engine.Permanent. When ctx ends first, the program is
// killed and the error wraps the context's cause.
func (a *Agent) Run(ctx context.Context, task engine.Task) (err error) {
	if len(task.Prompts) == 0 {
		return engine.Permanent(errors.New("command agent: the task has no prompt"))
	}
	model := task.Model
	if model == "" {
		model = a.cfg.Model
	}
	text := prompt.Format(task.Prompts)
	args, err := a.args(text, model, task)
	if err != nil {
		return engine.Permanent(err)
	}
	inArgs := ""
	if a.promptInArgs {
		inArgs = text
	}
	// The arguments alone first, before a folder is made: with the
	// prompt among them, they grow with the job's history.
	if err := checkCommandLine(a.path, args, nil, inArgs); err != nil {
		return engine.Permanent(err)
	}

	if a.sandbox != nil && task.Dir == "" {
		return engine.Permanent(errors.New("command agent: the task has no workspace folder"))
	}
	run, err := rundir.New(a.dir, runPrefix)
	if err != nil {
		return fmt.Errorf("command agent: making the run's folder: %w", err)
	}
	defer func() {
		if rerr := run.Remove(); rerr != nil {
			a.log.Warn("command agent: removing the run's folder", slog.String("job_id", task.JobID), slog.Any("error", rerr))
		}
	}()
	// In the sandbox, the home is a file system of the sandbox's own at
	// this path, and TMPDIR its /tmp: neither is on the server's disk.
	home, tmp := filepath.Join(run.Path(), "home"), "/tmp"
	if a.sandbox == nil {
		tmp = filepath.Join(home, "tmp")
		for _, d := range []string{home, tmp} {
			if err := os.Mkdir(d, 0o700); err != nil {
				return fmt.Errorf("command agent: making the home folder: %w", err)
			}
		}
	}

	// The workspace as the run finds it, before the program can write.
	// A task without a folder (an unsandboxed program run in the
	// server's own; the engine always gives one) has none to bound.
	var ws *workspaceWatch
	if task.Dir != "" {
		if ws, err = newWorkspaceWatch(task.Dir, a.cfg.Workspace, a.log, task.JobID); errors.Is(err, fs.ErrNotExist) {
			return engine.Permanent(err)
		} else if err != nil {
			return err
		}
	}

	timeoutCtx, cancelTimeout := context.WithTimeoutCause(ctx, a.cfg.Timeout, errTimedOut)
	defer cancelTimeout()
	// The workspace's watch stops the run with its reason, as a timeout
	// does.
	runCtx, cancel := context.WithCancelCause(timeoutCtx)
	defer cancel(nil)
	env := append(a.env[:len(a.env):len(a.env)],
		"HOME="+home, "TMPDIR="+tmp,
		"DOCSAPI_JOB_ID="+task.JobID, "DOCSAPI_PROJECT_ID="+task.ProjectID, "DOCSAPI_MODEL="+model)
	if err := checkCommandLine(a.path, args, env, inArgs); err != nil {
		return engine.Permanent(err)
	}
	var cmd *exec.Cmd
	var sc *sandbox.Cmd
	if a.sandbox != nil {
		dir, err := filepath.Abs(task.Dir)
		if err != nil {
			return engine.Permanent(fmt.Errorf("command agent: %w", err))
		}
		sc, err = a.sandbox.Command(runCtx, sandbox.Run{Program: a.path, Args: args, Env: env,
			Dir: dir, Home: home, Private: run.Path(), MaxFileSize: a.cfg.Workspace.MaxGrowth, JobID: task.JobID, Logger: a.log})
		if errors.Is(err, fs.ErrNotExist) {
			return engine.Permanent(fmt.Errorf("command agent: %w", err))
		}
		if err != nil {
			return fmt.Errorf("command agent: %w", err)
		}
		defer sc.Close()
		cmd = sc.Cmd
	} else {
		cmd = exec.CommandContext(runCtx, a.path, args...)
		cmd.Dir = task.Dir
		cmd.Env = env
		cmd.SysProcAttr = procgroup.Attr()
		cmd.Cancel = func() error { return procgroup.Kill(cmd.Process) }
	}

	if a.cfg.PromptVia == PromptStdin {
		// A file rather than a pipe: a program that never reads its input
		// cannot block a writer, and no goroutine outlives the run. It
		// lies outside the home: the program needs the descriptor only.
		in, err := promptFile(run.Path(), text)
		if err != nil {
			return fmt.Errorf("command agent: %w", err)
		}
		defer in.Close()
		cmd.Stdin = in
	}

	// The write end of a pipe rather than an io.Writer: with a file, Wait
	// returns when the program ends instead of when every descendant has
	// closed its copy of the output, which lets us kill leftovers first.
	out := newCapture(a.cfg.MaxOutputBytes)
	pr, pw, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("command agent: %w", err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	start := time.Now()
	startCmd := cmd.Start
	if sc != nil {
		startCmd = sc.Start // with the run's limits
	}
	if err := startCmd(); err != nil {
		pr.Close()
		pw.Close()
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return engine.Permanent(fmt.Errorf("command agent: starting %s: %w", a.cfg.Command, err))
		}
		if errors.Is(err, syscall.E2BIG) {
			// checkCommandLine missed it (a system with a lower limit):
			// the same job would be refused again.
			return engine.Permanent(fmt.Errorf("command agent: starting %s: the system refused its arguments and environment as too large (%w); with promptVia arg, use promptVia stdin", a.cfg.Command, err))
		}
		return fmt.Errorf("command agent: starting %s: %w", a.cfg.Command, err)
	}
	pw.Close()
	watchCtx, stopWatch := context.WithCancel(runCtx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		if ws != nil {
			ws.watch(watchCtx, cancel)
		}
	}()
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(out, pr)
	}()

	waitErr := cmd.Wait()
	// Whatever the program left running in the background (a language
	// server, a watcher) dies with it: the workspace is about to go. In
	// the sandbox, bwrap's death ends every process of the sandbox.
	_ = procgroup.Kill(cmd.Process)
	stopWatch()
	<-watched
	select {
	case <-copied:
	case <-time.After(drainTimeout):
	}
	pr.Close()
	<-copied
	elapsed := time.Since(start)
	output := a.secrets.Replace(out.String())
	code := -1
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	}
	limits := a.exhaustion(sc, code, task.JobID)
	a.log.Info("command agent: finished", slog.String("job_id", task.JobID), slog.Bool("sandboxed", a.sandbox != nil), slog.Int("exit_code", code),
		slog.Duration("duration", elapsed), slog.Int64("output_bytes", out.total), slog.Int64("dropped_bytes", out.dropped()))
	a.log.Debug("command agent: output", slog.String("job_id", task.JobID), slog.String("output", output))

	// A nil waitErr means the program finished on its own, even if the
	// deadline passed as it did: os/exec reports an error for any run it
	// had to cancel.
	var breach *workspaceError
	switch cause := context.Cause(runCtx); {
	case errors.As(cause, &breach) && waitErr != nil:
		return engine.Permanent(fmt.Errorf("%w%s", breach, tailOf(output)))
	case waitErr == nil:
	case errors.Is(cause, errTimedOut):
		return engine.Permanent(fmt.Errorf("command agent: timed out after %s and was killed%s", a.cfg.Timeout, tailOf(output)))
	case ctx.Err() != nil:
		return fmt.Errorf("command agent: stopped: %w", context.Cause(ctx))
	}
	// The program ended by itself: what it leaves is what Publish would
	// commit, so the workspace must be within its limits, whatever the
	// exit status. The same job would grow it again: a breach is for good.
	if ws != nil {
		if err := ws.final(); err != nil {
			return engine.Permanent(fmt.Errorf("%w%s", err, tailOf(output)))
		}
	}
	if waitErr == nil {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		return &ExitError{Code: code, Limits: limits, Output: output, Dropped: out.dropped()}
	}
	return fmt.Errorf("command agent: %w", waitErr)
}

// exhaustion logs, at Warn, the limits of the sandbox that the run sc
// (nil without the sandbox), whose exit status is code, reached, and
// returns them as a sentence for an error, or "".
func (a *Agent) exhaustion(sc *sandbox.Cmd, code int, jobID string) string {
	if sc == nil {
		return ""
	}
	e := sc.Exhaustion()
	l, _ := a.sandbox.Limits()
	var what []string
	if code == 128+sigxfsz {
		what = append(what, fmt.Sprintf("the program was ended by SIGXFSZ: it wrote a file past the largest a process of the sandbox may write, %s; raise agent.maxWorkspaceGrowth in serve's configuration if a job needs larger files",
			sandbox.FormatBytes(a.cfg.Workspace.MaxGrowth)))
	}
	if e.OOMKills > 0 {
		what = append(what, fmt.Sprintf("the kernel killed %d process(es) of the sandbox at its memory cap of %s; raise the sandbox's memory limit (sandbox.memory in serve's configuration) if the agent needs more", e.OOMKills, sandbox.FormatBytes(l.Memory)))
	}
	if e.ForksRefused > 0 {
		what = append(what, fmt.Sprintf("%d process(es) could not start at the sandbox's limit of %d; raise sandbox.maxProcesses if the agent needs more", e.ForksRefused, l.MaxProcesses))
	}
	if len(what) == 0 {
		return ""
	}
	text := strings.Join(what, "; ")
	a.log.Warn("command agent: the run reached the sandbox's limits", slog.String("job_id", jobID),
		slog.Int("oom_kills", e.OOMKills), slog.Int("forks_refused", e.ForksRefused), slog.Int("exit_code", code), slog.String("limits", text))
	return text
}

// args expands the placeholders of the configured arguments.
func (a *Agent) args(text, model string, task engine.Task) ([]string, error) {
	r := strings.NewReplacer("{prompt}", text, "{model}", model, "{job}", task.JobID,
		"{project}", task.ProjectID, "{dir}", task.Dir)
	args := make([]string, 0, len(a.cfg.Args)+1)
	hasPrompt := false
	for _, arg := range a.cfg.Args {
		if strings.Contains(arg, "{model}") && model == "" {
			return nil, errors.New("command agent: an argument uses {model} but neither the task nor the configuration names a model")
		}
		hasPrompt = hasPrompt || strings.Contains(arg, "{prompt}")
		args = append(args, r.Replace(arg))
	}
	if a.cfg.PromptVia == PromptArg && !hasPrompt {
		args = append(args, text)
	}
	return args, nil
}

// promptFile returns an open file holding text, positioned at its start.
func promptFile(dir, text string) (*os.File, error) {
	f, err := os.CreateTemp(dir, "prompt-")
	if err != nil {
		return nil, err
	}
	if _, err := io.WriteString(f, text); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
