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
	"path/filepath"
	"strings"
	"sync"
)

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
	// escapes is the error root gives for a path that leaves it (see
	// escapeError).
	escapes error

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
	return &Workspace{root: root, limits: limits.withDefaults(), escapes: escapeError(root)}, nil
}

// escapeError returns the error os.Root gives for a path that leaves it,
// so that describe can recognise it with errors.Is rather than by its
// wording. The os package does not export it (it is errPathEscapes, "path
// escapes from parent", in os/file.go, wrapped in an *fs.PathError), so it
// is taken from root itself: ".." leaves any root, and os.Root refuses it
// from the name alone, before any system call.
func escapeError(root *os.Root) error {
	_, err := root.Lstat("..")
	for err != nil && errors.Unwrap(err) != nil {
		err = errors.Unwrap(err)
	}
	return err
}

// Close releases the workspace's folder handle.
func (w *Workspace) Close() error { return w.root.Close() }

// Call runs the tool name with its JSON input. Everything the model can
// correct comes back as a Result with IsError; the error is non-nil only
// for ErrChangeLimit, which ends the run.
func (w *Workspace) Call(name string, input json.RawMessage) (Result, error) {
	for _, t := range table {
		if t.Name == name {
			return t.run(w, input)
		}
	}
	names := make([]string, 0, len(table))
	for _, t := range table {
		names = append(names, t.Name)
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
func (w *Workspace) describe(p string, err error) Result {
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
	case w.escapes != nil && errors.Is(err, w.escapes):
		return failure("%s: the path leaves the workspace", p)
	}
	return failure("%s: %v", p, err)
}
