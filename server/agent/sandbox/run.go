package sandbox

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/docsapi/docsapi-go/server/internal/procgroup"
)

// bridgeAddr is where the bridge listens inside the sandbox. The sandbox
// has a network namespace of its own, so the port is always free.
const bridgeAddr = "127.0.0.1:3128"

// maxSocketPath is the longest path a Unix socket can have on Linux
// (sun_path holds 108 bytes with the final NUL).
const maxSocketPath = 107

// proxyVariables are the variables that point programs at the proxy; the
// sandbox sets them when the run has network access.
var proxyVariables = []string{"HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "ALL_PROXY", "NO_PROXY", "no_proxy"}

// ProxyVariables returns the names of the variables a run with AllowHosts
// gets from the sandbox (HTTPS_PROXY and its kin, and NO_PROXY emptied,
// so that no host skips the proxy). A caller must not set them itself.
func ProxyVariables() []string { return append([]string(nil), proxyVariables...) }

// Run describes one program to run in a sandbox. The paths must be
// absolute.
type Run struct {
	// Program is the program's path.
	Program string
	// Args are its arguments, after the program.
	Args []string
	// Env is the program's whole environment, as "NAME=value", but PATH,
	// which the sandbox sets (see Sandbox.Path).
	Env []string
	// Dir is the workspace: writable, bound at its own path, and the
	// working folder.
	Dir string
	// Home is where the run's home appears in the sandbox: a file system
	// in memory of its own, empty at the start, capped by Limits.HomeSize,
	// gone with the sandbox. No host folder is needed there, and nothing
	// the program stores in it reaches the host's disk. It must not be or
	// hold Dir, /tmp or a path the sandbox shows from the host, nor lie in
	// Dir, /proc or /dev.
	Home string
	// Private is a folder of the run that the sandbox does not show: the
	// proxy's socket and bwrap's argument file are made there. It must
	// not be Home, Dir or inside them.
	Private string
	// MaxFileSize bounds, in bytes, the size of each file a process of
	// the sandbox writes (RLIMIT_FSIZE, set before the program starts);
	// 0 leaves it unbounded. A write or truncation past it fails with
	// EFBIG, after the kernel sends the writer SIGXFSZ, which ends a
	// program that does not catch it. With it, no process of the sandbox
	// writes a core dump (RLIMIT_CORE 0): a core is a file the size of the
	// process's memory, written to its working folder, the workspace.
	MaxFileSize int64
	// JobID names the job in the proxy's log lines.
	JobID string
	// Logger receives the proxy's events; refusals are at Warn. The
	// default discards them.
	Logger *slog.Logger
}

// Cmd is a sandboxed program ready to start: bwrap, which starts the
// program in the sandbox. Set Stdin, Stdout and Stderr on the embedded
// exec.Cmd, then call Cmd's own Start (or Run) and Wait, and Close when the
// run is over. The embedded exec.Cmd's Start, Output and CombinedOutput
// would start bwrap without the run's limits: the sandbox then waits, the
// program never starting, until the context ends or Close.
//
// bwrap runs in a process group of its own, and with the context given to
// Command, Cancel kills that group: bwrap's death ends the sandbox. Its
// exit status is the program's, or 128 plus the signal's number when a
// signal ended the program.
type Cmd struct {
	*exec.Cmd
	proxy  *proxy
	args   *os.File
	cgroup *runCgroup // nil when the run has no cgroup
	nproc  int        // RLIMIT_NPROC for the sandbox, or 0
	fsize  int64      // RLIMIT_FSIZE for the sandbox, or 0
	gate   gate
}

// Command prepares r to run in the sandbox; ctx ending kills it. The
// program's variables and bwrap's options reach bwrap through a file
// descriptor (--args) rather than its command line, which every user can
// read in /proc; bwrap itself starts with no variables at all, since the
// sandbox's first process keeps those it was started with, where the
// program could read them.
func (s *Sandbox) Command(ctx context.Context, r Run) (*Cmd, error) {
	for _, p := range []string{r.Program, r.Dir, r.Home, r.Private} {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("sandbox: the path %q is not absolute", p)
		}
	}
	r.Dir, r.Home, r.Private = filepath.Clean(r.Dir), filepath.Clean(r.Home), filepath.Clean(r.Private)
	if r.MaxFileSize < 0 {
		return nil, fmt.Errorf("sandbox: MaxFileSize is %d; it must not be negative", r.MaxFileSize)
	}
	if err := s.checkReadOnlyLinks(); err != nil {
		return nil, err
	}
	if within(r.Private, r.Dir) || within(r.Private, r.Home) {
		return nil, fmt.Errorf("sandbox: the run's private folder %s lies in the workspace or the home, which the program sees", r.Private)
	}
	// bwrap would fail on it too, but with an exit status that looks
	// like the program's.
	if _, err := os.Stat(r.Dir); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	env := r.Env
	for _, kv := range env {
		if name, _, ok := strings.Cut(kv, "="); !ok || name == "" || strings.Contains(kv, "\x00") {
			return nil, fmt.Errorf("sandbox: the variable %q is not NAME=value", kv)
		}
	}
	log := r.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}

	_, visible := rootArgs("", s.limits)
	visible = append(append(visible, s.readOnly...), r.Dir)
	if err := checkHome(r.Home, visible); err != nil {
		return nil, err
	}
	visible = append(visible, r.Home)
	// A copy: runs append to it concurrently.
	m := mounts{readOnly: slices.Clone(s.readOnly), dir: r.Dir, home: r.Home}
	var argv []string
	if s.allow != nil {
		run, bind, err := binary(s.bridge[0], visible)
		if err != nil {
			return nil, fmt.Errorf("sandbox: the bridge: %w", err)
		}
		if bind != "" {
			m.readOnly = append(m.readOnly, bind)
			visible = append(visible, bind)
		}
		argv = append(append(argv, run), s.bridge[1:]...)
		argv = append(argv, "-listen", bridgeAddr, "-socket", socketPath, "--")
		env = withProxy(env, "http://"+bridgeAddr)
	}
	env = withPath(env, s.path)
	run, bind, err := binary(r.Program, visible)
	if err != nil {
		return nil, fmt.Errorf("sandbox: the program: %w", err)
	}
	if bind != "" {
		m.readOnly = append(m.readOnly, bind)
	}
	argv = append(append(argv, run), r.Args...)

	var p *proxy
	if s.allow != nil {
		m.socket = filepath.Join(r.Private, "proxy.sock")
		if len(m.socket) > maxSocketPath {
			return nil, fmt.Errorf("sandbox: the proxy's socket path %s is longer than %d bytes; choose a shorter folder for the runs", m.socket, maxSocketPath)
		}
		if p, err = listenProxy(m.socket, s.allow, maxTunnels, log, r.JobID); err != nil {
			return nil, err
		}
	}
	// bwrap stops before it starts the program until Start has put the
	// limits in place (see gate).
	opts := append(options("", m, s.limits), "--block-fd", strconv.Itoa(gateFD), "--info-fd", strconv.Itoa(infoFD))
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		opts = append(opts, "--setenv", name, value)
	}
	c := &Cmd{proxy: p, fsize: r.MaxFileSize}
	fail := func(err error) (*Cmd, error) {
		c.release()
		return nil, err
	}
	if c.args, err = argsFile(r.Private, opts); err != nil {
		return fail(err)
	}
	if c.gate, err = newGate(); err != nil {
		return fail(err)
	}
	if s.cgroups != nil {
		if c.cgroup, err = s.cgroups.newRun(s.limits); err != nil {
			return fail(err)
		}
	}
	if s.enforced.Processes == RlimitNproc {
		c.nproc = s.limits.MaxProcesses
	}

	closeInheritedOnExec()
	cmd := exec.CommandContext(ctx, s.bwrap, append([]string{"--args", strconv.Itoa(argsFD), "--"}, argv...)...)
	// Empty, not nil: nil would give bwrap the server's environment.
	cmd.Env = []string{}
	cmd.ExtraFiles = []*os.File{c.args, c.gate.wait, c.gate.infoW} // descriptors 3, 4 and 5
	cmd.SysProcAttr = procgroup.Attr()
	if c.cgroup != nil && c.cgroup.dir != nil {
		cloneInto(cmd.SysProcAttr, c.cgroup.dir)
	}
	cmd.Cancel = func() error { return procgroup.Kill(cmd.Process) }
	c.Cmd = cmd
	return c, nil
}

