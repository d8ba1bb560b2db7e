package docs

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"
)

// FuzzParse: any file parses without a panic, into valid text, with
// anchors unique on the page.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"---\ntitle: \"T\"\nkeywords: [a, 'b']\n---\n# H {#id}\n\ntext **b** [l](u) ![a](i) `c`\n",
		"<Card title=\"x\" icon={<I a=\"}\" />}>\n  body\n</Card>\n\n```go\ncode\n```\n",
		"import x from 'y'\nexport const a = {\n}\n\n| a | b |\n|---|---|\n| c | d |\n",
		"Setext\n===\n\n<!-- c -->\n{/* c */}\n~~~\nunclosed",
		"---\ndescription: >\n  a\n  b\nhidden: true\n---\n",
		"[[[[`` ` ``]]]](((<a b='>'>&amp;&#x0;\x00\xff",
		"## a\n## a\n## a-2\n## A\n",
	} {
		f.Add(seed, true)
		f.Add(seed, false)
	}
	f.Fuzz(func(t *testing.T, in string, mdx bool) {
		file := "p.md"
		if mdx {
			file = "p.mdx"
		}
		p := Parse(file, []byte(in))
		seen := map[string]bool{}
		for _, s := range p.Sections {
			for _, v := range []string{s.Anchor, s.Heading, s.Text, s.Code} {
				if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
					t.Fatalf("invalid text %q", v)
				}
			}
			if s.Heading != "" || s.Anchor != "" {
				if seen[s.Anchor] && s.Anchor != "" {
					t.Fatalf("anchor %q twice", s.Anchor)
				}
				seen[s.Anchor] = true
			}
		}
	})
}

// FuzzNavigation: any docs.json or mint.json is read or refused, never a
// panic.
func FuzzNavigation(f *testing.F) {
	f.Add(`{"navigation":{"versions":[{"version":"v1","groups":[{"group":"G","pages":["a",{"group":"N","pages":["b"]}]}]}]}}`, true)
	f.Add(`{"navigation":[{"group":"G","version":"v1","pages":["a"]}],"seo":{"indexHiddenPages":true}}`, false)
	f.Fuzz(func(t *testing.T, data string, docsJSON bool) {
		name := "mint.json"
		if docsJSON {
			name = "docs.json"
		}
		if n, err := ParseNavigation(name, []byte(data)); err == nil {
			_, _ = n.Lookup("/a")
		}
	})
}

// BenchmarkRead5000 reads a site of 5,000 generated pages (run with
// -benchtime 1x to check that it works).
func BenchmarkRead5000(b *testing.B) {
	fsys := fstest.MapFS{}
	var nav strings.Builder
	nav.WriteString(`{"navigation":{"groups":[`)
	for i := range 5000 {
		name := fmt.Sprintf("section-%d/page-%d", i/100, i)
		fsys["docs/"+name+".mdx"] = &fstest.MapFile{Data: []byte(fmt.Sprintf(
			"---\ntitle: \"Page %d\"\ndescription: About page %d.\n---\nimport { X } from '/snippets/x.mdx'\n\n"+
				"Intro with **bold** and [a link](/section-0/page-0).\n\n## Install\n\n<Steps>\n<Step title=\"First\">Run it.</Step>\n</Steps>\n\n"+
				"```bash\nnpm i example-%d\n```\n\n## Configure\n\n| Key | Value |\n|---|---|\n| `a` | b |\n\n<Note>Remember this.</Note>\n",
			i, i, i))}
		if i > 0 {
			nav.WriteByte(',')
		}
		fmt.Fprintf(&nav, `{"group":"G%d","pages":["%s"]}`, i, name)
	}
	nav.WriteString(`]}}`)
	fsys["docs/docs.json"] = &fstest.MapFile{Data: []byte(nav.String())}
	b.ResetTimer()
	for b.Loop() {
		res, err := Read(fsys, Options{Root: "docs"})
		if err != nil || len(res.Pages) != 5000 {
			b.Fatalf("%d pages, %v", len(res.Pages), err)
		}
	}
}
