package tools

import (
	"path/filepath"
)

// delete answers delete_file: it removes the regular file given, charging
// its size to the budget.
func (w *Workspace) delete(given string) (Result, error) {
	p, err := w.resolve(given, false)
	if err != nil {
		return w.describe(given, err), nil
	}
	folder, err := w.openFolder(given, filepath.Dir(p), false)
	if err != nil {
		return w.describe(given, err), nil
	}
	defer folder.Close()
	name := filepath.Base(p)
	// Lstat and Remove act on the name itself, never on what a link there
	// points to, even one made after resolve looked.
	info, err := folder.Lstat(name)
	if err != nil {
		return w.describe(given, err), nil
	}
	if !info.Mode().IsRegular() {
		return failure("%s: only regular files can be deleted", given), nil
	}
	if err := w.charge(info.Size()); err != nil {
		return failure("%s: refused: %v", given, err), err
	}
	if err := folder.Remove(name); err != nil {
		w.refund(info.Size())
		return w.describe(given, err), nil
	}
	return Result{Text: "deleted " + filepath.ToSlash(p)}, nil
}
