package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/gitrepo"
	"github.com/docsapi/docsapi-go/server/store"
)

// localChecker is what a project's repositories offer to check a
// repository on this machine (gitrepo.Repositories does).
type localChecker interface {
	CheckLocal(ctx context.Context, repository, ref string) error
}

// checkLocalRepositories checks, before serve starts, that a job of each
// configured project whose repository is on this machine (a path or a
// file:// URL) could start: otherwise the first job would fail, and the
// reason reach the operator only through the job. Remote repositories are
// left to the jobs, so that start-up needs no network. Each problem is
// reported with what to run; a *gitrepo.LocalError is a mistake in the
// configuration, any other error (git timing out, say) is not.
func checkLocalRepositories(ctx context.Context, projects []store.Project, parts func(context.Context, store.Project) (engine.Parts, error)) (setting, other error) {
	var settings, others []error
	for i, p := range projects {
		if _, local := gitrepo.LocalPath(p.Repository); !local {
			continue
		}
		pp, err := parts(ctx, p)
		if err != nil {
			return nil, err
		}
		checker, ok := pp.Repositories.(localChecker)
		if !ok {
			continue
		}
		err = checker.CheckLocal(ctx, p.Repository, p.Ref)
		var le *gitrepo.LocalError
		switch {
		case err == nil:
		case errors.As(err, &le):
			settings = append(settings, fmt.Errorf("projects[%d] (%q): %s", i, p.ID, localAdvice(le)))
		default:
			others = append(others, fmt.Errorf("projects[%d] (%q): checking its repository: %w", i, p.ID, err))
		}
	}
	return errors.Join(settings...), errors.Join(others...)
}

// localAdvice says what is wrong with a local repository and what to run
// to mend it, with the paths as the configuration gave them.
func localAdvice(e *gitrepo.LocalError) string {
	ref := cmp.Or(e.Ref, "main")
	what := "repository " + e.Path
	// Jobs need a commit on the ref to start from; from a clone of the
	// docs, pushing is the one command that gives it whatever the clone
	// is called.
	push := fmt.Sprintf("\n    git -C YOUR-DOCS-CLONE push %s HEAD:%s", shellQuote(e.Path), ref)
	create := func(path string) string {
		return fmt.Sprintf("\n    git init --bare --initial-branch=%s %s", ref, shellQuote(path)) +
			fmt.Sprintf("\n    git -C YOUR-DOCS-CLONE push %s HEAD:%s", shellQuote(path), ref) +
			"\n  (YOUR-DOCS-CLONE: a git clone of your docs; the server guide's offline recipe makes one from nothing)," +
			` or set "repository" to the docs' existing repository`
	}
	switch e.Problem {
	case gitrepo.NotAbsolute:
		return what + ` is a relative path: write it as an absolute path, or relative to the configuration file without a ":" (it is then read from the file's folder)`
	case gitrepo.Missing:
		if e.LinkTarget != "" {
			target := e.LinkTarget
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(e.Path), target)
			}
			return fmt.Sprintf("%s is a symbolic link to %s, which does not exist. Jobs clone the repository and push their branches to it: make it where the link points, with the docs on branch %q:%s",
				what, e.LinkTarget, ref, create(target))
		}
		return fmt.Sprintf("%s does not exist. Jobs clone it and push their branches to it: make it, with the docs on branch %q:%s", what, ref, create(e.Path))
	case gitrepo.NotFolder:
		return what + ` is a file, not a git repository: set "repository" to a git repository's folder or URL`
	case gitrepo.NotRepository:
		msg := what + " is not a git repository"
		if e.Detail != "" {
			msg += " (git: " + e.Detail + ")"
		}
		if entries, err := os.ReadDir(e.Path); err == nil && len(entries) == 0 {
			return fmt.Sprintf("%s. The folder is empty: make it a repository, with the docs on branch %q:%s", msg, ref, create(e.Path))
		}
		return fmt.Sprintf(`%s. If the folder holds the docs, make it a repository of them on branch %q:`+
			"\n    git -C %[3]s init --initial-branch=%[2]s && git -C %[3]s add --all && git -C %[3]s commit -m 'The docs'"+
			"\n  otherwise set \"repository\" to the docs' repository", msg, ref, shellQuote(e.Path))
	case gitrepo.NoCommits:
		return fmt.Sprintf("%s has no commits; jobs start from branch %q. Push the docs to it from a clone of them:%s", what, ref, push)
	case gitrepo.NoRef:
		msg := fmt.Sprintf("%s has no branch or tag %q, which jobs start from", what, e.Ref)
		if len(e.Branches) == 0 {
			return msg + ". Push the docs to it from a clone of them:" + push
		}
		from := "BRANCH"
		if len(e.Branches) == 1 && e.MoreBranches == 0 {
			from = e.Branches[0]
		}
		return fmt.Sprintf(`%s (its branches: %s). Set "ref" to one of them, or make branch %s from one:`+"\n    git --git-dir %s branch %s %s",
			msg, branchList(e), e.Ref, shellQuote(e.Path), e.Ref, from)
	case gitrepo.NoDefaultBranch:
		to := "BRANCH"
		if i := slices.IndexFunc(e.Branches, func(b string) bool { return b == "main" || b == "master" }); i >= 0 {
			to = e.Branches[i]
		} else if len(e.Branches) == 1 && e.MoreBranches == 0 {
			to = e.Branches[0]
		}
		return fmt.Sprintf(`%s has no default branch: its HEAD names no branch that exists (its branches: %s). Set "ref" to the branch jobs start from, or point HEAD at it:`+
			"\n    git --git-dir %s symbolic-ref HEAD refs/heads/%s", what, branchList(e), shellQuote(e.Path), to)
	}
	return e.Error()
}

func branchList(e *gitrepo.LocalError) string {
	s := strings.Join(e.Branches, ", ")
	if e.MoreBranches > 0 {
		s += fmt.Sprintf(" and %d more", e.MoreBranches)
	}
	return s
}

// plainWord is what a shell reads as one word as it is.
var plainWord = regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]+$`)

// shellQuote makes s one word for a POSIX shell, so that a command shown
// for pasting works with any path.
func shellQuote(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
