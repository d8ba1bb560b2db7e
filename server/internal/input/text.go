package input

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxPathBytes bounds the path of a page a client sends.
const MaxPathBytes = 2048

// PathProblem says what makes the path of a page a client sent unfit to
// store and show, or "" if nothing does. Paths reach dashboards and CSV
// exports as text, so besides control characters (C0, DEL, C1) it refuses
// the invisible characters that reorder text (bidirectional overrides,
// embeddings, isolates and marks), with which a path can display as
// another.
func PathProblem(path string) string {
	switch {
	case !strings.HasPrefix(path, "/"):
		return "must start with /"
	case len(path) > MaxPathBytes:
		return fmt.Sprintf("has %d bytes; at most %d are allowed", len(path), MaxPathBytes)
	}
	for i, c := range path {
		switch {
		case unicode.IsControl(c):
			return fmt.Sprintf("holds a control character (%U) at byte %d", c, i)
		case IsBidiControl(c):
			return fmt.Sprintf("holds a bidirectional formatting character (%U) at byte %d", c, i)
		}
	}
	return ""
}

// IsBidiControl reports whether c is an invisible character that changes
// the direction of the text around it: the Arabic letter mark, the
// left-to-right and right-to-left marks, the embeddings and overrides
// (U+202A to U+202E) and the isolates (U+2066 to U+2069).
func IsBidiControl(c rune) bool {
	return c == '\u061c' || c == '\u200e' || c == '\u200f' ||
		('\u202a' <= c && c <= '\u202e') || ('\u2066' <= c && c <= '\u2069')
}

// TextProblem says what makes the value of a text field unfit to store and
// show, or "" if nothing does: more than maxChars characters, a control
// character (tabs and line breaks are allowed when multiline), or an
// invisible character that reorders text (with which a comment or a code
// block can display as something else; see IsBidiControl).
func TextProblem(field, v string, maxChars int, multiline bool) string {
	if n := utf8.RuneCountInString(v); n > maxChars {
		return fmt.Sprintf("field %q is %d characters long; the limit is %d", field, n, maxChars)
	}
	for _, c := range v {
		switch {
		case multiline && (c == '\t' || c == '\n' || c == '\r'):
		case unicode.IsControl(c):
			return fmt.Sprintf("field %q holds the control character %U", field, c)
		case IsBidiControl(c):
			return fmt.Sprintf("field %q holds a bidirectional formatting character (%U)", field, c)
		}
	}
	return ""
}
