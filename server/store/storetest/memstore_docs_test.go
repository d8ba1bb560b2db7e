package storetest_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/docsapi/docsapi-go/server/store"
)

// docsState is what the reference store keeps for DocsStore, behind
// memStore's mutex: per project, its pages by path, its files' blobs, its
// commit and the time of its last update.
type docsState struct {
	pages   map[string]map[string]store.DocPage
	files   map[string]map[string]string
	commits map[string]string
	updated map[string]time.Time
}

// docsMutants are the reference store's deliberate bugs in the methods of
// this file, and the subtests (area/name) that must fail with each; see
// TestMutantsFail.
var docsMutants = map[string][]string{
	"docsNoStem":             {"Docs/EnglishStemsMatch"},
	"docsNoPrefix":           {"Docs/LastWordMatchesAsPrefix"},
	"docsEveryWordPrefix":    {"Docs/LastWordMatchesAsPrefix"},
	"docsAnyWord":            {"Docs/EveryWordIsRequired"},
	"docsAnyWordAsEvery":     {"Docs/AnyWordFindsSectionsHoldingSomeWords"},
	"docsAnyWordPrefix":      {"Docs/AnyWordFindsSectionsHoldingSomeWords"},
	"docsAnyWordFlat":        {"Docs/AnyWordFindsSectionsHoldingSomeWords"},
	"docsTermsRepeats":       {"Docs/AnyWordFindsSectionsHoldingSomeWords"},
	"docsTermsUnstemmed":     {"Docs/AnyWordFindsSectionsHoldingSomeWords"},
	"docsAnyWordNoFilters":   {"Docs/AnyWordFindsSectionsHoldingSomeWords"},
	"docsMinTermsIgnored":    {"Docs/AnyWordKeepsSectionsHoldingMinTerms"},
	"docsMinTermsAfterLimit": {"Docs/AnyWordKeepsSectionsHoldingMinTerms"},
	"docsFlatRanking":        {"Docs/FieldsRankTitleHeadingTextCode"},
	"docsTitleEverySection":  {"Docs/TitleCountsOncePerPage"},
	"docsStopWordsKept":      {"Docs/CommonWordsAreDropped"},
	"docsNoMarks":            {"Docs/SnippetsMarkMatchedWordsAsPlainText"},
	"docsSnippetFromTitle":   {"Docs/SnippetsMarkMatchedWordsAsPlainText"},
	"docsDropsGroups":        {"Docs/HitsCarryTheirPagesFields"},
	"docsIgnoresVersion":     {"Docs/FiltersSelectVersionLanguageAndGroups"},
	"docsGroupsAll":          {"Docs/FiltersSelectVersionLanguageAndGroups"},
	"docsTopGroupOnly":       {"Docs/FiltersSelectVersionLanguageAndGroups"},
	"docsRawScores":          {"Docs/LimitAndThresholdCutTheFullAnswer", "Docs/HitsCarryTheirPagesFields"},
	"docsThresholdIgnored":   {"Docs/LimitAndThresholdCutTheFullAnswer"},
	"docsLimitAfterSort":     {"Docs/LimitAndThresholdCutTheFullAnswer"},
	"docsMinusNegates":       {"Docs/QuerySyntaxIsNeverSyntax"},
	"docsOrIsOr":             {"Docs/QuerySyntaxIsNeverSyntax"},
	"docsQuoteFails":         {"Docs/QuerySyntaxIsNeverSyntax"},
	"docsLeakProjects":       {"Docs/UnknownProjectFindsNothingAndProjectsAreApart"},
	"docsNilHits":            {"Docs/UnknownProjectFindsNothingAndProjectsAreApart"},
	"docsChecksSkipped":      {"Docs/InvalidArgumentsAreRefusedAndStoreNothing"},
	"docsFileKeepsOldPages":  {"Docs/UpdateReplacesChangedFilesAndKeepsTheRest"},
	"docsRemoveKeepsPages":   {"Docs/UpdateReplacesChangedFilesAndKeepsTheRest"},
	"docsPathKeepsOldFile":   {"Docs/PageOfAnotherFileTakesItsPath"},
	"docsReplaceKeeps":       {"Docs/ReplaceKeepsOnlyWhatItLists"},
	"docsNonAtomic":          {"Docs/ReadersSeeTheOldIndexOrTheNew"},
	"docsStateDropsBlobs":    {"Docs/StateHoldsCommitAndBlobs"},
	"docsFirstUpdateTime":    {"Docs/StateSaysWhenTheIndexLastChanged"},
	"docsUpdateTimeUnread":   {"Docs/StateSaysWhenTheIndexLastChanged"},
	"docsPageDropsFields":    {"Docs/PageRoundTripsAndMissingPageIsNotFound"},
	"docsPagePrefixMatch":    {"Docs/PageRoundTripsAndMissingPageIsNotFound"},
	"docsFenceIgnored":       {"DocsUpdates/IndexWriteIsFencedByTheUpdatesLease"},
	"docsFenceAnyOwner":      {"DocsUpdates/IndexWriteIsFencedByTheUpdatesLease"},
	"docsFenceLapsed":        {"DocsUpdates/IndexWriteIsFencedByTheUpdatesLease"},
	"docsFenceAnyProject":    {"DocsUpdates/IndexWriteIsFencedByTheUpdatesLease"},
	"docsFenceAfterWrite":    {"DocsUpdates/IndexWriteIsFencedByTheUpdatesLease"},
}

