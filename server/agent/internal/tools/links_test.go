package tools

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// These tests play the attacker: the repository was prepared with symbolic
// links, and the model sends the paths that would use them.

const hookSample = "#!/bin/sh\n# sample\n"

// linkFixture is a workspace with a real .git folder (hooks, info, objects)
// and a folder next to it, plus the links one test case creates.
type linkFixture struct {
	ws      *Workspace
	base    string // holds ws and outside
	dir     string // the workspace
	outside string
}

func newLinkFixture(t *testing.T, links map[string]string) linkFixture {
	t.Helper()
	base := t.TempDir()
	f := linkFixture{base: base, dir: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside")}
	files := map[string]string{
		"ws/.git/config":                   gitConf,
		"ws/.git/HEAD":                     "ref: refs/heads/main\n",
		"ws/.git/hooks/pre-commit.sample":  hookSample,
		"ws/.git/info/exclude":             "# exclude\n",
		"ws/.git/objects/info/packs":       "\n",
		"ws/b.md":                          "b page\n",
		"ws/docs/page.md":                  "a page\n",
		"outside/secret.txt":               secret,
		"outside/sub/secret2.md":           secret,
		"ws/folder-for-middle-links/x.txt": "x\n",
	}
	for name, content := range files {
		p := filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range links {
		p := filepath.Join(f.dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(strings.ReplaceAll(target, "$OUTSIDE", f.outside), p); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := Open(f.dir, testLimits)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	f.ws = ws
	return f
}

// snapshot records every entry under base: its kind and its content or
// link target, so that any file created, changed or removed anywhere (in
// the workspace, its .git or outside) shows up as a difference.
func (f linkFixture) snapshot(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(f.base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(f.base, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "link " + target
		case d.IsDir():
			out[rel] = "folder"
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = "file " + string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func assertSameTree(t *testing.T, before, after map[string]string) {
	t.Helper()
	var diffs []string
	for p, v := range after {
		if before[p] != v {
			diffs = append(diffs, p+": "+before[p]+" -> "+v)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			diffs = append(diffs, p+": removed")
		}
	}
	sort.Strings(diffs)
	for _, d := range diffs {
		t.Errorf("changed: %s", d)
	}
}

// inputs are the arguments of every tool for one path; edit_file and
// search look for text the link targets contain, so that a followed link
// would succeed.
func inputs(p string) map[string]string {
	q, _ := json.Marshal(p)
	return map[string]string{
		"list_files":  `{"path":` + string(q) + `}`,
		"read_file":   `{"path":` + string(q) + `}`,
		"search":      `{"pattern":"e","path":` + string(q) + `}`,
		"write_file":  `{"path":` + string(q) + `,"content":"#!/bin/sh\necho pwned\n"}`,
		"edit_file":   `{"path":` + string(q) + `,"old_string":"e","new_string":"pwned"}`,
		"delete_file": `{"path":` + string(q) + `}`,
	}
}

var allTools = []string{"list_files", "read_file", "search", "write_file", "edit_file", "delete_file"}

// assertRefused runs every tool on p and requires a refusal whose text
// contains want, and no change anywhere on disk. The tools share one
// fixture: each is judged on the tree as it found it, which a refusal
// leaves as it was.
func assertRefused(t *testing.T, links map[string]string, p, want string, tools ...string) {
	t.Helper()
	if len(tools) == 0 {
		tools = allTools
	}
	f := newLinkFixture(t, links)
	for _, tool := range tools {
		t.Run(tool, func(t *testing.T) {
			before := f.snapshot(t)
			res, err := f.ws.Call(tool, json.RawMessage(inputs(p)[tool]))
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if !res.IsError {
				t.Errorf("%s %s was not refused: %s", tool, p, res.Text)
			}
			if !strings.Contains(res.Text, want) {
				t.Errorf("%s %s: the reason %q does not contain %q", tool, p, res.Text, want)
			}
			for _, leak := range []string{"outside secret", "in git", "sample", f.base} {
				if strings.Contains(res.Text, leak) {
					t.Errorf("%s %s: the answer shows %q: %s", tool, p, leak, res.Text)
				}
			}
			assertSameTree(t, before, f.snapshot(t))
		})
	}
}

const refusedLink = "the tools do not follow symbolic links"

func TestDanglingLinkIntoGit(t *testing.T) {
	// The attack this package once let through: the targets do not exist,
	// so resolving them failed and the check fell back to the folder.
	for _, target := range []string{
		"../.git/hooks/pre-commit",
		"../.git/commondir",
		"../.git/info/attributes",
		"../.git/objects/info/alternates",
	} {
		t.Run(target, func(t *testing.T) {
			assertRefused(t, map[string]string{"docs/x.md": target}, "docs/x.md", "docs/x.md is a symbolic link; "+refusedLink)
		})
	}
}

func TestLinkToAFileInGit(t *testing.T) {
	assertRefused(t, map[string]string{"docs/x.md": "../.git/config"}, "docs/x.md", refusedLink)
}

func TestDanglingLinkOutside(t *testing.T) {
	assertRefused(t, map[string]string{"docs/x.md": "$OUTSIDE/new.md"}, "docs/x.md", refusedLink)
	assertRefused(t, map[string]string{"docs/x.md": "$OUTSIDE/missing/new.md"}, "docs/x.md", refusedLink)
	assertRefused(t, map[string]string{"docs/x.md": "../../outside/new.md"}, "docs/x.md", refusedLink)
}

func TestLinkInAMiddleComponent(t *testing.T) {
	for _, target := range []string{
		"../.git",                 // into .git, existing
		"../.git/hooks",           // into .git, existing
		"../.git/new-folder",      // into .git, dangling
		"$OUTSIDE",                // outside, existing
		"$OUTSIDE/missing",        // outside, dangling
		"folder-for-middle-links", // inside, existing: refused too
	} {
		t.Run(target, func(t *testing.T) {
			links := map[string]string{"linked": target}
			for _, p := range []string{"linked", "linked/x.txt", "linked/secret.txt", "linked/pre-commit", "linked/deep/new.md"} {
				t.Run(p, func(t *testing.T) {
					assertRefused(t, links, p, "linked is a symbolic link; "+refusedLink)
				})
			}
		})
	}
}

func TestLinkDeeperInThePath(t *testing.T) {
	links := map[string]string{"docs/sub": "../.git"}
	assertRefused(t, links, "docs/sub/hooks/pre-commit", "docs/sub/hooks/pre-commit: docs/sub is a symbolic link; "+refusedLink)
}

func TestLinkInsideTheWorkspace(t *testing.T) {
	// Links to pages of the workspace are refused as well: one rule that
	// needs no resolving is one that cannot be resolved wrongly.
	assertRefused(t, map[string]string{"a.md": "b.md"}, "a.md", "a.md is a symbolic link; "+refusedLink)
	assertRefused(t, map[string]string{"pages": "docs"}, "pages/page.md", "pages is a symbolic link; "+refusedLink)
}

func TestWriteUnderALinkedFolderCreatesNothing(t *testing.T) {
	// The tools never create links, and never create files or folders
	// through one: write_file would otherwise make the missing folders.
	links := map[string]string{"new": "$OUTSIDE/made", "hooks": "../.git/hooks"}
	for _, p := range []string{"new/a/b.md", "new/b.md", "hooks/pre-commit", "hooks/sub/x"} {
		t.Run(p, func(t *testing.T) {
			assertRefused(t, links, p, refusedLink, "write_file")
		})
	}
}

func TestGitNameVariants(t *testing.T) {
	for _, p := range []string{
		".GIT", ".GIT/config", ".Git/x", "a/.git/b", "a/.git", "docs/.gIt/hooks/pre-commit",
		".git.", ".git./hooks/pre-commit", ".git /config", ".git. . /x", "a/.git../b",
		"git~1/config", "GIT~1/hooks/pre-commit", "a/Git~2",
		".git::$INDEX_ALLOCATION/config", ".git:stream",
		".g\u200cit/config", "\ufeff.git/config",
		`.git\config`, `docs\.git\hooks\pre-commit`,
	} {
		t.Run(p, func(t *testing.T) {
			assertRefused(t, nil, p, "off limits")
		})
	}
}

func TestNotGitNames(t *testing.T) {
	f := newLinkFixture(t, nil)
	for _, p := range []string{".gitignore", ".github/x.md", "git/x.md", "x.git", ".git-blame-ignore-revs", "git~x", ".gitx/y"} {
		res, err := f.ws.Call("write_file", json.RawMessage(inputs(p)["write_file"]))
		if err != nil || res.IsError {
			t.Errorf("write_file %s: %v %s", p, err, res.Text)
		}
	}
}

func TestAFileAsAFolder(t *testing.T) {
	assertRefused(t, nil, "b.md/x.md", "b.md/x.md: b.md is a file, not a folder")
}

func TestListingShowsLinksWithoutFollowing(t *testing.T) {
	links := map[string]string{
		"docs/gitlink":  "../.git",
		"docs/hooks":    "../.git/hooks",
		"docs/out":      "$OUTSIDE",
		"docs/x.md":     "../.git/hooks/pre-commit",
		"docs/alias.md": "page.md",
	}
	f := newLinkFixture(t, links)
	before := f.snapshot(t)
	res, err := f.ws.Call("list_files", json.RawMessage(`{}`))
	if err != nil || res.IsError {
		t.Fatalf("list_files: %v %s", err, res.Text)
	}
	want := "b.md\n" +
		"docs/alias.md (symbolic link, not followed)\n" +
		"docs/gitlink (symbolic link, not followed)\n" +
		"docs/hooks (symbolic link, not followed)\n" +
		"docs/out (symbolic link, not followed)\n" +
		"docs/page.md\n" +
		"docs/x.md (symbolic link, not followed)\n" +
		"folder-for-middle-links/x.txt"
	if res.Text != want {
		t.Errorf("list_files =\n%s\nwant\n%s", res.Text, want)
	}
	res, err = f.ws.Call("search", json.RawMessage(`{"pattern":"e"}`))
	if err != nil || res.IsError {
		t.Fatalf("search: %v %s", err, res.Text)
	}
	if want := "b.md:1: b page\ndocs/page.md:1: a page"; res.Text != want {
		t.Errorf("search =\n%s\nwant\n%s", res.Text, want)
	}
	assertSameTree(t, before, f.snapshot(t))
}

// swap replaces the entry name of the workspace with a link to target, as
// another process could between resolve and the change.
func (f linkFixture) swap(t *testing.T, name, target string) {
	t.Helper()
	p := filepath.Join(f.dir, filepath.FromSlash(name))
	if err := os.Rename(p, p+"-moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

func TestALinkMadeAfterTheCheck(t *testing.T) {
	tests := []struct {
		name, path, swap, target string
		create                   bool
	}{
		{"a file becomes a link into .git", "docs/page.md", "docs/page.md", "../.git/hooks/pre-commit", false},
		{"a file becomes a link to a file in .git", "docs/page.md", "docs/page.md", "../.git/config", false},
		{"a folder becomes a link into .git", "docs/pre-commit", "docs", ".git/hooks", true},
		{"a folder becomes a dangling link", "docs/deep/x.md", "docs", ".git/new", true},
		{"a folder becomes a link outside", "docs/x.md", "docs", "../outside", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newLinkFixture(t, nil)
			p, err := f.ws.resolve(tt.path, false)
			if err != nil {
				t.Fatal(err)
			}
			f.swap(t, tt.swap, tt.target)
			before := f.snapshot(t)
			if err := f.ws.replace(tt.path, p, "pwned\n", tt.create); err == nil {
				t.Error("replace wrote through the link")
			}
			if _, err := f.ws.readFile(tt.path, p); err == nil {
				t.Error("readFile read through the link")
			}
			if folder, err := f.ws.openFolder(tt.path, filepath.Dir(p), false); err == nil {
				folder.Close()
				if tt.swap != tt.path {
					t.Error("openFolder opened a linked folder")
				}
			}
			assertSameTree(t, before, f.snapshot(t))
		})
	}
}

func TestAFolderReplacedAfterItWasOpened(t *testing.T) {
	// The order that Lstat before opening would miss: the name held
	// another folder (or a link) when it was opened than when it is looked
	// at.
	f := newLinkFixture(t, nil)
	child, err := f.ws.root.OpenRoot("docs")
	if err != nil {
		t.Fatal(err)
	}
	defer child.Close()
	opened, err := child.Stat(".")
	if err != nil {
		t.Fatal(err)
	}
	if err := verifyOpened(f.ws.root, "docs", opened); err != nil {
		t.Fatalf("the same folder: %v", err)
	}
	if err := os.Rename(filepath.Join(f.dir, "docs"), filepath.Join(f.dir, "old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(f.dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := verifyOpened(f.ws.root, "docs", opened); err == nil {
		t.Error("another folder under the name was taken for the opened one")
	}
	if err := os.Remove(filepath.Join(f.dir, "docs")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("old", filepath.Join(f.dir, "docs")); err != nil {
		t.Fatal(err)
	}
	if err := verifyOpened(f.ws.root, "docs", opened); err == nil {
		t.Error("a link to the opened folder was accepted")
	}
}

func TestWriteKeepsPermissionsAndLeavesNoTemporaryFile(t *testing.T) {
	f := newLinkFixture(t, nil)
	page := filepath.Join(f.dir, "docs", "page.md")
	if err := os.Chmod(page, 0o750); err != nil {
		t.Fatal(err)
	}
	for _, call := range []struct{ tool, input string }{
		{"write_file", `{"path":"docs/page.md","content":"a new page\n"}`},
		{"edit_file", `{"path":"docs/page.md","old_string":"new","new_string":"newer"}`},
	} {
		res, err := f.ws.Call(call.tool, json.RawMessage(call.input))
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %s", call.tool, err, res.Text)
		}
		info, err := os.Lstat(page)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode() != 0o750 {
			t.Errorf("after %s the mode is %v, want -rwxr-x---", call.tool, info.Mode())
		}
	}
	if got, _ := os.ReadFile(page); string(got) != "a newer page\n" {
		t.Errorf("page = %q", got)
	}
	entries, err := os.ReadDir(filepath.Join(f.dir, "docs"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("docs holds %d entries, want page.md alone: %v", len(entries), entries)
	}
}

func TestAHardLinkIntoGitIsNotWrittenThrough(t *testing.T) {
	// git cannot check out hard links, but a prepared workspace could hold
	// one; replacing the name instead of writing the file cuts it.
	f := newLinkFixture(t, nil)
	if err := os.Link(filepath.Join(f.dir, ".git", "config"), filepath.Join(f.dir, "docs", "h.md")); err != nil {
		t.Skip("no hard links here:", err)
	}
	for _, input := range []string{
		`{"path":"docs/h.md","old_string":"core","new_string":"alias"}`,
		`{"path":"docs/h.md","content":"[core]\n\tfsmonitor = touch /tmp/pwned\n"}`,
	} {
		tool := "edit_file"
		if strings.Contains(input, "content") {
			tool = "write_file"
		}
		if res, err := f.ws.Call(tool, json.RawMessage(input)); err != nil || res.IsError {
			t.Fatalf("%s: %v %s", tool, err, res.Text)
		}
		if got, _ := os.ReadFile(filepath.Join(f.dir, ".git", "config")); string(got) != gitConf {
			t.Errorf("%s changed .git/config through a hard link: %q", tool, got)
		}
	}
}
