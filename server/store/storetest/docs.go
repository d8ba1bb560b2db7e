package storetest

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/docsapi/docsapi-go/server/store"
)

// The documentation index's rules (store.DocsStore). The engines rank
// alike only roughly, so the suite pins what they must share and leaves
// the rest free:
//   - the set of hits of a query, always;
//   - the order of hits only where one field decides it: in the corpus
//     below, "webhooks" is in one section's title, one's heading, one's
//     text and one's code, once each, and those four come in that order;
//   - the first hit's score (1), the others' bounds, and that a
//     threshold keeps exactly the hits of the full answer at or above it;
//   - snippets by their marks only: each mark is a whole matched word, in
//     the section's text or code (their length and ellipses are free).

// docPage returns a page of the corpus read from file, with one section
// per (anchor, heading, text, code) quadruple.
func docPage(path, file, title string, sections ...[4]string) store.DocPage {
	p := store.DocPage{Path: path, File: file, Title: title, Description: ""}
	for _, s := range sections {
		p.Sections = append(p.Sections, store.DocSection{Anchor: s[0], Heading: s[1], Text: s[2], Code: s[3]})
	}
	return p
}

// docsCorpus is the suite's small documentation site.
func docsCorpus() []store.DocPage {
	webhooks := docPage("/guide/webhooks", "guide/webhooks.mdx", "Webhooks",
		[4]string{"", "", "Receive events from the platform as they happen.", ""},
		[4]string{"verify", "Verify signatures", "Check each request's signature header before trusting it.", "verify(req, secret)"})
	webhooks.Description = "Push notifications to your backend"
	webhooks.Groups = []string{"Guides", "Integrations"}
	events := docPage("/guide/events", "guide/events.mdx", "Events",
		[4]string{"delivery", "Delivery", "Events reach your endpoint through webhooks and are retried for a day.", ""})
	events.Groups = []string{"Guides"}
	notifications := docPage("/guide/notifications", "guide/notifications.mdx", "Notifications",
		[4]string{"", "", "Choose where notifications go.", ""},
		[4]string{"webhook-settings", "Webhook settings", "Pick a target and a format.", ""})
	notifications.Groups = []string{"Guides"}
	cli := docPage("/reference/cli", "reference/cli.mdx", "Command line",
		[4]string{"setup", "Setup", "Run the tool from a terminal.", "docsapi webhooks list --json"})
	cli.Groups = []string{"Reference"}
	install := docPage("/guide/install", "guide/install.mdx", "Getting started",
		[4]string{"", "", "Install the server with one command, then configure the database.", "go install example.com/docsapi@latest"},
		[4]string{"upgrade", "Upgrade", "Upgrades keep your configuration.", ""})
	install.Groups = []string{"Guides"}
	installV1 := docPage("/v1/guide/install", "v1/guide/install.mdx", "Getting started",
		[4]string{"", "", "Install the old server by hand.", ""})
	installV1.Version = "v1"
	installFr := docPage("/fr/guide/install", "fr/guide/install.mdx", "Démarrer",
		[4]string{"", "", "Install: le café du serveur est prêt. Install again.", ""})
	installFr.Language = "fr"
	installFr.Groups = []string{"Guides FR"}
	index := docPage("/", "index.mdx", "Welcome", [4]string{"", "", "Documentation of the platform.", ""})
	return []store.DocPage{webhooks, events, notifications, cli, install, installV1, installFr, index}
}

// docsFiles returns the files of pages, each with blob.
func docsFiles(pages []store.DocPage, blob string) []store.DocFile {
	var fs []store.DocFile
	for _, p := range pages {
		fs = append(fs, store.DocFile{Path: p.File, Blob: blob + ":" + p.File})
	}
	return fs
}

// mustIndex replaces the project's index with pages at commit, at the
// time At(0).
func mustIndex(t *testing.T, s store.Store, projectID, commit string, pages []store.DocPage) {
	t.Helper()
	must(t, "UpdateDocs", s.UpdateDocs(t.Context(), store.DocsUpdate{
		ProjectID: projectID, Commit: commit, At: At(0), Files: docsFiles(pages, commit), Pages: pages, Replace: true,
	}))
}

// withCorpus makes project p1 with the corpus at commit c1.
func withCorpus(t *testing.T, s store.Store) {
	t.Helper()
	mustProject(t, s, "p1")
	mustIndex(t, s, "p1", "c1", docsCorpus())
}

// searchDocs asks p1 for query, up to 50 hits, and checks what every answer
// must be (see checkHits).
func searchDocs(t *testing.T, s store.Store, query string) []store.DocHit {
	t.Helper()
	return searchQ(t, s, store.DocsQuery{ProjectID: "p1", Query: query, Limit: 50})
}

