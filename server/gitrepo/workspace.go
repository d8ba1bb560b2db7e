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
	"time"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/internal/rundir"
)

// defaultMessage is the commit message when Publish is given none: git
// refuses an empty one.
const defaultMessage = "Update the documentation"

// Workspace is one run's clone; it implements engine.Workspace. Its
// methods are safe for concurrent use, though a run calls them in turn.
//
// Its private folder holds three: home (git's empty HOME), git (the
// repository's git directory) and tree (the working tree, Dir). The agent
// gets the tree alone, plain files without a .git; see the package
// documentation.
type Workspace struct {
	repos  *Repositories
	url    string      // the repository, as given: the one place git pushes to
	shown  string      // the repository as logs and errors show it
	folder *rundir.Dir // the private folder, held while the workspace lives
	home   string      // git's empty HOME
	gitDir string      // the git directory, beside the tree
	dir    string      // the working tree

	branch string // the job's branch, short name
	base   string // commit id of the ref's tip when Open ran

	// opened is the git directory as Open left it; see Publish.
	opened gitDirState

	mu        sync.Mutex
	remoteTip string // commit id of the remote branch as last seen; "" if absent
	closed    bool
}

var _ engine.Workspace = (*Workspace)(nil)

// Dir is the working tree, where the agent edits files.
func (w *Workspace) Dir() string { return w.dir }

// spec is how git runs on the workspace's repository: with its git
// directory and working tree named outright.
func (w *Workspace) spec(step string, cred *credential) cmdSpec {
	return cmdSpec{step: step, dir: w.dir, home: w.home, gitDir: w.gitDir, workTree: w.dir, url: w.url, cred: cred}
}

// bare is how git runs before the repository exists, and for what needs
// none: in the empty home, finding no repository.
func (w *Workspace) bare(step string, cred *credential) cmdSpec {
	return cmdSpec{step: step, dir: w.home, home: w.home, url: w.url, cred: cred}
}

