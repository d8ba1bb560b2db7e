package gitrepo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/internal/rundir"
)

// MirrorFolder is the folder of Config.Dir that holds the mirrors: one bare
// repository per repository URL, which the server fetches into before each
// job and builds the job's workspace from, so that a job costs what changed
// since the last one rather than the whole history. Its name begins like no
// run folder's (docsapi-workspace-…, docsapi-agentrun-…), so no start-up
// sweep removes it. It must be private to the server's user: New refuses
// one that another user owns or can write, since whoever writes a mirror
// chooses what the next workspace holds.
//
// Each mirror is named by the SHA-256 of the repository URL, never by the
// URL, which comes from a job: no URL can name a path out of the folder.
// Beside each is its lock file, which is never removed.
//
// Workspaces are built from a mirror by hard-linking its packs into the
// workspace's own git directory: no copy, so the cost does not grow with
// the history, and no path to the mirror in the workspace (no alternates,
// no remote), so nothing the workspace's git or an agent reads leads back
// to it. A link is a second name of the same file, which the mirror may
// then drop (a repack) without the workspace losing it. Git never writes
// into a pack; an agent that could reach the workspace's git directory to
// do so (one run with its sandbox off) could write the mirror directly
// anyway. Workspace.build weighs the ways git itself offers.
const MirrorFolder = "docsapi-mirrors"

// mirror is the mirror of one repository.
type mirror struct {
	repos *Repositories
	url   string
	shown string
	dir   string // the bare repository
	lock  string // its lock file, beside it
}

// mirrorOf is the mirror of the repository url.
func (r *Repositories) mirrorOf(url string) *mirror {
	sum := sha256.Sum256([]byte(url))
	base := filepath.Join(r.cfg.Dir, MirrorFolder, hex.EncodeToString(sum[:]))
	return &mirror{repos: r, url: url, shown: redactURL(url), dir: base + ".git", lock: base + ".lock"}
}

// A mirror's refs are its bases and, while a workspace is built, the job's
// branch. A base (the ref jobs start from) is kept between jobs, so that
// the next fetch tells the remote what it need not send. A job's branch is
// dropped once its workspace has the packs (see dropJobRefs): kept, the
// mirror would gain a ref for every job ever continued, and every fetch
// offers the remote each ref's tip in its negotiation, most of them
// branches the remote deleted long ago. What such a branch brought stays
// in the mirror's packs (rolled packs keep unreachable objects), so a later
// follow-up fetches at most the commits the branch has beyond its base.
const (
	baseRefs = "refs/docsapi/base/"
	jobRefs  = "refs/docsapi/job/"
)

// mirrorRef is where the mirror keeps the remote's ref name, a base or a
// job's branch: under a hash of it, so that the remote's names never clash
// in the mirror (a branch "a" that was deleted, and "a/b" made later,
// cannot both be files), and no ref name becomes a path.
func mirrorRef(name string, base bool) string {
	sum := sha256.Sum256([]byte(name))
	if base {
		return baseRefs + hex.EncodeToString(sum[:])
	}
	return jobRefs + hex.EncodeToString(sum[:])
}

// makeMirrorFolder makes Config.Dir's mirror folder, or checks the one
// there: a folder (not a link) of this user that nobody else can write or
// read.
func makeMirrorFolder(dir string) error {
	path := filepath.Join(dir, MirrorFolder)
	if err := os.Mkdir(path, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("making the mirror folder: %w", err)
	}
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return fmt.Errorf("the mirror folder: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("the mirror folder %s is not a folder (%s)", path, fi.Mode().Type())
	case !ownedByUs(fi):
		return fmt.Errorf("the mirror folder %s belongs to another user; remove it, or set Config.Dir to a folder of the server's own", path)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("the mirror folder %s is open to other users (mode %v); make it 0700 or remove it", path, fi.Mode().Perm())
	}
	return nil
}

// refIDs are what the mirror's ref holds after a fetch: its object (a tag's
// own, for an annotated tag) and the commit it leads to.
type refIDs struct {
	object, commit string
}

