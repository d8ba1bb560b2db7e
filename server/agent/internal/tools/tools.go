// Package tools gives an LLM agent file tools that cannot reach outside one
// workspace: list, read, search, write, edit and delete files.
//
// The model that calls them is treated as an attacker, and the repository
// it works on may have been prepared by one: paths may be absolute, climb
// out with "..", go through symbolic links (dangling ones included), or aim
// at the repository's .git folder, where a hook, commondir,
// info/attributes or objects/info/alternates would run code or redirect the
// server's next git command. What the tools promise:
//
//   - No path with a symbolic link in any component is used, wherever the
//     link points: inside the workspace, outside it, into .git, or nowhere.
//     Links are refused, never resolved.
//   - No path with .git in any component is used, in any letter case, nor
//     the names Windows and macOS take for .git (".git.", ".git ",
//     "git~1", ".git::$INDEX_ALLOCATION", .git with zero-width characters),
//     which git's own verify_path refuses too.
//   - list_files and search never descend into a linked folder nor read a
//     link; list_files shows links, marked as not followed.
//   - write_file, edit_file, delete_file and every file read hold to this
//     even against a link that appears after the path was checked: the
//     folders are opened one by one and each is verified to be no link,
//     and a file is replaced by renaming a new one over its name, never
//     written through it (the comment on replace, in the source, says what
//     that covers). Only the walk of list_files and search is not proof
//     against such a race: a folder swapped for a link while it is walked
//     could have its names listed, though never its content read. The
//     agent runs no other process, so nothing makes links during a run.
//   - The tools create no links.
//
// Every operation goes through an os.Root as well, so that nothing leaves
// the workspace even if these checks had a flaw.
//
// A refused or failed call is a Result with IsError set, for the model to
// read and correct; only exceeding the change budget is an error of the run.
package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/docsapi/docsapi-go/server/internal/gitname"
)

// Defaults of Limits.
const (
	DefaultMaxFileBytes     = 256 << 10
	DefaultMaxChangedBytes  = 1 << 20
	DefaultMaxListEntries   = 500
	DefaultMaxSearchMatches = 100
)

// maxLineRunes cuts long lines in search results: a minified file would
// otherwise fill the model's context with one match.
const maxLineRunes = 240

// Limits bound what the tools read, write and return. Zero fields take the
// defaults.
type Limits struct {
	// MaxFileBytes is the largest file that is read, searched, edited or
	// written. Documentation pages are far smaller; anything larger is
	// generated or binary and not worth the model's context.
	MaxFileBytes int64
	// MaxChangedBytes bounds the total size of the changes of a run (see
	// Workspace.Changed), so a model stuck in a loop cannot rewrite the
	// repository.
	MaxChangedBytes int64
	// MaxListEntries bounds the paths one list_files call returns.
	MaxListEntries int
	// MaxSearchMatches bounds the lines one search call returns.
	MaxSearchMatches int
}

func (l Limits) withDefaults() Limits {
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	if l.MaxChangedBytes <= 0 {
		l.MaxChangedBytes = DefaultMaxChangedBytes
	}
	if l.MaxListEntries <= 0 {
		l.MaxListEntries = DefaultMaxListEntries
	}
	if l.MaxSearchMatches <= 0 {
		l.MaxSearchMatches = DefaultMaxSearchMatches
	}
	return l
}

// ErrChangeLimit is returned by Call when a change would take the run past
// Limits.MaxChangedBytes. The change is not made.
var ErrChangeLimit = errors.New("the changes exceed the limit of the run")

// Result is what a tool call answers to the model.
type Result struct {
	Text string
	// IsError marks a refused or failed call; Text says why.
	IsError bool
}

func failure(format string, args ...any) Result {
	return Result{Text: fmt.Sprintf(format, args...), IsError: true}
}

// Workspace runs tool calls inside one folder. It is safe for concurrent
// use, though an agent calls it one call at a time.
type Workspace struct {
	root   *os.Root
	limits Limits

	mu      sync.Mutex
	changed int64
}

