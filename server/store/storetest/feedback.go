package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// text returns a pointer to s, for Comment.
func text(s string) *string { return &s }

// newFeedback returns a contextual entry of projectID with every field of
// its source set.
func newFeedback(projectID, id string, at time.Time) store.NewFeedback {
	return store.NewFeedback{
		ID: id, ProjectID: projectID, Path: "/guide/" + id, Source: store.FeedbackSourceContextual,
		Helpful: true, Comment: text("Clear, thanks (" + id + ")"), Contact: id + "@example.com", CreatedAt: at,
	}
}

// storedFeedback is the entry AddFeedback must store for n.
func storedFeedback(n store.NewFeedback) store.Feedback {
	return store.Feedback{
		ID: n.ID, ProjectID: n.ProjectID, Path: n.Path, Source: n.Source, Status: store.FeedbackStatusPending,
		Helpful: n.Helpful, Comment: n.Comment, Contact: n.Contact, Code: n.Code, Filename: n.Filename, Lang: n.Lang,
		CreatedAt: n.CreatedAt.UTC().Truncate(time.Microsecond), UpdatedAt: n.CreatedAt.UTC().Truncate(time.Microsecond),
	}
}

// mustAddFeedback adds an entry that must be stored.
func mustAddFeedback(t *testing.T, s store.Store, n store.NewFeedback) store.Feedback {
	t.Helper()
	f, err := s.AddFeedback(t.Context(), n)
	must(t, "AddFeedback "+n.ID, err)
	checkTimes(t, "AddFeedback "+n.ID, f.CreatedAt, f.UpdatedAt)
	return f
}

// feedbackOf is a query for every entry of a project, on one large page.
func feedbackOf(projectID string) store.FeedbackQuery {
	return store.FeedbackQuery{FeedbackFilter: store.FeedbackFilter{ProjectID: projectID}, Limit: 1000}
}

// mustQueryFeedback runs a query that must succeed, and checks the
// conventions of what it returns.
func mustQueryFeedback(t *testing.T, s store.Store, q store.FeedbackQuery) store.FeedbackPage {
	t.Helper()
	page, err := s.QueryFeedback(t.Context(), q)
	must(t, "QueryFeedback", err)
	if page.Entries == nil {
		t.Errorf("QueryFeedback: Entries is nil, want an empty, non-nil slice")
	}
	for _, f := range page.Entries {
		checkTimes(t, "QueryFeedback", f.CreatedAt, f.UpdatedAt)
	}
	return page
}

// ids lists the IDs of entries.
func ids(entries []store.Feedback) []string {
	out := []string{}
	for _, f := range entries {
		out = append(out, f.ID)
	}
	return out
}

