package input

import (
	"strings"
	"testing"
)

func TestPathProblem(t *testing.T) {
	long := "/" + string(make([]byte, MaxPathBytes))
	tests := []struct {
		path, want string
	}{
		{"/guide/intro", ""},
		{"/caf\u00e9/\u65e5\u672c", ""}, // letters of any script
		{"/a b/%E2%80%AE", ""},          // escapes are text, not characters
		{"/emoji-\u200d-joiner", ""},    // a joiner does not reorder text
		{"guide", "must start with /"},
		{long, "has 2049 bytes; at most 2048"},
		{"/a\x00", "control character (U+0000) at byte 2"},
		{"/a\tb", "control character (U+0009)"},
		{"/a\x1f", "control character (U+001F)"},
		{"/a\x7f", "control character (U+007F)"},
		{"/a\u0080", "control character (U+0080)"},
		{"/a\u0085", "control character (U+0085)"},
		{"/a\u009f", "control character (U+009F)"},
		{"/a\u061c", "bidirectional formatting character (U+061C)"},
		{"/a\u200e", "bidirectional formatting character (U+200E)"},
		{"/a\u200f", "bidirectional formatting character (U+200F)"},
		{"/a\u202a", "bidirectional formatting character (U+202A)"},
		{"/txt.\u202egnp", "bidirectional formatting character (U+202E) at byte 5"},
		{"/a\u2066", "bidirectional formatting character (U+2066)"},
		{"/a\u2069", "bidirectional formatting character (U+2069)"},
		{"/a\u2065", ""}, // unassigned, just outside the isolates
		{"/a\u202f", ""}, // a narrow no-break space, just after the overrides
	}
	for _, tt := range tests {
		got := PathProblem(tt.path)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("PathProblem(%.40q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}