// Open opens the workspace in dir. Close it when the run ends.
func Open(dir string, limits Limits) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	// The folder comes from the server, not the model: links on the way to
	// it are the server's own and are resolved, unlike any below it.
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("opening the workspace: %w", err)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("opening the workspace: %w", err)
	}
	return &Workspace{root: root, limits: limits.withDefaults()}, nil
}

// Close releases the workspace's folder handle.
func (w *Workspace) Close() error { return w.root.Close() }

// Changed returns the bytes changed so far: for each write, edit or delete,
// the bytes removed plus the bytes added, after setting aside the text that
// the old and new content share at their start and end. Rewriting a whole
// page to fix one word therefore costs about one word, while a deletion
// costs the size of what is gone.
func (w *Workspace) Changed() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changed
}

// charge books n changed bytes, or refuses them when the budget would be
// exceeded.
func (w *Workspace) charge(n int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.changed+n > w.limits.MaxChangedBytes {
		return fmt.Errorf("%w: %d bytes changed, and this change of %d bytes would pass the limit of %d",
			ErrChangeLimit, w.changed, n, w.limits.MaxChangedBytes)
	}
	w.changed += n
	return nil
}

func (w *Workspace) refund(n int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.changed -= n
}

// Call runs the tool name with its JSON input. Everything the model can
// correct comes back as a Result with IsError; the error is non-nil only
// for ErrChangeLimit, which ends the run.
func (w *Workspace) Call(name string, input json.RawMessage) (Result, error) {
	switch name {
	case "list_files":
		var a struct{ Path, Glob string }
		if r, ok := decode(input, &a); !ok {
			return r, nil
		}
		return w.list(a.Path, a.Glob), nil
	case "read_file":
		var a struct {
			Path      string
			StartLine int `json:"start_line"`
			EndLine   int `json:"end_line"`
		}
		if r, ok := decode(input, &a); !ok {
			return r, nil
		}
		return w.read(a.Path, a.StartLine, a.EndLine), nil
	case "search":
		var a struct {
			Pattern    string
			Regexp     bool
			IgnoreCase bool `json:"ignore_case"`
			Path, Glob string
		}
		if r, ok := decode(input, &a); !ok {
			return r, nil
		}
		return w.search(a.Pattern, a.Regexp, a.IgnoreCase, a.Path, a.Glob), nil
	case "write_file":
		var a struct {
			Path    string
			Content *string
		}
		if r, ok := decode(input, &a); !ok {
			return r, nil
		}
		if a.Content == nil {
			return failure("content is required (it may be empty)"), nil
		}
		return w.write(a.Path, *a.Content)
	case "edit_file":
		var a struct {
			Path      string
			OldString string `json:"old_string"`
			NewString string `json:"new_string"`
		}
		if r, ok := decode(input, &a); !ok {
			return r, nil
		}
		return w.edit(a.Path, a.OldString, a.NewString)
	case "delete_file":
		var a struct{ Path string }
		if r, ok := decode(input, &a); !ok {
			return r, nil
		}
		return w.delete(a.Path)
	}
	names := make([]string, 0, len(definitions))
	for _, d := range definitions {
		names = append(names, d.Name)
	}
	return failure("unknown tool %q; the tools are %s", name, strings.Join(names, ", ")), nil
}

// decode reads the arguments leniently: fields the schema does not name are
// ignored, since models add them now and then and they do no harm.
func decode(input json.RawMessage, v any) (Result, bool) {
	if len(strings.TrimSpace(string(input))) == 0 {
		input = json.RawMessage("{}")
	}
	if err := json.Unmarshal(input, v); err != nil {
		return failure("invalid arguments: %v; send a JSON object as the tool's schema describes", err), false
	}
	return Result{}, true
}

