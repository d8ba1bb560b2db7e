package gitrepo

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"strconv"
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
	step  string
	dir   string
	home  string
	cred  *credential // nil: a command that needs no credentials gets none
	stdin string
}

// Git's own environment. Why an extra header rather than GIT_ASKPASS: the
// header needs no helper program on disk, git adds it only to requests for
// the URL it is scoped to (http.<url>.extraHeader matches scheme, host,
// port and path prefix), so a URL rewritten or redirected elsewhere does
// not receive it, and it never involves git's credential helpers, one of
// which ("store") would write the secret to a file. Why the environment
// rather than -c: command lines are visible to every user in ps; a
// process's environment only to its own user.
//
// Credentials are given only to http and https remotes: git passes the
// GIT_CONFIG_VALUE_n variables on to the processes it starts, and for a
// local or file:// remote those include the remote repository's hooks.
func (r *Repositories) environ(home string, cred *credential) []string {
	env := []string{
		"PATH=" + r.path,
		// ssh asks for passwords and unknown host keys on the terminal,
		// bypassing GIT_TERMINAL_PROMPT; a server must fail instead.
		"GIT_SSH_COMMAND=ssh -o BatchMode=yes",
	}
	env = append(env, r.cfg.Env...) // may replace the two above
	env = append(env,
		// The server user's ~/.gitconfig, the system gitconfig and
		// their credential helpers would change what git does and might
		// hand it other secrets: an empty home, and neither file read.
		"HOME="+home,
		"XDG_CONFIG_HOME="+home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_TERMINAL_PROMPT=0",
		// The "ext" and "fd" transports run commands named in the URL.
		"GIT_ALLOW_PROTOCOL=file:git:http:https:ssh",
		// Git's messages in English: isPermanent reads them.
		"LC_ALL=C",
		"GIT_AUTHOR_NAME="+r.cfg.AuthorName,
		"GIT_AUTHOR_EMAIL="+r.cfg.AuthorEmail,
		"GIT_COMMITTER_NAME="+r.cfg.AuthorName,
		"GIT_COMMITTER_EMAIL="+r.cfg.AuthorEmail,
	)
	// Configuration given this way outranks the repository's own
	// .git/config, which the agent could have edited.
	config := [][2]string{
		// Hooks are the repository's code; none runs on the server's
		// commits and pushes (commit --no-verify skips only some).
		{"core.hooksPath", os.DevNull},
		{"commit.gpgSign", "false"},
	}
	if cred != nil {
		config = append(config, [2]string{"http." + cred.url + ".extraHeader", cred.header()})
	}
	env = append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(len(config)))
	for i, kv := range config {
		n := strconv.Itoa(i)
		env = append(env, "GIT_CONFIG_KEY_"+n+"="+kv[0], "GIT_CONFIG_VALUE_"+n+"="+kv[1])
	}
	return env
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
	ctx, cancel := context.WithTimeout(parent, r.cfg.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.git, args...)
	cmd.Dir = spec.dir
	cmd.Env = r.environ(spec.home, spec.cred)
	if spec.stdin != "" {
		cmd.Stdin = strings.NewReader(spec.stdin)
	}
	var stdout bytes.Buffer
	stderr := &tailBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	// A killed git can leave a child (git-remote-https, ssh) holding the
	// pipes; this bounds how long Wait waits for them.
	cmd.WaitDelay = 10 * time.Second
	setProcessGroup(cmd)

	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	name := args[0]
	if err == nil {
		r.cfg.Logger.Debug("gitrepo: git", slog.String("step", spec.step), slog.String("command", name), slog.Duration("took", took))
		return stdout.String(), nil
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
		return "", engine.Permanent(e)
	}
	return "", e
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
