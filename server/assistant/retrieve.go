package assistant

import (
	"context"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/docsapi/docsapi-go/server/store"
)

// Retrieval. The index's search is every word required (AND), which suits
// a search box and seldom a question: "how do I rotate an API key on the
// CLI" must find a section that never says "CLI". So retrieval asks the
// question as it is first; when that finds nothing, it asks for the
// sections holding a majority of its words (an any-word search with
// DocsQuery.MinTerms), ranked by the engine over the words. A section
// found so is a relevant source; none means the docs do not cover the
// question, and the model is not asked.

// anyWordReads is how many times the page size the any-word search reads:
// the hits are then ordered by how many of the words they hold, and one
// holding more of them may rank below one holding fewer many times, or
// in its title.
const anyWordReads = 4

// maxExcerptChars bounds the text of one excerpt the model is sent: a
// section is usually far shorter, and a very long one is still a place.
const maxExcerptChars = 6000

// excerpt is a section the model is sent.
type excerpt struct {
	href, title, text string
}

// retrieve finds the sections that answer q, best first, at most
// a.pageSize.
func (h *Handler) retrieve(ctx context.Context, projectID string, a ask) ([]store.DocHit, error) {
	q := store.DocsQuery{ProjectID: projectID, Query: a.question, Limit: a.pageSize, MinScore: minScore, Version: a.version, Language: a.language}
	terms := store.DistinctDocTerms(store.DocQueryTerms(a.question))
	if len(terms) == 0 {
		return nil, nil
	}
	hits, err := h.cfg.Store.SearchDocs(ctx, q)
	if err != nil || len(hits) > 0 || len(terms) < 3 {
		// With one or two words, a majority is every word: the search
		// already asked for that.
		return hits, err
	}
	// The threshold is relative to the best hit's relevance, which the
	// majority rule replaces here.
	q.AnyWord, q.MinScore, q.Limit = true, 0, min(anyWordReads*a.pageSize, store.MaxDocHits)
	q.MinTerms = len(terms)/2 + 1
	kept, err := h.cfg.Store.SearchDocs(ctx, q)
	if err != nil {
		return nil, err
	}
	// Best first: more of the words, then the engine's order.
	slices.SortStableFunc(kept, func(x, y store.DocHit) int { return y.Terms - x.Terms })
	kept = kept[:min(len(kept), a.pageSize)]
	for i := range kept {
		// Over the any-word search, a hit's score is the share of the
		// question's words its section holds.
		kept[i].Score = float64(kept[i].Terms) / float64(len(terms))
	}
	return kept, nil
}

// excerpts returns the hits' sections as the model is sent them: the
// whole section from its page where the index still has it, else the
// hit's snippet.
func (h *Handler) excerpts(ctx context.Context, projectID string, hits []store.DocHit) ([]excerpt, error) {
	pages := map[string]store.DocPage{}
	out := make([]excerpt, len(hits))
	for i, hit := range hits {
		title := hit.Title
		if hit.Heading != "" {
			title += " — " + hit.Heading
		}
		href := hit.Path
		if hit.Anchor != "" {
			href += "#" + hit.Anchor
		}
		out[i] = excerpt{href: href, title: title, text: hit.Snippet}
		page, ok := pages[hit.Path]
		if !ok {
			p, err := h.cfg.Store.DocPage(ctx, projectID, hit.Path)
			switch {
			case errors.Is(err, store.ErrNotFound): // removed since the search
			case err != nil:
				return nil, err
			}
			page, pages[hit.Path] = p, p
		}
		for _, s := range page.Sections {
			if s.Anchor == hit.Anchor {
				out[i].text = sectionText(page, s)
				break
			}
		}
	}
	return out, nil
}

// sectionText is a section's text for the model: the page's description
// for its first section, the text, then the code.
func sectionText(p store.DocPage, s store.DocSection) string {
	var parts []string
	if len(p.Sections) > 0 && p.Sections[0].Anchor == s.Anchor && strings.TrimSpace(p.Description) != "" {
		parts = append(parts, strings.TrimSpace(p.Description))
	}
	if t := strings.TrimSpace(s.Text); t != "" {
		parts = append(parts, t)
	}
	if c := strings.Trim(s.Code, "\n"); strings.TrimSpace(c) != "" {
		parts = append(parts, "```\n"+c+"\n```")
	}
	text := strings.Join(parts, "\n\n")
	if utf8.RuneCountInString(text) > maxExcerptChars {
		text = string([]rune(text)[:maxExcerptChars]) + "…"
	}
	return text
}
