package store_test

import (
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server/store"
)

func TestPromptSummary(t *testing.T) {
	exact := strings.Repeat("a", store.MaxSummaryLength)
	for _, tc := range []struct{ name, text, want string }{
		{"empty", "", ""},
		{"white space alone", " \n\t\r\n", ""},
		{"one line", "Fix the guide", "Fix the guide"},
		{"first line of several", "Fix the guide\nand the FAQ", "Fix the guide"},
		{"blank lines first, CRLF", "\r\n  \r\n  Fix  the\tguide  \r\nmore", "Fix the guide"},
		{"exactly the bound", exact + "\nmore", exact},
		{"one past the bound", exact + "b", strings.Repeat("a", store.MaxSummaryLength-1) + "…"},
		{"cut before a space", strings.Repeat("a", store.MaxSummaryLength-2) + " bcd", strings.Repeat("a", store.MaxSummaryLength-2) + "…"},
		{"cut at a space", strings.Repeat("abc ", 40), strings.TrimSpace(strings.Repeat("abc ", 30)) + "…"},
		{"cut inside a word", strings.Repeat("abcdefgh ", 40), strings.TrimSpace(strings.Repeat("abcdefgh ", 13)) + "…"},
		{"a long word cut", "a " + strings.Repeat("b", store.MaxSummaryLength), "a " + strings.Repeat("b", store.MaxSummaryLength-3) + "…"},
		{"characters, not bytes", strings.Repeat("é", store.MaxSummaryLength), strings.Repeat("é", store.MaxSummaryLength)},
		{"past the scan", strings.Repeat("\n", store.SummaryScan) + "late", ""},
		{"ends at the scan", strings.Repeat("\n", store.SummaryScan-4) + "late!", "late"},
	} {
		if got := store.PromptSummary(tc.text); got != tc.want {
			t.Errorf("%s: PromptSummary = %q, want %q", tc.name, got, tc.want)
		}
	}
}