func testFeedback(t *testing.T, open opener) {
	withProjects := func(t *testing.T, s store.Store) {
		t.Helper()
		mustProject(t, s, "p1")
		mustProject(t, s, "p2")
	}
	runAll(t, open, []subtest{
		{"AddThenQueryRoundTripsEveryFieldOfEverySource", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			contextual := newFeedback("p1", "f1", At(time.Minute).In(elsewhere))
			code := store.NewFeedback{ID: "f2", ProjectID: "p1", Path: "/api", Source: store.FeedbackSourceCodeSnippet,
				Comment: text(""), Code: "curl -X POST https://example.com/v1\n\t-d '{}'", Filename: "run.sh", Lang: "bash", CreatedAt: At(2 * time.Minute)}
			thumbs := store.NewFeedback{ID: "f3", ProjectID: "p1", Path: "/api", Source: store.FeedbackSourceThumbsOnly,
				Helpful: true, CreatedAt: At(3 * time.Minute)}
			agent := store.NewFeedback{ID: "f4", ProjectID: "p1", Path: "/ü/ß", Source: store.FeedbackSourceAgent,
				Comment: text("The example uses a removed flag."), CreatedAt: At(4 * time.Minute)}
			want := []store.Feedback{}
			for _, n := range []store.NewFeedback{contextual, code, thumbs, agent} {
				f := mustAddFeedback(t, s, n)
				diff(t, "AddFeedback "+n.ID, storedFeedback(n), f)
				want = append([]store.Feedback{storedFeedback(n)}, want...) // newest first
			}
			diff(t, "QueryFeedback", store.FeedbackPage{Entries: want}, mustQueryFeedback(t, s, feedbackOf("p1")))
			// An empty comment and no comment are not the same.
			page := mustQueryFeedback(t, s, feedbackOf("p1"))
			if c := page.Entries[2].Comment; c == nil || *c != "" {
				t.Errorf("the code snippet's comment = %v, want an empty string", c)
			}
			if c := page.Entries[1].Comment; c != nil {
				t.Errorf("the thumbs-only entry's comment = %q, want nil", *c)
			}
		}},
		{"TakenIDConflictsAndMissingProjectIsNotFound", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			first := mustAddFeedback(t, s, newFeedback("p1", "f1", At(0)))
			again := newFeedback("p2", "f1", At(time.Hour))
			again.Path = "/other"
			_, err := s.AddFeedback(t.Context(), again)
			wantErr(t, "AddFeedback with a taken ID in another project", err, store.ErrConflict)
			_, err = s.AddFeedback(t.Context(), newFeedback("nope", "f9", At(0)))
			wantErr(t, "AddFeedback to a missing project", err, store.ErrNotFound)
			diff(t, "QueryFeedback p1", store.FeedbackPage{Entries: []store.Feedback{first}}, mustQueryFeedback(t, s, feedbackOf("p1")))
			diff(t, "QueryFeedback p2", store.FeedbackPage{Entries: []store.Feedback{}}, mustQueryFeedback(t, s, feedbackOf("p2")))
		}},
		{"PagesAreNewestFirstAndNeverRepeatWhileEntriesArrive", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			// Two entries share an instant: the ID orders them.
			for i, at := range []time.Duration{0, time.Minute, time.Minute, 2 * time.Minute, 3 * time.Minute} {
				mustAddFeedback(t, s, newFeedback("p1", fmt.Sprintf("f%d", i), At(at)))
			}
			q := feedbackOf("p1")
			q.Limit = 2
			var seen []string
			for page := 0; ; page++ {
				p := mustQueryFeedback(t, s, q)
				seen = append(seen, ids(p.Entries)...)
				// Newer entries arrive between pages: they sort before
				// the cursor, so the pages still to come are unchanged.
				mustAddFeedback(t, s, newFeedback("p1", fmt.Sprintf("new%d", page), At(time.Hour+time.Duration(page)*time.Minute)))
				if !p.HasMore {
					if len(p.Entries) == 0 {
						t.Errorf("page %d: empty with HasMore false; the previous page's HasMore should have been false", page)
					}
					break
				}
				if page > 5 {
					t.Fatalf("more pages than entries: %v", seen)
				}
				k := p.Entries[len(p.Entries)-1].Key()
				q.After = &k
			}
			diff(t, "entries seen, in order", []string{"f4", "f3", "f2", "f1", "f0"}, seen)
			// A place whose entry does not exist still orders.
			q.After = &store.FeedbackKey{CreatedAt: At(time.Minute), ID: "f15"}
			q.Limit = 10
			diff(t, "after a place between f1 and f2", []string{"f1", "f0"}, ids(mustQueryFeedback(t, s, q).Entries))
		}},
		{"FiltersSelectBySourceStatusAndHalfOpenRange", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			mustAddFeedback(t, s, newFeedback("p1", "a", At(0)))
			code := store.NewFeedback{ID: "b", ProjectID: "p1", Path: "/x", Source: store.FeedbackSourceCodeSnippet, Code: "x", CreatedAt: At(time.Hour)}
			mustAddFeedback(t, s, code)
			mustAddFeedback(t, s, newFeedback("p1", "c", At(2*time.Hour)))
			mustAddFeedback(t, s, newFeedback("p2", "d", At(time.Hour)))
			_, err := s.SetFeedbackStatus(t.Context(), store.FeedbackStatusChange{ProjectID: "p1", ID: "c", Status: store.FeedbackStatusResolved, At: At(3 * time.Hour)})
			must(t, "SetFeedbackStatus", err)
			for _, tc := range []struct {
				name string
				f    store.FeedbackFilter
				want []string
			}{
				{"all", store.FeedbackFilter{}, []string{"c", "b", "a"}},
				{"source", store.FeedbackFilter{Source: store.FeedbackSourceContextual}, []string{"c", "a"}},
				{"one status", store.FeedbackFilter{Statuses: []store.FeedbackStatus{store.FeedbackStatusResolved}}, []string{"c"}},
				{"two statuses", store.FeedbackFilter{Statuses: []store.FeedbackStatus{store.FeedbackStatusDismissed, store.FeedbackStatusPending}}, []string{"b", "a"}},
				{"from is inclusive", store.FeedbackFilter{From: At(time.Hour)}, []string{"c", "b"}},
				{"to is exclusive", store.FeedbackFilter{To: At(2 * time.Hour)}, []string{"b", "a"}},
				{"a microsecond past", store.FeedbackFilter{From: At(time.Hour + time.Nanosecond)}, []string{"c"}},
				{"empty range", store.FeedbackFilter{From: At(time.Hour), To: At(time.Hour)}, []string{}},
				{"everything", store.FeedbackFilter{From: At(time.Hour), To: At(3 * time.Hour), Source: store.FeedbackSourceContextual,
					Statuses: []store.FeedbackStatus{store.FeedbackStatusResolved}}, []string{"c"}},
			} {
				q := feedbackOf("p1")
				q.FeedbackFilter = tc.f
				q.ProjectID = "p1"
				diff(t, tc.name, tc.want, ids(mustQueryFeedback(t, s, q).Entries))
			}
			diff(t, "p2", []string{"d"}, ids(mustQueryFeedback(t, s, feedbackOf("p2")).Entries))
			diff(t, "unknown project", []string{}, ids(mustQueryFeedback(t, s, feedbackOf("p3")).Entries))
		}},
		{"PathSelectsOnePageExactly", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			add := func(project, id, path string, helpful bool) {
				n := store.NewFeedback{ID: id, ProjectID: project, Path: path, Source: store.FeedbackSourceThumbsOnly, Helpful: helpful, CreatedAt: At(0)}
				mustAddFeedback(t, s, n)
			}
			add("p1", "a", "/guide", true)
			add("p1", "b", "/guide/install", false)
			add("p1", "c", "/Guide", true)
			add("p1", "d", "/guide", false)
			add("p2", "e", "/guide", true)
			q := feedbackOf("p1")
			q.Path = "/guide"
			diff(t, "QueryFeedback of /guide", []string{"d", "a"}, ids(mustQueryFeedback(t, s, q).Entries))
			q.Path = "/guide/"
			diff(t, "QueryFeedback of /guide/", []string{}, ids(mustQueryFeedback(t, s, q).Entries))
			res, err := s.FeedbackByPage(t.Context(), store.FeedbackByPageQuery{FeedbackFilter: store.FeedbackFilter{ProjectID: "p1", Path: "/guide"}, Limit: 10})
			must(t, "FeedbackByPage", err)
			diff(t, "FeedbackByPage of /guide", store.FeedbackByPage{Rows: []store.PageFeedback{{Path: "/guide", ThumbsUp: 1, ThumbsDown: 1, Total: 2}}}, res)
		}},
		{"SetStatusMovesAnEntryAndKeepsUpdatedAtWhenRepeated", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			n := newFeedback("p1", "f1", At(0))
			mustAddFeedback(t, s, n)
			change := store.FeedbackStatusChange{ProjectID: "p1", ID: "f1", Status: store.FeedbackStatusInProgress, At: At(time.Hour).In(elsewhere)}
			got, err := s.SetFeedbackStatus(t.Context(), change)
			must(t, "SetFeedbackStatus", err)
			want := storedFeedback(n)
			want.Status, want.UpdatedAt = store.FeedbackStatusInProgress, At(time.Hour)
			diff(t, "SetFeedbackStatus", want, got)
			checkTimes(t, "SetFeedbackStatus", got.UpdatedAt)
			change.At = At(2 * time.Hour)
			got, err = s.SetFeedbackStatus(t.Context(), change)
			must(t, "SetFeedbackStatus again", err)
			diff(t, "SetFeedbackStatus to the status it has", want, got)
			diff(t, "QueryFeedback", []store.Feedback{want}, mustQueryFeedback(t, s, feedbackOf("p1")).Entries)
			for name, c := range map[string]store.FeedbackStatusChange{
				"missing entry":            {ProjectID: "p1", ID: "nope", Status: store.FeedbackStatusResolved, At: At(time.Hour)},
				"entry of another project": {ProjectID: "p2", ID: "f1", Status: store.FeedbackStatusResolved, At: At(time.Hour)},
			} {
				_, err := s.SetFeedbackStatus(t.Context(), c)
				wantErr(t, "SetFeedbackStatus of a "+name, err, store.ErrNotFound)
			}
			diff(t, "QueryFeedback after refused changes", []store.Feedback{want}, mustQueryFeedback(t, s, feedbackOf("p1")).Entries)
		}},
		{"ByPageCountsVotesAndCodePerPath", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			add := func(id, path string, source store.FeedbackSource, helpful bool, at time.Duration) {
				n := store.NewFeedback{ID: id, ProjectID: "p1", Path: path, Source: source, Helpful: helpful, CreatedAt: At(at)}
				if source == store.FeedbackSourceCodeSnippet {
					n.Code = "x"
				}
				mustAddFeedback(t, s, n)
			}
			add("1", "/a", store.FeedbackSourceContextual, true, 0)
			add("2", "/a", store.FeedbackSourceThumbsOnly, false, 0)
			add("3", "/a", store.FeedbackSourceCodeSnippet, false, time.Hour)
			add("4", "/a", store.FeedbackSourceAgent, false, time.Hour)
			add("5", "/b", store.FeedbackSourceThumbsOnly, true, 0)
			add("6", "/b", store.FeedbackSourceThumbsOnly, true, 0)
			add("7", "/b", store.FeedbackSourceContextual, false, 2*time.Hour)
			add("8", "/b", store.FeedbackSourceContextual, false, 2*time.Hour)
			add("9", "/c", store.FeedbackSourceContextual, false, 0)
			mustAddFeedback(t, s, newFeedback("p2", "x", At(0)))
			byPage := func(q store.FeedbackByPageQuery) store.FeedbackByPage {
				t.Helper()
				q.ProjectID = "p1"
				res, err := s.FeedbackByPage(t.Context(), q)
				must(t, "FeedbackByPage", err)
				if res.Rows == nil {
					t.Errorf("FeedbackByPage: Rows is nil, want an empty, non-nil slice")
				}
				return res
			}
			diff(t, "all paths", store.FeedbackByPage{Rows: []store.PageFeedback{
				{Path: "/a", ThumbsUp: 1, ThumbsDown: 1, Code: 1, Total: 4},
				{Path: "/b", ThumbsUp: 2, ThumbsDown: 2, Total: 4},
				{Path: "/c", ThumbsDown: 1, Total: 1},
			}}, byPage(store.FeedbackByPageQuery{Limit: 10}))
			diff(t, "two paths", store.FeedbackByPage{Rows: []store.PageFeedback{
				{Path: "/a", ThumbsUp: 1, ThumbsDown: 1, Code: 1, Total: 4},
				{Path: "/b", ThumbsUp: 2, ThumbsDown: 2, Total: 4},
			}, HasMore: true}, byPage(store.FeedbackByPageQuery{Limit: 2}))
			diff(t, "three paths exactly", false, byPage(store.FeedbackByPageQuery{Limit: 3}).HasMore)
			diff(t, "thumbs only, before 2h", store.FeedbackByPage{Rows: []store.PageFeedback{
				{Path: "/b", ThumbsUp: 2, Total: 2},
				{Path: "/a", ThumbsDown: 1, Total: 1},
			}}, byPage(store.FeedbackByPageQuery{Limit: 10, FeedbackFilter: store.FeedbackFilter{
				Source: store.FeedbackSourceThumbsOnly, To: At(2 * time.Hour)}}))
			diff(t, "no such status", store.FeedbackByPage{Rows: []store.PageFeedback{}}, byPage(store.FeedbackByPageQuery{Limit: 10,
				FeedbackFilter: store.FeedbackFilter{Statuses: []store.FeedbackStatus{store.FeedbackStatusDismissed}}}))
		}},
		{"DailyCapRefusesWithErrFullAndStoresNothing", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			capped := func(n store.NewFeedback) store.NewFeedback { n.DailyCap = 2; return n }
			// At(0) is 05:06 UTC: At(18h) is the same day, At(19h) the next.
			mustAddFeedback(t, s, capped(newFeedback("p1", "a", At(0))))
			mustAddFeedback(t, s, capped(newFeedback("p1", "b", At(18*time.Hour))))
			_, err := s.AddFeedback(t.Context(), capped(newFeedback("p1", "c", At(time.Hour))))
			wantErr(t, "the day's third entry", err, store.ErrFull)
			mustAddFeedback(t, s, capped(newFeedback("p1", "d", At(19*time.Hour))))
			mustAddFeedback(t, s, capped(newFeedback("p2", "e", At(time.Hour))))
			// Entries without a cap count too: a cap set later sees them.
			mustAddFeedback(t, s, newFeedback("p2", "f", At(2*time.Hour)))
			_, err = s.AddFeedback(t.Context(), capped(newFeedback("p2", "g", At(3*time.Hour))))
			wantErr(t, "p2's third entry of the day", err, store.ErrFull)
			diff(t, "p1", []string{"d", "b", "a"}, ids(mustQueryFeedback(t, s, feedbackOf("p1")).Entries))
			diff(t, "p2", []string{"f", "e"}, ids(mustQueryFeedback(t, s, feedbackOf("p2")).Entries))
		}},
		{"ConcurrentAddsKeepTheCapExactly", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			const workers, each, cap = 6, 4, 10
			var mu sync.Mutex
			stored, full := 0, 0
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for i := range each {
						n := newFeedback("p1", fmt.Sprintf("w%d-%d", w, i), At(time.Duration(w*each+i)*time.Second))
						n.DailyCap = cap
						_, err := s.AddFeedback(t.Context(), n)
						mu.Lock()
						switch {
						case err == nil:
							stored++
						case errors.Is(err, store.ErrFull):
							full++
						default:
							t.Errorf("AddFeedback %s: %v", n.ID, err)
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if stored != cap || full != workers*each-cap {
				t.Errorf("stored %d and refused %d as full; want %d and %d", stored, full, cap, workers*each-cap)
			}
			if got := len(mustQueryFeedback(t, s, feedbackOf("p1")).Entries); got != cap {
				t.Errorf("the project holds %d entries, want the cap, %d", got, cap)
			}
		}},
	})
}
