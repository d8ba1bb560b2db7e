package tools

import (
	"errors"
	"testing"
)

// os.Root's own refusal of a path that leaves the workspace, which resolve
// normally answers first, is recognised by identity, not by its wording.
func TestDescribeAnEscapeRefusedByOSRoot(t *testing.T) {
	f := newFixture(t, testLimits)
	if f.ws.escapes == nil {
		t.Fatal("the workspace did not learn os.Root's error for a path that leaves it")
	}
	_, err := f.ws.root.Lstat("../outside/secret.txt")
	if err == nil {
		t.Fatal("os.Root let a path leave the workspace")
	}
	want := Result{Text: "../outside/secret.txt: the path leaves the workspace", IsError: true}
	if got := f.ws.describe("../outside/secret.txt", err); got != want {
		t.Errorf("describe(os.Root's escape) = %+v, want %+v", got, want)
	}
	// Through a link as well: os.Root follows it, then refuses where it leads.
	_, err = f.ws.root.Stat("out/secret.txt")
	if got := f.ws.describe("out/secret.txt", err); got.Text != "out/secret.txt: the path leaves the workspace" {
		t.Errorf("describe(escape through a link) = %+v", got)
	}
	// Any other error that happens to use the word is shown as it is.
	other := errors.New("the tide escapes the harbour")
	if got := f.ws.describe("a.md", other); got.Text != "a.md: the tide escapes the harbour" {
		t.Errorf("describe(an unrelated error) = %+v", got)
	}
}
