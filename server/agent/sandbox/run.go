package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	// Env is the program's whole environment, as "NAME=value".
	Env []string
	// Dir is the workspace: writable, bound at its own path, and the
	// working folder.
	Dir string
	// Home is the run's home folder: writable, bound at its own path.
	Home string
	// Private is a folder of the run that the sandbox does not show: the
	// proxy's socket and bwrap's argument file are made there. It must
	// not be Home, Dir or inside them.
	Private string
	// JobID names the job in the proxy's log lines.
	JobID string
	// Logger receives the proxy's events; refusals are at Warn. The
	// default discards them.
	Logger *slog.Logger
}

// Cmd is a sandboxed program ready to start: bwrap, which starts the
// program in the sandbox. Set Stdin, Stdout and Stderr on the embedded
// exec.Cmd, then Start and Wait as usual, and Close when the run is over.
//
// bwrap runs in a process group of its own, and with the context given to
// Command, Cancel kills that group: bwrap's death ends the sandbox. Its
// exit status is the program's, or 128 plus the signal's number when a
// signal ended the program.
type Cmd struct {
	*exec.Cmd
	proxy *proxy
	args  *os.File
}

// Close stops the run's proxy, closing its tunnels and removing its socket,
// and releases what Command opened. Call it after Wait.
func (c *Cmd) Close() error {
	var err error
	if c.proxy != nil {
		err = c.proxy.Close()
	}
	return errors.Join(err, c.args.Close())
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
	if err := s.checkReadOnlyLinks(); err != nil {
		return nil, err
	}
	if within(r.Private, r.Dir) || within(r.Private, r.Home) {
		return nil, fmt.Errorf("sandbox: the run's private folder %s lies in the workspace or the home, which the program sees", r.Private)
	}
	// bwrap would fail on them too, but with an exit status that looks
	// like the program's.
	for _, p := range []string{r.Dir, r.Home} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
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

	_, visible := rootArgs("")
	visible = append(append(visible, s.readOnly...), r.Dir, r.Home)
	// A copy: runs append to it concurrently.
	m := mounts{readOnly: slices.Clone(s.readOnly), writable: []string{r.Dir, r.Home}, dir: r.Dir}
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
	opts := options("", m)
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		opts = append(opts, "--setenv", name, value)
	}
	f, err := argsFile(r.Private, opts)
	if err != nil {
		if p != nil {
			p.Close()
		}
		return nil, err
	}

	closeInheritedOnExec()
	cmd := exec.CommandContext(ctx, s.bwrap, append([]string{"--args", "3", "--"}, argv...)...)
	// Empty, not nil: nil would give bwrap the server's environment.
	cmd.Env = []string{}
	cmd.ExtraFiles = []*os.File{f} // descriptor 3
	cmd.SysProcAttr = procgroup.Attr()
	cmd.Cancel = func() error { return procgroup.Kill(cmd.Process) }
	return &Cmd{Cmd: cmd, proxy: p, args: f}, nil
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
