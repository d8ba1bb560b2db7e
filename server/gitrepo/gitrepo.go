// Package gitrepo gives the job engine its workspaces: a private clone of a
// project's repository on the job's branch, which the agent edits and
// Publish commits and pushes. It drives the git command-line tool, so it
// speaks the transports git does (https, http, ssh, git and local paths)
// and adds no dependency to the module.
//
// The agent is not trusted: a model, or a third-party program with a shell.
// It gets the working tree alone, as plain files. The repository's git
// directory lies beside the tree, in the workspace's private folder, and
// every git command names the git directory and the working tree outright
// (GIT_DIR, GIT_WORK_TREE), so git never looks for a .git in the tree:
// nothing the agent writes there is read as configuration, hooks or
// another repository. Publish refuses a tree holding what git would take
// for more than content (nested repositories, symbolic links out of the
// tree or into a git directory, gitlinks), and a branch that would change
// more files or bytes than a job may publish (Config.MaxPublishFiles and
// MaxPublishBytes); see Publish.
//
// Git runs with an environment built from nothing: the server's own
// environment (which holds its secrets) never reaches git, and neither do
// the server user's ~/.gitconfig, the system gitconfig and gitattributes
// or their credential helpers. On top of that, settings through which a
// config file could make git run a program (hooks, core.fsmonitor,
// credential helpers, core.askPass, core.gitProxy, core.sshCommand,
// signing, submodules) or send the push elsewhere (a proxy) are forced
// through the environment, which outranks every config file.
//
// Credentials for http(s) remotes come from Config.Credentials, for Open
// and again for each push, and travel to git only in its environment; they
// are never written to disk, to the remote URL, to a command line, to a
// log line or to an error.
//
// Each workspace is a folder of Config.Dir held by its process (see
// rundir); New removes those whose process died without closing them.
// Workspaces are built from a mirror of the repository that Config.Dir
// keeps, fetched into before each job, so that a job fetches what changed
// since the last one rather than the whole history; the mirror lies out of
// the agent's reach like the git directory, and no workspace names it. See
// MirrorFolder.
package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/internal/rundir"
)

// Defaults of Config.
const (
	DefaultAuthorName  = "Docs Agent"
	DefaultAuthorEmail = "docs-agent@localhost"
	DefaultTimeout     = 10 * time.Minute
	// DefaultMaxPublishFiles is the most files a job's branch may change
	// against its base. A documentation change touches tens of pages, a
	// restructuring hundreds; a thousand leaves room for moving five
	// hundred pages (each move is a deletion and an addition).
	DefaultMaxPublishFiles = 1000
	// DefaultMaxPublishBytes is the most bytes of files a job's branch
	// may add or change against its base. Pages are text of a few KiB;
	// 20 MiB holds every page of a large site rewritten, with a few dozen
	// screenshots, and stays far below what a runaway agent writes.
	DefaultMaxPublishBytes = 20 << 20
)

