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
// question as it is first; when that finds nothing, it asks each of its
// words apart (OR) and keeps the sections that a majority of the words
// found. A section found so is a relevant source; none means the docs do
// not cover the question, and the model is not asked.

// maxFallbackWords bounds the searches of one question's fallback.
const maxFallbackWords = 8

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
	q := store.DocsQuery{ProjectID: projectID, Query: a.question, Limit: a.pageSize, MinScore: h.cfg.Limits.MinScore, Version: a.version, Language: a.language}
	terms := store.DocQueryTerms(a.question)
	if len(terms) == 0 {
		return nil, nil
	}
	hits, err := h.cfg.Store.SearchDocs(ctx, q)
	if err != nil || len(hits) > 0 || len(terms) < 3 {
		// With one or two words, a majority is every word: the search
		// already asked for that.
		return hits, err
	}
	type found struct {
		hit   store.DocHit
		words int
		score float64
		first int // the order found, for ties
	}
	byKey := map[string]*found{}
	order := 0
	for _, t := range terms[:min(len(terms), maxFallbackWords)] {
		q.Query = t
		q.MinScore = 0
		hs, err := h.cfg.Store.SearchDocs(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, hit := range hs {
			key := hit.Path + "#" + hit.Anchor
			f := byKey[key]
			if f == nil {
				f = &found{hit: hit, first: order}
				order++
				byKey[key] = f
			}
			f.words++
			f.score += hit.Score
		}
	}
	need := min(len(terms), maxFallbackWords)/2 + 1
	var kept []*found
	for _, f := range byKey {
		if f.words >= need {
			kept = append(kept, f)
		}
	}
	slices.SortFunc(kept, func(x, y *found) int {
		switch {
		case x.words != y.words:
			return y.words - x.words
		case x.score != y.score:
			if x.score > y.score {
				return -1
			}
			return 1
		}
		return x.first - y.first
	})
	if len(kept) > a.pageSize {
		kept = kept[:a.pageSize]
	}
	out := make([]store.DocHit, len(kept))
	for i, f := range kept {
		out[i] = f.hit
		// The score of a hit is relative to its own search's best: over
		// the fallback, it is the share of the words found.
		out[i].Score = float64(f.words) / float64(min(len(terms), maxFallbackWords))
	}
	return out, nil
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
