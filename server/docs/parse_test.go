package docs

import (
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server/store"
)

// The platform's own examples ("Automatic anchor IDs" in its text guide).
func TestAnchor(t *testing.T) {
	for text, want := range map[string]string{
		"Getting started":          "getting-started",
		"Config.json options":      "config-json-options",
		"What's new":               "what’s-new",
		"Rate limits (per minute)": "rate-limits-per-minute",
		"Read/write access":        "read/write-access",
		"Fees & billing":           "fees-&-billing",
		"OAuth":                    "oauth",
		"What's next?":             "what’s-next",
		"snake_case and-dash":      "snake_case-and-dash",
		"Über größe 2":             "über-größe-2",
		"🚀 Launch":                 "-launch",
	} {
		if got := Anchor(text); got != want {
			t.Errorf("Anchor(%q) = %q, want %q", text, got, want)
		}
	}
}

// sections parses an MDX body and returns its sections.
func sections(t *testing.T, file, body string) []store.DocSection {
	t.Helper()
	p := Parse(file, []byte(body))
	if len(p.Problems) > 0 {
		t.Fatalf("problems: %v", p.Problems)
	}
	return p.Sections
}

func TestTextWithoutMarkup(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"emphasis", "Some **bold**, *italic*, __strong__, _em_ and ~~gone~~ text.", "Some bold, italic, strong, em and gone text."},
		{"snake case kept", "Set max_file_bytes and 2 * 3.", "Set max_file_bytes and 2 * 3."},
		{"link text", "See [the guide](/guide \"Title\") and [ref][1].", "See the guide and ref."},
		{"image alt", "![A diagram](/img.png) here", "A diagram here"},
		{"inline code kept", "Call `Client.Do()` now, or ``a ` b``.", "Call Client.Do() now, or a ` b."},
		{"code span hides markup", "Use `**not bold**` literally.", "Use **not bold** literally."},
		{"escapes", `A \*star\* and \[bracket\]`, "A *star* and [bracket]"},
		{"entities", "Fish &amp; chips &lt;3 &#x41;", "Fish & chips <3 A"},
		{"autolink", "Visit <https://example.com/x>.", "Visit https://example.com/x ."},
		{"html tags", "Line<br/>break and <span class=\"x\">inside</span>.", "Line break and inside ."},
		{"note", "<Note>Keep this text.</Note>", "Keep this text."},
		{"tip warning", "<Tip>\nA tip.\n</Tip>\n\n<Warning>A warning.</Warning>", "A tip.\nA warning."},
		{"card title", "<Card title=\"Quickstart\" icon=\"rocket\" href=\"/qs\">\n  Start here.\n</Card>", "Quickstart Start here."},
		{"accordion title", "<Accordion title='Why?'>Because.</Accordion>", "Why? Because."},
		{"tab and step", "<Tabs>\n<Tab title=\"macOS\">brew</Tab>\n</Tabs>\n\n<Steps><Step title=\"First\">Do</Step></Steps>", "macOS brew\nFirst Do"},
		{"self-closing card", "<Card title=\"Only title\" />", "Only title"},
		{"multi-line img alt", "<img\n  className=\"block\"\n  src=\"/a.png\"\n  alt=\"Decorative graphic.\"\n/>", "Decorative graphic."},
		{"field name", "<ResponseField name=\"pageSize\" type=\"integer\">How many.</ResponseField>", "pageSize How many."},
		{"jsx expression attr", "<Card title={\"Braced\"} icon={<Icon a=\"}\" />}>x</Card>", "Braced x"},
		{"mdx comment", "Kept {/* not this */} too.", "Kept too."},
		{"mdx string expression", "a{' '}b", "a b"},
		{"html comment", "Kept <!-- not this --> too.", "Kept too."},
		{"multi-line html comment", "<!--\nnot this\n-->\nKept.", "Kept."},
		{"imports dropped", "import { Card } from '/snippets/card.mdx'\nexport const x = {\n  a: 1\n}\n\nText.", "Text."},
		{"lists and quotes", "- one\n- two\n  1. three\n> quoted\n- [x] done", "one two three quoted done"},
		{"table cells", "| Name | Value |\n| :--- | ---: |\n| `a` | **b** |", "Name Value a b"},
		{"thematic break", "Above.\n\n***\n\nBelow.", "Above.\nBelow."},
		{"fragments", "<>Inside</>", "Inside"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := sections(t, "page.mdx", c.in)
			if len(s) != 1 || s[0].Heading != "" || s[0].Code != "" {
				t.Fatalf("sections = %+v, want one without heading or code", s)
			}
			if s[0].Text != c.want {
				t.Errorf("Text = %q, want %q", s[0].Text, c.want)
			}
		})
	}
}

