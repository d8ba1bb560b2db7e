package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

func rootFS(t *testing.T, dir string) *os.Root {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root
}

// The small site in testdata, end to end.
func TestReadSite(t *testing.T) {
	res, err := Read(rootFS(t, "testdata/site").FS(), Options{ProjectID: "p1", Root: "docs"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Navigation != "docs.json" {
		t.Errorf("Navigation = %q", res.Navigation)
	}
	want := []store.DocPage{
		{ProjectID: "p1", Path: "/", File: "docs/index.mdx", Title: "Introduction", Description: "What Example does.",
			Groups: []string{"Get started"}, Version: "v2", Sections: []store.DocSection{
				{Text: "Example turns notes into docs."},
				{Anchor: "next-steps", Heading: "Next steps", Text: "Quickstart Start in five minutes."},
			}},
		{ProjectID: "p1", Path: "/guide", File: "docs/guide/index.mdx", Title: "Guide overview",
			Groups: []string{"Get started", "Install"}, Version: "v2", Sections: []store.DocSection{
				{Anchor: "guide-overview", Heading: "Guide overview", Text: "The guide."},
			}},
		{ProjectID: "p1", Path: "/guide/install", File: "docs/guide/install.mdx", Title: "Install",
			Groups: []string{"Get started", "Install"}, Version: "v2", Sections: []store.DocSection{
				{Text: "Install steps."},
			}},
		{ProjectID: "p1", Path: "/quickstart", File: "docs/quickstart.mdx", Title: "Quickstart",
			Groups: []string{"Get started"}, Version: "v2", Sections: []store.DocSection{
				{Anchor: "install", Heading: "Install", Code: "npm i -g example\n"},
				{Anchor: "install-2", Heading: "Install", Text: "Again, with yarn."},
			}},
		{ProjectID: "p1", Path: "/v1/quickstart", File: "docs/v1/quickstart.md", Title: "Quickstart (v1)",
			Groups: []string{"Get started"}, Version: "v1", Sections: []store.DocSection{{Text: "Old way."}}},
	}
	if got := fmt.Sprintf("%+v", res.Pages); got != fmt.Sprintf("%+v", want) {
		t.Errorf("Pages:\n got %+v\nwant %+v", res.Pages, want)
	}
	wantSkipped := []Skipped{
		{"docs/api/overview.mdx", "hidden: hidden: true in its front matter (the site's search leaves hidden pages out)"},
		{"docs/internal.mdx", "hidden: under a hidden part of docs.json's navigation (the site's search leaves hidden pages out)"},
		{"docs/orphan.md", "hidden: not in docs.json's navigation (the site's search leaves hidden pages out)"},
	}
	if !slices.Equal(res.Skipped, wantSkipped) {
		t.Errorf("Skipped:\n got %q\nwant %q", res.Skipped, wantSkipped)
	}
	if len(res.Problems) != 1 || res.Problems[0].Error() != "docs/guide/install.mdx:2: front matter key \"title\": a quoted value without its closing quote; the page is read without its front matter" {
		t.Errorf("Problems = %v", res.Problems)
	}
}

func TestReadWithoutNavigation(t *testing.T) {
	fsys := fstest.MapFS{
		"README.md":              {Data: []byte("# Project\n\nHello.")},
		"guide/install.md":       {Data: []byte("---\ntitle: Install\n---\nSteps.")},
		"guide/install.mdx":      {Data: []byte("---\ntitle: Install (MDX)\n---\nSteps.")},
		"guide/install/index.md": {Data: []byte("Shadowed.")},
		"getting_started-now.md": {Data: []byte("No title.")},
		"secret.md":              {Data: []byte("---\nhidden: true\n---\nx")},
		"noindex.md":             {Data: []byte("---\nnoindex: true\n---\nx")},
		"nosearch.md":            {Data: []byte("---\nsearchable: false\n---\nx")},
		"big.md":                 {Data: []byte(strings.Repeat("a", 101))},
		"notes.txt":              {Data: []byte("not a page")},
	}
	res, err := Read(fsys, Options{MaxFileBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range res.Pages {
		got = append(got, p.Path+" "+p.File+" "+p.Title)
		if p.Groups != nil || p.Version != "" || p.Language != "" {
			t.Errorf("%s: navigation fields without a navigation: %+v", p.Path, p)
		}
	}
	want := []string{"/ README.md Project", "/getting_started-now getting_started-now.md Getting started now",
		"/guide/install guide/install.mdx Install (MDX)"}
	if !slices.Equal(got, want) {
		t.Errorf("pages:\n got %q\nwant %q", got, want)
	}
	var skipped []string
	for _, s := range res.Skipped {
		skipped = append(skipped, s.File+": "+s.Reason)
	}
	wantSkipped := []string{
		"big.md: larger than 100 bytes (Options.MaxFileBytes)",
		"guide/install.md: serves the same path /guide/install as guide/install.mdx",
		"guide/install/index.md: serves the same path /guide/install as guide/install.mdx",
		"noindex.md: noindex: true in its front matter",
		"nosearch.md: searchable: false in its front matter",
		"secret.md: hidden: true in its front matter (the site's search leaves hidden pages out)",
	}
	if !slices.Equal(skipped, wantSkipped) {
		t.Errorf("skipped:\n got %q\nwant %q", skipped, wantSkipped)
	}
}

func TestReadLimitsAndRoot(t *testing.T) {
	fsys := fstest.MapFS{"a.md": {Data: []byte("a")}, "b.md": {Data: []byte("b")}}
	if _, err := Read(fsys, Options{MaxPages: 1}); err == nil || !strings.Contains(err.Error(), "more than 1 page files") {
		t.Errorf("err = %v, want the page limit", err)
	}
	if _, err := Read(fsys, Options{Root: "../x"}); err == nil {
		t.Error("a root out of the tree was accepted")
	}
	res, err := Read(fsys, Options{Root: "docs"})
	if err != nil || len(res.Pages) != 0 {
		t.Errorf("a missing docs folder: %+v, %v", res, err)
	}
}

// Links on disk, through os.Root: skipped, never followed, whether they
// lead out of the tree, nowhere, or to a folder.
func TestReadSymlinks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("page.md", "# Page")
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("# Secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"passwd.md":   "/etc/passwd",
		"dangling.md": "nowhere.md",
		"out.md":      filepath.Join(outside, "secret.md"),
		"linked":      outside,
		"docs.json":   "/etc/passwd",
	} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Read(rootFS(t, dir).FS(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pages) != 1 || res.Pages[0].Path != "/page" {
		t.Errorf("Pages = %+v", res.Pages)
	}
	var skipped []string
	for _, s := range res.Skipped {
		skipped = append(skipped, s.File+": "+s.Reason)
	}
	want := []string{"dangling.md: a symbolic link, not followed", "docs.json: a symbolic link, not followed",
		"out.md: a symbolic link, not followed", "passwd.md: a symbolic link, not followed"}
	if !slices.Equal(skipped, want) {
		t.Errorf("Skipped:\n got %q\nwant %q", skipped, want)
	}
}

// Inputs made to hurt: each must parse, quickly, without a panic.
func TestHostileInputs(t *testing.T) {
	long := strings.Repeat("a", 10<<20)
	for name, in := range map[string]string{
		"10 MB line":          long,
		"2 MB of brackets":    strings.Repeat("[", 1<<20) + strings.Repeat("](", 1<<19),
		"2 MB of tag starts":  strings.Repeat("<a b=\"", 1<<18),
		"2 MB of braces":      strings.Repeat("{", 2<<20),
		"2 MB of backticks":   strings.Repeat("` `` ", 1<<18),
		"2 MB of emphasis":    strings.Repeat("*_~", 1<<19),
		"deep quotes":         strings.Repeat(">", 1<<18) + " text",
		"deep lists":          strings.Repeat("- ", 1<<18) + "text",
		"deep tags":           strings.Repeat("<div>", 1<<17) + "text" + strings.Repeat("</div>", 1<<17),
		"many headings":       strings.Repeat("# h\n", 1<<16),
		"unclosed comment":    strings.Repeat("<!-- x ", 1<<18),
		"long front matter":   "---\n" + strings.Repeat("k: v\n", 1<<16),
		"NUL bytes":           "# Head\x00ing\n\nText\x00 here.",
		"invalid UTF-8":       "# \xff\xfe Title\n\n\xc3\x28 text",
		"many entities":       strings.Repeat("&amp;&#xZZ;&", 1<<17),
		"unclosed link dests": strings.Repeat("[a](", 1<<19),
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			p := Parse("x.mdx", []byte(in))
			for _, s := range p.Sections {
				if !utf8Valid(s.Text) || !utf8Valid(s.Heading) || !utf8Valid(s.Anchor) || strings.ContainsRune(s.Text+s.Heading, 0) {
					t.Fatalf("section with invalid UTF-8 or NUL: %q", s.Heading)
				}
			}
			// Not a timing assertion: a log, so that a slow case shows.
			t.Logf("%d sections in %v", len(p.Sections), time.Since(start))
		})
	}
	p := Parse("x.md", []byte("# Head\x00ing"))
	if p.Sections[0].Heading != "Head\uFFFDing" {
		t.Errorf("NUL: heading %q", p.Sections[0].Heading)
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "") == s }
