package tools

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	intro   = "# Intro\nHello world\nSecond line\nHello again\n"
	ref     = "API reference\nhello there\n"
	secret  = "outside secret\n"
	gitConf = "[core]\n\tsecret = in git\n"
)

// testLimits are small so that the limits can be reached with small files.
var testLimits = Limits{MaxFileBytes: 1024, MaxChangedBytes: 4096, MaxListEntries: 50, MaxSearchMatches: 50}

type fixture struct {
	ws      *Workspace
	dir     string // the workspace
	outside string // a folder next to it that must never be touched
}

// newFixture builds a workspace with pages, a .git folder, a large and a
// binary file, and symbolic links pointing inside, outside and into .git.
func newFixture(t *testing.T, limits Limits) fixture {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	files := map[string]string{
		"ws/docs/intro.md":       intro,
		"ws/docs/api/ref.mdx":    ref,
		"ws/README.md":           "Read me\n",
		"ws/.git/config":         gitConf,
		"ws/big.md":              strings.Repeat("Hello big\n", 200),
		"ws/logo.png":            "Hello\x00\x01\x02",
		"outside/secret.txt":     secret,
		"outside/sub/secret2.md": secret,
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
	links := map[string]string{
		"out":       outside,                              // absolute, to a folder outside
		"outfile":   filepath.Join(outside, "secret.txt"), // absolute, to a file outside
		"up":        "../outside",                         // relative, climbing out
		"gitlink":   ".git",                               // inside, but into .git
		"gitcfg":    ".git/config",
		"inlink.md": "docs/intro.md", // inside: refused all the same
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := Open(dir, limits)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return fixture{ws: ws, dir: dir, outside: outside}
}

func (f fixture) read(t *testing.T, name string) (string, bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(f.dir, filepath.FromSlash(name)))
	if errors.Is(err, os.ErrNotExist) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(data), true
}

// assertOutsideUntouched fails if anything outside the workspace changed:
// the folder next to it, and the workspace's parent.
func (f fixture) assertOutsideUntouched(t *testing.T) {
	t.Helper()
	var names []string
	err := filepath.WalkDir(filepath.Dir(f.dir), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(filepath.Dir(f.dir), p)
		if rel == "ws" && d.IsDir() {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			names = append(names, filepath.ToSlash(rel))
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if string(data) != secret {
				t.Errorf("%s was changed to %q", rel, data)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names, ","); got != "outside/secret.txt,outside/sub/secret2.md" {
		t.Errorf("files outside the workspace: %s", got)
	}
	if got, _ := f.read(t, ".git/config"); got != gitConf {
		t.Errorf(".git/config changed to %q", got)
	}
}

type toolCase struct {
	name  string
	tool  string
	input string
	// wantErr says the result must be an error for the model; want and
	// notWant are pieces its text must and must not contain.
	wantErr bool
	want    []string
	notWant []string
	exact   *string
	// check inspects the workspace afterwards.
	check func(t *testing.T, f fixture)
}

func ptr(s string) *string { return &s }

func runCases(t *testing.T, cases []toolCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, testLimits)
			res, err := f.ws.Call(tc.tool, json.RawMessage(tc.input))
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if res.IsError != tc.wantErr {
				t.Errorf("IsError = %v, want %v; text: %s", res.IsError, tc.wantErr, res.Text)
			}
			if tc.exact != nil && res.Text != *tc.exact {
				t.Errorf("text = %q, want %q", res.Text, *tc.exact)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("text does not contain %q:\n%s", w, res.Text)
				}
			}
			for _, w := range append(tc.notWant, "outside secret", "in git", f.dir) {
				if strings.Contains(res.Text, w) {
					t.Errorf("text contains %q:\n%s", w, res.Text)
				}
			}
			if tc.check != nil {
				tc.check(t, f)
			}
			f.assertOutsideUntouched(t)
		})
	}
}

