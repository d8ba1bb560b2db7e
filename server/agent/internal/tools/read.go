package tools

import (
	"strings"
	"unicode/utf8"
)

// readText reads a regular file of at most MaxFileBytes that holds text.
func (w *Workspace) readText(given, p string) (string, Result, bool) {
	data, err := w.readFile(given, p)
	if err != nil {
		return "", w.describe(given, err), false
	}
	if !isText(data) {
		return "", failure("%s: a binary file; it cannot be shown or edited as text", given), false
	}
	return string(data), Result{}, true
}

func isText(data []byte) bool {
	return utf8.Valid(data) && !strings.ContainsRune(string(data), 0)
}

// read answers read_file: the file given, whole or from startLine to
// endLine (counting from 1, inclusive; 0 for the start or the end).
func (w *Workspace) read(given string, startLine, endLine int) Result {
	p, err := w.resolve(given, false)
	if err != nil {
		return w.describe(given, err)
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
