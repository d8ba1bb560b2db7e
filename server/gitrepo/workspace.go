package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/docsapi/docsapi-go/server/engine"
)

// defaultMessage is the commit message when Publish is given none: git
// refuses an empty one.
const defaultMessage = "Update the documentation"

// Workspace is one run's clone; it implements engine.Workspace. Its
// methods are safe for concurrent use, though a run calls them in turn.
type Workspace struct {
	repos *Repositories
	url   string // the repository, as given: the one place git pushes to
	shown string // the repository as logs and errors show it
	root  string // the private folder holding everything below
	home  string // git's empty HOME
	dir   string // the working tree

	branch string // the job's branch, short name
	base   string // commit id of the ref's tip when Open ran

	// config is .git/config as Open left it; see Publish.
	config []byte

	mu        sync.Mutex
	remoteTip string // commit id of the remote branch as last seen; "" if absent
	closed    bool
}

var _ engine.Workspace = (*Workspace)(nil)

// Dir is the working tree, where the agent edits files.
func (w *Workspace) Dir() string { return w.dir }

func (w *Workspace) git(ctx context.Context, step string, cred *credential, args ...string) (string, error) {
	return w.repos.run(ctx, cmdSpec{step: step, dir: w.dir, home: w.home, cred: cred}, args...)
}

// checkRefNames refuses names git would read as options or reject later,
// before anything touches the network.
func (w *Workspace) checkRefNames(ctx context.Context, spec engine.RepoSpec) error {
	branch := strings.TrimPrefix(spec.Branch, "refs/heads/")
	if branch == "" {
		return engine.Permanent(errors.New("gitrepo: the branch is empty"))
	}
	w.branch = branch
	for _, name := range []string{branch, shortRef(spec.Ref)} {
		if name == "" {
			continue
		}
		if strings.HasPrefix(name, "-") {
			return engine.Permanent(fmt.Errorf("gitrepo: the branch or ref %q starts with '-'", name))
		}
		spec := cmdSpec{step: "checkout", dir: w.root, home: w.home}
		if _, err := w.repos.run(ctx, spec, "check-ref-format", "refs/heads/"+name); err != nil {
			if ctx.Err() != nil {
				return err
			}
			return engine.Permanent(fmt.Errorf("gitrepo: %q is not a valid branch or ref name", name))
		}
	}
	return nil
}

// shortRef is ref without the refs/heads/ or refs/tags/ that a caller may
// have written: git clone --branch wants the short name.
func shortRef(ref string) string {
	if s, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
		return s
	}
	return strings.TrimPrefix(ref, "refs/tags/")
}

// remoteRefs is what ls-remote told about the remote.
type remoteRefs struct {
	head string            // the ref HEAD points to: the default branch
	ids  map[string]string // full ref name to commit id
}

func parseLsRemote(out string) remoteRefs {
	refs := remoteRefs{ids: map[string]string{}}
	for line := range strings.Lines(out) {
		left, name, ok := strings.Cut(strings.TrimSpace(line), "\t")
		if !ok {
			continue
		}
		if target, ok := strings.CutPrefix(left, "ref: "); ok {
			if name == "HEAD" {
				refs.head = target
			}
			continue
		}
		refs.ids[name] = left
	}
	return refs
}