func (m *memStore) docs() *docsState {
	d := &m.docsData
	if d.pages == nil {
		d.pages, d.files, d.commits = map[string]map[string]store.DocPage{}, map[string]map[string]string{}, map[string]string{}
		d.updated = map[string]time.Time{}
	}
	return d
}

func (m *memStore) UpdateDocs(_ context.Context, u store.DocsUpdate) (err error) {
	if err := u.Validate(); err != nil && !m.is("docsChecksSkipped") {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.projects[u.ProjectID]; !ok {
		return fmt.Errorf("project %q: %w", u.ProjectID, store.ErrNotFound)
	}
	fenced := m.fenceHolds(u)
	if !fenced && !m.is("docsFenceAfterWrite") {
		return fmt.Errorf("index of project %q: %w", u.ProjectID, store.ErrLeaseLost)
	}
	if !fenced {
		// The refusal comes after the write, as a check outside the
		// write's transaction would.
		defer func() { err = fmt.Errorf("index of project %q: %w", u.ProjectID, store.ErrLeaseLost) }()
	}
	d := m.docs()
	pages, files := maps.Clone(d.pages[u.ProjectID]), maps.Clone(d.files[u.ProjectID])
	if pages == nil {
		pages, files = map[string]store.DocPage{}, map[string]string{}
	}
	if u.Replace && !m.is("docsReplaceKeeps") {
		clear(pages)
		clear(files)
	}
	dropFile := func(file string) {
		for path, p := range pages {
			if p.File == file {
				delete(pages, path)
			}
		}
	}
	for _, f := range u.RemoveFiles {
		if !m.is("docsRemoveKeepsPages") {
			dropFile(f)
		}
		delete(files, f)
	}
	for _, f := range u.Files {
		if !m.is("docsFileKeepsOldPages") {
			dropFile(f.Path)
		}
		files[f.Path] = f.Blob
	}
	publish := func() {
		d.pages[u.ProjectID], d.files[u.ProjectID] = maps.Clone(pages), maps.Clone(files)
	}
	for _, p := range u.Pages {
		p.ProjectID = u.ProjectID
		p.Groups = slices.Clone(p.Groups)
		p.Sections = store.KeptDocSections(p.Sections)
		if _, taken := pages[p.Path]; taken && m.is("docsPathKeepsOldFile") {
			continue
		}
		pages[p.Path] = p
		if m.is("docsNonAtomic") {
			// Each page is published as it is written, and others may
			// read in between.
			d.commits[u.ProjectID] = u.Commit
			publish()
			m.mu.Unlock()
			time.Sleep(100 * time.Microsecond)
			m.mu.Lock()
		}
	}
	publish()
	d.commits[u.ProjectID] = u.Commit
	if _, ok := d.updated[u.ProjectID]; !ok || !m.is("docsFirstUpdateTime") {
		d.updated[u.ProjectID] = m.norm(u.At)
	}
	return nil
}

// fenceHolds reports whether u may be written: it has no fence, or its
// fence's lease holds at the store's lease time (store.DocsFence).
func (m *memStore) fenceHolds(u store.DocsUpdate) bool {
	f := u.Fence
	if f == nil || m.is("docsFenceIgnored") {
		return true
	}
	rec, ok := m.updates()[f.UpdateID]
	switch {
	case !ok || rec.Status != store.DocsUpdateInProgress || rec.LeaseOwner == "":
		return false
	case rec.ProjectID != u.ProjectID && !m.is("docsFenceAnyProject"):
		return false
	case rec.LeaseOwner != f.Owner && !m.is("docsFenceAnyOwner"):
		return false
	}
	now := m.leaseTime(f.Now)
	if m.is("docsFenceByToldTime") {
		now = m.norm(f.Now)
	}
	return !rec.LeaseExpiresAt.Before(now) || m.is("docsFenceLapsed")
}

func (m *memStore) DocsState(_ context.Context, projectID string) (store.DocsState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.docs()
	st := store.DocsState{Commit: d.commits[projectID], UpdatedAt: d.updated[projectID], Files: maps.Clone(d.files[projectID])}
	if m.is("docsUpdateTimeUnread") {
		st.UpdatedAt = time.Time{}
	}
	if st.Files == nil {
		st.Files = map[string]string{}
	}
	if m.is("docsStateDropsBlobs") {
		for f := range st.Files {
			st.Files[f] = ""
		}
	}
	return st, nil
}

func (m *memStore) DocPage(_ context.Context, projectID, path string) (store.DocPage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for p, page := range m.docs().pages[projectID] {
		if p == path || m.is("docsPagePrefixMatch") && path != "" && strings.HasPrefix(p, path) {
			page.Groups, page.Sections = slices.Clone(page.Groups), slices.Clone(page.Sections)
			if m.is("docsPageDropsFields") {
				page.Description = ""
			}
			return page, nil
		}
	}
	return store.DocPage{}, fmt.Errorf("page %q: %w", path, store.ErrNotFound)
}

// memStem is a crude English stemmer, enough for the suite's words: the
// suite asks that stems match, not which stemmer makes them.
func memStem(w string) string {
	for _, suffix := range []string{"ations", "ation", "ings", "ing", "ies", "ied", "ed", "es", "s", "e", "y"} {
		if stem, ok := strings.CutSuffix(w, suffix); ok && len(stem) >= 3 {
			if suffix == "ies" || suffix == "ied" || suffix == "y" {
				return stem + "i"
			}
			return stem
		}
	}
	return w
}

func memWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}

