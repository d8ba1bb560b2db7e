package gitrepo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// makeTree makes entries under dir: "path" a file, "path/" a folder,
// "path -> target" a symbolic link.
func makeTree(t *testing.T, dir string, entries []string) {
	t.Helper()
	for _, e := range entries {
		switch path, target, isLink := strings.Cut(e, " -> "); {
		case isLink:
			symlink(t, target, filepath.Join(dir, path))
		case strings.HasSuffix(e, "/"):
			if err := os.MkdirAll(filepath.Join(dir, e), 0o755); err != nil {
				t.Fatal(err)
			}
		default:
			writeFile(t, filepath.Join(dir, e), "x\n")
		}
	}
}

func TestCheckTree(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		entries []string
		want    string // "" for allowed, else what the refusal says
	}{
		{"files", []string{"README.md", "docs/a.md", "docs/api/ref.md"}, ""},
		{"empty", nil, ""},
		{"links inside", []string{"docs/index.md", "README.md -> docs/index.md", "b.md", "docs/a.md -> ../b.md"}, ""},
		{"link to a folder, then down", []string{"docs/index.md", "d -> docs", "x -> d/index.md"}, ""},
		{"dangling inside", []string{"docs/new.md -> later/new.md", "gone -> nowhere/../at/all"}, ""},
		{"the tree itself", []string{"r -> .", "docs/up -> ..", "docs/a.md", "ok -> r/docs/a.md"}, ""},
		{"up from a folder reached through a link", []string{"a/b/", "a/up -> b/../..", "l -> a/b", "m -> l/../../README.md"}, ""},
		{"names that are not .git", []string{".gitignore", ".github/workflows/ci.yml", "docs/.gitattributes", ".gitmodules", "git", "x.git", ".git-blame-ignore", "docs/_git/", "g -> .github/workflows"}, ""},
		{"deep chain", chain(40), ""},

		{"absolute", []string{"docs/x.md -> /etc/passwd"}, "docs/x.md is a symbolic link to an absolute path (/etc/passwd)"},
		{"escaping", []string{"x -> ../outside"}, "x is a symbolic link that leaves the tree (../outside)"},
		{"escaping deep", []string{"docs/a/x -> ../../../y"}, "docs/a/x is a symbolic link that leaves the tree (../../../y)"},
		{"escaping through a link", []string{"r -> .", "esc -> r/.."}, "esc is a symbolic link that leaves the tree (r/..)"},
		{"escaping through a link up", []string{"docs/here -> ..", "docs/esc -> here/.."}, "docs/esc is a symbolic link that leaves the tree (here/..)"},
		{"through an absolute link", []string{"docs/", "b -> z/x", "z -> /etc"}, "b is a symbolic link that leaves the tree (z/x)"},
		{"into .git", []string{"docs/x.md -> ../.git/hooks/pre-commit"}, "docs/x.md is a symbolic link into a git directory (../.git/hooks/pre-commit)"},
		{"into .GiT", []string{"x -> .GiT/config"}, "x is a symbolic link into a git directory (.GiT/config)"},
		{"into .git.", []string{"x -> .git./config"}, "x is a symbolic link into a git directory (.git./config)"},
		{"into git~1", []string{"x -> GIT~1/config"}, "x is a symbolic link into a git directory (GIT~1/config)"},
		{"into a nested .git", []string{"sub/", "x -> sub/.git/config"}, "x is a symbolic link into a git directory (sub/.git/config)"},
		{"into .git through a link", []string{"docs/", "d -> docs", "x -> d/../.git"}, "x is a symbolic link into a git directory (d/../.git)"},
		{"through a link into .git", []string{"h -> .git/hooks", "x -> h/pre-commit"}, "h is a symbolic link into a git directory (.git/hooks)"},
		{"loop", []string{"a -> b", "b -> a"}, "a is a symbolic link with too many levels of links (b)"},
		{"too long a chain", chain(41), "l00 is a symbolic link with too many levels of links (l01)"},

		{"root .git folder", []string{".git/", "README.md"}, ".git is a nested git repository (an entry named like .git)"},
		{"root .git file", []string{".git"}, ".git is a nested git repository (an entry named like .git)"},
		{"nested .git folder", []string{"sub/.git/config"}, "sub/.git is a nested git repository (an entry named like .git)"},
		{"nested .git file", []string{"sub/.git"}, "sub/.git is a nested git repository (an entry named like .git)"},
		{"sub/.GIT", []string{"sub/.GIT/"}, "sub/.GIT is a nested git repository (an entry named like .git)"},
		{".git with a trailing dot", []string{"sub/.git."}, "sub/.git. is a nested git repository (an entry named like .git)"},
		{".git with a trailing space", []string{"sub/.git "}, "sub/.git  is a nested git repository (an entry named like .git)"},
		{"short name", []string{"sub/git~1/"}, "sub/git~1 is a nested git repository (an entry named like .git)"},
		{"NTFS stream", []string{".git::$INDEX_ALLOCATION"}, ".git::$INDEX_ALLOCATION is a nested git repository (an entry named like .git)"},
		{"HFS ignorable", []string{"sub/.g\u200cit"}, "sub/.g\u200cit is a nested git repository (an entry named like .git)"},
		{"link named .git", []string{"docs/", ".git -> docs"}, ".git is a nested git repository (an entry named like .git)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			makeTree(t, dir, tc.entries)
			err := checkTree(dir)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("checkTree refused: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("checkTree allowed it; want %q", tc.want)
			case tc.want != "" && err.Error() != tc.want:
				t.Fatalf("checkTree = %q, want %q", err, tc.want)
			}
		})
	}
}