func TestMarkdownIsNotMDX(t *testing.T) {
	// In .md files, braces and import lines are text.
	s := sections(t, "page.md", "import this\n\nA {braced} word.")
	if s[0].Text != "import this\nA {braced} word." {
		t.Errorf("Text = %q", s[0].Text)
	}
}

func TestCodeBlocks(t *testing.T) {
	in := "Intro.\n\n```go title=\"main.go\"\nfmt.Println(\"# not a heading\")\n```\n\n" +
		"<CodeGroup>\n  ~~~~bash\n  echo **hi**\n  ~~~~\n</CodeGroup>\n\nAfter.\n\n```\nunclosed\n## still code"
	s := sections(t, "page.mdx", in)
	if len(s) != 1 {
		t.Fatalf("sections = %+v", s)
	}
	if s[0].Text != "Intro.\nAfter." {
		t.Errorf("Text = %q", s[0].Text)
	}
	wantCode := "fmt.Println(\"# not a heading\")\n" +
		"\necho **hi**\n" +
		"\nunclosed\n## still code\n"
	if s[0].Code != wantCode {
		t.Errorf("Code = %q, want %q", s[0].Code, wantCode)
	}
}

func TestHeadings(t *testing.T) {
	in := "Before.\n\n# Title\n\nOne.\n\n## Install ##\n\nTwo.\n\n  ### `go get` *it*\n\n" +
		"Setext two\n----------\n\nThree.\n\nSetext one\n===\n\n## Install\n\n## Install\n\n## Install-2\n\n" +
		"## Custom {#my-id}\n\n<Tab title=\"x\">\n### Inside a tab\n</Tab>\n\n#NoSpace is text\n\n####### seven is text\n"
	s := sections(t, "page.mdx", in)
	type h struct{ anchor, heading, text string }
	want := []h{
		{"", "", "Before."},
		{"title", "Title", "One."},
		{"install", "Install", "Two."},
		{"go-get-it", "go get it", ""},
		{"setext-two", "Setext two", "Three."},
		{"setext-one", "Setext one", ""},
		{"install-2", "Install", ""},
		{"install-3", "Install", ""},
		{"install-2-2", "Install-2", ""},
		{"my-id", "Custom", "x"},
		{"inside-a-tab", "Inside a tab", "#NoSpace is text\n####### seven is text"},
	}
	var got []h
	for _, sec := range s {
		got = append(got, h{sec.Anchor, sec.Heading, sec.Text})
	}
	if len(got) != len(want) {
		t.Fatalf("sections:\n got %q\nwant %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("section %d = %q, want %q", i, got[i], want[i])
		}
	}
	if p := Parse("page.mdx", []byte(in)); p.H1 != "Title" {
		t.Errorf("H1 = %q", p.H1)
	}
}

func TestPagePath(t *testing.T) {
	for file, want := range map[string]string{
		"index.mdx":            "/",
		"README.md":            "/",
		"readme.md":            "/",
		"guide/index.mdx":      "/guide",
		"guide/README.md":      "/guide",
		"guide/Install-Go.mdx": "/guide/Install-Go",
		"api/v2/users.MD":      "/api/v2/users",
		"indexes.md":           "/indexes",
		"guide/index/more.md":  "/guide/index/more",
	} {
		got, ok := PagePath(file)
		if !ok || got != want {
			t.Errorf("PagePath(%q) = %q, %v, want %q", file, got, ok, want)
		}
	}
	for _, file := range []string{"docs.json", "a.txt", "md", "x.markdown"} {
		if got, ok := PagePath(file); ok {
			t.Errorf("PagePath(%q) = %q, want not a page", file, got)
		}
	}
	for entry, want := range map[string]string{
		"quickstart": "/quickstart", "/guides/a": "/guides/a", "guides/hidden-page.mdx": "/guides/hidden-page",
		"index": "/", "v1/index": "/v1", "a/../b": "/b",
	} {
		if got, ok := navPagePath(entry); !ok || got != want {
			t.Errorf("navPagePath(%q) = %q, %v, want %q", entry, got, ok, want)
		}
	}
	for _, entry := range []string{"GET /users", "https://example.com", ""} {
		if got, ok := navPagePath(entry); ok {
			t.Errorf("navPagePath(%q) = %q, want not a page", entry, got)
		}
	}
}

func TestWants(t *testing.T) {
	o := Options{Root: "docs", Exclude: []string{"drafts"}}
	for file, want := range map[string]bool{
		"docs/a.mdx": true, "docs/docs.json": true, "docs/mint.json": true, "docs/g/b.md": true,
		"a.mdx": false, "docs.json": false, "docs/a.txt": false,
		"docs/node_modules/x/readme.md": false, "docs/g/node_modules/x.md": false,
		"docs/.github/x.md": false, "docs/snippets/s.mdx": false, "docs/g/snippets/s.mdx": true,
		"docs/drafts/x.md": false, "docs/g/drafts/x.md": false, "docs/.hidden.md": false,
		"docs/../x.md": false, "docs/g/docs.json": false,
	} {
		if got := o.Wants(file); got != want {
			t.Errorf("Wants(%q) = %v, want %v", file, got, want)
		}
	}
}