// clone asks the remote which refs exist, clones the job's branch if it
// does and the base ref otherwise, and records the base commit.
func (w *Workspace) clone(ctx context.Context, spec engine.RepoSpec) error {
	cred, err := w.repos.credentialFor(ctx, w.url)
	if err != nil {
		return err
	}
	// One round trip says all Open needs to choose: does the branch
	// exist (continue it), what is the base (the ref, or HEAD's target),
	// and does the ref exist at all (a clear permanent error, rather than
	// the message of whichever git command would trip over it).
	ref := shortRef(spec.Ref)
	branchRef := "refs/heads/" + w.branch
	patterns := []string{"HEAD", branchRef}
	if ref != "" {
		patterns = append(patterns, "refs/heads/"+ref, "refs/tags/"+ref)
	}
	out, err := w.repos.run(ctx, cmdSpec{step: "clone", dir: w.root, home: w.home, cred: cred},
		append([]string{"ls-remote", "--symref", "--", w.url}, patterns...)...)
	if err != nil {
		return err
	}
	refs := parseLsRemote(out)

	var baseRef string
	switch {
	case ref != "" && refs.ids["refs/heads/"+ref] != "":
		baseRef = "refs/heads/" + ref
	case ref != "" && refs.ids["refs/tags/"+ref] != "":
		baseRef = "refs/tags/" + ref
	case ref != "":
		return engine.Permanent(fmt.Errorf("gitrepo: clone: the ref %q does not exist in %s", ref, w.shown))
	case strings.HasPrefix(refs.head, "refs/heads/") && refs.ids["HEAD"] != "":
		baseRef = refs.head
	case len(refs.ids) == 0:
		return engine.Permanent(fmt.Errorf("gitrepo: clone: %s has no commits", w.shown))
	default:
		return engine.Permanent(fmt.Errorf("gitrepo: clone: cannot tell the default branch of %s; give the job a ref", w.shown))
	}

	_, continued := refs.ids[branchRef]
	from := shortRef(baseRef)
	if continued {
		from = w.branch
	}
	// Full history of one branch: see Config on shallow clones. --no-tags
	// keeps a repository's many release tags out of every run.
	_, err = w.repos.run(ctx, cmdSpec{step: "clone", dir: w.root, home: w.home, cred: cred},
		"clone", "--quiet", "--single-branch", "--no-tags", "--branch", from, "--", w.url, w.dir)
	if err != nil {
		return err
	}

	if !continued {
		if w.base, err = w.revParse(ctx, "checkout", "HEAD"); err != nil {
			return err
		}
		_, err = w.git(ctx, "checkout", nil, "checkout", "--quiet", "--no-track", "-b", w.branch)
		return err
	}

	// Continuing: clone checked the branch out, tracking the remote one.
	// The base commit is needed too, to compare against.
	if w.remoteTip, err = w.revParse(ctx, "checkout", "HEAD"); err != nil {
		return err
	}
	local := baseRef
	if name, ok := strings.CutPrefix(baseRef, "refs/heads/"); ok {
		local = "refs/remotes/origin/" + name
	}
	if baseRef != branchRef {
		_, err = w.git(ctx, "clone", cred, "fetch", "--quiet", "--no-tags", "--", w.url, "+"+baseRef+":"+local)
		if err != nil {
			return err
		}
	}
	w.base, err = w.revParse(ctx, "checkout", local+"^{commit}")
	return err
}

func (w *Workspace) revParse(ctx context.Context, step, rev string) (string, error) {
	out, err := w.git(ctx, step, nil, "rev-parse", "--verify", "--quiet", rev)
	return strings.TrimSpace(out), err
}

