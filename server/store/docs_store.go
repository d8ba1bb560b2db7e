package store

import (
	"context"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// DocsStore keeps each project's documentation index (the pages of
// docs.go) and searches it on the database's own full-text engine.
//
// Search rules every backend keeps (the suite in storetest checks them):
//   - The query is read as words, runs of letters and digits
//     (DocQueryTerms): every other character separates words and has no
//     meaning, so no input is an error or changes what is asked. Common
//     English words ("the", "how", "to": DocStopWords) are dropped, and
//     words past the MaxDocQueryWords-th are ignored. A query left with no
//     word finds nothing.
//   - Every word must match (AND), in any field of one section; English
//     words match by their stem ("installing" finds "install"), and the
//     last word also matches as a prefix ("instal" finds "installation").
//   - With DocsQuery.AnyWord, any word matches (OR), by its stem, as a
//     whole word (no prefix): the search for a question, which a section
//     seldom answers in every one of its words. The engine's relevance
//     ranks the hits as it does all-words ones, which favours the sections
//     holding more of the words, and rarer ones, and each hit's Terms
//     says how many of the query's distinct words its section holds, so
//     that a caller can keep those holding enough. DocsQuery.MinTerms
//     keeps them in the search itself: only the sections holding at least
//     that many of the words are hits, before the limit applies, so that
//     a section holding most of the words is found however many holding
//     few of them rank above it (and an engine may look among those alone).
//   - A hit is a section. The page's title and description count as text
//     of its first section only, so a page does not match once per section
//     by its title. A match in the title ranks above one in a heading,
//     which ranks above one in the text, which ranks above one in code
//     only (by the engine's weights: a section matching in many fields may
//     pass one matching in a better field alone).
//   - Hits come best first, ties by Path then Anchor. Score is the
//     engine's relevance divided by the best hit's, so the first hit has 1
//     and the others (0, 1]; MinScore drops the hits below it, so it
//     reads as "at least this fraction of the best hit's relevance".
//   - Each hit's Snippet is plain text from the section (the text, or its
//     code when only the code matches; the heading when neither does),
//     with Marks locating the matched words: nothing in it is markup, and
//     a caller rendering HTML escapes it and wraps the marks itself.
//
// What the engines may do differently (the suite allows it): the order of
// hits whose relevance is near (the suite pins the set of hits and the
// first one where one field decides; with MinTerms, SQLite weighs the
// query's rarer words more); the length and ellipses of
// snippets and which occurrences are marked; words the engines split
// differently (PostgreSQL keeps "v1.2", e-mail addresses and URLs whole;
// SQLite folds accents, "cafe" finding "café", PostgreSQL does not); and
// stems of unusual words (SQLite's Porter stemmer, PostgreSQL's Snowball
// English one).
type DocsStore interface {
	// UpdateDocs applies u to the project's index in one transaction: a
	// reader sees the index as it was or as it is after u, never part of
	// it. In order: with Replace, every page and file record of the
	// project goes; then the pages of each of RemoveFiles go, with their
	// records; then each of Files has its pages replaced by u's pages of
	// that file, and its blob recorded; each of u.Pages is stored,
	// replacing the page at its Path whatever file that came from; and
	// the index's commit becomes Commit, its UpdatedAt At. With a Fence, it first checks,
	// in the same transaction, that the fence's lease holds, and writes
	// nothing if not (ErrLeaseLost; see DocsFence). ErrNotFound if the
	// project does not exist; ErrInvalid as DocsUpdate.Validate says.
	UpdateDocs(ctx context.Context, u DocsUpdate) error
	// DocsState returns what the project's index holds: its commit, the
	// time of its last update and the blob of each file read. An unknown
	// project, or one never indexed, has an empty state (Commit "", a
	// zero UpdatedAt, no files).
	DocsState(ctx context.Context, projectID string) (DocsState, error)
	// SearchDocs returns the sections of the project's pages that match
	// q, as DocsStore's rules say. Never nil; an unknown project gives
	// none. ErrInvalid as DocsQuery.Validate says.
	SearchDocs(ctx context.Context, q DocsQuery) ([]DocHit, error)
	// DocPage returns the page of the project at path (exactly as stored,
	// compared by bytes), its ProjectID set and its sections in order,
	// those KeptDocSections drops left out. ErrNotFound if there is none.
	DocPage(ctx context.Context, projectID, path string) (DocPage, error)
}

// DocFile is a repository file the index has read, and its version.
type DocFile struct {
	// Path is slash-separated, from the repository's root, as DocPage.File.
	Path string
	// Blob identifies the file's content: git's blob ID at the commit, so
	// an update compares it with the tree's to find the files that
	// changed.
	Blob string
}

// DocsUpdate is what UpdateDocs applies to a project's index.
type DocsUpdate struct {
	ProjectID string
	// Commit is the commit the index holds after the update.
	Commit string
	// At is the caller's time of the update, which the index's UpdatedAt
	// becomes: what tells a reader whether the index changed after some
	// event (a job that edited the docs finishing, say). Required.
	At time.Time
	// Files are the files read at Commit, pages or not (a navigation file
	// makes none): each one's pages are replaced by Pages' of that file,
	// and its blob recorded.
	Files []DocFile
	// Pages are the pages read from Files; each one's File is among
	// Files and its ProjectID is "" or the update's.
	Pages []DocPage
	// RemoveFiles are files gone from the repository (or no longer
	// documentation): their pages and records go.
	RemoveFiles []string
	// Replace drops every page and file record of the project first: a
	// full rebuild, which keeps only what it lists.
	Replace bool
	// Fence, if set, makes the write conditional on the lease of the
	// update that read it (DocsFence). The updates' worker always sets
	// it; a write without one is not fenced, for a caller that alone
	// writes the project's index (a test, a tool loading an index that no
	// worker updates).
	Fence *DocsFence
}

// DocsFence fences an index write by the lease of the documentation
// update that makes it (DocsUpdateStore). UpdateDocs writes nothing and
// answers ErrLeaseLost unless the update UpdateID is of the write's
// project, in progress, leased to Owner, and its lease has not expired
// at the store's lease time: Now on a store told the time, the database's
// clock at the check on a LeaseClock (a lease holds up to and including
// its expiry instant). The check locks the update, and the write is in
// the check's transaction, after the project's index is locked: a run
// that lost its lease (its process paused past it, or cut off from the
// database) cannot put the commit it read back over the newer one that
// the update's new holder, or the project's next update, wrote since.
//
// Unlike FinishDocsUpdate, an expired lease that nobody claimed does not
// do: once it expired, the project's next update may be claimed and
// write, so only a lease that holds keeps the index the run's.
type DocsFence struct {
	UpdateID, Owner string
	Now             time.Time
}

// DocsState is what a project's index holds.
type DocsState struct {
	Commit string
	// UpdatedAt is the At of the last update written; zero if none.
	UpdatedAt time.Time
	// Files maps each file read to its blob (DocFile.Blob); never nil.
	Files map[string]string
}

// DocsQuery asks SearchDocs.
type DocsQuery struct {
	ProjectID string
	// Query is what the reader typed; it must hold a non-space character.
	Query string
	// Limit is the most hits returned, 1 to MaxDocHits.
	Limit int
	// MinScore drops the hits whose Score is below it, 0 to 1.
	MinScore float64
	// Version and Language select the pages with that navigation version
	// or language; "" selects any.
	Version, Language string
	// Groups, if any, selects the pages in at least one of them (at any
	// depth of the page's Groups).
	Groups []string
	// AnyWord finds the sections holding any of the query's words, not
	// every one (see DocsStore). Score and MinScore keep their meaning:
	// the share of the best hit's relevance, which an any-word search
	// gives in part for words the others lack.
	AnyWord bool
	// MinTerms, with AnyWord, keeps only the sections holding at least
	// this many of the query's distinct words (a hit's Terms), before
	// Limit applies; 0 and 1 keep every section holding one. It may be
	// more than the query has words, and then nothing is found. Without
	// AnyWord it must be 0: every hit holds every word.
	MinTerms int
}

// DocHit is a section SearchDocs found.
type DocHit struct {
	Path, Anchor string
	// Title is the page's; Heading the section's ("" for the page's top).
	Title, Heading string
	// Snippet is plain text from the section around the matches; Marks
	// are the byte ranges of the matched words in it, in order, apart.
	Snippet string
	Marks   []DocMark
	// Score is in (0, 1]: the hit's relevance over the best hit's.
	Score float64
	// Terms is how many of the query's distinct words (DocQueryTerms) the
	// section holds, matching as the search does: all of them in an
	// all-words search, 1 or more with AnyWord.
	Terms             int
	Groups            []string
	Version, Language string
}

// DocMark is the byte range [Start, End) of a matched word in a snippet.
type DocMark struct{ Start, End int }

// Limits of the index.
const (
	// MaxDocHits is the most hits SearchDocs returns, the hosted API's
	// largest page.
	MaxDocHits = 50
	// MaxDocQueryWords is how many words of a query count; those past it
	// are ignored, which bounds a search's work whatever is sent.
	MaxDocQueryWords = 32
	// MaxDocSectionBytes bounds a section's Heading, Text and Code
	// together: PostgreSQL's tsvector holds at most 1 MB, and a section
	// longer than this is no longer a place a result can point at.
	MaxDocSectionBytes = 256 << 10
)

// SnippetMarkStart and SnippetMarkEnd are what a backend asks its engine
// to put around matched words, for ParseMarkedSnippet to turn into Marks.
// Stored text cannot hold them (CleanDocText), so a document cannot forge
// a mark.
const (
	SnippetMarkStart = "\x01"
	SnippetMarkEnd   = "\x02"
)

// Validate returns what makes u unfit for UpdateDocs, or nil.
func (u DocsUpdate) Validate() error {
	switch {
	case u.ProjectID == "":
		return Invalid("empty project ID")
	case u.Commit == "" || !cleanDocText(u.Commit):
		return Invalid("commit %q: must be non-empty text", u.Commit)
	case u.At.IsZero():
		return Invalid("update of commit %q: zero time", u.Commit)
	case u.Fence != nil && (u.Fence.UpdateID == "" || u.Fence.Owner == ""):
		return Invalid("fence: empty update ID or owner")
	case u.Fence != nil && u.Fence.Now.IsZero():
		return Invalid("fence of update %q: zero current time", u.Fence.UpdateID)
	}
	files := make(map[string]bool, len(u.Files))
	for _, f := range u.Files {
		switch {
		case f.Path == "" || !cleanDocText(f.Path):
			return Invalid("file %q: must be a non-empty path", f.Path)
		case f.Blob == "" || !cleanDocText(f.Blob):
			return Invalid("file %q: empty blob", f.Path)
		case files[f.Path]:
			return Invalid("file %q is listed twice", f.Path)
		}
		files[f.Path] = true
	}
	removed := make(map[string]bool, len(u.RemoveFiles))
	for _, f := range u.RemoveFiles {
		switch {
		case f == "":
			return Invalid("empty file to remove")
		case files[f]:
			return Invalid("file %q is both read and removed", f)
		case removed[f]:
			return Invalid("file %q is removed twice", f)
		}
		removed[f] = true
	}
	paths := make(map[string]bool, len(u.Pages))
	for _, p := range u.Pages {
		if err := p.validate(u.ProjectID, files); err != nil {
			return err
		}
		if paths[p.Path] {
			return Invalid("page %q is listed twice", p.Path)
		}
		paths[p.Path] = true
	}
	return nil
}

// validate checks one page of an update.
func (p DocPage) validate(projectID string, files map[string]bool) error {
	switch {
	case !strings.HasPrefix(p.Path, "/") || !cleanDocText(p.Path):
		return Invalid("page %q: the path must start with /", p.Path)
	case p.ProjectID != "" && p.ProjectID != projectID:
		return Invalid("page %q: of project %q, not %q", p.Path, p.ProjectID, projectID)
	case !files[p.File]:
		return Invalid("page %q: its file %q is not among the update's files", p.Path, p.File)
	case !cleanDocText(p.Title, p.Description, p.Version, p.Language):
		return Invalid("page %q: a field holds control characters or invalid UTF-8 (see CleanDocText)", p.Path)
	}
	for _, g := range p.Groups {
		if g == "" || !cleanDocText(g) {
			return Invalid("page %q: group %q must be non-empty text", p.Path, g)
		}
	}
	for i, s := range p.Sections {
		switch {
		case !cleanDocText(s.Anchor, s.Heading, s.Text, s.Code):
			return Invalid("page %q, section %d: a field holds control characters or invalid UTF-8 (see CleanDocText)", p.Path, i)
		case len(s.Heading)+len(s.Text)+len(s.Code) > MaxDocSectionBytes:
			return Invalid("page %q, section %d: longer than %d bytes", p.Path, i, MaxDocSectionBytes)
		}
	}
	return nil
}

// Validate returns what makes q unfit for SearchDocs, or nil.
func (q DocsQuery) Validate() error {
	switch {
	case q.ProjectID == "":
		return Invalid("empty project ID")
	case strings.TrimSpace(q.Query) == "":
		return Invalid("empty query")
	case q.Limit < 1 || q.Limit > MaxDocHits:
		return Invalid("limit %d: must be 1 to %d", q.Limit, MaxDocHits)
	case math.IsNaN(q.MinScore) || q.MinScore < 0 || q.MinScore > 1:
		return Invalid("score threshold %v: must be 0 to 1", q.MinScore)
	case q.MinTerms < 0 || q.MinTerms > MaxDocQueryWords:
		return Invalid("least words %d: must be 0 to %d", q.MinTerms, MaxDocQueryWords)
	case q.MinTerms != 0 && !q.AnyWord:
		return Invalid("least words %d without AnyWord: every hit holds every word", q.MinTerms)
	}
	return nil
}

// CleanDocText returns s as the index stores text: valid UTF-8 (invalid
// bytes become U+FFFD) without control characters other than tab, line
// feed and carriage return (each becomes a space). The index refuses
// text that is not so (ErrInvalid): PostgreSQL cannot hold NUL, and the
// snippets' marks are control characters (SnippetMarkStart).
func CleanDocText(s string) string {
	if cleanDocText(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isRefusedControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// cleanDocText reports whether every s is as CleanDocText returns it.
func cleanDocText(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) || strings.ContainsFunc(s, isRefusedControl) {
			return false
		}
	}
	return true
}

func isRefusedControl(r rune) bool {
	return unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r'
}

// DocQueryTerms returns the words of a query as every backend searches
// them: runs of letters and digits, lower case, without DocStopWords, at
// most MaxDocQueryWords. A backend quotes each as one term of its engine,
// all required, the last one a prefix.
func DocQueryTerms(query string) []string {
	words := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
	terms := words[:0]
	for _, w := range words {
		if len(terms) == MaxDocQueryWords {
			break
		}
		if !isDocStopWord(w) {
			terms = append(terms, w)
		}
	}
	return terms
}

// DistinctDocTerms returns terms (DocQueryTerms') without repeats, in
// their first order: the words an any-word search counts in a hit's Terms.
func DistinctDocTerms(terms []string) []string {
	var out []string
	for _, t := range terms {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// DocStopWords are the words a query drops: PostgreSQL's English list,
// which its engine drops anyway, so that both engines ask for the same
// words (SQLite's keeps them, and would require them).
func DocStopWords() []string { return slices.Clone(docStopWords) }

func isDocStopWord(w string) bool {
	_, found := slices.BinarySearch(docStopWords, w)
	return found
}

// docStopWords is sorted, for isDocStopWord.
var docStopWords = func() []string {
	ws := strings.Fields(`i me my myself we our ours ourselves you your yours yourself yourselves
		he him his himself she her hers herself it its itself they them their theirs themselves
		what which who whom this that these those am is are was were be been being have has had
		having do does did doing a an the and but if or because as until while of at by for with
		about against between into through during before after above below to from up down in out
		on off over under again further then once here there when where why how all any both each
		few more most other some such no nor not only own same so than too very s t can will just
		don should now`)
	slices.Sort(ws)
	return ws
}()

// ParseMarkedSnippet returns an engine's snippet without the marks a
// backend asked for (SnippetMarkStart, SnippetMarkEnd), and the byte
// ranges they enclosed. Empty or unbalanced marks are dropped.
func ParseMarkedSnippet(marked string) (string, []DocMark) {
	var (
		b     strings.Builder
		marks []DocMark
		start = -1
	)
	for _, r := range marked {
		switch string(r) {
		case SnippetMarkStart:
			start = b.Len()
		case SnippetMarkEnd:
			if start >= 0 && b.Len() > start {
				marks = append(marks, DocMark{start, b.Len()})
			}
			start = -1
		default:
			b.WriteRune(r)
		}
	}
	return b.String(), marks
}

// ScoreDocHits sets each hit's Score, the engine's relevance given as raw
// (higher is better, hits best first), to its share of the best hit's,
// and returns the hits whose Score is at least minScore. A best relevance
// of zero or less (an engine that found the words but ranks them at
// nothing) gives every hit 1.
func ScoreDocHits(hits []DocHit, raw []float64, minScore float64) []DocHit {
	out := []DocHit{}
	for i, h := range hits {
		h.Score = 1
		if raw[0] > 0 {
			// A hit was found, so its score stays above zero even where
			// the engine ranks it at nothing beside the best.
			h.Score = min(1, max(raw[i]/raw[0], minDocScore))
		}
		if h.Score >= minScore {
			out = append(out, h)
		}
	}
	return out
}

// minDocScore is the least Score of a hit.
const minDocScore = 1e-6

// Content returns the page as the hosted API's page answer holds it: its
// title, description and sections as Markdown, each section's code in a
// fence after its text.
func (p DocPage) Content() string {
	var b strings.Builder
	para := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(s)
		}
	}
	if p.Title != "" {
		para("# " + p.Title)
	}
	para(p.Description)
	for _, s := range p.Sections {
		if s.Heading != "" {
			para("## " + s.Heading)
		}
		para(s.Text)
		if strings.TrimSpace(s.Code) != "" {
			fence := "```"
			for strings.Contains(s.Code, fence) {
				fence += "`"
			}
			para(fence + "\n" + strings.Trim(s.Code, "\n") + "\n" + fence)
		}
	}
	return b.String()
}

// KeptDocSections returns the sections of ss an index keeps: those with
// an anchor, a heading, text or code (an empty one points at nothing).
// A backend stores and reads back these alone.
func KeptDocSections(ss []DocSection) []DocSection {
	var kept []DocSection
	for _, s := range ss {
		if s != (DocSection{}) {
			kept = append(kept, s)
		}
	}
	return kept
}

// PickDocSnippet returns a hit's snippet from the engine's marked
// snippets of its section's text and code: the text's if it marks a
// match, else the code's if it does, else the text's (the code's if the
// section has no text), so that a hit found by its title or heading
// still shows what the section says.
func PickDocSnippet(textSnippet, codeSnippet, text, code string) string {
	switch {
	case strings.Contains(textSnippet, SnippetMarkStart):
		return textSnippet
	case strings.Contains(codeSnippet, SnippetMarkStart):
		return codeSnippet
	case text == "" && code != "":
		return codeSnippet
	}
	return textSnippet
}