// Config configures Repositories. Every field is optional.
//
// There is deliberately no shallow-clone option: workspaces hold the full
// history of the refs a job needs, and only those. Publish needs the
// history shared by the job's branch and its base (their merge base) to
// tell whether the branch still proposes anything, and pushing from a
// shallow clone fails against servers that refuse shallow updates. The
// history is fetched once into the repository's mirror and linked, not
// copied, into each workspace (see MirrorFolder); fetching only the job's
// branch and base, and no tags, skips every other branch and tag.
type Config struct {
	// Git is the git binary, a path or a name looked up in PATH. Default
	// "git". New fails if it cannot run it, or if it is older than 2.32
	// (the first to honour GIT_CONFIG_GLOBAL, which keeps the server
	// user's own git configuration out).
	Git string
	// Dir is the folder under which workspaces are made, each in its own
	// private (0700) folder named docsapi-workspace-*, and where the
	// repositories' mirrors are kept, in its folder MirrorFolder. Default
	// os.TempDir(); a folder that survives restarts keeps the mirrors, and
	// the first job of each repository after a restart then fetches only
	// what changed. Workspaces link the mirrors' files, so the folder must
	// be on one file system (else they are copied). Processes may share it:
	// New removes the workspaces whose process ended without removing them
	// (killed, say), and no other; the mirrors are locked while in use.
	Dir string
	// AuthorName and AuthorEmail sign the commits, as author and
	// committer. Defaults DefaultAuthorName and DefaultAuthorEmail.
	AuthorName  string
	AuthorEmail string
	// Credentials, if set, is asked for the username and password (for
	// example "x-access-token" and a token) of an http or https
	// repository, once for Open and again before each push, so that a
	// token that expired while the agent worked is fetched afresh. Both
	// empty means none. They are sent as a Basic Authorization header to that
	// repository's URL only. Other transports (ssh, local paths, file://)
	// never receive them.
	Credentials func(ctx context.Context, repository string) (username, password string, err error)
	// Timeout bounds every git command. Default DefaultTimeout.
	Timeout time.Duration
	// Env adds variables, each "KEY=value", to git's otherwise minimal
	// environment: what a deployment needs to reach its remotes, such as
	// HTTPS_PROXY, NO_PROXY, GIT_SSL_CAINFO, GIT_SSH_COMMAND,
	// GIT_PROXY_COMMAND or PATH. HOME, the GIT_CONFIG variables and those
	// that locate a repository (GIT_DIR, GIT_WORK_TREE, ...) are refused;
	// the others this package sets for isolation (GIT_TERMINAL_PROMPT,
	// LC_ALL, ...) win over Env.
	Env []string
	// MirrorIdle is how long a mirror may go without a job fetching into
	// it before it is removed (its repository's next job then makes it
	// anew): after a fetch, at most once a day, the idle mirrors in Dir
	// are removed. Default DefaultMirrorIdle; negative keeps every mirror.
	MirrorIdle time.Duration
	// MaxPublishFiles and MaxPublishBytes bound what a job may publish:
	// the files its branch would change against its base (added, modified
	// or deleted, each path once) and the bytes of the files it would add
	// or change. Publish refuses a branch past either, permanently, naming
	// the limit and the numbers, and commits and pushes nothing. Defaults
	// DefaultMaxPublishFiles and DefaultMaxPublishBytes; negative values
	// are refused.
	MaxPublishFiles int
	MaxPublishBytes int64
	// Logger receives one debug line per git command (step, command,
	// duration, outcome) and one info line per Open and Publish; never an
	// environment, a credential or file contents. Default: discard.
	Logger *slog.Logger
}

// Repositories opens workspaces; it implements engine.Repositories. It is
// immutable after New and safe for concurrent use.
type Repositories struct {
	cfg  Config
	git  string // resolved path of the git binary
	path string // PATH for git, captured once at New
}

var _ engine.Repositories = (*Repositories)(nil)

// minGit is the oldest git that honours every variable the environment
// relies on (GIT_CONFIG_COUNT arrived in 2.31, GIT_CONFIG_GLOBAL in 2.32).
var minGit = [2]int{2, 32}

