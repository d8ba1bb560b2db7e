package wire

import "github.com/docsapi/docsapi-go/server/store"

// DiscoveryResult is one result of a documentation search, in the hosted
// shape (the DiscoverySearchResult schema): the matching text, the page's
// path (what the page endpoint takes), and metadata, which the hosted
// document leaves open. POST /discovery/v1/search answers a list of them,
// and the assistant's stream gives the same list as its search tool's
// output, so that clients read sources one way.
type DiscoveryResult struct {
	Content  string            `json:"content"`
	Path     string            `json:"path"`
	Metadata DiscoveryMetadata `json:"metadata"`
}

// DiscoveryMetadata is what a result says besides: the page's title, the
// section's heading and anchor, the link to the section, the score, the
// snippet in parts, and where the page sits in the navigation.
type DiscoveryMetadata struct {
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

// DiscoveryResultOf is a hit of the index as a search answers it. It is
// here rather than in a handler because two handlers (the search and the
// assistant) answer hits, and must answer them alike.
func DiscoveryResultOf(h store.DocHit) DiscoveryResult {
	href := h.Path
	if h.Anchor != "" {
		href += "#" + h.Anchor
	}
	breadcrumbs := h.Groups
	if breadcrumbs == nil {
		breadcrumbs = []string{}
	}
	return DiscoveryResult{
		Content: h.Snippet,
		Path:    h.Path,
		Metadata: DiscoveryMetadata{
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