// memTerms is store.DocQueryTerms, or what a mutant makes of a query.
func (m *memStore) memTerms(query string) []string {
	if m.is("docsStopWordsKept") {
		return memWords(query)
	}
	if m.is("docsQuoteFails") && strings.Contains(query, `"`) {
		return []string{"\x00"}
	}
	return store.DocQueryTerms(query)
}

// matches reports whether the document word w matches the query term.
func (m *memStore) matches(w, term string, last bool) bool {
	if m.is("docsNoStem") {
		if w == term {
			return true
		}
	} else if memStem(w) == memStem(term) {
		return true
	}
	prefix := last && !m.is("docsNoPrefix") || m.is("docsEveryWordPrefix")
	return prefix && (strings.HasPrefix(w, term) || strings.HasPrefix(memStem(w), memStem(term)))
}

// memField is one field of a section as the reference store searches it.
type memField struct {
	text   string
	weight float64
}

func (m *memStore) SearchDocs(_ context.Context, q store.DocsQuery) ([]store.DocHit, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.is("docsNilHits") && len(m.docs().pages[q.ProjectID]) == 0 {
		return nil, nil
	}
	terms := m.memTerms(q.Query)
	if len(terms) == 0 {
		return []store.DocHit{}, nil
	}
	anyWord := q.AnyWord && !m.is("docsAnyWordAsEvery")
	if anyWord && !m.is("docsTermsRepeats") {
		terms = store.DistinctDocTerms(terms)
	}
	// prefix reports whether the query's term ti matches as a prefix.
	prefix := func(ti int) bool {
		return ti == len(terms)-1 && (!anyWord || m.is("docsAnyWordPrefix"))
	}
	negated := map[string]bool{}
	if m.is("docsMinusNegates") {
		for _, w := range strings.Fields(strings.ToLower(q.Query)) {
			if w, ok := strings.CutPrefix(w, "-"); ok {
				negated[w] = true
			}
		}
	}
	type found struct {
		hit   store.DocHit
		score float64
		ord   int
	}
	var all []found
	for project, pages := range m.docs().pages {
		if project != q.ProjectID && !m.is("docsLeakProjects") {
			continue
		}
		for _, p := range pages {
			if !m.docSelects(p, q) && !(anyWord && m.is("docsAnyWordNoFilters")) {
				continue
			}
			sections := p.Sections
			if len(sections) == 0 {
				sections = []store.DocSection{{}}
			}
			for i, s := range sections {
				title := ""
				if i == 0 || m.is("docsTitleEverySection") {
					title = p.Title + " " + p.Description
				}
				w := [4]float64{8, 3, 1, 0.3}
				if m.is("docsFlatRanking") {
					w = [4]float64{1, 1, 1, 1}
				}
				fields := []memField{{title, w[0]}, {s.Heading, w[1]}, {s.Text, w[2]}, {s.Code, w[3]}}
				score, matched, exact := 0.0, 0, 0
				for ti, term := range terms {
					hit, same := false, false
					for _, f := range fields {
						for _, word := range memWords(f.text) {
							if negated[word] {
								score = -1e9
							}
							if m.matches(word, term, prefix(ti)) {
								score += f.weight
								hit = true
								same = same || word == term
							}
						}
					}
					if hit {
						matched++
					}
					if same {
						exact++
					}
				}
				ok := matched == len(terms)
				if anyWord || m.is("docsAnyWord") || m.is("docsOrIsOr") && strings.Contains(q.Query, " OR ") {
					ok = matched > 0
				}
				if anyWord && matched < q.MinTerms && !m.is("docsMinTermsIgnored") && !m.is("docsMinTermsAfterLimit") {
					continue
				}
				if !ok || score < 0 {
					continue
				}
				if anyWord && m.is("docsAnyWordFlat") {
					score = 1
				}
				h := store.DocHit{Path: p.Path, Anchor: s.Anchor, Title: p.Title, Heading: s.Heading,
					Groups: slices.Clone(p.Groups), Version: p.Version, Language: p.Language, Terms: matched}
				if !anyWord {
					h.Terms = len(store.DistinctDocTerms(terms))
				}
				if m.is("docsTermsUnstemmed") {
					h.Terms = exact
				}
				if m.is("docsDropsGroups") {
					h.Groups = nil
				}
				h.Snippet, h.Marks = m.memSnippet(terms, prefix, p.Title, s)
				all = append(all, found{h, score, i})
			}
		}
	}
	slices.SortFunc(all, func(a, b found) int {
		return cmp.Or(cmp.Compare(b.score, a.score), strings.Compare(a.hit.Path, b.hit.Path), cmp.Compare(a.ord, b.ord))
	})
	if m.is("docsLimitAfterSort") && len(all) > q.Limit {
		all = all[len(all)-q.Limit:]
	} else if len(all) > q.Limit {
		all = all[:q.Limit]
	}
	if m.is("docsMinTermsAfterLimit") {
		all = slices.DeleteFunc(all, func(f found) bool { return f.hit.Terms < q.MinTerms })
	}
	hits, raw := []store.DocHit{}, []float64{}
	for _, f := range all {
		hits, raw = append(hits, f.hit), append(raw, f.score)
	}
	if len(hits) == 0 {
		return hits, nil
	}
	if m.is("docsRawScores") {
		for i := range hits {
			hits[i].Score = raw[i]
		}
		return hits, nil
	}
	minScore := q.MinScore
	if m.is("docsThresholdIgnored") {
		minScore = 0
	}
	return store.ScoreDocHits(hits, raw, minScore), nil
}