// New checks cfg, fills in its defaults and makes sure git runs. It removes
// the workspaces that dead processes left in Config.Dir, logging each.
func New(cfg Config) (*Repositories, error) {
	if cfg.Git == "" {
		cfg.Git = "git"
	}
	if cfg.Dir == "" {
		cfg.Dir = os.TempDir()
	}
	if cfg.AuthorName == "" {
		cfg.AuthorName = DefaultAuthorName
	}
	if cfg.AuthorEmail == "" {
		cfg.AuthorEmail = DefaultAuthorEmail
	}
	if cfg.Timeout < 0 {
		return nil, errors.New("gitrepo: Config.Timeout must not be negative")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MirrorIdle == 0 {
		cfg.MirrorIdle = DefaultMirrorIdle
	}
	if cfg.MaxPublishFiles < 0 || cfg.MaxPublishBytes < 0 {
		return nil, fmt.Errorf("gitrepo: Config.MaxPublishFiles (%d) and MaxPublishBytes (%d) must not be negative", cfg.MaxPublishFiles, cfg.MaxPublishBytes)
	}
	if cfg.MaxPublishFiles == 0 {
		cfg.MaxPublishFiles = DefaultMaxPublishFiles
	}
	if cfg.MaxPublishBytes == 0 {
		cfg.MaxPublishBytes = DefaultMaxPublishBytes
	}
	for _, s := range []string{cfg.AuthorName, cfg.AuthorEmail} {
		if strings.ContainsAny(s, "<>\n\x00") {
			return nil, fmt.Errorf("gitrepo: Config author %q has characters git cannot put in a commit", s)
		}
	}
	for i, kv := range cfg.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			// Not quoted: the entry may hold a value meant to stay private.
			return nil, fmt.Errorf("gitrepo: Config.Env[%d] is not KEY=value", i)
		}
		if k == "HOME" || strings.HasPrefix(strings.ToUpper(k), "GIT_CONFIG") {
			return nil, fmt.Errorf("gitrepo: Config.Env may not set %s: it would undo the isolation from the host's git configuration", k)
		}
		if slices.Contains(repositoryVars, strings.ToUpper(k)) {
			return nil, fmt.Errorf("gitrepo: Config.Env may not set %s: the workspace chooses which repository git uses", k)
		}
	}
	cfg.Env = append([]string(nil), cfg.Env...)
	if fi, err := os.Stat(cfg.Dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("gitrepo: Config.Dir %q is not a folder", cfg.Dir)
	}
	// Absolute, since git runs in folders of its own and is given paths
	// under it.
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("gitrepo: Config.Dir: %w", err)
	}
	cfg.Dir = dir
	if err := makeMirrorFolder(cfg.Dir); err != nil {
		return nil, fmt.Errorf("gitrepo: %w", err)
	}

	bin, err := exec.LookPath(cfg.Git)
	if err != nil {
		return nil, fmt.Errorf("gitrepo: cannot find git (Config.Git %q): %w", cfg.Git, err)
	}
	r := &Repositories{cfg: cfg, git: bin, path: os.Getenv("PATH")}
	r.sweep()
	// A folder of the workspaces' kind: should this process die here, the
	// next New removes it.
	check, err := rundir.New(cfg.Dir, workspacePrefix)
	if err != nil {
		return nil, fmt.Errorf("gitrepo: %w", err)
	}
	defer check.Remove()
	home := check.Path()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := r.run(ctx, cmdSpec{step: "version", dir: home, home: home}, "version")
	if err != nil {
		return nil, fmt.Errorf("gitrepo: cannot run git (Config.Git %q): %w", cfg.Git, err)
	}
	if v, ok := parseVersion(out); !ok || v[0] < minGit[0] || v[0] == minGit[0] && v[1] < minGit[1] {
		return nil, fmt.Errorf("gitrepo: %s is %q; version %d.%d or newer is needed", bin, strings.TrimSpace(out), minGit[0], minGit[1])
	}
	return r, nil
}

// workspacePrefix begins the names of the workspace folders in Config.Dir.
// Releases before the folders were locked named theirs "docsapi-git-…";
// a new name keeps New from sweeping the live workspaces of such a
// release running beside this one during an upgrade.
const workspacePrefix = "docsapi-workspace"

// repositoryVars are the variables that tell git where a repository and
// its parts are: the workspace sets them, or must leave them unset.
var repositoryVars = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CEILING_DIRECTORIES", "GIT_NAMESPACE",
}

// sweep removes the workspaces that runs of dead processes left in
// Config.Dir: a process killed with SIGKILL, or a machine that lost power,
// closes nothing. Workspaces of live processes sharing the folder stay
// (see rundir). A workspace that cannot be removed is logged, not fatal.
func (r *Repositories) sweep() {
	removed, err := rundir.Sweep(r.cfg.Dir, workspacePrefix)
	for _, path := range removed {
		r.cfg.Logger.Info("gitrepo: removed the workspace of a run that ended without closing it", slog.String("path", path))
	}
	if err != nil {
		r.cfg.Logger.Warn("gitrepo: removing the workspaces of ended runs", slog.Any("error", err))
	}
}

