package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// write answers write_file: it creates the file given, and its folders, or
// replaces its whole content, charging the change to the budget.
func (w *Workspace) write(given, content string) (Result, error) {
	p, err := w.resolve(given, false)
	if err != nil {
		return w.describe(given, err), nil
	}
	if int64(len(content)) > w.limits.MaxFileBytes {
		return failure("%s: the content is %d bytes, over the limit of %d bytes", given, len(content), w.limits.MaxFileBytes), nil
	}
	old, existed, oversize, err := w.previous(given, p)
	if err != nil {
		return w.describe(given, err), nil
	}
	cost := changeSize(old, content) + oversize
	if err := w.charge(cost); err != nil {
		return failure("%s: refused: %v", given, err), err
	}
	if err := w.replace(given, p, content, true); err != nil {
		w.refund(cost)
		return w.describe(given, err), nil
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