// chain is n links, each to the next, the last to a file.
func chain(n int) []string {
	entries := []string{"end.md"}
	for i := range n {
		next := "end.md"
		if i < n-1 {
			next = linkName(i + 1)
		}
		entries = append(entries, linkName(i)+" -> "+next)
	}
	return entries
}

func linkName(i int) string { return "l" + string(rune('0'+i/10)) + string(rune('0'+i%10)) }

func TestCheckTreeErrors(t *testing.T) {
	t.Parallel()
	if err := checkTree(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing tree passed")
	}
}

func TestCheckStaged(t *testing.T) {
	t.Parallel()
	const (
		zero = "0000000000000000000000000000000000000000"
		a    = "1111111111111111111111111111111111111111"
		b    = "2222222222222222222222222222222222222222"
	)
	raw := func(oldMode, newMode, oldID, newID, status, path string) string {
		return ":" + oldMode + " " + newMode + " " + oldID + " " + newID + " " + status + "\x00" + path + "\x00"
	}
	for _, tc := range []struct {
		name   string
		raw    string
		staged bool
		want   string
	}{
		{"nothing", "", false, ""},
		{"files", raw("000000", "100644", zero, a, "A", "a.md") + raw("100644", "100644", a, b, "M", "docs/b.md") +
			raw("100644", "000000", a, zero, "D", "old.txt") + raw("000000", "120000", zero, a, "A", "l"), true, ""},
		{"a gitlink removed", raw("160000", "000000", a, zero, "D", "sub"), true, ""},
		{"a gitlink made a folder", raw("160000", "000000", a, zero, "D", "sub") + raw("000000", "100644", zero, b, "A", "sub/a.md"), true, ""},
		{"a new gitlink", raw("000000", "160000", zero, a, "A", "sub"), true, "sub is a submodule (gitlink) to commit " + a + ", new or changed"},
		{"a gitlink moved", raw("160000", "160000", a, b, "M", "lib/sub"), true, "lib/sub is a submodule (gitlink) to commit " + b + ", new or changed"},
		{"a file made a gitlink", raw("100644", "160000", a, b, "T", "x"), true, "x is a submodule (gitlink)"},
		{"a path into .git", raw("000000", "100644", zero, a, "A", "sub/.Git/config"), true, "sub/.Git/config is a path into a git directory"},
		{"garbage", "what\x00", false, "unexpected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			staged, err := checkStaged(tc.raw)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("checkStaged refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("checkStaged = %v, want %q", err, tc.want)
			case tc.want == "" && staged != tc.staged:
				t.Fatalf("checkStaged says staged = %v, want %v", staged, tc.staged)
			}
		})
	}
}