var versionRE = regexp.MustCompile(`git version (\d+)\.(\d+)`)

func parseVersion(s string) ([2]int, bool) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return [2]int{}, false
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return [2]int{major, minor}, true
}

// Open makes a workspace of spec.Repository in a new private folder and
// checks out spec.Branch: the remote branch if it exists, so that a retry
// or a follow-up continues from what an earlier run pushed, otherwise a new
// branch from spec.Ref ("" for the remote's default branch). A branch or
// tag name is accepted as spec.Ref. The workspace is made from the
// repository's mirror, into which Open first fetches those refs. The
// folder is removed if Open fails. The repository's git directory goes
// beside the working tree, which is left without a .git.
//
// Missing repositories and refs, and refused credentials, are returned as
// engine.Permanent errors; network failures are not.
func (r *Repositories) Open(ctx context.Context, spec engine.RepoSpec) (_ engine.Workspace, err error) {
	if err := validateRepository(spec.Repository); err != nil {
		return nil, engine.Permanent(err)
	}
	folder, err := rundir.New(r.cfg.Dir, workspacePrefix)
	if err != nil {
		return nil, fmt.Errorf("gitrepo: making the workspace folder: %w", err)
	}
	root := folder.Path()
	w := &Workspace{
		repos:  r,
		url:    spec.Repository,
		shown:  redactURL(spec.Repository),
		folder: folder,
		home:   filepath.Join(root, "home"),
		gitDir: filepath.Join(root, "git"),
		dir:    filepath.Join(root, "tree"),
	}
	defer func() {
		if err != nil {
			if cerr := w.Close(); cerr != nil {
				r.cfg.Logger.Warn("gitrepo: removing a failed workspace", slog.Any("error", cerr))
			}
		}
	}()
	if err := os.Mkdir(w.home, 0o700); err != nil {
		return nil, fmt.Errorf("gitrepo: making the workspace folder: %w", err)
	}
	if err := w.checkRefNames(ctx, spec); err != nil {
		return nil, err
	}
	if err := w.clone(ctx, spec); err != nil {
		return nil, err
	}
	// Publish compares with this, and puts the config back: see Publish.
	if w.opened, err = recordGitDir(w.gitDir); err != nil {
		return nil, fmt.Errorf("gitrepo: reading the clone's git directory: %w", err)
	}
	r.cfg.Logger.Info("gitrepo: workspace opened", slog.String("repository", w.shown),
		slog.String("ref", spec.Ref), slog.String("branch", w.branch), slog.Bool("continued", w.remoteTip != ""))
	return w, nil
}

// validateRepository refuses what git could mistake for an option, what
// would carry a secret into .git/config, and what is not a repository at all.
func validateRepository(repo string) error {
	switch {
	case strings.TrimSpace(repo) == "":
		return errors.New("gitrepo: the repository is empty")
	case strings.HasPrefix(repo, "-"):
		return fmt.Errorf("gitrepo: the repository %q starts with '-'", repo)
	case strings.ContainsAny(repo, "\x00\n\r"):
		return errors.New("gitrepo: the repository has control characters")
	}
	if u, err := url.Parse(repo); err == nil && isHTTP(u) && u.User != nil {
		// Kept in the URL, a token would land in .git/config and in
		// git's messages; Config.Credentials is the way to give one.
		return fmt.Errorf("gitrepo: the repository %s has credentials in its URL; give them through Config.Credentials", redactURL(repo))
	}
	return nil
}

// isHTTPURL reports whether repo is an http or https URL, the only kind
// that receives credentials.
func isHTTPURL(repo string) bool {
	u, err := url.Parse(repo)
	return err == nil && isHTTP(u)
}

func isHTTP(u *url.URL) bool {
	return (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// redactURL is repo fit for logs and errors: without a password.
func redactURL(repo string) string {
	if u, err := url.Parse(repo); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			return u.Redacted()
		}
		if isHTTP(u) {
			// A lone https user name is often a token.
			u.User = url.User("xxxxx")
			return u.String()
		}
	}
	return repo
}