func TestFrontMatter(t *testing.T) {
	yes, no := true, false
	for _, c := range []struct {
		name, block string
		want        FrontMatter
	}{
		{"quoted and plain", "title: \"Pages\"\ndescription: Configure page metadata.  # a comment\nsidebarTitle: 'It''s short'",
			FrontMatter{Title: "Pages", Description: "Configure page metadata.", SidebarTitle: "It's short"}},
		{"lists and numbers", "title: Navigation\nkeywords: [\"navigation structure\", 'sidebar', plain]\nboost: 3\ntags:\n  - a\n  - \"b\"",
			FrontMatter{Title: "Navigation", Fields: map[string]string{"boost": "3"}}},
		{"booleans", "hidden: true\nnoindex: False\nsearchable: TRUE",
			FrontMatter{Hidden: &yes, NoIndex: &no, Searchable: &yes}},
		{"quoted key and colon value", "\"twitter:image\": \"/images/social.jpg\"\ntitle: \"A: B\"",
			FrontMatter{Title: "A: B", Fields: map[string]string{"twitter:image": "/images/social.jpg"}}},
		{"block scalars", "description: >\n  Folded\n  lines.\ntitle: |\n  Kept\n  lines",
			FrontMatter{Title: "Kept\nlines", Description: "Folded lines."}},
		{"plain continued", "description: a long\n  description", FrontMatter{Description: "a long description"}},
		{"nested skipped", "title: T\nseo:\n  og:\n    image: x\nicon: book",
			FrontMatter{Title: "T", Fields: map[string]string{"icon": "book"}}},
		{"escapes", `title: "Tab\tand \u00e9 and \"q\""`, FrontMatter{Title: "Tab\tand é and \"q\""}},
		{"empty", "", FrontMatter{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := Parse("p.mdx", []byte("---\n"+c.block+"\n---\nBody."))
			if len(p.Problems) > 0 {
				t.Fatalf("problems: %v", p.Problems)
			}
			if got := p.FrontMatter; !sameFrontMatter(got, c.want) {
				t.Errorf("FrontMatter = %+v, want %+v", got, c.want)
			}
			if len(p.Sections) != 1 || p.Sections[0].Text != "Body." {
				t.Errorf("Sections = %+v", p.Sections)
			}
		})
	}
}

func sameFrontMatter(a, b FrontMatter) bool {
	eqb := func(x, y *bool) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	if a.Title != b.Title || a.Description != b.Description || a.SidebarTitle != b.SidebarTitle ||
		!eqb(a.Hidden, b.Hidden) || !eqb(a.NoIndex, b.NoIndex) || !eqb(a.Searchable, b.Searchable) || len(a.Fields) != len(b.Fields) {
		return false
	}
	for k, v := range a.Fields {
		if b.Fields[k] != v {
			return false
		}
	}
	return true
}

func TestFrontMatterErrors(t *testing.T) {
	for _, c := range []struct {
		name, text string
		line       int
		want       string
	}{
		{"not key value", "---\ntitle: T\njust words\n---\n", 3, "not 'key: value'"},
		{"unclosed quote", "---\ntitle: \"T\n---\n", 2, "without its closing quote"},
		{"duplicate", "---\ntitle: A\ntitle: B\n---\n", 3, "given twice"},
		{"tab", "---\ntitle: A\n\tx: y\n---\n", 3, "tab"},
		{"bad bool", "---\nhidden: yes\n---\n", 2, "true or false"},
		{"list title", "---\ntitle: [a, b]\n---\n", 2, "single value"},
		{"indented key", "---\n  title: A\n---\n", 2, "indented"},
		{"multi-line flow", "---\nkeywords: [a,\n  b]\n---\n", 3, "on one line"},
		{"unclosed block", "---\ntitle: A\n", 1, "not closed"},
		{"bad escape", "---\ntitle: \"a\\q\"\n---\n", 2, "unknown escape"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := Parse("guide/p.mdx", []byte(c.text+"# Still indexed\n"))
			if len(p.Problems) != 1 {
				t.Fatalf("problems = %v, want one", p.Problems)
			}
			pr := p.Problems[0]
			if pr.File != "guide/p.mdx" || pr.Line != c.line || !strings.Contains(pr.Message, c.want) {
				t.Errorf("problem = %q (line %d), want line %d saying %q", pr.Error(), pr.Line, c.line, c.want)
			}
			if p.FrontMatter.Title != "" {
				t.Errorf("front matter read from a bad block: %+v", p.FrontMatter)
			}
			if n := len(p.Sections); n == 0 || p.Sections[n-1].Heading != "Still indexed" {
				t.Errorf("the body was not read: %+v", p.Sections)
			}
		})
	}
}
