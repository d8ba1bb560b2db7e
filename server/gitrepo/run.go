package gitrepo

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/engine"
)

// Error is a git command that failed. Open and Publish return it, wrapped
// with engine.Permanent when retrying cannot help; errors.As finds it
// either way.
type Error struct {
	// Step is what was being done: "clone", "checkout", "commit",
	// "compare" or "push" (and "version" in New).
	Step string
	// Command is the git subcommand that failed, for example "ls-remote".
	Command string
	// Detail is git's error output, with any credential scrubbed out and
	// cut to a readable length, or what went wrong without it.
	Detail string
	// Err is the underlying failure: an exit status, a timeout or the
	// context's error.
	Err error
}

// Error names the step first, since an operator reads it as a job's
// failure reason.
func (e *Error) Error() string {
	msg := "gitrepo: " + e.Step + " failed (git " + e.Command + ")"
	switch {
	case e.Detail != "":
		return msg + ": " + e.Detail
	case e.Err != nil:
		return msg + ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying failure.
func (e *Error) Unwrap() error { return e.Err }

// credential is what Config.Credentials gave for one repository.
type credential struct {
	url, username, password string
}

// header is the Authorization header git sends.
func (c *credential) header() string {
	return "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(c.username+":"+c.password))
}

// secrets are the strings scrub removes from anything shown.
func (c *credential) secrets() []string {
	if c == nil {
		return nil
	}
	return []string{
		c.password,
		base64.StdEncoding.EncodeToString([]byte(c.username + ":" + c.password)),
		base64.RawStdEncoding.EncodeToString([]byte(c.username + ":" + c.password)),
	}
}

// cmdSpec is how one git command runs.
type cmdSpec struct {
	step string
	dir  string // the folder git runs in
	home string
	// gitDir and workTree name the repository outright, for the commands
	// that work on one: a workspace's, or a mirror's (bare, no workTree);
	// empty for the others (version, check-ref-format, ls-remote, init),
	// which must find none.
	gitDir, workTree string
	// url is the remote repository, if the command may talk to it.
	url   string
	cred  *credential // nil: a command that needs no credentials gets none
	stdin string
}

// credentialFor asks Config.Credentials for repo's credentials, if it is
// an http or https URL; nil means none.
func (r *Repositories) credentialFor(ctx context.Context, repo string) (*credential, error) {
	if r.cfg.Credentials == nil || !isHTTPURL(repo) {
		return nil, nil
	}
	user, pass, err := r.cfg.Credentials(ctx, repo)
	if err != nil {
		return nil, fmt.Errorf("gitrepo: getting the credentials for %s: %w", redactURL(repo), err)
	}
	if user == "" && pass == "" {
		return nil, nil
	}
	if strings.Contains(user, ":") {
		// Basic authentication cannot carry it; the value is not shown.
		return nil, engine.Permanent(fmt.Errorf("gitrepo: the credentials for %s have a user name with ':'", redactURL(repo)))
	}
	return &credential{url: repo, username: user, password: pass}, nil
}

// run runs git with args and returns its standard output.
func (r *Repositories) run(parent context.Context, spec cmdSpec, args ...string) (string, error) {
	var stdout bytes.Buffer
	if err := r.runTo(parent, spec, &stdout, args...); err != nil {
		return "", err
	}
	return stdout.String(), nil
}

// runTo runs git with args, its standard output written to stdout as git
// writes it, for output too large to hold.
func (r *Repositories) runTo(parent context.Context, spec cmdSpec, stdout io.Writer, args ...string) error {
	ctx, cancel := context.WithTimeout(parent, r.cfg.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.git, args...)
	cmd.Dir = spec.dir
	cmd.Env = r.environ(spec)
	if spec.stdin != "" {
		cmd.Stdin = strings.NewReader(spec.stdin)
	}
	stderr := &tailBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// A killed git can leave a child (git-remote-https, ssh) holding the
	// pipes; this bounds how long Wait waits for them.
	cmd.WaitDelay = 10 * time.Second
	setProcessGroup(cmd)

	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	name := args[0]
	for i := 0; name == "-c" && i+2 < len(args); i += 2 {
		name = args[i+2] // the subcommand, after "-c key=value"s
	}
	if err == nil {
		r.cfg.Logger.Debug("gitrepo: git", slog.String("step", spec.step), slog.String("command", name), slog.Duration("took", took))
		return nil
	}

	secrets := spec.cred.secrets()
	e := &Error{Step: spec.step, Command: name, Err: err}
	switch {
	case parent.Err() != nil:
		e.Err = parent.Err()
	case ctx.Err() != nil:
		e.Err = fmt.Errorf("timed out after %s: %w", r.cfg.Timeout, ctx.Err())
	default:
		e.Detail = cut(scrub(stderr.String(), secrets))
		if e.Detail == "" {
			e.Detail = err.Error()
		} else {
			e.Detail += " (" + err.Error() + ")"
		}
	}
	r.cfg.Logger.Debug("gitrepo: git failed", slog.String("step", spec.step), slog.String("command", name),
		slog.Duration("took", took), slog.String("error", e.Error()))
	if e.Detail != "" && isPermanent(e.Detail) {
		return engine.Permanent(e)
	}
	return e
}

// permanentRE matches git's messages for failures that a retry cannot
// mend: refused credentials, a repository or ref that does not exist, a
// push the remote's rules refuse. Network failures are left out, so that
// the job is tried again.
var permanentRE = regexp.MustCompile(`(?i)` + strings.Join([]string{
	`authentication failed`,
	`could not read (username|password)`,
	`terminal prompts disabled`,
	`returned error: (401|403|404)\b`,
	`repository (.*)?not found`,
	`does not appear to be a git repository`,
	`not found in upstream`,
	`couldn't find remote ref`,
	`hook declined`,
	`protected branch`,
	`not allowed to (push|force)`,
	`permission denied \(publickey`,
	`host key verification failed`,
}, "|"))

func isPermanent(stderr string) bool { return permanentRE.MatchString(stderr) }

var (
	authHeaderRE = regexp.MustCompile(`(?i)(authorization:\s*)(?:(?:basic|bearer|token)\s+)?[^\s;]+`)
	userinfoRE   = regexp.MustCompile(`(://)[^/@\s'"]+@`)
)

// scrub removes the credentials from s, and anything that looks like one,
// so that no error or log line shows them even if a server echoes them.
func scrub(s string, secrets []string) string {
	for _, secret := range secrets {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, "[REDACTED]")
		}
	}
	s = authHeaderRE.ReplaceAllString(s, "${1}[REDACTED]")
	return userinfoRE.ReplaceAllString(s, "${1}[REDACTED]@")
}

// maxDetail bounds the git output kept in an error: enough for the lines
// that explain a failure, not a whole transcript.
const maxDetail = 1000

// cut makes git's error output one readable line: hints and blank lines
// dropped, the rest joined; if still long, its start and end are kept,
// since git puts the cause first and its verdict last.
func cut(s string) string {
	var lines []string
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "hint:") {
			continue
		}
		lines = append(lines, line)
	}
	out := strings.Join(lines, "; ")
	if r := []rune(out); len(r) > maxDetail {
		out = string(r[:maxDetail/4]) + " … " + string(r[len(r)-maxDetail*3/4:])
	}
	return out
}

// tailBuffer keeps the last max bytes written to it: git's verdict comes
// last, and a chatty remote must not grow memory without bound.
type tailBuffer struct {
	buf []byte
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.max {
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-b.max:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string { return string(b.buf) }
