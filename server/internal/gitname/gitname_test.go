package gitname

import "testing"

func TestIsDotGit(t *testing.T) {
	for name, want := range map[string]bool{
		".git": true, ".GIT": true, ".Git": true, ".git.": true, ".git ": true, ".git. .": true,
		".git::$INDEX_ALLOCATION": true, "git~1": true, "GIT~1": true, "git~12": true,
		".g\u200cit": true, "\ufeff.git": true, `docs\.git`: true,
		".gitignore": false, ".github": false, "git": false, "git~": false, "git~a": false,
		".gitmodules": false, "x.git": false, "": false,
	} {
		if got := IsDotGit(name); got != want {
			t.Errorf("IsDotGit(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestInPath(t *testing.T) {
	for p, want := range map[string]bool{
		".git/config": true, "a/.GIT/b": true, `a\.git\b`: true, "docs/git~1/x": true,
		"docs/.github/x.md": false, "a/b.md": false, ".": false,
	} {
		if got := InPath(p); got != want {
			t.Errorf("InPath(%q) = %v, want %v", p, got, want)
		}
	}
}
