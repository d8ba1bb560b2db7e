package store

// The documentation index: what each project's docs say, read from its
// repository (package server/docs builds the pages; the backends keep and
// search them). These are its records; DocsStore (docs_store.go) keeps
// and searches them.

// DocPage is one page of a project's documentation as the index keeps it:
// the page a docs site serves at Path, read from File at the index's
// commit.
type DocPage struct {
	ProjectID string
	// Path is the page's URL path as the site serves it: "/" or
	// "/guide/install", never a trailing slash, never a file extension.
	Path string
	// File is the repository file the page was read from, slash-separated
	// and relative to the repository's root ("guide/install.mdx"): an
	// update re-reads only the files that changed (DocsUpdate.Files holds
	// its blob).
	File        string
	Title       string
	Description string
	// Groups are the navigation groups the page sits in, outermost first
	// (from docs.json or mint.json); none when the site has no navigation.
	Groups []string
	// Version and Language are the navigation's, "" when it has none.
	Version, Language string
	// Sections are the page's parts by heading, in order; the first has no
	// heading when text comes before the first heading.
	Sections []DocSection
}

// DocSection is the part of a page under one heading, up to the next
// heading of any level.
type DocSection struct {
	// Anchor is the heading's fragment on the page ("install-with-go", as
	// the site makes it from the heading's text), "" for the text before
	// the first heading.
	Anchor  string
	Heading string
	// Text is the section's prose without markup; Code the lines of its
	// code blocks as written, without their fences, blocks apart by a
	// blank line.
	Text, Code string
}