// sync brings the mirror up to date with the remote's refs (full names,
// all of which the remote has: the job's base first, then the job's branch
// if it continues one), and links its packs into objects, the pack folder
// of a workspace's git directory. It returns what each ref holds.
// It holds the mirror's lock throughout: the checks, a rebuild, the fetch
// and the links see one mirror that nobody else changes meanwhile.
//
// Only the refs the job needs are fetched, not every branch: a clone has
// always fetched one branch (and no tags), and a repository's other
// branches and tags may be many and large. Each job's fetch is incremental
// all the same: every base the mirror holds tells the remote what not to
// send.
func (m *mirror) sync(ctx context.Context, home string, cred *credential, refs []string, objects string) (map[string]refIDs, error) {
	lock, err := m.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer lock.Release()

	fresh := false
	if _, err := os.Lstat(m.dir); errors.Is(err, fs.ErrNotExist) {
		m.repos.cfg.Logger.Info("gitrepo: making the mirror", slog.String("repository", m.shown), slog.String("path", m.dir))
		if err := m.create(ctx, home); err != nil {
			return nil, err
		}
		fresh = true
	} else if problem := m.check(); problem != "" {
		if err := m.rebuild(ctx, home, problem); err != nil {
			return nil, err
		}
		fresh = true
	}
	err = m.fetch(ctx, home, cred, refs)
	if err != nil && !fresh && ctx.Err() == nil && !engine.IsPermanent(err) {
		// A fetch fails on a broken ref or a missing object as it does
		// on a network error. Only then, since it reads every commit and
		// tree: is the mirror whole?
		if ferr := m.fsck(ctx, home, "--connectivity-only"); ferr != nil && ctx.Err() == nil {
			if err := m.rebuild(ctx, home, "git fsck failed after a failed fetch: "+ferr.Error()); err != nil {
				return nil, err
			}
			err = m.fetch(ctx, home, cred, refs)
		}
	}
	if err != nil {
		return nil, err
	}
	packs, err := m.record(ctx, home)
	if err != nil {
		return nil, err
	}
	ids, err := m.resolve(ctx, home, refs)
	if err != nil {
		return nil, mirrorUnread{err} // fetched, yet unreadable
	}
	if err := m.link(packs, objects); err != nil {
		return nil, err
	}
	if err := m.dropJobRefs(ctx, home); err != nil {
		// The workspace has what it needs; a ref left is tried again by
		// the next sync.
		m.repos.cfg.Logger.Warn("gitrepo: cannot drop the job refs of the mirror", slog.String("repository", m.shown),
			slog.Any("error", err))
	}
	// The manifest record wrote tells the time; the other mirrors are
	// pruned once this one is free for the jobs waiting on it.
	fi, err := os.Lstat(filepath.Join(m.dir, manifestName))
	_ = lock.Release() // early, as the deferred call would: nothing of the sync depends on it
	if err == nil {
		m.repos.pruneIfDue(fi.ModTime())
	}
	return ids, nil
}

// acquire waits for the mirror's lock.
func (m *mirror) acquire(ctx context.Context) (*rundir.Lock, error) {
	lock, err := rundir.Acquire(ctx, m.lock)
	switch {
	case err == nil:
		return lock, nil
	case ctx.Err() != nil:
		return nil, fmt.Errorf("gitrepo: waiting for the mirror of %s: %w", m.shown, ctx.Err())
	}
	return nil, fmt.Errorf("gitrepo: locking the mirror of %s: %w", m.shown, err)
}

// git runs git on the mirror, from home, a workspace's empty home.
func (m *mirror) git(ctx context.Context, home string, cred *credential, args ...string) (string, error) {
	return m.repos.run(ctx, cmdSpec{step: "clone", dir: home, home: home, gitDir: m.dir, url: m.url, cred: cred}, args...)
}

// rebuild replaces the mirror with an empty repository, saying why.
func (m *mirror) rebuild(ctx context.Context, home, why string) error {
	if err := m.discard("rebuilding", why); err != nil {
		return err
	}
	if err := os.RemoveAll(m.dir); err != nil {
		return fmt.Errorf("gitrepo: removing the mirror of %s: %w", m.shown, err)
	}
	return m.create(ctx, home)
}