func fileIs(name, want string) func(t *testing.T, f fixture) {
	return func(t *testing.T, f fixture) {
		t.Helper()
		got, ok := f.read(t, name)
		if !ok {
			t.Fatalf("%s does not exist", name)
		}
		if got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

func fileMissing(name string) func(t *testing.T, f fixture) {
	return func(t *testing.T, f fixture) {
		t.Helper()
		if _, ok := f.read(t, name); ok {
			t.Errorf("%s exists", name)
		}
	}
}

func TestReadFile(t *testing.T) {
	runCases(t, []toolCase{
		{name: "whole file", tool: "read_file", input: `{"path":"docs/intro.md"}`, exact: ptr(intro)},
		{name: "line range", tool: "read_file", input: `{"path":"docs/intro.md","start_line":2,"end_line":3}`, exact: ptr("Hello world\nSecond line\n")},
		{name: "range clamped at the end", tool: "read_file", input: `{"path":"docs/intro.md","start_line":4,"end_line":99}`, exact: ptr("Hello again\n")},
		{name: "start past the end", tool: "read_file", input: `{"path":"docs/intro.md","start_line":9}`, wantErr: true, want: []string{"has 4 lines"}},
		{name: "end before start", tool: "read_file", input: `{"path":"docs/intro.md","start_line":3,"end_line":2}`, wantErr: true},
		{name: "a path that climbs back in", tool: "read_file", input: `{"path":"docs/../docs/./intro.md"}`, exact: ptr(intro)},
		{name: "a link inside the workspace", tool: "read_file", input: `{"path":"inlink.md"}`, wantErr: true,
			exact: ptr("inlink.md: inlink.md is a symbolic link; the tools do not follow symbolic links")},
		{name: "missing", tool: "read_file", input: `{"path":"docs/none.md"}`, wantErr: true, want: []string{"no such file"}},
		{name: "a folder", tool: "read_file", input: `{"path":"docs"}`, wantErr: true, want: []string{"folder"}},
		{name: "no path", tool: "read_file", input: `{}`, wantErr: true, want: []string{"path is required"}},
		{name: "dot dot", tool: "read_file", input: `{"path":"../x"}`, wantErr: true, want: []string{"leaves the workspace"}},
		{name: "dot dot to a real file", tool: "read_file", input: `{"path":"../outside/secret.txt"}`, wantErr: true, want: []string{"leaves the workspace"}},
		{name: "absolute", tool: "read_file", input: `{"path":"/etc/passwd"}`, wantErr: true, want: []string{"absolute"}},
		{name: "climbing out through a folder", tool: "read_file", input: `{"path":"a/../../x"}`, wantErr: true, want: []string{"leaves the workspace"}},
		{name: "a link to a folder outside", tool: "read_file", input: `{"path":"out/secret.txt"}`, wantErr: true, want: []string{"out is a symbolic link"}},
		{name: "a link to a file outside", tool: "read_file", input: `{"path":"outfile"}`, wantErr: true, want: []string{refusedLink}},
		{name: "a relative link climbing out", tool: "read_file", input: `{"path":"up/sub/secret2.md"}`, wantErr: true, want: []string{"up is a symbolic link"}},
		{name: ".git", tool: "read_file", input: `{"path":".git/config"}`, wantErr: true, want: []string{".git folder is off limits"}},
		{name: ".git in another case", tool: "read_file", input: `{"path":".GIT/config"}`, wantErr: true, want: []string{"off limits"}},
		{name: ".git after cleaning", tool: "read_file", input: `{"path":"docs/../.git/config"}`, wantErr: true, want: []string{"off limits"}},
		{name: "a link to .git", tool: "read_file", input: `{"path":"gitlink/config"}`, wantErr: true, want: []string{"gitlink is a symbolic link"}},
		{name: "a link to a file in .git", tool: "read_file", input: `{"path":"gitcfg"}`, wantErr: true, want: []string{refusedLink}},
		{name: "over the size limit", tool: "read_file", input: `{"path":"big.md"}`, wantErr: true, want: []string{"2000 bytes, over the limit of 1024"}},
		{name: "binary", tool: "read_file", input: `{"path":"logo.png"}`, wantErr: true, want: []string{"binary"}},
		{name: "arguments that are not JSON", tool: "read_file", input: `{"path":`, wantErr: true, want: []string{"invalid arguments"}},
		{name: "unknown tool", tool: "run_shell", input: `{}`, wantErr: true, want: []string{`unknown tool "run_shell"`, "edit_file"}},
	})
}

func TestWriteFile(t *testing.T) {
	runCases(t, []toolCase{
		{name: "creates folders and the file", tool: "write_file", input: `{"path":"docs/guides/new.md","content":"# New\n"}`,
			want: []string{"created docs/guides/new.md (6 bytes)"}, check: fileIs("docs/guides/new.md", "# New\n")},
		{name: "replaces a file", tool: "write_file", input: `{"path":"README.md","content":"Hi\n"}`,
			want: []string{"wrote README.md"}, check: fileIs("README.md", "Hi\n")},
		{name: "an empty file", tool: "write_file", input: `{"path":"empty.md","content":""}`, check: fileIs("empty.md", "")},
		{name: "content missing", tool: "write_file", input: `{"path":"x.md"}`, wantErr: true, check: fileMissing("x.md")},
		{name: "a folder", tool: "write_file", input: `{"path":"docs","content":"x"}`, wantErr: true, want: []string{"is a folder"}},
		{name: "dot dot", tool: "write_file", input: `{"path":"../escape.md","content":"x"}`, wantErr: true, want: []string{"leaves the workspace"}},
		{name: "absolute", tool: "write_file", input: `{"path":"/srv/escape.md","content":"x"}`, wantErr: true, want: []string{"absolute"}},
		{name: "climbing out through a folder", tool: "write_file", input: `{"path":"docs/../../escape.md","content":"x"}`, wantErr: true},
		{name: "through a link to a folder outside", tool: "write_file", input: `{"path":"out/new.md","content":"x"}`, wantErr: true, want: []string{refusedLink}},
		{name: "through a link to a new folder outside", tool: "write_file", input: `{"path":"up/deep/new.md","content":"x"}`, wantErr: true},
		{name: "over a link to a file outside", tool: "write_file", input: `{"path":"outfile","content":"x"}`, wantErr: true, want: []string{refusedLink}},
		{name: "a git hook", tool: "write_file", input: `{"path":".git/hooks/pre-commit","content":"#!/bin/sh\n"}`, wantErr: true,
			check: fileMissing(".git/hooks/pre-commit")},
		{name: "a git hook through a link", tool: "write_file", input: `{"path":"gitlink/hooks/pre-commit","content":"#!/bin/sh\n"}`, wantErr: true,
			check: fileMissing(".git/hooks/pre-commit")},
		{name: "over the size limit", tool: "write_file", input: `{"path":"huge.md","content":"` + strings.Repeat("x", 1025) + `"}`, wantErr: true,
			want: []string{"1025 bytes, over the limit of 1024"}, check: fileMissing("huge.md")},
	})
}

func TestEditFile(t *testing.T) {
	runCases(t, []toolCase{
		{name: "one match", tool: "edit_file", input: `{"path":"docs/intro.md","old_string":"Hello world","new_string":"Hello, world"}`,
			want: []string{"edited docs/intro.md"}, check: fileIs("docs/intro.md", strings.Replace(intro, "Hello world", "Hello, world", 1))},
		{name: "deleting text", tool: "edit_file", input: `{"path":"docs/intro.md","old_string":"Second line\n","new_string":""}`,
			check: fileIs("docs/intro.md", "# Intro\nHello world\nHello again\n")},
		{name: "zero matches", tool: "edit_file", input: `{"path":"docs/intro.md","old_string":"Goodbye","new_string":"x"}`,
			wantErr: true, want: []string{"not found"}, check: fileIs("docs/intro.md", intro)},
		{name: "two matches", tool: "edit_file", input: `{"path":"docs/intro.md","old_string":"Hello","new_string":"Hi"}`,
			wantErr: true, want: []string{"occurs 2 times"}, check: fileIs("docs/intro.md", intro)},
		{name: "empty old_string", tool: "edit_file", input: `{"path":"docs/intro.md","old_string":"","new_string":"x"}`, wantErr: true},
		{name: "no change", tool: "edit_file", input: `{"path":"docs/intro.md","old_string":"Intro","new_string":"Intro"}`, wantErr: true},
		{name: "missing file", tool: "edit_file", input: `{"path":"none.md","old_string":"a","new_string":"b"}`, wantErr: true},
		{name: "over the size limit", tool: "edit_file", input: `{"path":"big.md","old_string":"Hello","new_string":"Hi"}`, wantErr: true},
		{name: "growing past the size limit", tool: "edit_file",
			input:   `{"path":"docs/intro.md","old_string":"Second line","new_string":"` + strings.Repeat("x", 1024) + `"}`,
			wantErr: true, want: []string{"would be"}, check: fileIs("docs/intro.md", intro)},
		{name: "binary", tool: "edit_file", input: `{"path":"logo.png","old_string":"Hello","new_string":"Hi"}`, wantErr: true},
		{name: "a file outside through a link", tool: "edit_file", input: `{"path":"out/secret.txt","old_string":"outside","new_string":"x"}`, wantErr: true},
		{name: "a file in .git", tool: "edit_file", input: `{"path":".git/config","old_string":"core","new_string":"x"}`, wantErr: true},
		{name: "dot dot", tool: "edit_file", input: `{"path":"../outside/secret.txt","old_string":"outside","new_string":"x"}`, wantErr: true},
	})
}

func TestDeleteFile(t *testing.T) {
	runCases(t, []toolCase{
		{name: "a file", tool: "delete_file", input: `{"path":"README.md"}`, want: []string{"deleted README.md"}, check: fileMissing("README.md")},
		{name: "a folder", tool: "delete_file", input: `{"path":"docs/api"}`, wantErr: true, check: fileIs("docs/api/ref.mdx", ref)},
		{name: "a link to a file outside", tool: "delete_file", input: `{"path":"outfile"}`, wantErr: true},
		{name: "a file outside through a link", tool: "delete_file", input: `{"path":"out/secret.txt"}`, wantErr: true},
		{name: "a file in .git", tool: "delete_file", input: `{"path":".git/config"}`, wantErr: true},
		{name: "missing", tool: "delete_file", input: `{"path":"none.md"}`, wantErr: true, want: []string{"no such file"}},
	})
}

func TestListFiles(t *testing.T) {
	runCases(t, []toolCase{
		{name: "everything", tool: "list_files", input: `{}`,
			want:    []string{"README.md\n", "docs/api/ref.mdx\n", "docs/intro.md\n", "big.md"},
			notWant: []string{".git/", "config"}},
		{name: "links are marked", tool: "list_files", input: `{"glob":"*link*"}`,
			exact: ptr("gitlink (symbolic link, not followed)\ninlink.md (symbolic link, not followed)")},
		{name: "a folder", tool: "list_files", input: `{"path":"docs"}`, exact: ptr("docs/api/ref.mdx\ndocs/intro.md")},
		{name: "a glob on names", tool: "list_files", input: `{"path":"docs","glob":"*.mdx"}`, exact: ptr("docs/api/ref.mdx")},
		{name: "a glob with braces", tool: "list_files", input: `{"glob":"*.{mdx,png}"}`, exact: ptr("docs/api/ref.mdx\nlogo.png")},
		{name: "a glob spanning folders", tool: "list_files", input: `{"glob":"**/*.md"}`,
			want: []string{"README.md", "docs/intro.md", "big.md"}, notWant: []string{"ref.mdx"}},
		{name: "a glob on paths below the folder", tool: "list_files", input: `{"path":"docs","glob":"api/*"}`, exact: ptr("docs/api/ref.mdx")},
		{name: "nothing matches", tool: "list_files", input: `{"glob":"*.txt"}`, exact: ptr("no files found")},
		{name: "a bad glob", tool: "list_files", input: `{"glob":"[a"}`, wantErr: true},
		{name: "dot dot", tool: "list_files", input: `{"path":".."}`, wantErr: true, want: []string{"leaves the workspace"}},
		{name: "absolute", tool: "list_files", input: `{"path":"/etc"}`, wantErr: true},
		{name: "a link to a folder outside", tool: "list_files", input: `{"path":"out"}`, wantErr: true},
		{name: ".git", tool: "list_files", input: `{"path":".git"}`, wantErr: true},
		{name: "a link to .git", tool: "list_files", input: `{"path":"gitlink"}`, wantErr: true},
	})
}

func TestSearch(t *testing.T) {
	runCases(t, []toolCase{
		{name: "a substring", tool: "search", input: `{"pattern":"Hello"}`,
			exact: ptr("docs/intro.md:2: Hello world\ndocs/intro.md:4: Hello again")},
		{name: "ignoring case", tool: "search", input: `{"pattern":"hello ","ignore_case":true}`,
			exact: ptr("docs/api/ref.mdx:2: hello there\ndocs/intro.md:2: Hello world\ndocs/intro.md:4: Hello again")},
		{name: "a regexp", tool: "search", input: `{"pattern":"^Hello (world|there)$","regexp":true,"ignore_case":true}`,
			exact: ptr("docs/api/ref.mdx:2: hello there\ndocs/intro.md:2: Hello world")},
		{name: "regexp characters in a substring are plain", tool: "search", input: `{"pattern":"(world"}`, exact: ptr("no matches")},
		{name: "an invalid regexp", tool: "search", input: `{"pattern":"(world","regexp":true}`, wantErr: true, want: []string{"RE2"}},
		{name: "in a folder", tool: "search", input: `{"pattern":"e","path":"docs/api"}`, want: []string{"docs/api/ref.mdx:1:"}, notWant: []string{"intro"}},
		{name: "with a glob", tool: "search", input: `{"pattern":"e","glob":"*.mdx"}`, notWant: []string{"intro", "README"}},
		{name: "skips .git, links out, large and binary files", tool: "search", input: `{"pattern":"secret"}`, exact: ptr("no matches")},
		{name: "skips large and binary files", tool: "search", input: `{"pattern":"Hello big"}`, exact: ptr("no matches")},
		{name: "no pattern", tool: "search", input: `{}`, wantErr: true},
		{name: "dot dot", tool: "search", input: `{"pattern":"secret","path":"../outside"}`, wantErr: true},
		{name: "through a link outside", tool: "search", input: `{"pattern":"secret","path":"out"}`, wantErr: true},
		{name: "in .git", tool: "search", input: `{"pattern":"core","path":".git"}`, wantErr: true},
	})
}

func TestResultBounds(t *testing.T) {
	f := newFixture(t, Limits{MaxListEntries: 2, MaxSearchMatches: 1})
	res, _ := f.ws.Call("list_files", json.RawMessage(`{"path":"docs"}`))
	if res.Text != "docs/api/ref.mdx\ndocs/intro.md" {
		t.Errorf("two entries fit: %q", res.Text)
	}
	res, _ = f.ws.Call("list_files", json.RawMessage(`{}`))
	if lines := strings.Split(res.Text, "\n"); len(lines) != 3 || !strings.Contains(lines[2], "stopped after 2 entries") {
		t.Errorf("listing was not cut at 2 entries: %q", res.Text)
	}
	res, _ = f.ws.Call("search", json.RawMessage(`{"pattern":"Hello","path":"docs"}`))
	if res.Text != "docs/intro.md:2: Hello world\n(stopped after 1 matches; narrow the search with path, glob or a more specific pattern)" {
		t.Errorf("search was not cut at 1 match: %q", res.Text)
	}
	long := strings.Repeat("é", maxLineRunes+10)
	if r, _ := f.ws.Call("write_file", json.RawMessage(`{"path":"long.md","content":"`+long+`"}`)); r.IsError {
		t.Fatal(r.Text)
	}
	res, _ = f.ws.Call("search", json.RawMessage(`{"pattern":"é","path":"long.md"}`))
	if want := "long.md:1: " + strings.Repeat("é", maxLineRunes) + "…"; res.Text != want {
		t.Errorf("a long line was not cut: %q", res.Text)
	}
}

func TestChangeLimit(t *testing.T) {
	f := newFixture(t, Limits{MaxChangedBytes: 100})
	call := func(tool, input string) (Result, error) {
		t.Helper()
		return f.ws.Call(tool, json.RawMessage(input))
	}
	if r, err := call("write_file", `{"path":"a.md","content":"`+strings.Repeat("a", 60)+`"}`); err != nil || r.IsError {
		t.Fatalf("write: %v %s", err, r.Text)
	}
	if got := f.ws.Changed(); got != 60 {
		t.Errorf("after a new 60-byte file Changed() = %d, want 60", got)
	}
	// A whole-file rewrite that changes one word costs that word.
	if r, err := call("write_file", `{"path":"docs/intro.md","content":"# Intro\nHello there\nSecond line\nHello again\n"}`); err != nil || r.IsError {
		t.Fatalf("rewrite: %v %s", err, r.Text)
	}
	if got := f.ws.Changed(); got != 70 {
		t.Errorf("after rewriting world as there Changed() = %d, want 70", got)
	}
	r, err := call("write_file", `{"path":"b.md","content":"`+strings.Repeat("b", 31)+`"}`)
	if !errors.Is(err, ErrChangeLimit) || !r.IsError {
		t.Fatalf("a change past the limit: err %v, result %+v", err, r)
	}
	if _, ok := f.read(t, "b.md"); ok {
		t.Error("the refused change was made")
	}
	r, err = call("edit_file", `{"path":"docs/intro.md","old_string":"Second line","new_string":"`+strings.Repeat("c", 30)+`"}`)
	if !errors.Is(err, ErrChangeLimit) || !r.IsError {
		t.Fatalf("an edit past the limit: err %v, result %+v", err, r)
	}
	if got := f.ws.Changed(); got != 70 {
		t.Errorf("refused changes were counted: Changed() = %d, want 70", got)
	}
	// Exactly reaching the limit is allowed: README.md is 8 bytes.
	if r, err := call("delete_file", `{"path":"README.md"}`); err != nil || r.IsError {
		t.Fatalf("delete: %v %s", err, r.Text)
	}
	if r, err := call("write_file", `{"path":"c.md","content":"`+strings.Repeat("c", 22)+`"}`); err != nil || r.IsError {
		t.Fatalf("a change that reaches the limit exactly: %v %s", err, r.Text)
	}
	if r, err := call("delete_file", `{"path":"c.md"}`); !errors.Is(err, ErrChangeLimit) || !r.IsError {
		t.Fatalf("deleting past the limit: err %v, result %+v", err, r)
	}
}

func TestChangeSize(t *testing.T) {
	tests := []struct {
		old, new string
		want     int64
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"abc", "abc", 0},
		{"Hello world", "Hello there", 10},
		{"aXa", "aYYa", 3},
		{"aaa", "aaaa", 1}, // the shared prefix and suffix must not overlap
		{"abcabc", "abc", 3},
	}
	for _, tt := range tests {
		if got := changeSize(tt.old, tt.new); got != tt.want {
			t.Errorf("changeSize(%q, %q) = %d, want %d", tt.old, tt.new, got, tt.want)
		}
	}
}

func TestDefinitions(t *testing.T) {
	defs := Definitions()
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
		var schema struct {
			Type       string
			Properties map[string]json.RawMessage
			Required   []string
		}
		if err := json.Unmarshal(d.Schema, &schema); err != nil {
			t.Errorf("%s: schema: %v", d.Name, err)
			continue
		}
		if schema.Type != "object" || d.Description == "" {
			t.Errorf("%s: type %q, description %q", d.Name, schema.Type, d.Description)
		}
		for _, r := range schema.Required {
			if _, ok := schema.Properties[r]; !ok {
				t.Errorf("%s: required %q is not a property", d.Name, r)
			}
		}
	}
	if got := strings.Join(names, ","); got != "delete_file,edit_file,list_files,read_file,search,write_file" {
		t.Errorf("tools = %s", got)
	}
	// Every declared tool is one Call knows.
	f := newFixture(t, testLimits)
	for _, d := range defs {
		if r, _ := f.ws.Call(d.Name, json.RawMessage(`{}`)); strings.Contains(r.Text, "unknown tool") {
			t.Errorf("%s is declared but unknown", d.Name)
		}
	}
}