// describe words a file system error for the model without the server's
// absolute paths: os.Root reports the relative name it was given.
func describe(p string, err error) Result {
	var refused errRefused
	if errors.As(err, &refused) {
		return failure("%s", refused)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return failure("%s: no such file or folder", p)
	case strings.Contains(err.Error(), "escapes"):
		return failure("%s: the path leaves the workspace", p)
	}
	return failure("%s: %v", p, err)
}

func (w *Workspace) list(dir, glob string) Result {
	start, err := w.resolve(dir, true)
	if err != nil {
		return describe(dir, err)
	}
	match, err := compileGlob(glob)
	if err != nil {
		return failure("glob %q: %v", glob, err)
	}
	info, err := w.root.Lstat(start)
	if err != nil {
		return describe(dir, err)
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
		return describe(dir, walkErr)
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

// relTo returns the slash path p relative to the listed folder start, which
// is what a glob is matched against.
func relTo(start, p string) string {
	start = filepath.ToSlash(start)
	if start == "." {
		return p
	}
	return strings.TrimPrefix(p, start+"/")
}

// compileGlob turns a glob into a matcher of slash paths. A glob without
// "/" is matched against the file name alone, as models write "*.md" to
// mean any Markdown file; one with "/" is matched against the whole path,
// where "**" spans folders. Braces list alternatives ("*.{md,mdx}").
func compileGlob(glob string) (func(string) bool, error) {
	if glob == "" {
		return func(string) bool { return true }, nil
	}
	var b strings.Builder
	b.WriteString("^")
	inBraces := false
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch {
		case strings.HasPrefix(glob[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(glob[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			end := strings.IndexByte(glob[i+1:], ']')
			if end < 0 {
				return nil, errors.New("unclosed [")
			}
			class := glob[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += end + 1
		case c == '{' && !inBraces:
			b.WriteString("(?:")
			inBraces = true
		case c == '}' && inBraces:
			b.WriteString(")")
			inBraces = false
		case c == ',' && inBraces:
			b.WriteString("|")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	if inBraces {
		return nil, errors.New("unclosed {")
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, err
	}
	if !strings.Contains(glob, "/") {
		return func(p string) bool { return re.MatchString(path.Base(p)) }, nil
	}
	return re.MatchString, nil
}

// readText reads a regular file of at most MaxFileBytes that holds text.
func (w *Workspace) readText(given, p string) (string, Result, bool) {
	data, err := w.readFile(given, p)
	if err != nil {
		return "", describe(given, err), false
	}
	if !isText(data) {
		return "", failure("%s: a binary file; it cannot be shown or edited as text", given), false
	}
	return string(data), Result{}, true
}

func isText(data []byte) bool {
	return utf8.Valid(data) && !strings.ContainsRune(string(data), 0)
}

func (w *Workspace) read(given string, startLine, endLine int) Result {
	p, err := w.resolve(given, false)
	if err != nil {
		return describe(given, err)
	}
	text, r, ok := w.readText(given, p)
	if !ok {
		return r
	}
	if startLine == 0 && endLine == 0 {
		if text == "" {
			return Result{Text: "(the file is empty)"}
		}
		return Result{Text: text}
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if startLine == 0 {
		startLine = 1
	}
	if endLine == 0 || endLine > len(lines) {
		endLine = len(lines)
	}
	switch {
	case startLine < 1:
		return failure("start_line must be 1 or more")
	case startLine > len(lines):
		return failure("%s: start_line %d is past the end; the file has %d lines", given, startLine, len(lines))
	case endLine < startLine:
		return failure("end_line %d is before start_line %d", endLine, startLine)
	}
	return Result{Text: strings.Join(lines[startLine-1:endLine], "")}
}

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
		return describe(dir, err)
	}
	match, err := compileGlob(glob)
	if err != nil {
		return failure("glob %q: %v", glob, err)
	}
	if _, err := w.root.Lstat(start); err != nil {
		return describe(dir, err)
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
		return describe(dir, walkErr)
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

func (w *Workspace) write(given, content string) (Result, error) {
	p, err := w.resolve(given, false)
	if err != nil {
		return describe(given, err), nil
	}
	if int64(len(content)) > w.limits.MaxFileBytes {
		return failure("%s: the content is %d bytes, over the limit of %d bytes", given, len(content), w.limits.MaxFileBytes), nil
	}
	old, existed, oversize, err := w.previous(given, p)
	if err != nil {
		return describe(given, err), nil
	}
	cost := changeSize(old, content) + oversize
	if err := w.charge(cost); err != nil {
		return failure("%s: refused: %v", given, err), err
	}
	if err := w.replace(given, p, content, true); err != nil {
		w.refund(cost)
		return describe(given, err), nil
	}
	if existed {
		return Result{Text: fmt.Sprintf("wrote %s (%d bytes)", filepath.ToSlash(p), len(content))}, nil
	}
	return Result{Text: fmt.Sprintf("created %s (%d bytes)", filepath.ToSlash(p), len(content))}, nil
}

// previous returns what write_file replaces at p: the old text and whether
// there was a file; for a file too large to compare, its size instead,
// since all of it counts as removed.
func (w *Workspace) previous(given, p string) (old string, existed bool, oversize int64, err error) {
	info, err := w.root.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", false, 0, nil
	case err != nil:
		return "", false, 0, err
	case info.IsDir():
		return "", false, 0, errRefused(given + ": is a folder")
	case !info.Mode().IsRegular():
		return "", false, 0, errRefused(given + ": not a regular file")
	case info.Size() > w.limits.MaxFileBytes:
		return "", true, info.Size(), nil
	}
	data, err := w.readFile(given, p)
	return string(data), true, 0, err
}

func (w *Workspace) edit(given, oldString, newString string) (Result, error) {
	p, err := w.resolve(given, false)
	if err != nil {
		return describe(given, err), nil
	}
	if oldString == "" {
		return failure("old_string is required; to create a file use write_file"), nil
	}
	if oldString == newString {
		return failure("old_string and new_string are the same; nothing would change"), nil
	}
	text, r, ok := w.readText(given, p)
	if !ok {
		return r, nil
	}
	switch n := strings.Count(text, oldString); n {
	case 1:
	case 0:
		return failure("%s: old_string was not found; read the file and copy the text exactly, including white space", given), nil
	default:
		return failure("%s: old_string occurs %d times; include more of the surrounding text so that it matches exactly once", given, n), nil
	}
	updated := strings.Replace(text, oldString, newString, 1)
	if int64(len(updated)) > w.limits.MaxFileBytes {
		return failure("%s: the edited file would be %d bytes, over the limit of %d bytes", given, len(updated), w.limits.MaxFileBytes), nil
	}
	cost := changeSize(oldString, newString)
	if err := w.charge(cost); err != nil {
		return failure("%s: refused: %v", given, err), err
	}
	if err := w.replace(given, p, updated, false); err != nil {
		w.refund(cost)
		return describe(given, err), nil
	}
	return Result{Text: "edited " + filepath.ToSlash(p)}, nil
}

func (w *Workspace) delete(given string) (Result, error) {
	p, err := w.resolve(given, false)
	if err != nil {
		return describe(given, err), nil
	}
	folder, err := w.openFolder(given, filepath.Dir(p), false)
	if err != nil {
		return describe(given, err), nil
	}
	defer folder.Close()
	name := filepath.Base(p)
	// Lstat and Remove act on the name itself, never on what a link there
	// points to, even one made after resolve looked.
	info, err := folder.Lstat(name)
	if err != nil {
		return describe(given, err), nil
	}
	if !info.Mode().IsRegular() {
		return failure("%s: only regular files can be deleted", given), nil
	}
	if err := w.charge(info.Size()); err != nil {
		return failure("%s: refused: %v", given, err), err
	}
	if err := folder.Remove(name); err != nil {
		w.refund(info.Size())
		return describe(given, err), nil
	}
	return Result{Text: "deleted " + filepath.ToSlash(p)}, nil
}

// changeSize is the bytes removed plus the bytes added when old becomes new,
// leaving out their common prefix and suffix. It is exact for one changed
// region and an upper bound otherwise, computed in linear time.
func changeSize(old, new string) int64 {
	prefix := 0
	for prefix < len(old) && prefix < len(new) && old[prefix] == new[prefix] {
		prefix++
	}
	suffix := 0
	for suffix < len(old)-prefix && suffix < len(new)-prefix && old[len(old)-1-suffix] == new[len(new)-1-suffix] {
		suffix++
	}
	return int64(len(old)-prefix-suffix) + int64(len(new)-prefix-suffix)
}

// Definition describes a tool to the model.
type Definition struct {
	Name        string
	Description string
	// Schema is the JSON Schema of the tool's input object.
	Schema json.RawMessage
}

// Definitions returns the tools, sorted by name so that requests are the
// same from run to run (which also keeps provider-side prompt caches warm).
func Definitions() []Definition {
	out := append([]Definition(nil), definitions...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

var definitions = []Definition{
	{
		Name: "list_files",
		Description: "List the files under a folder of the repository, recursively, one path per line relative to the repository root. " +
			"The .git folder is never listed. Symbolic links are listed with a mark; no tool follows them.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"Folder relative to the repository root; empty for the whole repository."},` +
			`"glob":{"type":"string","description":"Optional filter. Without a slash it matches file names (*.md, *.{md,mdx}); with one it matches paths below the folder, where ** spans folders (api/**/*.mdx)."}` +
			`},"additionalProperties":false}`),
	},
	{
		Name:        "read_file",
		Description: "Read a text file of the repository, whole or a range of lines. Read a file before editing it.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"File path relative to the repository root."},` +
			`"start_line":{"type":"integer","minimum":1,"description":"Optional first line to return, counting from 1."},` +
			`"end_line":{"type":"integer","minimum":1,"description":"Optional last line to return, inclusive."}` +
			`},"required":["path"],"additionalProperties":false}`),
	},
	{
		Name: "search",
		Description: "Search the text files of the repository line by line. Answers path:line: text for each matching line. " +
			"The pattern is a plain substring unless regexp is true (RE2 syntax).",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"pattern":{"type":"string","description":"Text to find, or an RE2 regular expression when regexp is true."},` +
			`"regexp":{"type":"boolean","description":"Treat pattern as an RE2 regular expression."},` +
			`"ignore_case":{"type":"boolean","description":"Match regardless of letter case."},` +
			`"path":{"type":"string","description":"Optional folder or file to search in, relative to the repository root."},` +
			`"glob":{"type":"string","description":"Optional file filter, as for list_files."}` +
			`},"required":["pattern"],"additionalProperties":false}`),
	},
	{
		Name:        "write_file",
		Description: "Create a file, or replace a file's whole content. Folders are created as needed. Prefer edit_file for changes to an existing file.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"File path relative to the repository root."},` +
			`"content":{"type":"string","description":"The complete new content of the file."}` +
			`},"required":["path","content"],"additionalProperties":false}`),
	},
	{
		Name: "edit_file",
		Description: "Replace one exact piece of text in a file. old_string must occur exactly once in the file, " +
			"white space included; add surrounding lines to make it unique.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"File path relative to the repository root."},` +
			`"old_string":{"type":"string","description":"The exact text to replace; it must occur exactly once."},` +
			`"new_string":{"type":"string","description":"The text to put in its place."}` +
			`},"required":["path","old_string","new_string"],"additionalProperties":false}`),
	},
	{
		Name:        "delete_file",
		Description: "Delete a file of the repository. Only when the instruction calls for removing it.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"File path relative to the repository root."}` +
			`},"required":["path"],"additionalProperties":false}`),
	},
}