// discard logs that the mirror is being done (rebuilding, discarding) for
// why, and removes its manifest, so that the next check finds it unfinished
// and rebuilds it: first, so that should this process die while removing
// the rest, what is left is rebuilt all the same.
func (m *mirror) discard(done, why string) error {
	m.repos.cfg.Logger.Warn("gitrepo: "+done+" the mirror", slog.String("repository", m.shown),
		slog.String("path", m.dir), slog.String("reason", why))
	if err := os.Remove(filepath.Join(m.dir, manifestName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("gitrepo: %s the mirror of %s: %w", done, m.shown, err)
	}
	return nil
}

// create makes the mirror, empty.
func (m *mirror) create(ctx context.Context, home string) error {
	// No templates: a mirror needs no sample hooks. SHA-1, which the
	// pack checks read, whatever GIT_DEFAULT_HASH Config.Env may set.
	_, err := m.repos.run(ctx, cmdSpec{step: "clone", dir: home, home: home},
		"init", "--quiet", "--bare", "--template=", "--object-format=sha1", "--", m.dir)
	if err != nil {
		return err
	}
	return writeManifest(m.dir, nil)
}

// fetch fetches refs from the remote into the mirror, each to its
// mirrorRef, moving them however the remote's moved (force pushes
// included). Every object arrives as a pack (fetch.unpackLimit=1), never
// as loose files: packs are what workspaces link.
func (m *mirror) fetch(ctx context.Context, home string, cred *credential, refs []string) error {
	args := []string{"-c", "fetch.unpackLimit=1", "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--", m.url}
	for i, ref := range refs {
		args = append(args, "+"+ref+":"+mirrorRef(ref, i == 0))
	}
	_, err := m.git(ctx, home, cred, args...)
	return err
}

// dropJobRefs deletes every ref of the mirror but its bases: the job's
// branch, whose workspace now links the packs; one left by a process that
// died before this; and those of the layout before bases had their own
// (refs/docsapi/<hash>, bases and branches alike), which the fetch before
// this one still offered the remote as what the mirror holds.
func (m *mirror) dropJobRefs(ctx context.Context, home string) error {
	// Ref names hold no control characters, so a line is a name.
	out, err := m.git(ctx, home, nil, "for-each-ref", "--format=%(refname)")
	if err != nil {
		return err
	}
	var deletes strings.Builder
	for ref := range strings.Lines(out) {
		if ref = strings.TrimSuffix(ref, "\n"); ref != "" && !strings.HasPrefix(ref, baseRefs) {
			deletes.WriteString("delete " + ref + "\n")
		}
	}
	if deletes.Len() == 0 {
		return nil
	}
	spec := cmdSpec{step: "clone", dir: home, home: home, gitDir: m.dir, stdin: deletes.String()}
	_, err = m.repos.run(ctx, spec, "update-ref", "--stdin")
	return err
}

// resolve says what each of refs holds in the mirror.
func (m *mirror) resolve(ctx context.Context, home string, refs []string) (map[string]refIDs, error) {
	// The names are mirrorRef's: none can be read as an option.
	args := []string{"rev-parse"}
	for i, ref := range refs {
		args = append(args, mirrorRef(ref, i == 0), mirrorRef(ref, i == 0)+"^{commit}")
	}
	out, err := m.git(ctx, home, nil, args...)
	if err != nil {
		return nil, err
	}
	lines := strings.Fields(out)
	if len(lines) != 2*len(refs) {
		return nil, &Error{Step: "clone", Command: "rev-parse", Detail: fmt.Sprintf("unexpected output %q", out)}
	}
	ids := make(map[string]refIDs, len(refs))
	for i, ref := range refs {
		ids[ref] = refIDs{object: lines[2*i], commit: lines[2*i+1]}
	}
	return ids, nil
}

// fsck runs git fsck on the mirror, with args.
func (m *mirror) fsck(ctx context.Context, home string, args ...string) error {
	_, err := m.git(ctx, home, nil, append([]string{"fsck", "--no-dangling", "--no-progress"}, args...)...)
	return err
}

// discardIfBroken checks the mirror whole, every object read, after a
// workspace failed to read what it linked: if git fsck finds it damaged,
// it is discarded, so that the next sync rebuilds it, and discardIfBroken
// reports true. Reading every object costs as much as the history, but
// only after such a failure, which may as well be the tree's own (a path
// git refuses to check out) and must not cost a rebuild.
func (m *mirror) discardIfBroken(ctx context.Context, home string) (bool, error) {
	lock, err := m.acquire(ctx)
	if err != nil {
		return false, err
	}
	defer lock.Release()
	ferr := m.fsck(ctx, home)
	if ferr == nil || ctx.Err() != nil {
		return false, nil
	}
	return true, m.discard("discarding", ferr.Error())
}