func searchQ(t *testing.T, s store.Store, q store.DocsQuery) []store.DocHit {
	t.Helper()
	hits, err := s.SearchDocs(t.Context(), q)
	must(t, fmt.Sprintf("SearchDocs(%q)", q.Query), err)
	checkHits(t, q, hits)
	return hits
}

// checkHits checks the rules of every answer: never nil, at most the
// limit, scores in (0, 1] from 1 down, none below the threshold, and
// marks that are ordered, apart and inside their snippet.
func checkHits(t *testing.T, q store.DocsQuery, hits []store.DocHit) {
	t.Helper()
	if hits == nil {
		t.Errorf("SearchDocs(%q) = nil, want an empty, non-nil list", q.Query)
	}
	if len(hits) > q.Limit {
		t.Errorf("SearchDocs(%q): %d hits, limit %d", q.Query, len(hits), q.Limit)
	}
	for i, h := range hits {
		switch {
		case i == 0 && h.Score != 1:
			t.Errorf("SearchDocs(%q): first hit's score %v, want 1", q.Query, h.Score)
		case !(h.Score > 0 && h.Score <= 1) || math.IsNaN(h.Score):
			t.Errorf("SearchDocs(%q): hit %d's score %v, want in (0, 1]", q.Query, i, h.Score)
		case i > 0 && h.Score > hits[i-1].Score:
			t.Errorf("SearchDocs(%q): hit %d's score %v above the one before (%v)", q.Query, i, h.Score, hits[i-1].Score)
		case h.Score < q.MinScore:
			t.Errorf("SearchDocs(%q): hit %d's score %v below the threshold %v", q.Query, i, h.Score, q.MinScore)
		}
		end := 0
		for _, m := range h.Marks {
			if m.Start < end || m.End <= m.Start || m.End > len(h.Snippet) {
				t.Errorf("SearchDocs(%q): hit %s#%s: mark %v out of order or outside the snippet %q", q.Query, h.Path, h.Anchor, m, h.Snippet)
				break
			}
			end = m.End
		}
		if strings.ContainsAny(h.Snippet, store.SnippetMarkStart+store.SnippetMarkEnd) {
			t.Errorf("SearchDocs(%q): hit %s#%s's snippet %q holds a mark character", q.Query, h.Path, h.Anchor, h.Snippet)
		}
	}
}

// hitKeys returns each hit as path#anchor.
func hitKeys(hits []store.DocHit) []string {
	keys := []string{}
	for _, h := range hits {
		keys = append(keys, h.Path+"#"+h.Anchor)
	}
	return keys
}

// sameHits checks that query finds exactly want, in any order.
func sameHits(t *testing.T, s store.Store, query string, want ...string) []store.DocHit {
	t.Helper()
	hits := searchDocs(t, s, query)
	got := slices.Sorted(slices.Values(hitKeys(hits)))
	want = slices.Sorted(slices.Values(append([]string{}, want...)))
	diff(t, fmt.Sprintf("hits of %q (any order)", query), want, got)
	return hits
}

// markedWords returns the words the hit's marks enclose, lower case.
func markedWords(h store.DocHit) []string {
	var ws []string
	for _, m := range h.Marks {
		if m.Start >= 0 && m.Start < m.End && m.End <= len(h.Snippet) {
			ws = append(ws, strings.ToLower(h.Snippet[m.Start:m.End]))
		}
	}
	return ws
}

var allWebhookHits = []string{"/guide/webhooks#", "/guide/notifications#webhook-settings", "/guide/events#delivery", "/reference/cli#setup"}

