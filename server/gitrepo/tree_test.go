package gitrepo

import (
	"bytes"
	"context"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/docsapi/docsapi-go/server/engine"
)

// newDocsRemote makes a bare repository whose main branch holds a few
// pages, a file too large, symbolic links (one to /etc/passwd, one to
// nothing), a file that is not a page, and, through a tree object written
// by hand as an attacker could push it, a page at "../x.md".
func newDocsRemote(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bare, work := filepath.Join(dir, "docs.git"), filepath.Join(dir, "w")
	gitT(t, dir, "init", "--quiet", "--bare", "--initial-branch=main", bare)
	gitT(t, dir, "init", "--quiet", "--initial-branch=main", work)
	writeFile(t, filepath.Join(work, "docs/index.mdx"), "# Home\n")
	writeFile(t, filepath.Join(work, "docs/guide/install.md"), "# Install\n\nRun it.\n")
	writeFile(t, filepath.Join(work, "docs/big.md"), strings.Repeat("x", 5000))
	writeFile(t, filepath.Join(work, "main.go"), "package main\n")
	symlink(t, "/etc/passwd", filepath.Join(work, "docs/passwd.md"))
	symlink(t, "nowhere.md", filepath.Join(work, "docs/dangling.md"))
	gitT(t, work, "add", "--all")
	gitT(t, work, "commit", "--quiet", "-m", "docs")
	gitT(t, work, "push", "--quiet", bare, "main")

	// A commit whose tree has an entry named "..", which no checkout
	// would write but a crafted push can hold.
	blob := gitT(t, bare, "rev-parse", "main:docs/index.mdx")
	inner := mktree(t, bare, "100644 blob "+blob+"\tx.md\n")
	raw := append([]byte("40000 ..\x00"), unhex(t, inner)...)
	crafted := hashObject(t, bare, raw)
	withDots := mktree(t, bare, "040000 tree "+crafted+"\tevil\n"+
		"040000 tree "+gitT(t, bare, "rev-parse", "main:docs")+"\tdocs\n")
	commit := gitT(t, bare, "commit-tree", "-p", "main", "-m", "crafted", withDots)
	gitT(t, bare, "update-ref", "refs/heads/crafted", commit)
	return bare
}

func mktree(t *testing.T, repo, entries string) string {
	t.Helper()
	cmd := exec.Command("git", "mktree")
	cmd.Dir, cmd.Env, cmd.Stdin = repo, testEnv(t), strings.NewReader(entries)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git mktree: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

func hashObject(t *testing.T, repo string, tree []byte) string {
	t.Helper()
	cmd := exec.Command("git", "hash-object", "-w", "-t", "tree", "--literally", "--stdin")
	cmd.Dir, cmd.Env, cmd.Stdin = repo, testEnv(t), bytes.NewReader(tree)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git hash-object: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func isPage(p string) bool { return strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".mdx") }

func TestReadTree(t *testing.T) {
	bare := newDocsRemote(t)
	r, dir := newRepos(t, Config{})
	ctx := context.Background()
	tree, err := r.ReadTree(ctx, bare, TreeSpec{Ref: "crafted", Match: isPage, MaxFileBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if want := gitT(t, bare, "rev-parse", "crafted"); tree.Commit != want {
		t.Errorf("Commit = %s, want %s", tree.Commit, want)
	}
	var got []string
	for _, f := range tree.Files {
		got = append(got, f.Path)
		if want := gitT(t, bare, "rev-parse", "crafted:"+f.Path); f.Blob != want {
			t.Errorf("%s: Blob = %s, want %s", f.Path, f.Blob, want)
		}
		if want := gitT(t, bare, "show", "crafted:"+f.Path); strings.TrimSpace(string(f.Data)) != want {
			t.Errorf("%s: Data = %q, want %q", f.Path, f.Data, want)
		}
	}
	if want := []string{"docs/guide/install.md", "docs/index.mdx"}; !slices.Equal(got, want) {
		t.Errorf("Files = %q, want %q", got, want)
	}
	reasons := map[string]string{}
	for _, s := range tree.Skipped {
		reasons[s.Path] = s.Reason
	}
	for p, want := range map[string]string{
		"docs/passwd.md":   "symbolic link",
		"docs/dangling.md": "symbolic link",
		"docs/big.md":      "MaxFileBytes",
		"evil/../x.md":     "not a valid path",
	} {
		if !strings.Contains(reasons[p], want) {
			t.Errorf("Skipped[%s] = %q, want it to say %q (all: %q)", p, reasons[p], want, tree.Skipped)
		}
	}
	if err := fstest.TestFS(tree.FS(), "docs/guide/install.md", "docs/index.mdx"); err != nil {
		t.Error(err)
	}
	if b, err := fs.ReadFile(tree.FS(), "docs/index.mdx"); err != nil || string(b) != "# Home\n" {
		t.Errorf("FS: docs/index.mdx = %q, %v", b, err)
	}

	// Known files are listed, not read.
	known := tree.Files[0]
	again, err := r.ReadTree(ctx, bare, TreeSpec{Ref: "main", Match: isPage, MaxFileBytes: 1000,
		Known: func(p, blob string) bool { return p == known.Path && blob == known.Blob }})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range again.Files {
		if (f.Data == nil) != (f.Path == known.Path) {
			t.Errorf("%s: Data = %q with Known saying %v", f.Path, f.Data, f.Path == known.Path)
		}
	}
	if _, err := fs.Stat(again.FS(), known.Path); err == nil {
		t.Errorf("FS holds %s, whose contents were not read", known.Path)
	}

	// No folder of a read is left behind.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), workspacePrefix) {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestReadTreeLimits(t *testing.T) {
	bare := newDocsRemote(t)
	r, _ := newRepos(t, Config{})
	ctx := context.Background()
	for _, c := range []struct {
		name string
		spec TreeSpec
		want string
	}{
		{"files", TreeSpec{Match: isPage, MaxFiles: 1}, "more than 1 matching files (TreeSpec.MaxFiles)"},
		{"bytes", TreeSpec{Match: isPage, MaxBytes: 100}, "more than 100 bytes (TreeSpec.MaxBytes)"},
		{"ref", TreeSpec{Ref: "nope"}, `the ref "nope" does not exist`},
		{"option", TreeSpec{Ref: "-x"}, "not a valid branch or tag name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.ReadTree(ctx, bare, c.spec)
			if err == nil || !strings.Contains(err.Error(), c.want) || !engine.IsPermanent(err) {
				t.Fatalf("err = %v, want a permanent error saying %q", err, c.want)
			}
		})
	}
}
