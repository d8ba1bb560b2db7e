// Package searchresult is a hit of the documentation index as clients
// read it, in the hosted shape (the DiscoverySearchResult schema): the
// answer of POST /discovery/v1/search, and the output of the assistant's
// search tool call, which lists an answer's sources; and the filter both
// requests take. Both handlers use them, so that clients read sources one
// way and a filter narrows alike.
package searchresult

import "github.com/docsapi/docsapi-go/server/store"

// Result is one result: the matching text, the page's path (what the page
// endpoint takes), and metadata, which the hosted document leaves open.
type Result struct {
	Content  string   `json:"content"`
	Path     string   `json:"path"`
	Metadata Metadata `json:"metadata"`
}

// Metadata is what a result says besides: the page's title, the
// section's heading and anchor, the link to the section, the score, the
// snippet in parts, and where the page sits in the navigation.
type Metadata struct {
	Title   string `json:"title"`
	Heading string `json:"heading"`
	Anchor  string `json:"anchor"`
	// Href is the section's link on the site: Path, then #Anchor when
	// the section has one.
	Href string `json:"href"`
	// Score is the result's relevance over the best result's, (0, 1].
	Score float64 `json:"score"`
	// Snippet is Content cut into the parts that matched the query and
	// those that did not, so that a client marks matches without parsing
	// or offsets.
	Snippet     []SnippetPart `json:"snippet"`
	Breadcrumbs []string      `json:"breadcrumbs"`
	Version     string        `json:"version,omitempty"`
	Language    string        `json:"language,omitempty"`
}

// SnippetPart is a run of a snippet: matched words, or the text between.
type SnippetPart struct {
	Text  string `json:"text"`
	Match bool   `json:"match"`
}

// Of is a hit of the index as a result.
func Of(h store.DocHit) Result {
	href := h.Path
	if h.Anchor != "" {
		href += "#" + h.Anchor
	}
	breadcrumbs := h.Groups
	if breadcrumbs == nil {
		breadcrumbs = []string{}
	}
	return Result{
		Content: h.Snippet,
		Path:    h.Path,
		Metadata: Metadata{
			Title: h.Title, Heading: h.Heading, Anchor: h.Anchor, Href: href, Score: h.Score,
			Snippet: snippetParts(h.Snippet, h.Marks), Breadcrumbs: breadcrumbs,
			Version: h.Version, Language: h.Language,
		},
	}
}

// snippetParts cuts snippet at its marks (in order, apart, within it, as
// the store promises; any other is skipped).
func snippetParts(snippet string, marks []store.DocMark) []SnippetPart {
	parts := []SnippetPart{}
	at := 0
	for _, m := range marks {
		if m.Start < at || m.End <= m.Start || m.End > len(snippet) {
			continue
		}
		if m.Start > at {
			parts = append(parts, SnippetPart{Text: snippet[at:m.Start]})
		}
		parts = append(parts, SnippetPart{Text: snippet[m.Start:m.End], Match: true})
		at = m.End
	}
	if at < len(snippet) {
		parts = append(parts, SnippetPart{Text: snippet[at:]})
	}
	return parts
}

// Filter is a request's filter, as the search and the assistant take it
// (the hosted document's filter object).
type Filter struct {
	Version  *string `json:"version"`
	Language *string `json:"language"`
	// Tag filters by a page tag, which the index does not keep: it is
	// accepted and narrows nothing.
	Tag *string `json:"tag"`
	// Groups are the reader's access groups on a hosted site with
	// authentication; a self-hosted index has no reader groups, its pages
	// are all public, so they narrow nothing.
	Groups []string `json:"groups"`
}

// Narrow sets q's version and language from f, which may be nil.
func (f *Filter) Narrow(q *store.DocsQuery) {
	if f == nil {
		return
	}
	if f.Version != nil {
		q.Version = *f.Version
	}
	if f.Language != nil {
		q.Language = *f.Language
	}
}