func (w *Workspace) git(ctx context.Context, step string, cred *credential, args ...string) (string, error) {
	return w.repos.run(ctx, w.spec(step, cred), args...)
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
		if _, err := w.repos.run(ctx, w.bare("checkout", nil), "check-ref-format", "refs/heads/"+name); err != nil {
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

// base is the ref a job on ref starts from: the branch or tag ref, or
// for "" the branch HEAD names. Open and CheckLocal both choose with it, so
// that a repository the start-up check accepts is one a job can clone.
func (refs remoteRefs) base(ref string) (string, Problem) {
	switch {
	case ref != "" && refs.ids["refs/heads/"+ref] != "":
		return "refs/heads/" + ref, 0
	case ref != "" && refs.ids["refs/tags/"+ref] != "":
		return "refs/tags/" + ref, 0
	case ref != "":
		return "", NoRef
	case strings.HasPrefix(refs.head, "refs/heads/") && refs.ids["HEAD"] != "":
		return refs.head, 0
	case len(refs.ids) == 0:
		return "", NoCommits
	}
	return "", NoDefaultBranch
}

// clone asks the remote which refs exist, brings the repository's mirror
// up to date with the ones the job needs (its branch if it exists, and its
// base), and builds the workspace's repository from the mirror.
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
	out, err := w.repos.run(ctx, w.bare("clone", cred),
		append([]string{"ls-remote", "--symref", "--", w.url}, patterns...)...)
	if err != nil {
		return err
	}
	refs := parseLsRemote(out)

	baseRef, problem := refs.base(ref)
	switch problem {
	case NoRef:
		return engine.Permanent(fmt.Errorf("gitrepo: clone: the ref %q does not exist in %s", ref, w.shown))
	case NoCommits:
		return engine.Permanent(fmt.Errorf("gitrepo: clone: %s has no commits", w.shown))
	case NoDefaultBranch:
		return engine.Permanent(fmt.Errorf("gitrepo: clone: cannot tell the default branch of %s; give the job a ref", w.shown))
	}
	_, continued := refs.ids[branchRef]
	want := []string{baseRef}
	if continued && baseRef != branchRef {
		want = append(want, branchRef)
	}

	m := w.repos.mirrorOf(w.url)
	err = w.build(ctx, m, cred, want, continued)
	var unread mirrorUnread
	if err == nil || ctx.Err() != nil || !errors.As(err, &unread) {
		return err
	}
	// The workspace could not read what the mirror gave it: if the mirror
	// is damaged, build again from a rebuilt one, once.
	broken, derr := m.discardIfBroken(ctx, w.home)
	if derr != nil {
		return errors.Join(err, derr)
	}
	if !broken {
		return err
	}
	for _, p := range []string{w.gitDir, w.dir} {
		if rerr := os.RemoveAll(p); rerr != nil {
			return errors.Join(err, rerr)
		}
	}
	w.base, w.remoteTip = "", ""
	return w.build(ctx, m, cred, want, continued)
}

// mirrorUnread is an error of a workspace reading the objects its mirror
// gave it: the mirror may be damaged.
type mirrorUnread struct{ error }

func (e mirrorUnread) Unwrap() error { return e.error }

// build makes the workspace's repository from the mirror m, which sync
// brings up to date with want (the base ref first, then the job's branch
// if it continues), and checks the job's branch out: the remote branch if
// continued, else a new one at the base. It leaves what a single-branch
// clone would: origin, the branch's base as origin's (a tag as itself), and
// the continued branch tracking origin's.
//
// The git directory is made empty and given the mirror's packs as hard
// links (see MirrorFolder). Of git's own ways: a clone from the mirror with
// --shared, or --reference, reads the mirror's objects through an
// alternates file, a path to the mirror in the workspace's git directory,
// and loses them if the mirror is repacked or rebuilt while the job runs;
// --dissociate copies them, the whole history again for every job, where
// links cost next to nothing; so does --no-hardlinks; a local clone links
// the mirror's whole object folder as this does, but leaves the mirror as
// origin; git worktree puts the workspace's git directory inside the
// mirror's.
func (w *Workspace) build(ctx context.Context, m *mirror, cred *credential, want []string, continued bool) error {
	// No templates: no sample hooks, and none would run anyway.
	_, err := w.repos.run(ctx, w.bare("clone", nil), "init", "--quiet", "--template=", "--object-format=sha1",
		"--initial-branch="+w.branch, "--separate-git-dir="+w.gitDir, "--", w.dir)
	if err != nil {
		return err
	}
	if err := removeGitFile(w.dir); err != nil {
		return err
	}
	ids, err := m.sync(ctx, w.home, cred, want, filepath.Join(w.gitDir, "objects", "pack"))
	if err != nil {
		return err
	}

	baseRef, from := want[0], want[0]
	base := ids[baseRef]
	w.base = base.commit
	start := base.commit
	if continued {
		from = "refs/heads/" + w.branch
		w.remoteTip = ids[from].commit
		start = w.remoteTip
	}
	// -z: ref names may hold what a line would not.
	var updates strings.Builder
	update := func(ref, id string) { updates.WriteString("update " + ref + "\x00" + id + "\x00\x00") }
	update("refs/heads/"+w.branch, start)
	update(trackingRef(baseRef), base.object)
	if from != baseRef {
		update(trackingRef(from), ids[from].object)
	}
	spec := w.spec("checkout", nil)
	spec.stdin = updates.String()
	if _, err := w.repos.run(ctx, spec, "update-ref", "--stdin", "-z"); err != nil {
		return mirrorUnread{err}
	}
	config := [][2]string{
		{"remote.origin.url", w.url},
		{"remote.origin.fetch", "+" + from + ":" + trackingRef(from)},
	}
	if continued {
		config = append(config, [2]string{"branch." + w.branch + ".remote", "origin"},
			[2]string{"branch." + w.branch + ".merge", from})
	}
	for _, kv := range config {
		if _, err := w.git(ctx, "checkout", nil, "config", "--", kv[0], kv[1]); err != nil {
			return err
		}
	}
	if _, err := w.git(ctx, "checkout", nil, "read-tree", "--reset", "-u", "HEAD"); err != nil {
		return mirrorUnread{err}
	}
	return w.settle(ctx)
}

// settle makes the fresh checkout's index tell every file from a later
// change by its time alone. Git compares times to the second, so a file as
// recent as the index (the whole checkout, when it takes less than a
// second) may have changed since without its time or size showing it: git
// reads it again at every later look (git add, and each command that writes
// the index), which would cost what the tree weighs after the agent has
// finished, and twice when the agent finishes within that second. settle
// dates those files a second before the index and has git record them: it
// reads them once, before the agent starts, and a file the agent then
// writes has a later time than the one recorded, however soon it does.
// Links keep their times: reading one again costs nothing.
func (w *Workspace) settle(ctx context.Context) error {
	index, err := os.Stat(filepath.Join(w.gitDir, "index"))
	if err != nil {
		return fmt.Errorf("gitrepo: dating the checkout: %w", err)
	}
	recent := index.ModTime().Unix()
	past := time.Unix(recent-1, 0)
	dated := false
	err = filepath.WalkDir(w.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err != nil || fi.ModTime().Unix() < recent {
			return err
		}
		dated = true
		return os.Chtimes(p, past, past)
	})
	if err != nil {
		return fmt.Errorf("gitrepo: dating the checkout: %w", err)
	}
	if !dated {
		return nil
	}
	_, err = w.git(ctx, "checkout", nil, "update-index", "-q", "--refresh")
	return err
}