// The descriptors bwrap gets: its arguments, the gate it waits on before
// it starts the program, and where it writes its sandbox's process id.
const (
	argsFD = 3 + iota
	gateFD
	infoFD
)

// checkHome checks Run.Home against the paths the sandbox shows (visible,
// the workspace among them): its file system would hide them or lie in a
// folder the sandbox cannot add to.
func checkHome(home string, visible []string) error {
	for _, v := range append(visible, "/tmp", socketPath) {
		if within(v, home) {
			return fmt.Errorf("sandbox: the run's home %s would hide %s, which the sandbox shows", home, v)
		}
	}
	for _, v := range append(visible, "/proc", "/dev") {
		if within(home, v) {
			return fmt.Errorf("sandbox: the run's home %s lies in %s, which the sandbox shows as it is", home, v)
		}
	}
	return nil
}

// withPath returns env with PATH set to path, replacing the caller's.
func withPath(env []string, path string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PATH=") {
			out = append(out, kv)
		}
	}
	return append(out, "PATH="+path)
}

// withProxy returns env with the proxy variables pointing at url, replacing
// any the caller set, and NO_PROXY empty.
func withProxy(env []string, url string) []string {
	out := make([]string, 0, len(env)+len(proxyVariables))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.EqualFold(name, "HTTPS_PROXY") && !strings.EqualFold(name, "HTTP_PROXY") &&
			!strings.EqualFold(name, "ALL_PROXY") && !strings.EqualFold(name, "NO_PROXY") {
			out = append(out, kv)
		}
	}
	for _, name := range proxyVariables {
		if strings.EqualFold(name, "NO_PROXY") {
			out = append(out, name+"=")
		} else {
			out = append(out, name+"="+url)
		}
	}
	return out
}

// argsFile returns an open, already removed file holding args separated by
// NUL bytes, positioned at its start, for bwrap's --args. A file rather
// than a pipe: nothing has to write while bwrap reads, whatever the size.
func argsFile(dir string, args []string) (*os.File, error) {
	f, err := os.CreateTemp(dir, "bwrap-args-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	_ = os.Remove(f.Name())
	var b strings.Builder
	for _, a := range args {
		b.WriteString(a)
		b.WriteByte(0)
	}
	if _, err := io.WriteString(f, b.String()); err != nil {
		f.Close()
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	return f, nil
}
