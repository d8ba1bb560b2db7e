package storetest

import (
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// newSiteToken returns a token of projectID with every field set, created
// at At(0).
func newSiteToken(projectID, token string) store.SiteToken {
	return store.SiteToken{
		Token: token, ProjectID: projectID, Name: "docs site " + token,
		Origins: []string{"http://localhost:3000", "https://docs.example.com"}, CreatedAt: At(0),
	}
}

// mustSiteToken reads a token back.
func mustSiteToken(t *testing.T, s store.Store, token string) store.SiteToken {
	t.Helper()
	st, err := s.SiteToken(t.Context(), token)
	must(t, "SiteToken", err)
	checkTimes(t, "SiteToken", st.CreatedAt, st.RevokedAt)
	return st
}

func testSiteTokens(t *testing.T, open opener) {
	withProjects := func(t *testing.T, s store.Store) {
		t.Helper()
		mustProject(t, s, "p1")
		mustProject(t, s, "p2")
	}
	runAll(t, open, []subtest{
		{"CreateThenGetRoundTripsWithOriginsSorted", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			st := newSiteToken("p1", "site_1")
			st.Origins = []string{"https://b.example", "https://a.example", "https://b.example"}
			st.CreatedAt = At(time.Hour).In(elsewhere)
			must(t, "CreateSiteToken", s.CreateSiteToken(t.Context(), st))
			want := st
			want.Origins = []string{"https://a.example", "https://b.example"}
			want.CreatedAt = At(time.Hour)
			diff(t, "SiteToken", want, mustSiteToken(t, s, "site_1"))
			none := newSiteToken("p1", "site_2")
			none.Origins = nil
			must(t, "CreateSiteToken without origins", s.CreateSiteToken(t.Context(), none))
			diff(t, "SiteToken without origins", none, mustSiteToken(t, s, "site_2"))
			_, err := s.SiteToken(t.Context(), "site_")
			wantErr(t, "SiteToken of a prefix", err, store.ErrNotFound)
		}},
		{"TakenTokenConflictsAndMissingProjectIsNotFound", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			first := newSiteToken("p1", "site_1")
			must(t, "CreateSiteToken", s.CreateSiteToken(t.Context(), first))
			wantErr(t, "CreateSiteToken with a taken token", s.CreateSiteToken(t.Context(), newSiteToken("p2", "site_1")), store.ErrConflict)
			wantErr(t, "CreateSiteToken for a missing project", s.CreateSiteToken(t.Context(), newSiteToken("nope", "site_2")), store.ErrNotFound)
			diff(t, "SiteToken", first, mustSiteToken(t, s, "site_1"))
			_, err := s.SiteToken(t.Context(), "site_2")
			wantErr(t, "SiteToken of the refused token", err, store.ErrNotFound)
		}},
		{"TokensAreListedPerProjectByCreatedAtThenToken", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			for _, tc := range []struct {
				project, token string
				at             time.Duration
			}{{"p1", "site_c", 0}, {"p1", "site_a", time.Hour}, {"p2", "site_b", 0}, {"p1", "site_b2", 0}} {
				st := newSiteToken(tc.project, tc.token)
				st.CreatedAt = At(tc.at)
				must(t, "CreateSiteToken", s.CreateSiteToken(t.Context(), st))
			}
			list := func(project string) []string {
				ts, err := s.SiteTokens(t.Context(), project)
				must(t, "SiteTokens", err)
				if ts == nil {
					t.Errorf("SiteTokens(%q) is nil, want an empty, non-nil slice", project)
				}
				out := []string{}
				for _, st := range ts {
					out = append(out, st.Token)
				}
				return out
			}
			diff(t, "p1", []string{"site_b2", "site_c", "site_a"}, list("p1"))
			diff(t, "p2", []string{"site_b"}, list("p2"))
			diff(t, "every project", []string{"site_b", "site_b2", "site_c", "site_a"}, list(""))
			diff(t, "unknown project", []string{}, list("p3"))
		}},
		{"RevokeKeepsTheFirstRevocation", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			must(t, "CreateSiteToken", s.CreateSiteToken(t.Context(), newSiteToken("p1", "site_1")))
			must(t, "RevokeSiteToken", s.RevokeSiteToken(t.Context(), "site_1", At(time.Hour).In(elsewhere)))
			must(t, "RevokeSiteToken again", s.RevokeSiteToken(t.Context(), "site_1", At(2*time.Hour)))
			want := newSiteToken("p1", "site_1")
			want.RevokedAt = At(time.Hour)
			diff(t, "SiteToken", want, mustSiteToken(t, s, "site_1"))
			wantErr(t, "RevokeSiteToken of a missing token", s.RevokeSiteToken(t.Context(), "site_2", At(time.Hour)), store.ErrNotFound)
		}},
		{"InvalidArgumentsAreRefusedAndStoreNothing", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			ctx := t.Context()
			ignore := func(_ any, err error) error { return err }
			fb := newFeedback("p1", "f1", At(0))
			withFeedback := func(f func(*store.NewFeedback)) store.NewFeedback { n := fb; f(&n); return n }
			fq := feedbackOf("p1")
			withFilter := func(f func(*store.FeedbackQuery)) store.FeedbackQuery { q := fq; f(&q); return q }
			sq := searchesOf("p1")
			withSearches := func(f func(*store.SearchesQuery)) store.SearchesQuery { q := sq; f(&q); return q }
			for name, err := range map[string]error{
				"feedback without ID":            ignore(s.AddFeedback(ctx, withFeedback(func(n *store.NewFeedback) { n.ID = "" }))),
				"feedback without project":       ignore(s.AddFeedback(ctx, withFeedback(func(n *store.NewFeedback) { n.ProjectID = "" }))),
				"feedback on a relative path":    ignore(s.AddFeedback(ctx, withFeedback(func(n *store.NewFeedback) { n.Path = "guide" }))),
				"feedback of an unknown source":  ignore(s.AddFeedback(ctx, withFeedback(func(n *store.NewFeedback) { n.Source = "email" }))),
				"feedback without time":          ignore(s.AddFeedback(ctx, withFeedback(func(n *store.NewFeedback) { n.CreatedAt = time.Time{} }))),
				"a contact on agent feedback":    ignore(s.AddFeedback(ctx, withFeedback(func(n *store.NewFeedback) { n.Source = "agent"; n.Helpful = false }))),
				"code on contextual feedback":    ignore(s.AddFeedback(ctx, withFeedback(func(n *store.NewFeedback) { n.Code = "x" }))),
				"a code snippet without code":    ignore(s.AddFeedback(ctx, withFeedback(func(n *store.NewFeedback) { n.Source = "code_snippet"; n.Contact, n.Helpful = "", false }))),
				"a comment with NUL":             ignore(s.AddFeedback(ctx, withFeedback(func(n *store.NewFeedback) { n.Comment = text("a\x00b") }))),
				"a comment of invalid UTF-8":     ignore(s.AddFeedback(ctx, withFeedback(func(n *store.NewFeedback) { n.Comment = text("a\xffb") }))),
				"a negative cap":                 ignore(s.AddFeedback(ctx, withFeedback(func(n *store.NewFeedback) { n.DailyCap = -1 }))),
				"feedback query with limit 0":    ignore(s.QueryFeedback(ctx, withFilter(func(q *store.FeedbackQuery) { q.Limit = 0 }))),
				"feedback query of no project":   ignore(s.QueryFeedback(ctx, withFilter(func(q *store.FeedbackQuery) { q.ProjectID = "" }))),
				"feedback query, unknown status": ignore(s.QueryFeedback(ctx, withFilter(func(q *store.FeedbackQuery) { q.Statuses = []store.FeedbackStatus{"open"} }))),
				"feedback query, unknown source": ignore(s.QueryFeedback(ctx, withFilter(func(q *store.FeedbackQuery) { q.Source = "email" }))),
				"feedback query after nothing":   ignore(s.QueryFeedback(ctx, withFilter(func(q *store.FeedbackQuery) { q.After = &store.FeedbackKey{} }))),
				"by page with limit 0":           ignore(s.FeedbackByPage(ctx, store.FeedbackByPageQuery{FeedbackFilter: fq.FeedbackFilter})),
				"status of no entry":             ignore(s.SetFeedbackStatus(ctx, store.FeedbackStatusChange{ProjectID: "p1", Status: "resolved", At: At(0)})),
				"an unknown status":              ignore(s.SetFeedbackStatus(ctx, store.FeedbackStatusChange{ProjectID: "p1", ID: "f1", Status: "open", At: At(0)})),
				"a status change without time":   ignore(s.SetFeedbackStatus(ctx, store.FeedbackStatusChange{ProjectID: "p1", ID: "f1", Status: "resolved"})),
				"a search of no project":         ignore(s.AddSearches(ctx, store.SearchBatch{DailyQueryCap: 1, Searches: []store.Search{{Query: "q", At: At(0)}}})),
				"an empty search":                ignore(s.AddSearches(ctx, store.SearchBatch{DailyQueryCap: 1, Searches: []store.Search{search("", "", At(0))}})),
				"a search without time":          ignore(s.AddSearches(ctx, store.SearchBatch{DailyQueryCap: 1, Searches: []store.Search{search("q", "", time.Time{})}})),
				"searches query with limit 0":    ignore(s.QuerySearches(ctx, withSearches(func(q *store.SearchesQuery) { q.Limit = 0 }))),
				"searches query from mid-day":    ignore(s.QuerySearches(ctx, withSearches(func(q *store.SearchesQuery) { q.From = searchDay(0).Add(time.Hour) }))),
				"searches query to mid-day":      ignore(s.QuerySearches(ctx, withSearches(func(q *store.SearchesQuery) { q.To = searchDay(0).Add(time.Hour) }))),
				"a site token without token":     s.CreateSiteToken(ctx, newSiteToken("p1", "")),
				"a site token without project":   s.CreateSiteToken(ctx, newSiteToken("", "site_1")),
				"an origin with a space":         s.CreateSiteToken(ctx, store.SiteToken{Token: "site_1", ProjectID: "p1", Origins: []string{"https://a b"}}),
				"an empty origin":                s.CreateSiteToken(ctx, store.SiteToken{Token: "site_1", ProjectID: "p1", Origins: []string{""}}),
				"revoke at zero time":            s.RevokeSiteToken(ctx, "site_1", time.Time{}),
			} {
				wantErr(t, name, err, store.ErrInvalid)
			}
			diff(t, "feedback after refused calls", []string{}, ids(mustQueryFeedback(t, s, feedbackOf("p1")).Entries))
			diff(t, "searches after refused calls", store.SearchesResult{Rows: []store.SearchRow{}}, mustQuerySearches(t, s, searchesOf("p1")))
			_, err := s.SiteToken(ctx, "site_1")
			wantErr(t, "SiteToken after refused calls", err, store.ErrNotFound)
		}},
	})
}