// trackingRef is where a workspace keeps the remote's ref: a branch as
// origin's remote-tracking branch, a tag as itself.
func trackingRef(ref string) string {
	if name, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
		return "refs/remotes/origin/" + name
	}
	return ref
}

// removeGitFile removes the .git file that clone --separate-git-dir left in
// the tree, pointing at the git directory.
func removeGitFile(tree string) error {
	path := filepath.Join(tree, ".git")
	fi, err := os.Lstat(path)
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("it is a %s, not a file", fi.Mode().Type())
	}
	if err == nil {
		err = os.Remove(path)
	}
	if err != nil {
		return fmt.Errorf("gitrepo: removing the clone's .git file from the working tree: %w", err)
	}
	return nil
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
// The agent has had the run of the working tree, and Publish trusts
// nothing in it but its contents. Before it commits, it refuses, as a
// permanent error naming the path (a "publish refused" error), what git
// would treat as more than content: an entry named like .git anywhere
// (a nested repository), a symbolic link that is absolute, leaves the tree
// or leads into a git directory (links between the tree's own files are
// kept), and, once staged, a gitlink (submodule) that is new or changed.
// It refuses too, naming the limit and the numbers, a branch that would
// then change more files, or add or change more bytes, compared with its
// base, than Config.MaxPublishFiles and Config.MaxPublishBytes allow (see
// publishlimit.go).
//
// The git directory lies outside the tree, out of the agent's reach, and
// git runs with hooks, file system monitors, credential helpers and the
// like forced off and the push's proxy pinned (see the package
// documentation). For deployments that let an agent out of the tree all
// the same, Publish first rewrites the git directory's config as Open left
// it, since configuration can run commands or send the push and its
// credentials elsewhere (url.<base>.insteadOf, http.proxy), and refuses a
// git directory that now reads another one's configuration or objects
// (commondir, objects/info/alternates).
func (w *Workspace) Publish(ctx context.Context, message string) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false, errors.New("gitrepo: Publish on a closed workspace")
	}
	if err := w.opened.check(w.gitDir); err != nil {
		return false, publishError(err)
	}
	if err := w.opened.restoreConfig(w.gitDir); err != nil {
		return false, err
	}
	if err := checkTree(w.dir); err != nil {
		return false, publishError(err)
	}
	if _, err := w.git(ctx, "commit", nil, "add", "--all"); err != nil {
		return false, err
	}
	// Plumbing, which runs no external diff or textconv program;
	// --ignore-submodules=none, so that a .gitmodules in the tree cannot
	// hide a gitlink from the check.
	out, err := w.git(ctx, "commit", nil, "diff-index", "--cached", "--raw", "-z", "--no-renames", "--ignore-submodules=none", "HEAD", "--")
	if err != nil {
		return false, err
	}
	staged, err := checkStaged(out)
	if err != nil {
		return false, publishError(err)
	}
	committed := false
	if staged {
		// What this run adds to the branch is checked with what the
		// branch holds already: unstaged, the branch is what an earlier
		// run checked, or the base.
		if err := w.checkPublishLimits(ctx); err != nil {
			return false, publishError(err)
		}
		if strings.TrimSpace(message) == "" {
			message = defaultMessage
		}
		// The message through stdin: it may be long, multi-line, or
		// start with '-'.
		spec := w.spec("commit", nil)
		spec.stdin = message
		if _, err := w.repos.run(ctx, spec, "commit", "--quiet", "--no-verify", "--file=-"); err != nil {
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
	// config; HEAD, so that every commit on the branch goes.
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

// publishError makes a refusal a permanent error, since the same tree
// would be refused again; other errors (the tree could not be read) are
// returned as they are.
func publishError(err error) error {
	var r refusal
	if errors.As(err, &r) {
		return engine.Permanent(fmt.Errorf("gitrepo: publish refused: %w", err))
	}
	return fmt.Errorf("gitrepo: checking the workspace before publishing: %w", err)
}

// proposes reports whether head's tree differs from the tree of its merge
// base with the base commit.
func (w *Workspace) proposes(ctx context.Context, head string) (bool, error) {
	since, err := w.since(ctx, head)
	if err != nil {
		return false, err
	}
	out, err := w.git(ctx, "compare", nil, "rev-parse", since+"^{tree}", head+"^{tree}")
	if err != nil {
		return false, err
	}
	trees := strings.Fields(out)
	if len(trees) != 2 {
		return false, &Error{Step: "compare", Command: "rev-parse", Detail: fmt.Sprintf("unexpected output %q", out)}
	}
	return trees[0] != trees[1], nil
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
	if err := w.folder.Remove(); err != nil {
		return fmt.Errorf("gitrepo: removing the workspace: %w", err)
	}
	return nil
}
