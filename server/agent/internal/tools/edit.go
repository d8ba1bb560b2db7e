package tools

import (
	"path/filepath"
	"strings"
)

// edit answers edit_file: it replaces the one occurrence of oldString in
// the file given by newString, charging the change to the budget.
func (w *Workspace) edit(given, oldString, newString string) (Result, error) {
	p, err := w.resolve(given, false)
	if err != nil {
		return w.describe(given, err), nil
	}
	if oldString == "" {
		return failure("old_string is required; to create a file use " + nameWriteFile), nil
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
		return w.describe(given, err), nil
	}
	return Result{Text: "edited " + filepath.ToSlash(p)}, nil
}
