package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/docsapi/docsapi-go/server/internal/rundir"
)

// Problem is what keeps a job from starting on a repository: what
// CheckLocal found wrong with one on this machine.
type Problem int

// The problems CheckLocal reports. Open fails a job for the last three
// too, with messages of its own.
const (
	// NotAbsolute: a local path that is not absolute. Git runs in folders
	// of its own, where a relative path names nothing.
	NotAbsolute Problem = iota + 1
	// Missing: nothing is at the path, or a symbolic link there points to
	// nothing.
	Missing
	// NotFolder: the path is a file.
	NotFolder
	// NotRepository: a folder git does not read as a repository.
	NotRepository
	// NoCommits: a repository without a single branch or tag.
	NoCommits
	// NoRef: the ref is neither a branch nor a tag of the repository.
	NoRef
	// NoDefaultBranch: no ref was given, and the branch the repository's
	// HEAD names does not exist.
	NoDefaultBranch
)

// maxListedBranches bounds the branches a LocalError lists: enough to see
// the likely name, few enough for one line.
const maxListedBranches = 10

// LocalError is a repository on this machine that a job could not start
// from, as CheckLocal found it.
type LocalError struct {
	Problem    Problem
	Repository string // as given to CheckLocal
	Path       string // the folder it names
	// LinkTarget, for Missing, is what the symbolic link at Path points
	// to, if Path is one.
	LinkTarget string
	// Ref is the ref asked for, without refs/heads/ or refs/tags/; ""
	// for the repository's default branch.
	Ref string
	// Branches are the repository's branches, sorted, for NoRef and
	// NoDefaultBranch; at most maxListedBranches, and MoreBranches says
	// how many were left out.
	Branches     []string
	MoreBranches int
	// Detail is git's message, for NotRepository.
	Detail string
}

// Error says what is wrong, in one line; it names no remedy, which
// depends on how the repository was meant to be made.
func (e *LocalError) Error() string {
	msg := "gitrepo: " + e.Path
	switch e.Problem {
	case NotAbsolute:
		return msg + " is not an absolute path; git runs in folders of its own, where a relative path names nothing"
	case Missing:
		if e.LinkTarget != "" {
			return msg + " is a symbolic link to " + e.LinkTarget + ", which does not exist"
		}
		return msg + " does not exist"
	case NotFolder:
		return msg + " is a file, not a git repository"
	case NotRepository:
		if e.Detail != "" {
			return msg + " is not a git repository: " + e.Detail
		}
		return msg + " is not a git repository"
	case NoCommits:
		return msg + " has no commits"
	case NoRef:
		return fmt.Sprintf("%s has no branch or tag %q%s", msg, e.Ref, e.branchList())
	case NoDefaultBranch:
		return msg + " has no default branch: its HEAD names no branch that exists" + e.branchList()
	}
	return msg + " cannot be used"
}

// branchList is ` (its branches: a, b)`, or "" without branches.
func (e *LocalError) branchList() string {
	if len(e.Branches) == 0 {
		return ""
	}
	more := ""
	if e.MoreBranches > 0 {
		more = fmt.Sprintf(" and %d more", e.MoreBranches)
	}
	return " (its branches: " + strings.Join(e.Branches, ", ") + more + ")"
}

// LocalPath reports whether repository is on this machine as git reads
// it: a file:// URL, or a path (an scp-like "host:path", with no slash
// before its colon, is an ssh address). It returns the folder it names.
func LocalPath(repository string) (string, bool) {
	if len(repository) >= len("file://") && strings.EqualFold(repository[:len("file://")], "file://") {
		u, err := url.Parse(repository)
		if err != nil || u.Host != "" && u.Host != "localhost" {
			return "", false
		}
		return u.Path, true
	}
	if strings.Contains(repository, "://") {
		return "", false
	}
	if i := strings.IndexByte(repository, ':'); i >= 0 && !strings.ContainsRune(repository[:i], '/') {
		return "", false
	}
	return repository, repository != ""
}

// CheckLocal checks that a job could start from ref ("" for the default
// branch) of repository, a repository on this machine (see LocalPath),
// as Open would choose its base. It asks git, in the isolated environment
// jobs have, and returns a *LocalError for what it finds wrong. It is
// meant for start-up, where a mistake in a configuration should stop the
// server rather than fail its first job; a remote repository is refused
// with an error, since checking one would need the network.
func (r *Repositories) CheckLocal(ctx context.Context, repository, ref string) error {
	path, ok := LocalPath(repository)
	if !ok {
		return fmt.Errorf("gitrepo: %s is not a repository on this machine", redactURL(repository))
	}
	if err := validateRepository(repository); err != nil {
		return err
	}
	e := &LocalError{Repository: repository, Path: path, Ref: shortRef(ref)}
	if !filepath.IsAbs(path) {
		e.Problem = NotAbsolute
		return e
	}
	folder, err := rundir.New(r.cfg.Dir, workspacePrefix)
	if err != nil {
		return fmt.Errorf("gitrepo: making a folder to run git in: %w", err)
	}
	defer folder.Remove()
	home := folder.Path()
	out, err := r.run(ctx, cmdSpec{step: "check", dir: home, home: home, url: repository}, "ls-remote", "--symref", "--", repository)
	if err != nil {
		var gitErr *Error
		if !errors.As(err, &gitErr) || gitErr.Detail == "" {
			return err // a timeout, or git did not run: nothing learnt
		}
		// The file system says why more plainly than git does.
		e.Problem = NotRepository
		// Git's first line says it; the rest is its advice for remotes.
		first, _, _ := strings.Cut(gitErr.Detail, "; ")
		e.Detail = strings.TrimPrefix(first, "fatal: ")
		if fi, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			e.Problem = Missing
		} else if err == nil {
			target, terr := os.Stat(path) // the link followed
			switch {
			case fi.Mode()&fs.ModeSymlink != 0 && errors.Is(terr, fs.ErrNotExist):
				e.Problem = Missing
				e.LinkTarget, _ = os.Readlink(path)
			case terr == nil && !target.IsDir():
				e.Problem = NotFolder
			}
		}
		if e.Problem != NotRepository {
			e.Detail = ""
		}
		return e
	}
	refs := parseLsRemote(out)
	_, problem := refs.base(e.Ref)
	if problem == 0 {
		return nil
	}
	var branches []string
	for name := range refs.ids {
		if b, ok := strings.CutPrefix(name, "refs/heads/"); ok {
			branches = append(branches, b)
		}
	}
	if problem == NoRef && len(refs.ids) == 0 {
		problem = NoCommits
	}
	slices.Sort(branches)
	if len(branches) > maxListedBranches {
		e.MoreBranches = len(branches) - maxListedBranches
		branches = branches[:maxListedBranches]
	}
	e.Problem, e.Branches = problem, branches
	return e
}
