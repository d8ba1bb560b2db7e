package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server/engine"
)

func TestLocalPath(t *testing.T) {
	for repo, want := range map[string]string{
		"/srv/git/docs.git":          "/srv/git/docs.git",
		"file:///srv/git/docs.git":   "/srv/git/docs.git",
		"FILE:///srv/git/docs.git":   "/srv/git/docs.git",
		"file://localhost/srv/a.git": "/srv/a.git",
		"docs.git":                   "docs.git",
		"./a:b.git":                  "./a:b.git", // a slash before the colon: a path
		"https://git.example/a.git":  "",
		"ssh://git@git.example/a":    "",
		"git@github.com:a/b.git":     "",
		"host:docs.git":              "",
		"file://elsewhere/srv/a.git": "",
		"":                           "",
	} {
		got, ok := LocalPath(repo)
		if got != want || ok != (want != "") {
			t.Errorf("LocalPath(%q) = %q, %v; want %q", repo, got, ok, want)
		}
	}
}

// CheckLocal accepts what a job can start from, and says what is wrong
// with the rest: in the same words as Open's choice of base, since both
// read the refs the same way.
func TestCheckLocal(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	remote := newRemote(t, root, "docs.git") // main (HEAD), other, tag v1
	r, parent := newRepos(t, Config{})

	empty := filepath.Join(root, "empty.git")
	gitT(t, root, "init", "--quiet", "--bare", "--initial-branch=main", empty)
	headless := newRemote(t, root, "headless.git")
	gitT(t, headless, "symbolic-ref", "HEAD", "refs/heads/trunk")
	plain := filepath.Join(root, "plain")
	writeFile(t, filepath.Join(plain, "index.md"), "# Not a repository\n")
	file := filepath.Join(root, "file.txt")
	writeFile(t, file, "a file\n")
	symlink(t, remote, filepath.Join(root, "link.git"))
	symlink(t, filepath.Join(root, "gone.git"), filepath.Join(root, "dangling.git"))
	symlink(t, "nowhere.git", filepath.Join(root, "dangling-relative.git"))
	// A work tree is a repository too: git reads its .git.
	work := filepath.Join(root, "work")
	gitT(t, root, "clone", "--quiet", remote, work)

	for _, tc := range []struct {
		name, repo, ref string
		want            Problem
		says            string
	}{
		{"default branch", remote, "", 0, ""},
		{"branch", remote, "other", 0, ""},
		{"branch in full", remote, "refs/heads/other", 0, ""},
		{"tag", remote, "v1", 0, ""},
		{"file URL", "file://" + remote, "main", 0, ""},
		{"link to a repository", filepath.Join(root, "link.git"), "main", 0, ""},
		{"work tree", work, "main", 0, ""},
		{"missing", filepath.Join(root, "missing.git"), "main", Missing, root + "/missing.git does not exist"},
		{"missing file URL", "file://" + filepath.Join(root, "missing.git"), "main", Missing, "missing.git does not exist"},
		{"dangling link", filepath.Join(root, "dangling.git"), "main", Missing, "is a symbolic link to " + root + "/gone.git, which does not exist"},
		{"dangling relative link", filepath.Join(root, "dangling-relative.git"), "", Missing, "is a symbolic link to nowhere.git, which does not exist"},
		{"a file", file, "main", NotFolder, "is a file, not a git repository"},
		{"not a repository", plain, "main", NotRepository, "plain is not a git repository: '" + plain + "' does not appear to be a git repository"},
		{"no commits", empty, "main", NoCommits, "empty.git has no commits"},
		{"no commits, default branch", empty, "", NoCommits, "has no commits"},
		{"no such ref", remote, "trunk", NoRef, `has no branch or tag "trunk" (its branches: main, other)`},
		{"HEAD names no branch", headless, "", NoDefaultBranch, "has no default branch"},
		{"relative", "docs.git", "main", NotAbsolute, "is not an absolute path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := r.CheckLocal(context.Background(), tc.repo, tc.ref)
			if tc.want == 0 {
				if err != nil {
					t.Fatalf("CheckLocal: %v", err)
				}
				// What the check accepts, a job can start from.
				ws := open(t, r, engine.RepoSpec{Repository: tc.repo, Ref: tc.ref, Branch: "job-" + strings.ReplaceAll(tc.name, " ", "-")})
				if err := ws.Close(); err != nil {
					t.Fatal(err)
				}
				return
			}
			var le *LocalError
			if !errors.As(err, &le) {
				t.Fatalf("CheckLocal: %v, want a *LocalError", err)
			}
			if le.Problem != tc.want || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("CheckLocal: problem %d, %q; want problem %d saying %q", le.Problem, err, tc.want, tc.says)
			}
			// What the check refuses, a job cannot start from either.
			if ws, err := r.Open(context.Background(), engine.RepoSpec{Repository: tc.repo, Ref: tc.ref, Branch: "b"}); err == nil {
				ws.Close()
				t.Fatalf("Open succeeded where CheckLocal refused")
			}
		})
	}
	if branches := r.CheckLocal(context.Background(), remote, "nope").(*LocalError).Branches; !slices.Equal(branches, []string{"main", "other"}) {
		t.Errorf("branches %q", branches)
	}
	// The check runs git in a run folder of its own and leaves nothing
	// but the mirrors of the repositories the jobs above opened.
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != MirrorFolder {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	if err := r.CheckLocal(context.Background(), "https://git.example/docs.git", "main"); err == nil || !strings.Contains(err.Error(), "not a repository on this machine") {
		t.Errorf("a remote repository: %v", err)
	}
}

// The branches listed are bounded, and say how many were left out.
func TestCheckLocalListsFewBranches(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	remote := newRemote(t, root, "docs.git")
	for i := range 12 {
		gitT(t, remote, "branch", "b"+string(rune('a'+i)), "main")
	}
	r, _ := newRepos(t, Config{})
	err := r.CheckLocal(context.Background(), remote, "nope")
	if want := "(its branches: ba, bb, bc, bd, be, bf, bg, bh, bi, bj and 4 more)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("CheckLocal: %v, want it to end %q", err, want)
	}
}