// Publish stages every change in Dir (added, modified and deleted files),
// commits it if there is any, and pushes the branch unless the remote
// already has it. It reports whether the branch proposes changes: whether
// its tree differs from the tree of its merge base with the base commit.
// Trees, not commit ids, so that a branch whose commits were reverted
// proposes nothing; the merge base, not the base's tip, so that new
// commits on the base ref since the branch was made do not count as the
// branch's changes (as a pull request's diff does not show them).
//
// A branch that never reached the remote and proposes nothing is not
// pushed. A push the remote rejects as non-fast-forward means another run
// pushed to the job's branch meanwhile: an error, not a force push. After a
// failure Publish can be called again: the commit is already made, so the
// next call only pushes.
//
// Publish first rewrites .git/config as Open left it, and runs git with
// hooks off. The agent has had the run of the working tree, .git included,
// and the repository's configuration can run commands (core.fsmonitor,
// filters, core.sshCommand) or send the push and its credentials elsewhere
// (url.<base>.insteadOf, http.proxy, http.sslVerify).
func (w *Workspace) Publish(ctx context.Context, message string) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false, errors.New("gitrepo: Publish on a closed workspace")
	}
	if err := w.restoreConfig(); err != nil {
		return false, err
	}
	if _, err := w.git(ctx, "commit", nil, "add", "--all"); err != nil {
		return false, err
	}
	committed := false
	if _, err := w.git(ctx, "commit", nil, "diff", "--cached", "--quiet"); err != nil {
		var gerr *Error
		if !errors.As(err, &gerr) || ctx.Err() != nil || !isExitCode(gerr.Err, 1) {
			return false, err
		}
		// Exit status 1: something is staged.
		if strings.TrimSpace(message) == "" {
			message = defaultMessage
		}
		// The message through stdin: it may be long, multi-line, or
		// start with '-'.
		_, err := w.repos.run(ctx, cmdSpec{step: "commit", dir: w.dir, home: w.home, stdin: message},
			"commit", "--quiet", "--no-verify", "--file=-")
		if err != nil {
			return false, err
		}
		committed = true
	}
	head, err := w.revParse(ctx, "commit", "HEAD")
	if err != nil {
		return false, err
	}
	changed, err := w.proposes(ctx, head)
	if err != nil {
		return false, err
	}
	log := w.repos.cfg.Logger.With(slog.String("repository", w.shown), slog.String("branch", w.branch),
		slog.Bool("committed", committed), slog.Bool("changed", changed))
	if head == w.remoteTip || (w.remoteTip == "" && !changed) {
		log.Info("gitrepo: published; nothing to push")
		return changed, nil
	}
	cred, err := w.repos.credentialFor(ctx, w.url)
	if err != nil {
		return false, err
	}
	// To the URL itself, not to "origin", whose URL lives in the
	// config; HEAD, so that commits the agent made itself go too.
	_, err = w.git(ctx, "push", cred, "push", "--quiet", "--no-verify", "--", w.url, "HEAD:refs/heads/"+w.branch)
	if err != nil {
		var gerr *Error
		if errors.As(err, &gerr) && isNonFastForward(gerr.Detail) {
			gerr.Detail = "the branch " + w.branch + " moved on the remote: another run pushed to it; " + gerr.Detail
		}
		return false, err
	}
	w.remoteTip = head
	log.Info("gitrepo: published and pushed")
	return changed, nil
}

// proposes reports whether head's tree differs from the tree of its merge
// base with the base commit.
func (w *Workspace) proposes(ctx context.Context, head string) (bool, error) {
	since := w.base
	out, err := w.git(ctx, "compare", nil, "merge-base", w.base, head)
	switch {
	case err == nil:
		since = strings.TrimSpace(out)
	case ctx.Err() != nil:
		return false, err
	default:
		var gerr *Error
		if !errors.As(err, &gerr) || !isExitCode(gerr.Err, 1) {
			return false, err
		}
		// Exit status 1: unrelated histories; compare with the base.
	}
	out, err = w.git(ctx, "compare", nil, "rev-parse", since+"^{tree}", head+"^{tree}")
	if err != nil {
		return false, err
	}
	trees := strings.Fields(out)
	if len(trees) != 2 {
		return false, &Error{Step: "compare", Command: "rev-parse", Detail: fmt.Sprintf("unexpected output %q", out)}
	}
	return trees[0] != trees[1], nil
}

// restoreConfig puts back .git/config as Open wrote it. Removing first
// replaces a symbolic link rather than writing through it.
func (w *Workspace) restoreConfig() error {
	path := filepath.Join(w.dir, ".git", "config")
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("gitrepo: restoring the clone's configuration: %w", err)
	}
	if err := os.WriteFile(path, w.config, 0o600); err != nil {
		return fmt.Errorf("gitrepo: restoring the clone's configuration: %w", err)
	}
	return nil
}

func isExitCode(err error, code int) bool {
	var exit interface{ ExitCode() int }
	return errors.As(err, &exit) && exit.ExitCode() == code
}

func isNonFastForward(detail string) bool {
	return strings.Contains(detail, "[rejected]") &&
		(strings.Contains(detail, "non-fast-forward") || strings.Contains(detail, "fetch first"))
}

// Close removes the workspace's folder. It may be called more than once;
// once closed, a workspace cannot publish.
func (w *Workspace) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	err := os.RemoveAll(w.root)
	if err != nil {
		// The agent may have left folders without write permission, which
		// RemoveAll cannot empty; give them back and try again.
		_ = filepath.WalkDir(w.root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(path, 0o700)
			}
			return nil
		})
		err = os.RemoveAll(w.root)
	}
	if err != nil {
		return fmt.Errorf("gitrepo: removing the workspace: %w", err)
	}
	return nil
}
