package tools

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/docsapi/docsapi-go/server/internal/gitname"
)

// list answers list_files: the files under dir that match glob, walked
// without following links or entering .git.
func (w *Workspace) list(dir, glob string) Result {
	start, err := w.resolve(dir, true)
	if err != nil {
		return w.describe(dir, err)
	}
	match, err := compileGlob(glob)
	if err != nil {
		return failure("glob %q: %v", glob, err)
	}
	info, err := w.root.Lstat(start)
	if err != nil {
		return w.describe(dir, err)
	}
	if !info.IsDir() {
		return Result{Text: filepath.ToSlash(start)}
	}
	var paths []string
	truncated := false
	// WalkDir takes an entry's type from the folder, as Lstat would, so it
	// never descends into a link to a folder.
	walkErr := fs.WalkDir(w.root.FS(), filepath.ToSlash(start), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable entry is skipped, not fatal
		}
		if gitname.IsDotGit(d.Name()) {
			// A folder, or the file a worktree or submodule has instead.
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !match(relTo(start, p)) {
			return nil
		}
		if len(paths) == w.limits.MaxListEntries {
			truncated = true
			return fs.SkipAll
		}
		if isLink(d.Type()) {
			// Listed so that the model knows why a page it expects cannot
			// be read, instead of looking for it.
			p += linkMark
		}
		paths = append(paths, p)
		return nil
	})
	if walkErr != nil {
		return w.describe(dir, walkErr)
	}
	if len(paths) == 0 {
		return Result{Text: "no files found"}
	}
	text := strings.Join(paths, "\n")
	if truncated {
		text += fmt.Sprintf("\n(stopped after %d entries; narrow the listing with path or glob)", w.limits.MaxListEntries)
	}
	return Result{Text: text}
}

// linkMark follows a link in a listing.
const linkMark = " (symbolic link, not followed)"
