package gitrepo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/docsapi/docsapi-go/server/internal/gitname"
)

// Before Publish commits, it checks what the agent left in the working
// tree, and then what git staged from it. The agent may have left what
// git would take for a repository of its own (a nested .git, which git
// records as a submodule), or symbolic links aimed out of the tree or into
// a git directory: committed, such a link is a trap for whoever checks the
// branch out; left in place, whatever a later tool writes through it lands
// where it points, as a hook or a config. Links between the tree's own
// files are ordinary content and stay.

// refusal is something Publish will not publish, said with the path (from
// the root of the working tree) and what is wrong with it.
type refusal string

func (r refusal) Error() string { return string(r) }

func refuse(format string, args ...any) error { return refusal(fmt.Sprintf(format, args...)) }

// maxLinkHops is how many symbolic links resolving one path may pass
// through, the link itself included: Linux's MAXSYMLINKS. A path that
// needs more does not resolve on Linux either.
const maxLinkHops = 40

// checkTree walks the working tree dir without following links and
// returns a refusal for the first entry (in lexical order) that must not
// be published, or another error if the tree cannot be read.
func checkTree(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return refuse("the working tree is no longer a folder")
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if gitname.IsDotGit(d.Name()) {
			return refuse("%s is a nested git repository (an entry named like .git)", rel)
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return checkLink(dir, rel)
		}
		return nil
	})
}

// checkLink judges the symbolic link at rel in the tree root. The target
// is resolved physically, as the kernel would, component by component
// from the link's folder: a component that is itself a link inside the
// tree is replaced by where that link leads, so a ".." after it climbs
// from there. Resolved lexically, esc -> r/.. with r -> . would seem to
// stay in the tree; it leads to the tree's parent. Components that do not
// exist (yet) are taken as named: a dangling link is judged by the path it
// names, since whatever creates that path later creates it there.
func checkLink(root, rel string) error {
	target, err := os.Readlink(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return err
	}
	if filepath.IsAbs(target) {
		return refuse("%s is a symbolic link to an absolute path (%s)", rel, target)
	}
	hops := 1
	_, verdict, err := resolve(root, components(path.Dir(rel)), target, &hops)
	switch {
	case err != nil:
		return err
	case verdict == leaves:
		return refuse("%s is a symbolic link that leaves the tree (%s)", rel, target)
	case verdict == intoGit:
		return refuse("%s is a symbolic link into a git directory (%s)", rel, target)
	case verdict == tooDeep:
		return refuse("%s is a symbolic link with too many levels of links (%s)", rel, target)
	}
	return nil
}

type linkVerdict int

const (
	inside linkVerdict = iota
	leaves
	intoGit
	tooDeep
)

// resolve follows target, a link's text, from the folder cur (components
// from root) and says where it leads: on inside, to the returned path.
// hops counts the links passed through.
func resolve(root string, cur []string, target string, hops *int) ([]string, linkVerdict, error) {
	if filepath.IsAbs(target) {
		return nil, leaves, nil
	}
	cur = append([]string(nil), cur...)
	for _, c := range strings.Split(filepath.ToSlash(target), "/") {
		switch c {
		case "", ".":
			continue
		case "..":
			if len(cur) == 0 {
				return nil, leaves, nil
			}
			cur = cur[:len(cur)-1]
			continue
		}
		if gitname.IsDotGit(c) {
			return nil, intoGit, nil
		}
		next := append(cur, c)
		p := filepath.Join(root, filepath.FromSlash(strings.Join(next, "/")))
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			cur = next // nothing there (yet): taken as named
			continue
		case err != nil:
			return nil, inside, err
		case fi.Mode()&fs.ModeSymlink == 0:
			cur = next
			continue
		}
		if *hops++; *hops > maxLinkHops {
			return nil, tooDeep, nil
		}
		inner, err := os.Readlink(p)
		if err != nil {
			return nil, inside, err
		}
		var verdict linkVerdict
		if cur, verdict, err = resolve(root, cur, inner, hops); err != nil || verdict != inside {
			return nil, verdict, err
		}
	}
	return cur, inside, nil
}

// components splits a slash-separated relative path; "." is the root.
func components(rel string) []string {
	if rel == "." || rel == "" {
		return nil
	}
	return strings.Split(rel, "/")
}

// checkStaged reads the output of `git diff-index --cached --raw -z
// --no-renames HEAD`, what `git add --all` staged, and reports whether
// anything is staged. It refuses a gitlink (mode 160000, a submodule's
// commit) that is new or changed: a submodule is another repository, which
// the tree check keeps out, so one can only have been staged behind
// Publish's back. It refuses too a path with a component named like .git,
// which git would not have staged from the tree.
func checkStaged(raw string) (bool, error) {
	fields := strings.Split(raw, "\x00")
	staged := false
	for i := 0; i < len(fields); {
		head := fields[i]
		if head == "" && i == len(fields)-1 {
			break
		}
		meta := strings.Fields(strings.TrimPrefix(head, ":"))
		if !strings.HasPrefix(head, ":") || len(meta) != 5 || i+1 >= len(fields) {
			return false, fmt.Errorf("unexpected output of git diff-index: %q", cut(raw))
		}
		paths := fields[i+1 : i+2]
		if s := meta[4]; (s[0] == 'R' || s[0] == 'C') && i+2 < len(fields) {
			paths = fields[i+1 : i+3] // a rename or copy names two
		}
		i += 1 + len(paths)
		staged = true
		newMode, newID := meta[1], meta[3]
		for _, p := range paths {
			if newMode == "160000" {
				return true, refuse("%s is a submodule (gitlink) to commit %s, new or changed; submodules are not published", p, newID)
			}
			for _, c := range strings.Split(p, "/") {
				if gitname.IsDotGit(c) {
					return true, refuse("%s is a path into a git directory", p)
				}
			}
		}
	}
	return staged, nil
}
