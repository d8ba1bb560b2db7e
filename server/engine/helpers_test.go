package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/docsapi/docsapi-go/server/store"
)

func TestFirstLine(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"Fix the intro", 60, "Fix the intro"},
		{"  Fix the intro \n", 60, "Fix the intro"},
		{"Line one\nLine two\nLine three", 60, "Line one"},
		{"\n\n  Title\nrest", 60, "Title"},
		{"", 60, ""},
		{"abcdefghij", 10, "abcdefghij"},  // exactly n: kept whole
		{"abcdefghijk", 10, "abcdefghi…"}, // n+1: cut to n with the ellipsis
		{"abcd    efgh", 6, "abcd…"},      // no space before the ellipsis
		{"ééééééééééé", 10, "ééééééééé…"}, // runes, not bytes
		{"日本語のドキュメントを更新する", 5, "日本語の…"},   // wide runes
		{"short\n" + strings.Repeat("x", 100), 10, "short"},
	} {
		got := firstLine(tc.in, tc.n)
		if got != tc.want {
			t.Errorf("firstLine(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
		if n := utf8.RuneCountInString(got); n > tc.n || !utf8.ValidString(got) {
			t.Errorf("firstLine(%q, %d) = %q: %d runes or invalid UTF-8", tc.in, tc.n, got, n)
		}
	}
}

// TestFirstLineCRLF: prompts come from HTTP clients, and a client on Windows
// sends "\r\n" line ends.
func TestFirstLineCRLF(t *testing.T) {
	if got := firstLine("Update the API page\r\nwith the new fields", 60); got != "Update the API page" {
		t.Errorf("firstLine = %q, want %q", got, "Update the API page")
	}
}

func TestCommitMessage(t *testing.T) {
	job := store.Job{ID: "job-9", Prompts: []store.Prompt{
		{Text: "Document the v2 API"},
		{Text: "Also fix the typo on the quickstart page\nand the broken link."},
	}}
	want := "Also fix the typo on the quickstart page\n\nAlso fix the typo on the quickstart page\nand the broken link.\n\nAgent job: job-9\n"
	if got := commitMessage(job); got != want {
		t.Errorf("commitMessage =\n%q\nwant\n%q", got, want)
	}

	long := strings.Repeat("word ", 30)
	subject, _, _ := strings.Cut(commitMessage(store.Job{ID: "j", Prompts: []store.Prompt{{Text: long}}}), "\n")
	if n := utf8.RuneCountInString(subject); n > 72 || !strings.HasSuffix(subject, "…") {
		t.Errorf("subject of a long prompt = %q (%d runes); want at most 72, cut with an ellipsis", subject, n)
	}
}

func TestPullRequestBody(t *testing.T) {
	got := pullRequestBody("job-9", []string{"Update the API page", "  Also fix\nthe typo  ", "And the links"})
	want := "Changes made by a documentation agent.\n\n" +
		"**Prompt**\n\n> Update the API page\n\n" +
		"**Follow-up 1**\n\n> Also fix\n> the typo\n\n" +
		"**Follow-up 2**\n\n> And the links\n\n" +
		"Agent job: `job-9`\n"
	if got != want {
		t.Errorf("pullRequestBody =\n%s\nwant\n%s", got, want)
	}
}

func TestPermanent(t *testing.T) {
	base := errors.New("bad credentials")
	if Permanent(nil) != nil {
		t.Error("Permanent(nil) != nil")
	}
	p := Permanent(base)
	wrapped := fmt.Errorf("opening the pull request: %w", p)
	if !IsPermanent(p) || !IsPermanent(wrapped) || IsPermanent(base) || IsPermanent(nil) {
		t.Errorf("IsPermanent: marked %v, wrapped %v, plain %v, nil %v; want true, true, false, false",
			IsPermanent(p), IsPermanent(wrapped), IsPermanent(base), IsPermanent(nil))
	}
	if !errors.Is(wrapped, base) || p.Error() != base.Error() {
		t.Errorf("Permanent hides its error: Is %v, text %q", errors.Is(wrapped, base), p.Error())
	}
}