func testDocs(t *testing.T, open opener) {
	runAll(t, open, []subtest{
		{"PageRoundTripsAndMissingPageIsNotFound", func(t *testing.T, s store.Store) {
			withCorpus(t, s)
			for _, want := range docsCorpus() {
				got, err := s.DocPage(t.Context(), "p1", want.Path)
				must(t, "DocPage "+want.Path, err)
				want.ProjectID = "p1"
				diff(t, "DocPage "+want.Path, want, got)
			}
			for _, path := range []string{"/guide", "/guide/webhooks/", "/Guide/webhooks", ""} {
				_, err := s.DocPage(t.Context(), "p1", path)
				wantErr(t, "DocPage "+path, err, store.ErrNotFound)
			}
			_, err := s.DocPage(t.Context(), "p2", "/guide/webhooks")
			wantErr(t, "DocPage of another project", err, store.ErrNotFound)
		}},
		{"StateHoldsCommitAndBlobs", func(t *testing.T, s store.Store) {
			withCorpus(t, s)
			st, err := s.DocsState(t.Context(), "p1")
			must(t, "DocsState", err)
			want := store.DocsState{Commit: "c1", UpdatedAt: At(0), Files: map[string]string{}}
			for _, f := range docsFiles(docsCorpus(), "c1") {
				want.Files[f.Path] = f.Blob
			}
			diff(t, "DocsState", want, st)
			none, err := s.DocsState(t.Context(), "nope")
			must(t, "DocsState of an unknown project", err)
			if none.Commit != "" || !none.UpdatedAt.IsZero() || len(none.Files) != 0 || none.Files == nil {
				t.Errorf("DocsState of an unknown project = %+v, want an empty commit, a zero time and an empty, non-nil map", none)
			}
		}},
		{"StateSaysWhenTheIndexLastChanged", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustProject(t, s, "p2")
			when := func(what, projectID string, want time.Time) {
				t.Helper()
				st, err := s.DocsState(t.Context(), projectID)
				must(t, "DocsState", err)
				checkTimes(t, "DocsState "+what, st.UpdatedAt)
				if !st.UpdatedAt.Equal(want) {
					t.Errorf("DocsState %s: UpdatedAt %v, want %v", what, st.UpdatedAt, want)
				}
			}
			when("before any update", "p1", time.Time{})
			pages := docsCorpus()
			must(t, "UpdateDocs", s.UpdateDocs(t.Context(), store.DocsUpdate{
				ProjectID: "p1", Commit: "c1", At: At(time.Hour), Files: docsFiles(pages, "c1"), Pages: pages, Replace: true,
			}))
			when("after the first update", "p1", At(time.Hour))
			// An update that only removes a file is an update all the same.
			must(t, "UpdateDocs", s.UpdateDocs(t.Context(), store.DocsUpdate{
				ProjectID: "p1", Commit: "c2", At: At(2 * time.Hour), RemoveFiles: []string{"reference/cli.mdx"},
			}))
			when("after an incremental update", "p1", At(2*time.Hour))
			// Refused updates change nothing: an invalid one, one without
			// a time, and one of another project's.
			wantErr(t, "UpdateDocs of an invalid page", s.UpdateDocs(t.Context(), store.DocsUpdate{
				ProjectID: "p1", Commit: "c3", At: At(3 * time.Hour), Pages: []store.DocPage{docPage("bad", "x.md", "X")},
			}), store.ErrInvalid)
			wantErr(t, "UpdateDocs without a time", s.UpdateDocs(t.Context(), store.DocsUpdate{ProjectID: "p1", Commit: "c3"}), store.ErrInvalid)
			when("after refused updates", "p1", At(2*time.Hour))
			when("of a project never updated", "p2", time.Time{})
			must(t, "UpdateDocs of p2", s.UpdateDocs(t.Context(), store.DocsUpdate{ProjectID: "p2", Commit: "x", At: At(4 * time.Hour)}))
			when("of p1 after p2's update", "p1", At(2*time.Hour))
			when("of p2 after its update", "p2", At(4*time.Hour))
		}},
		{"FieldsRankTitleHeadingTextCode", func(t *testing.T, s store.Store) {
			withCorpus(t, s)
			hits := searchDocs(t, s, "webhooks")
			diff(t, `hits of "webhooks" in order`, allWebhookHits, hitKeys(hits))
		}},
		{"TitleCountsOncePerPage", func(t *testing.T, s store.Store) {
			withCorpus(t, s)
			// "/guide/webhooks" has two sections; only its first holds the
			// title, so the page is one hit for its title.
			sameHits(t, s, "backend", "/guide/webhooks#")
			sameHits(t, s, "notifications backend", "/guide/webhooks#")
		}},
		{"EnglishStemsMatch", func(t *testing.T, s store.Store) {
			withCorpus(t, s)
			sameHits(t, s, "configured database", "/guide/install#")
			sameHits(t, s, "retry endpoints", "/guide/events#delivery")
			sameHits(t, s, "signature checking", "/guide/webhooks#verify")
		}},
		{"LastWordMatchesAsPrefix", func(t *testing.T, s store.Store) {
			withCorpus(t, s)
			sameHits(t, s, "webho", allWebhookHits...)
			sameHits(t, s, "signat", "/guide/webhooks#verify")
			sameHits(t, s, "configuration datab", "/guide/install#")
			// Only the last word: "signat" first must be a whole word.
			sameHits(t, s, "signat check")
		}},
		{"EveryWordIsRequired", func(t *testing.T, s store.Store) {
			withCorpus(t, s)
			sameHits(t, s, "retried", "/guide/events#delivery")
			sameHits(t, s, "signature", "/guide/webhooks#verify")
			sameHits(t, s, "retried endpoint", "/guide/events#delivery")
			sameHits(t, s, "retried signature")
			// Words match across the fields of one section.
			sameHits(t, s, "delivery retried", "/guide/events#delivery")
		}},
		{"CommonWordsAreDropped", func(t *testing.T, s store.Store) {
			withCorpus(t, s)
			sameHits(t, s, "how to verify the signatures", "/guide/webhooks#verify")
			sameHits(t, s, "the a of")
		}},
		{"SnippetsMarkMatchedWordsAsPlainText", func(t *testing.T, s store.Store) {
			withCorpus(t, s)
			hits := sameHits(t, s, "retried", "/guide/events#delivery")
			if len(hits) == 1 {
				diff(t, "marked words of retried", []string{"retried"}, markedWords(hits[0]))
				if !strings.Contains(hits[0].Snippet, "retried for a day") {
					t.Errorf("snippet %q: want the section's text around the match", hits[0].Snippet)
				}
			}
			// Only the code matches: the snippet is the code's.
			for _, h := range searchDocs(t, s, "webhooks") {
				words := markedWords(h)
				for _, w := range words {
					if w != "webhooks" && w != "webhook" {
						t.Errorf("hit %s#%s marks %q, want only webhook(s)", h.Path, h.Anchor, w)
					}
				}
				if h.Path == "/reference/cli" && (len(words) == 0 || !strings.Contains(h.Snippet, "list")) {
					t.Errorf("code-only hit's snippet %q, marks %v: want the code with its match marked", h.Snippet, h.Marks)
				}
				if h.Path == "/guide/events" && len(words) == 0 {
					t.Errorf("text hit's snippet %q: want its match marked", h.Snippet)
				}
			}
			// Stems are marked as found: "installing" marks "Install".
			for _, h := range searchDocs(t, s, "installing") {
				for _, w := range markedWords(h) {
					if !strings.HasPrefix(w, "install") {
						t.Errorf("hit %s#%s of installing marks %q", h.Path, h.Anchor, w)
					}
				}
			}
		}},
		{"AnyWordFindsSectionsHoldingSomeWords", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			page := func(path, title, text string) store.DocPage {
				return docPage(path, strings.TrimPrefix(path, "/")+".md", title, [4]string{"", "", text, ""})
			}
			one := page("/one", "Appearance", "Configure the widget colour.")
			one.Groups = []string{"Guides"}
			two := page("/two", "Layout", "Pick a widget for the page.")
			three := page("/three", "Modes", "Dark themes and light themes.")
			four := page("/four", "Other", "Nothing to see.")
			five := page("/five", "Legacy", "Configure the widget.")
			five.Version = "v2"
			six := page("/six", "Apparence", "Le widget est là.")
			six.Language = "fr"
			mustIndex(t, s, "p1", "c1", []store.DocPage{one, two, three, four, five, six})
			// Four distinct words, one said twice: each matches by its
			// stem, and a section holding it more than once, or holding
			// two words of one stem, counts it once.
			const question = "How do I configuring widgets colours with themes, themes?"
			anyWord := func(f func(q *store.DocsQuery)) []store.DocHit {
				t.Helper()
				q := store.DocsQuery{ProjectID: "p1", Query: question, Limit: 50, AnyWord: true}
				if f != nil {
					f(&q)
				}
				return searchQ(t, s, q)
			}
			full := anyWord(nil)
			terms := map[string]int{}
			for _, h := range full {
				terms[h.Path] = h.Terms
			}
			diff(t, "Terms of each hit", map[string]int{"/one": 3, "/five": 2, "/two": 1, "/three": 1, "/six": 1}, terms)
			if len(full) > 0 && full[0].Path != "/one" {
				t.Errorf("any-word hits %v: want /one, which holds the most words, first", hitKeys(full))
			}
			// Every word is still required without AnyWord, and only then
			// is the last a prefix.
			sameHits(t, s, question)
			sameHits(t, s, "widget config", "/one#", "/five#")
			q := store.DocsQuery{ProjectID: "p1", Query: "widget dar", Limit: 50, AnyWord: true}
			got := slices.Sorted(slices.Values(hitKeys(searchQ(t, s, q))))
			diff(t, `any-word hits of "widget dar" ("dar" not finding "Dark")`, []string{"/five#", "/one#", "/six#", "/two#"}, got)
			// Filters, the limit and the threshold apply as to every search.
			for _, tc := range []struct {
				f    func(q *store.DocsQuery)
				want []string
			}{
				{func(q *store.DocsQuery) { q.Version = "v2" }, []string{"/five#"}},
				{func(q *store.DocsQuery) { q.Language = "fr" }, []string{"/six#"}},
				{func(q *store.DocsQuery) { q.Groups = []string{"Guides"} }, []string{"/one#"}},
				{func(q *store.DocsQuery) { q.Limit = 1 }, []string{"/one#"}},
				{func(q *store.DocsQuery) { q.Limit = 2 }, hitKeys(full)[:min(2, len(full))]},
				{func(q *store.DocsQuery) { q.MinScore = 1 }, hitKeys(full)[:min(1, len(full))]},
			} {
				diff(t, "any-word hits with a filter, limit or threshold", tc.want, hitKeys(anyWord(tc.f)))
			}
		}},
		{"AnyWordKeepsSectionsHoldingMinTerms", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			page := func(path, title, text string) store.DocPage {
				return docPage(path, strings.TrimPrefix(path, "/")+".md", title, [4]string{"", "", text, ""})
			}
			// /themes holds one word of the question, the rarest, in its
			// title and often, so it ranks first of an any-word search;
			// /pair holds the two others, in its text only.
			pages := []store.DocPage{
				page("/themes", "Themes", "Themes, themes and more themes."),
				page("/pair", "Setup", "Pick the widget colour."),
				page("/colour", "Paints", "A colour."),
				page("/widget", "Parts", "A widget."),
				page("/another", "Another", "Another widget."),
			}
			for i := range 10 {
				pages = append(pages, page(fmt.Sprintf("/other-%d", i), "Other", "Nothing to see."))
			}
			mustIndex(t, s, "p1", "c1", pages)
			const question = "widget colour themes"
			q := store.DocsQuery{ProjectID: "p1", Query: question, Limit: 50, AnyWord: true}
			full := searchQ(t, s, q)
			if len(full) == 0 || full[0].Path != "/themes" {
				t.Fatalf("any-word hits %v: want /themes first", hitKeys(full))
			}
			all := map[string]int{"/themes": 1, "/pair": 2, "/colour": 1, "/widget": 1, "/another": 1}
			for _, tc := range []struct {
				minTerms, limit int
				want            map[string]int
			}{
				{0, 50, all},
				{1, 50, all},
				{2, 50, map[string]int{"/pair": 2}},
				{2, 1, map[string]int{"/pair": 2}},
				{3, 50, map[string]int{}},
				{4, 50, map[string]int{}},
			} {
				q.MinTerms, q.Limit = tc.minTerms, tc.limit
				got := map[string]int{}
				for _, h := range searchQ(t, s, q) {
					got[h.Path] = h.Terms
				}
				diff(t, fmt.Sprintf("Terms of the hits holding at least %d words, at most %d", tc.minTerms, tc.limit), tc.want, got)
			}
			// Filters apply as to every search.
			q.MinTerms, q.Limit, q.Version = 2, 50, "v2"
			if hits := searchQ(t, s, q); len(hits) != 0 {
				t.Errorf("hits of version v2: %v, want none", hitKeys(hits))
			}
		}},
		{"HitsCarryTheirPagesFields", func(t *testing.T, s store.Store) {
			withCorpus(t, s)
			hits := searchDocs(t, s, "signature")
			want := []store.DocHit{{Path: "/guide/webhooks", Anchor: "verify", Title: "Webhooks", Heading: "Verify signatures",
				Score: 1, Terms: 1, Groups: []string{"Guides", "Integrations"}}}
			diff(t, "hits of signature", want, hits, ignoreSnippet)
		}},
		{"FiltersSelectVersionLanguageAndGroups", func(t *testing.T, s store.Store) {
			withCorpus(t, s)
			all := []string{"/guide/install#", "/v1/guide/install#", "/fr/guide/install#"}
			sameHits(t, s, "install", all...)
			for _, tc := range []struct {
				q    store.DocsQuery
				want []string
			}{
				{store.DocsQuery{Version: "v1"}, []string{"/v1/guide/install#"}},
				{store.DocsQuery{Version: "v2"}, nil},
				{store.DocsQuery{Language: "fr"}, []string{"/fr/guide/install#"}},
				{store.DocsQuery{Groups: []string{"Guides"}}, []string{"/guide/install#"}},
				{store.DocsQuery{Groups: []string{"Guides FR", "Guides"}}, []string{"/guide/install#", "/fr/guide/install#"}},
				{store.DocsQuery{Groups: []string{"Reference"}}, nil},
				{store.DocsQuery{Groups: []string{"Guides"}, Language: "fr"}, nil},
			} {
				q := tc.q
				q.ProjectID, q.Query, q.Limit = "p1", "install", 50
				got := slices.Sorted(slices.Values(hitKeys(searchQ(t, s, q))))
				diff(t, fmt.Sprintf("hits of install with %+v", tc.q), slices.Sorted(slices.Values(tc.want)), got)
			}
			// A page in a group at any depth is in it.
			q := store.DocsQuery{ProjectID: "p1", Query: "webhooks", Limit: 50, Groups: []string{"Integrations"}}
			diff(t, "hits of webhooks in Integrations", []string{"/guide/webhooks#"}, hitKeys(searchQ(t, s, q)))
		}},
		{"LimitAndThresholdCutTheFullAnswer", func(t *testing.T, s store.Store) {
			withCorpus(t, s)
			full := searchDocs(t, s, "webhooks")
			if len(full) != 4 {
				t.Fatalf("hits of webhooks = %v, want 4", hitKeys(full))
			}
			if full[3].Score >= 1 {
				t.Errorf("the code-only hit scores %v, as much as the title's", full[3].Score)
			}
			for limit := 1; limit <= 4; limit++ {
				got := searchQ(t, s, store.DocsQuery{ProjectID: "p1", Query: "webhooks", Limit: limit})
				diff(t, fmt.Sprintf("hits of webhooks, limit %d", limit), full[:limit], got)
			}
			for _, min := range []float64{0, full[3].Score, full[2].Score, full[1].Score, 1} {
				var want []store.DocHit
				for _, h := range full {
					if h.Score >= min {
						want = append(want, h)
					}
				}
				got := searchQ(t, s, store.DocsQuery{ProjectID: "p1", Query: "webhooks", Limit: 50, MinScore: min})
				diff(t, fmt.Sprintf("hits of webhooks, threshold %v", min), want, got)
			}
		}},
		{"QuerySyntaxIsNeverSyntax", func(t *testing.T, s store.Store) {
			withCorpus(t, s)
			for _, tc := range []struct {
				query string
				want  []string
			}{
				{`"webhooks"`, allWebhookHits},
				{`webhooks*`, allWebhookHits},
				{`-webhooks`, allWebhookHits},
				{`(webhooks`, allWebhookHits},
				{`webhooks NOT events`, []string{"/guide/events#delivery", "/guide/webhooks#"}},
				{`webhooks OR platform`, []string{"/guide/webhooks#"}},
				{`title:webhooks`, nil},
				{`NEAR(webhooks events)`, nil},
				{`signature'; DROP TABLE doc_pages; --`, nil},
				{`signature's`, []string{"/guide/webhooks#verify"}},
				{`webhooks & !events | (retr:*)`, []string{"/guide/events#delivery"}},
			} {
				sameHits(t, s, tc.query, tc.want...)
			}
			for _, query := range []string{`"`, `*`, `'`, `\`, `AND OR NOT`, `a:b`, `-x`, `(`, `)`, `NEAR`, `:*`, `!`, `&`, `|`, `<->`,
				`"unbalanced`, "café ünïcode 日本語 🎉", "\u200b\u2060", strings.Repeat("install \" * ( : ", 700)} {
				searchDocs(t, s, query)
			}
			// The corpus is intact after them.
			sameHits(t, s, "webhooks", allWebhookHits...)
			sameHits(t, s, "café", "/fr/guide/install#")
		}},
		{"UnknownProjectFindsNothingAndProjectsAreApart", func(t *testing.T, s store.Store) {
			withCorpus(t, s)
			mustProject(t, s, "p2")
			mustIndex(t, s, "p2", "c9", []store.DocPage{docPage("/other", "other.md", "Other webhooks")})
			for _, project := range []string{"p2", "nope"} {
				hits, err := s.SearchDocs(t.Context(), store.DocsQuery{ProjectID: project, Query: "retried", Limit: 10})
				must(t, "SearchDocs of "+project, err)
				if hits == nil || len(hits) != 0 {
					t.Errorf("SearchDocs(retried) of %s = %v, want an empty, non-nil list", project, hits)
				}
			}
			sameHits(t, s, "webhooks", allWebhookHits...)
			hits, err := s.SearchDocs(t.Context(), store.DocsQuery{ProjectID: "p2", Query: "webhooks", Limit: 10})
			must(t, "SearchDocs of p2", err)
			diff(t, "hits of p2", []string{"/other#"}, hitKeys(hits))
			wantErr(t, "UpdateDocs of an unknown project", s.UpdateDocs(t.Context(), store.DocsUpdate{ProjectID: "nope", Commit: "c1", At: At(0)}), store.ErrNotFound)
		}},
		{"InvalidArgumentsAreRefusedAndStoreNothing", func(t *testing.T, s store.Store) {
			withCorpus(t, s)
			for _, q := range []store.DocsQuery{
				{ProjectID: "", Query: "x", Limit: 10},
				{ProjectID: "p1", Query: " \t", Limit: 10},
				{ProjectID: "p1", Query: "x", Limit: 0},
				{ProjectID: "p1", Query: "x", Limit: 51},
				{ProjectID: "p1", Query: "x", Limit: 10, MinScore: -0.01},
				{ProjectID: "p1", Query: "x", Limit: 10, MinScore: 1.01},
				{ProjectID: "p1", Query: "x", Limit: 10, MinScore: math.NaN()},
				{ProjectID: "p1", Query: "x", Limit: 10, AnyWord: true, MinTerms: -1},
				{ProjectID: "p1", Query: "x", Limit: 10, AnyWord: true, MinTerms: store.MaxDocQueryWords + 1},
				{ProjectID: "p1", Query: "x", Limit: 10, MinTerms: 1},
			} {
				_, err := s.SearchDocs(t.Context(), q)
				wantErr(t, fmt.Sprintf("SearchDocs(%+v)", q), err, store.ErrInvalid)
			}
			good := docPage("/new", "new.md", "New retried", [4]string{"", "", "retried", ""})
			bad := func(f func(u *store.DocsUpdate)) store.DocsUpdate {
				u := store.DocsUpdate{ProjectID: "p1", Commit: "c2", At: At(time.Hour), Files: []store.DocFile{{Path: "new.md", Blob: "b"}},
					Pages: []store.DocPage{good}, RemoveFiles: []string{"guide/events.mdx"}}
				f(&u)
				return u
			}
			for i, u := range []store.DocsUpdate{
				bad(func(u *store.DocsUpdate) { u.ProjectID = "" }),
				bad(func(u *store.DocsUpdate) { u.Commit = "" }),
				bad(func(u *store.DocsUpdate) { u.At = time.Time{} }),
				bad(func(u *store.DocsUpdate) { u.Pages[0].Path = "new" }),
				bad(func(u *store.DocsUpdate) { u.Pages[0].File = "other.md" }),
				bad(func(u *store.DocsUpdate) { u.Pages = append(u.Pages, good) }),
				bad(func(u *store.DocsUpdate) { u.Files = append(u.Files, u.Files[0]) }),
				bad(func(u *store.DocsUpdate) { u.Files[0].Blob = "" }),
				bad(func(u *store.DocsUpdate) { u.RemoveFiles = []string{"new.md"} }),
				bad(func(u *store.DocsUpdate) { u.Pages[0].ProjectID = "p2" }),
				bad(func(u *store.DocsUpdate) {
					u.Pages = []store.DocPage{docPage("/new", "new.md", "New", [4]string{"", "", "a\x01b", ""})}
				}),
				bad(func(u *store.DocsUpdate) {
					u.Pages = []store.DocPage{docPage("/new", "new.md", "New\x00", [4]string{"", "", "retried", ""})}
				}),
				bad(func(u *store.DocsUpdate) {
					u.Pages = []store.DocPage{docPage("/new", "new.md", "New", [4]string{"", "", "\xff", ""})}
				}),
				bad(func(u *store.DocsUpdate) {
					u.Pages = []store.DocPage{docPage("/new", "new.md", "New", [4]string{"", "", strings.Repeat("a", store.MaxDocSectionBytes+1), ""})}
				}),
			} {
				wantErr(t, fmt.Sprintf("UpdateDocs %d", i), s.UpdateDocs(t.Context(), u), store.ErrInvalid)
			}
			st, err := s.DocsState(t.Context(), "p1")
			must(t, "DocsState", err)
			if st.Commit != "c1" || st.Files["new.md"] != "" {
				t.Errorf("DocsState after refused updates = commit %q, new.md %q; want c1 and nothing", st.Commit, st.Files["new.md"])
			}
			sameHits(t, s, "retried", "/guide/events#delivery")
			// What CleanDocText returns is accepted.
			clean := docPage("/new", "new.md", "New", [4]string{"", "", store.CleanDocText("a\x01b\x00c\xff retried"), ""})
			must(t, "UpdateDocs of cleaned text", s.UpdateDocs(t.Context(), store.DocsUpdate{ProjectID: "p1", Commit: "c2", At: At(time.Hour),
				Files: []store.DocFile{{Path: "new.md", Blob: "b"}}, Pages: []store.DocPage{clean}}))
			sameHits(t, s, "retried", "/guide/events#delivery", "/new#")
		}},
		{"UpdateReplacesChangedFilesAndKeepsTheRest", func(t *testing.T, s store.Store) {
			withCorpus(t, s)
			// events.mdx now serves another path with other words; cli.mdx
			// is gone; a navigation file with no page is recorded.
			moved := docPage("/guide/event-delivery", "guide/events.mdx", "Event delivery",
				[4]string{"", "", "Deliveries are attempted twice.", ""})
			must(t, "UpdateDocs", s.UpdateDocs(t.Context(), store.DocsUpdate{
				ProjectID: "p1", Commit: "c2", At: At(time.Hour),
				Files: []store.DocFile{{Path: "guide/events.mdx", Blob: "c2:events"}, {Path: "docs.json", Blob: "c2:nav"}},
				Pages: []store.DocPage{moved}, RemoveFiles: []string{"reference/cli.mdx"},
			}))
			_, err := s.DocPage(t.Context(), "p1", "/guide/events")
			wantErr(t, "DocPage of the file's old path", err, store.ErrNotFound)
			_, err = s.DocPage(t.Context(), "p1", "/reference/cli")
			wantErr(t, "DocPage of a removed file", err, store.ErrNotFound)
			sameHits(t, s, "retried")
			sameHits(t, s, "attempted", "/guide/event-delivery#")
			sameHits(t, s, "webhooks", "/guide/webhooks#", "/guide/notifications#webhook-settings")
			st, err := s.DocsState(t.Context(), "p1")
			must(t, "DocsState", err)
			want := map[string]string{}
			for _, f := range docsFiles(docsCorpus(), "c1") {
				want[f.Path] = f.Blob
			}
			delete(want, "reference/cli.mdx")
			want["guide/events.mdx"], want["docs.json"] = "c2:events", "c2:nav"
			diff(t, "DocsState", store.DocsState{Commit: "c2", UpdatedAt: At(time.Hour), Files: want}, st)
		}},
		{"PageOfAnotherFileTakesItsPath", func(t *testing.T, s store.Store) {
			withCorpus(t, s)
			// index.md now serves "/" in place of index.mdx, whose record stays.
			must(t, "UpdateDocs", s.UpdateDocs(t.Context(), store.DocsUpdate{
				ProjectID: "p1", Commit: "c2", At: At(time.Hour), Files: []store.DocFile{{Path: "index.md", Blob: "x"}},
				Pages: []store.DocPage{docPage("/", "index.md", "Home", [4]string{"", "", "Hello.", ""})},
			}))
			got, err := s.DocPage(t.Context(), "p1", "/")
			must(t, "DocPage /", err)
			if got.File != "index.md" || got.Title != "Home" {
				t.Errorf("DocPage / = %+v, want index.md's", got)
			}
			sameHits(t, s, "documentation")
		}},
		{"ReplaceKeepsOnlyWhatItLists", func(t *testing.T, s store.Store) {
			withCorpus(t, s)
			only := docsCorpus()[1:2] // events
			mustIndex(t, s, "p1", "c3", only)
			sameHits(t, s, "webhooks", "/guide/events#delivery")
			sameHits(t, s, "install")
			st, err := s.DocsState(t.Context(), "p1")
			must(t, "DocsState", err)
			diff(t, "DocsState", store.DocsState{Commit: "c3", UpdatedAt: At(0), Files: map[string]string{"guide/events.mdx": "c3:guide/events.mdx"}}, st)
		}},
		{"ReadersSeeTheOldIndexOrTheNew", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			version := func(word string) []store.DocPage {
				var ps []store.DocPage
				for i := range 12 {
					ps = append(ps, docPage(fmt.Sprintf("/page-%02d", i), fmt.Sprintf("page-%02d.md", i), "Page",
						[4]string{"", "", "This page says " + word + ".", ""}))
				}
				return ps
			}
			mustIndex(t, s, "p1", "alpha", version("alpha"))
			var (
				wg   sync.WaitGroup
				done = make(chan struct{})
				errs = make(chan error, 64)
			)
			for range 2 {
				wg.Go(func() {
					for {
						select {
						case <-done:
							return
						default:
						}
						for _, word := range []string{"alpha", "beta"} {
							hits, err := s.SearchDocs(t.Context(), store.DocsQuery{ProjectID: "p1", Query: word, Limit: 50})
							if err == nil && len(hits) != 0 && len(hits) != 12 {
								err = fmt.Errorf("SearchDocs(%s) found %d pages of 12: a half-made index", word, len(hits))
							}
							if err == nil {
								err = wholeState(s, t)
							}
							if err != nil {
								errs <- err
								return
							}
						}
					}
				})
			}
			for i := range 10 {
				word := []string{"beta", "alpha"}[i%2]
				if err := s.UpdateDocs(t.Context(), store.DocsUpdate{ProjectID: "p1", Commit: word, At: At(time.Duration(i+1) * time.Minute),
					Files: docsFiles(version(word), word), Pages: version(word), Replace: true}); err != nil {
					errs <- err
					break
				}
			}
			close(done)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		}},
	})
}

// wholeState checks that the index's state is one update's: every file's
// blob names the commit.
func wholeState(s store.Store, t *testing.T) error {
	st, err := s.DocsState(t.Context(), "p1")
	if err != nil {
		return err
	}
	if len(st.Files) != 12 {
		return fmt.Errorf("DocsState holds %d files of 12", len(st.Files))
	}
	for f, blob := range st.Files {
		if blob != st.Commit+":"+f {
			return fmt.Errorf("DocsState: commit %q, but %s's blob is %q", st.Commit, f, blob)
		}
	}
	return nil
}

// ignoreSnippet leaves the snippets out of a comparison of hits.
var ignoreSnippet = cmpopts.IgnoreFields(store.DocHit{}, "Snippet", "Marks")
