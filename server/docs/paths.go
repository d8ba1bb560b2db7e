package docs

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// PagePath is the URL path the docs site serves the page file at, file
// being slash-separated and relative to the docs root: the extension
// (.md or .mdx, in any case) dropped, an index or README file giving its
// folder's path, "/" at the root. Case is kept, as the platform keeps the
// file's. ok is false when file is not a page (another extension).
func PagePath(file string) (p string, ok bool) {
	stem, ok := pageStem(file)
	if !ok {
		return "", false
	}
	return servedPath(stem), true
}

// pageStem is file without its page extension.
func pageStem(file string) (string, bool) {
	ext := path.Ext(file)
	switch strings.ToLower(ext) {
	case ".md", ".mdx":
		return strings.TrimSuffix(file, ext), true
	}
	return "", false
}

// servedPath is the URL path of a page named without its extension.
func servedPath(stem string) string {
	stem = strings.Trim(stem, "/")
	dir, base := path.Split(stem)
	if isIndexName(base) {
		stem = strings.TrimSuffix(dir, "/")
	}
	return "/" + stem
}

func isIndexName(base string) bool {
	return base == "index" || strings.EqualFold(base, "readme")
}

// indexRank orders files that would serve the same path: the one with
// the lowest rank is the page, the others are skipped. A named file
// (guide.mdx) comes before a folder's index (guide/index.mdx), index
// before README, and MDX before Markdown.
func indexRank(file string) int {
	stem, _ := pageStem(file)
	rank := 0
	switch base := path.Base(stem); {
	case base == "index":
		rank = 2
	case strings.EqualFold(base, "readme"):
		rank = 4
	}
	if !strings.EqualFold(path.Ext(file), ".mdx") {
		rank++
	}
	return rank
}

// titleFromFile is the platform's title for a page without one: the last
// part of its path with dashes and underscores as spaces, the first
// letter capitalized ("guides/getting-started.md" is "Getting started").
func titleFromFile(file string) string {
	stem, _ := pageStem(file)
	base := path.Base(stem)
	if isIndexName(base) && path.Dir(stem) != "." {
		base = path.Base(path.Dir(stem))
	}
	base = strings.NewReplacer("-", " ", "_", " ").Replace(base)
	r, n := utf8.DecodeRuneInString(base)
	if n == 0 {
		return ""
	}
	return string(unicode.ToUpper(r)) + base[n:]
}
