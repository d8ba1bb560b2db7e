package tools

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/docsapi/docsapi-go/server/internal/gitname"
)

// maxLineRunes cuts long lines in search results: a minified file would
// otherwise fill the model's context with one match.
const maxLineRunes = 240

// search answers search: the lines matching pattern in the text files
// under dir that match glob.
func (w *Workspace) search(pattern string, isRegexp, ignoreCase bool, dir, glob string) Result {
	if pattern == "" {
		return failure("pattern is required")
	}
	expr := pattern
	if !isRegexp {
		expr = regexp.QuoteMeta(pattern)
	}
	if ignoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return failure("pattern is not a valid RE2 regular expression: %v", err)
	}
	start, err := w.resolve(dir, true)
	if err != nil {
		return w.describe(dir, err)
	}
	match, err := compileGlob(glob)
	if err != nil {
		return failure("glob %q: %v", glob, err)
	}
	if _, err := w.root.Lstat(start); err != nil {
		return w.describe(dir, err)
	}
	var out []string
	truncated := false
	walkErr := fs.WalkDir(w.root.FS(), filepath.ToSlash(start), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
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
		// Links are skipped like any file that is not regular; readFile
		// would refuse them anyway.
		if !d.Type().IsRegular() || !match(relTo(start, p)) {
			return nil
		}
		data, err := w.readFile(p, filepath.FromSlash(p))
		if err != nil || !isText(data) {
			return nil // large, binary or unreadable files are not searched
		}
		for i, line := range strings.Split(string(data), "\n") {
			if !re.MatchString(line) {
				continue
			}
			if len(out) == w.limits.MaxSearchMatches {
				truncated = true
				return fs.SkipAll
			}
			if r := []rune(line); len(r) > maxLineRunes {
				line = string(r[:maxLineRunes]) + "…"
			}
			out = append(out, fmt.Sprintf("%s:%d: %s", p, i+1, line))
		}
		return nil
	})
	if walkErr != nil {
		return w.describe(dir, walkErr)
	}
	if len(out) == 0 {
		return Result{Text: "no matches"}
	}
	text := strings.Join(out, "\n")
	if truncated {
		text += fmt.Sprintf("\n(stopped after %d matches; narrow the search with path, glob or a more specific pattern)", w.limits.MaxSearchMatches)
	}
	return Result{Text: text}
}