// docSelects reports whether the page passes q's filters.
func (m *memStore) docSelects(p store.DocPage, q store.DocsQuery) bool {
	if q.Version != "" && p.Version != q.Version && !m.is("docsIgnoresVersion") {
		return false
	}
	if q.Language != "" && p.Language != q.Language {
		return false
	}
	if len(q.Groups) == 0 {
		return true
	}
	groups := p.Groups
	if m.is("docsTopGroupOnly") && len(groups) > 1 {
		groups = groups[:1]
	}
	in := 0
	for _, g := range q.Groups {
		if slices.Contains(groups, g) {
			in++
		}
	}
	if m.is("docsGroupsAll") {
		return in == len(q.Groups)
	}
	return in > 0
}

// memSnippet is the whole of the section's text (or code, as
// store.PickDocSnippet chooses), its matched words marked.
func (m *memStore) memSnippet(terms []string, prefix func(int) bool, title string, s store.DocSection) (string, []store.DocMark) {
	mark := func(text string) (string, []store.DocMark) {
		var marks []store.DocMark
		if m.is("docsNoMarks") {
			return text, nil
		}
		lower := strings.ToLower(text)
		i := 0
		for _, w := range strings.FieldsFunc(lower, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }) {
			at := i + strings.Index(lower[i:], w)
			i = at + len(w)
			for ti, term := range terms {
				if m.matches(w, term, prefix(ti)) {
					marks = append(marks, store.DocMark{Start: at, End: at + len(w)})
					break
				}
			}
		}
		return text, marks
	}
	if m.is("docsSnippetFromTitle") {
		return mark(title)
	}
	text, textMarks := mark(s.Text)
	code, codeMarks := mark(s.Code)
	switch {
	case len(textMarks) > 0:
		return text, textMarks
	case len(codeMarks) > 0:
		return code, codeMarks
	case s.Text == "" && s.Code != "":
		return code, nil
	}
	return text, nil
}
