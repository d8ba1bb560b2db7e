package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// The suite's ULIDs: an exchange's (the answer's) ID, its question's ID
// and a thread's ID, each of n. IDs of one kind sort as their n do.
func answerID(n int) string   { return fmt.Sprintf("01JZA%021d", n) }
func questionID(n int) string { return fmt.Sprintf("01JZQ%021d", n) }
func threadID(n int) string   { return fmt.Sprintf("01JZT%021d", n) }

// newThread returns thread n of projectID with every field set, created at
// at.
func newThread(projectID string, n int, at time.Time) store.Thread {
	return store.Thread{
		ID: threadID(n), ProjectID: projectID, KeyHash: Hash(fmt.Sprintf("thread key %d", n)),
		Fp: fmt.Sprintf("reader-%d", n), Caller: store.CallerWeb, CreatedAt: at,
	}
}

// newExchange returns exchange n of thread th of projectID with every
// field set, asked at at and answered a second later.
func newExchange(projectID string, th, n int, at time.Time) store.Exchange {
	return store.Exchange{
		ID: answerID(n), QuestionID: questionID(n), ProjectID: projectID, ThreadID: threadID(th),
		Question: fmt.Sprintf("How do I rotate key %d? ünïcode ✓", n), AskedAt: at,
		Answer: fmt.Sprintf("Open Settings, then Keys (%d).", n), AnsweredAt: at.Add(time.Second),
		ResponseType: store.ResponseAnswer, Resolution: store.Answered,
		Sources: []store.Source{
			{Title: "Keys", URL: "https://docs.example.com/keys"},
			{Title: "Settings — overview", URL: fmt.Sprintf("https://docs.example.com/settings#%d", n)},
		},
		PageURL: "https://docs.example.com/start", Caller: store.CallerWeb,
	}
}

// stored is e as the store keeps it: times in UTC to the microsecond, the
// caps dropped.
func stored(e store.Exchange) store.Exchange {
	e.AskedAt, e.AnsweredAt = micro(e.AskedAt), micro(e.AnsweredAt)
	e.ThreadCap, e.DailyCap = 0, 0
	return e
}

// storedThread is th as the store keeps it, holding n exchanges.
func storedThread(th store.Thread, n int) store.Thread {
	th.CreatedAt = micro(th.CreatedAt)
	th.Exchanges = n
	return th
}

// micro is t in UTC to the microsecond, the zero time kept zero.
func micro(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC().Truncate(time.Microsecond)
}

// mustAddExchange adds an exchange, and its new thread if th is not nil,
// which must be stored.
func mustAddExchange(t *testing.T, s store.Store, e store.Exchange, th *store.Thread) {
	t.Helper()
	must(t, "AddExchange "+e.ID, s.AddExchange(t.Context(), e, th))
}

// mustThread reads a thread back.
func mustThread(t *testing.T, s store.Store, projectID, id string) store.Thread {
	t.Helper()
	th, err := s.Thread(t.Context(), projectID, id)
	must(t, "Thread "+id, err)
	checkTimes(t, "Thread "+id, th.CreatedAt)
	return th
}

// mustThreadExchanges reads a thread's exchanges.
func mustThreadExchanges(t *testing.T, s store.Store, projectID, id string) []store.Exchange {
	t.Helper()
	es, err := s.ThreadExchanges(t.Context(), projectID, id)
	must(t, "ThreadExchanges "+id, err)
	if es == nil {
		t.Errorf("ThreadExchanges %s: nil, want a non-nil slice", id)
	}
	for _, e := range es {
		checkTimes(t, "ThreadExchanges "+id, e.AskedAt, e.AnsweredAt)
	}
	return es
}

// mustConversations reads a page of exchanges.
func mustConversations(t *testing.T, s store.Store, q store.ConversationsQuery) store.ConversationsPage {
	t.Helper()
	page, err := s.QueryConversations(t.Context(), q)
	must(t, "QueryConversations", err)
	if page.Exchanges == nil {
		t.Errorf("QueryConversations: Exchanges is nil, want an empty, non-nil slice")
	}
	for _, e := range page.Exchanges {
		checkTimes(t, "QueryConversations", e.AskedAt, e.AnsweredAt)
	}
	return page
}

// conversationsOf is a query for every exchange of a project, on one page.
func conversationsOf(projectID string) store.ConversationsQuery {
	return store.ConversationsQuery{ProjectID: projectID, Limit: store.MaxConversationsLimit}
}

// exchangeIDs lists the IDs of exchanges.
func exchangeIDs(es []store.Exchange) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

// mustTokens reads a project's tokens of a day.
func mustTokens(t *testing.T, s store.Store, projectID string, day time.Time) int64 {
	t.Helper()
	n, err := s.AssistantTokens(t.Context(), projectID, day)
	must(t, "AssistantTokens "+projectID, err)
	return n
}

// mustGapLinks reads a project's gap links.
func mustGapLinks(t *testing.T, s store.Store, projectID string) []store.GapLink {
	t.Helper()
	ls, err := s.GapLinks(t.Context(), projectID)
	must(t, "GapLinks "+projectID, err)
	if ls == nil {
		t.Errorf("GapLinks %s: nil, want a non-nil slice", projectID)
	}
	for _, l := range ls {
		checkTimes(t, "GapLinks "+projectID, l.CreatedAt)
	}
	return ls
}

// gapLink returns a link of projectID.
func gapLink(projectID string, kind store.GapKind, key, jobID string, at time.Time) store.GapLink {
	return store.GapLink{ProjectID: projectID, Kind: kind, Key: key, JobID: jobID, CreatedAt: at}
}

func testConversations(t *testing.T, open opener) {
	withProjects := func(t *testing.T, s store.Store) {
		t.Helper()
		mustProject(t, s, "p1")
		mustProject(t, s, "p2")
	}
	runAll(t, open, []subtest{
		{"AddThenReadRoundTripsEveryField", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			th := newThread("p1", 1, At(0))
			e1 := newExchange("p1", 1, 1, At(0))
			mustAddExchange(t, s, e1, &th)
			e2 := newExchange("p1", 1, 2, At(time.Minute))
			e2.ResponseType, e2.Resolution, e2.Caller = store.ResponseClarifyingQuestion, store.Unanswered, store.CallerAPI
			e2.Sources, e2.PageURL, e2.Answer, e2.AnsweredAt = nil, "", "", time.Time{}
			mustAddExchange(t, s, e2, nil)
			diff(t, "Thread", storedThread(th, 2), mustThread(t, s, "p1", th.ID))
			want := []store.Exchange{stored(e1), stored(e2)}
			diff(t, "ThreadExchanges", want, mustThreadExchanges(t, s, "p1", th.ID))
			diff(t, "QueryConversations", want, mustConversations(t, s, conversationsOf("p1")).Exchanges)
		}},
		{"TakenIDsConflictAndStoreNothing", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			ctx := t.Context()
			th1 := newThread("p1", 1, At(0))
			e1 := newExchange("p1", 1, 1, At(0))
			mustAddExchange(t, s, e1, &th1)
			// A new thread whose ID is taken, even from another project.
			again := newThread("p2", 1, At(time.Minute))
			wantErr(t, "a new thread of a taken ID", s.AddExchange(ctx, newExchange("p2", 1, 2, At(time.Minute)), &again), store.ErrConflict)
			// An exchange whose ID, or whose question's, is taken: in its
			// own column, or in the other (IDs are unique across
			// questions and answers), from another project too.
			th2 := newThread("p2", 2, At(time.Minute))
			for name, f := range map[string]func(*store.Exchange){
				"its ID is an exchange's":            func(e *store.Exchange) { e.ID = answerID(1) },
				"its question's ID is a question's":  func(e *store.Exchange) { e.QuestionID = questionID(1) },
				"its question's ID is an exchange's": func(e *store.Exchange) { e.QuestionID = answerID(1) },
				"its ID is a question's":             func(e *store.Exchange) { e.ID = questionID(1) },
			} {
				for _, newThread := range []bool{false, true} {
					e := newExchange("p1", 1, 3, At(2*time.Minute))
					var th *store.Thread
					if newThread {
						e = newExchange("p2", 2, 3, At(2*time.Minute))
						th = &th2
					}
					f(&e)
					wantErr(t, fmt.Sprintf("an exchange (new thread %v) where %s", newThread, name), s.AddExchange(ctx, e, th), store.ErrConflict)
				}
			}
			diff(t, "p1's thread", storedThread(th1, 1), mustThread(t, s, "p1", th1.ID))
			diff(t, "p1's exchanges", []store.Exchange{stored(e1)}, mustConversations(t, s, conversationsOf("p1")).Exchanges)
			diff(t, "p2's exchanges", []store.Exchange{}, mustConversations(t, s, conversationsOf("p2")).Exchanges)
			_, err := s.Thread(ctx, "p2", th2.ID)
			wantErr(t, "a new thread refused with its exchange", err, store.ErrNotFound)
			// The same exchange with fresh IDs is stored.
			mustAddExchange(t, s, newExchange("p2", 2, 3, At(2*time.Minute)), &th2)
		}},
		{"ThreadsOfAnotherProjectAreNotFound", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			ctx := t.Context()
			th := newThread("p1", 1, At(0))
			mustAddExchange(t, s, newExchange("p1", 1, 1, At(0)), &th)
			wantErr(t, "continuing p1's thread as p2", s.AddExchange(ctx, newExchange("p2", 1, 2, At(time.Minute)), nil), store.ErrNotFound)
			wantErr(t, "continuing an unknown thread", s.AddExchange(ctx, newExchange("p1", 9, 3, At(time.Minute)), nil), store.ErrNotFound)
			orphan := newThread("p9", 4, At(0))
			wantErr(t, "a new thread of an unknown project", s.AddExchange(ctx, newExchange("p9", 4, 4, At(0)), &orphan), store.ErrNotFound)
			_, err := s.Thread(ctx, "p2", th.ID)
			wantErr(t, "Thread of another project", err, store.ErrNotFound)
			_, err = s.ThreadExchanges(ctx, "p2", th.ID)
			wantErr(t, "ThreadExchanges of another project", err, store.ErrNotFound)
			_, err = s.Thread(ctx, "p1", threadID(9))
			wantErr(t, "Thread unknown", err, store.ErrNotFound)
			_, err = s.ThreadExchanges(ctx, "p1", threadID(9))
			wantErr(t, "ThreadExchanges unknown", err, store.ErrNotFound)
			_, err = s.Thread(ctx, "p9", threadID(4))
			wantErr(t, "the thread of an unknown project", err, store.ErrNotFound)
			diff(t, "p1's thread", storedThread(th, 1), mustThread(t, s, "p1", th.ID))
			diff(t, "p2's exchanges", []store.Exchange{}, mustConversations(t, s, conversationsOf("p2")).Exchanges)
		}},
		{"ThreadCapRefusesWithErrFullAndStoresNothing", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			capped := func(e store.Exchange, n int) store.Exchange { e.ThreadCap = n; return e }
			th := newThread("p1", 1, At(0))
			mustAddExchange(t, s, capped(newExchange("p1", 1, 1, At(0)), 2), &th)
			mustAddExchange(t, s, capped(newExchange("p1", 1, 2, At(time.Minute)), 2), nil)
			err := s.AddExchange(t.Context(), capped(newExchange("p1", 1, 3, At(2*time.Minute)), 2), nil)
			wantErr(t, "the thread's third exchange under a cap of 2", err, store.ErrFull)
			// A cap of 1 admits a new thread's first exchange; another
			// thread is not bound by the first's count.
			th2 := newThread("p1", 2, At(0))
			mustAddExchange(t, s, capped(newExchange("p1", 2, 4, At(3*time.Minute)), 1), &th2)
			// No cap, no limit.
			mustAddExchange(t, s, newExchange("p1", 1, 5, At(4*time.Minute)), nil)
			diff(t, "the capped thread", storedThread(th, 3), mustThread(t, s, "p1", th.ID))
			diff(t, "its exchanges", []string{answerID(1), answerID(2), answerID(5)}, exchangeIDs(mustThreadExchanges(t, s, "p1", th.ID)))
			diff(t, "the project's", []string{answerID(1), answerID(2), answerID(4), answerID(5)}, exchangeIDs(mustConversations(t, s, conversationsOf("p1")).Exchanges))
		}},
		{"DailyCapRefusesWithErrFullAndStoresNothing", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			ctx := t.Context()
			capped := func(e store.Exchange) store.Exchange { e.DailyCap = 2; return e }
			// At(0) is 05:06 UTC: At(18h) is the same day, At(19h) the next.
			th := newThread("p1", 1, At(0))
			mustAddExchange(t, s, capped(newExchange("p1", 1, 1, At(0))), &th)
			mustAddExchange(t, s, capped(newExchange("p1", 1, 2, At(18*time.Hour))), nil)
			wantErr(t, "the day's third exchange", s.AddExchange(ctx, capped(newExchange("p1", 1, 3, At(time.Hour))), nil), store.ErrFull)
			refused := newThread("p1", 2, At(time.Hour))
			wantErr(t, "the day's third exchange, in a new thread", s.AddExchange(ctx, capped(newExchange("p1", 2, 4, At(time.Hour))), &refused), store.ErrFull)
			mustAddExchange(t, s, capped(newExchange("p1", 1, 5, At(19*time.Hour))), nil)
			// Another project's day is its own.
			th3 := newThread("p2", 3, At(time.Hour))
			mustAddExchange(t, s, capped(newExchange("p2", 3, 6, At(time.Hour))), &th3)
			// Exchanges without a cap count too: a cap set later sees them.
			mustAddExchange(t, s, newExchange("p2", 3, 7, At(2*time.Hour)), nil)
			wantErr(t, "p2's third exchange of the day", s.AddExchange(ctx, capped(newExchange("p2", 3, 8, At(3*time.Hour))), nil), store.ErrFull)
			_, err := s.Thread(ctx, "p1", refused.ID)
			wantErr(t, "the thread refused with its exchange", err, store.ErrNotFound)
			diff(t, "p1", []string{answerID(1), answerID(2), answerID(5)}, exchangeIDs(mustConversations(t, s, conversationsOf("p1")).Exchanges))
			diff(t, "p2", []string{answerID(6), answerID(7)}, exchangeIDs(mustConversations(t, s, conversationsOf("p2")).Exchanges))
			diff(t, "p1's thread", 3, mustThread(t, s, "p1", th.ID).Exchanges)
		}},
		{"ThreadHoldsItsExchangesInOrderAndCountsThem", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			th := newThread("p1", 1, At(0))
			other := newThread("p1", 2, At(0))
			// Asked out of the order of their IDs; 1 and 2 at one time.
			mustAddExchange(t, s, newExchange("p1", 1, 3, At(time.Minute)), &th)
			mustAddExchange(t, s, newExchange("p1", 2, 4, At(90*time.Second)), &other)
			mustAddExchange(t, s, newExchange("p1", 1, 2, At(2*time.Minute)), nil)
			mustAddExchange(t, s, newExchange("p1", 1, 1, At(2*time.Minute)), nil)
			diff(t, "ThreadExchanges", []string{answerID(3), answerID(1), answerID(2)}, exchangeIDs(mustThreadExchanges(t, s, "p1", th.ID)))
			diff(t, "Thread", storedThread(th, 3), mustThread(t, s, "p1", th.ID))
			diff(t, "the other thread", []string{answerID(4)}, exchangeIDs(mustThreadExchanges(t, s, "p1", other.ID)))
			diff(t, "the other thread's count", 1, mustThread(t, s, "p1", other.ID).Exchanges)
		}},
		{"QuerySelectsAHalfOpenRangeByResolution", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			th := newThread("p1", 1, At(0))
			for n := range 4 {
				e := newExchange("p1", 1, n+1, At(time.Duration(n)*time.Hour))
				if n%2 == 1 {
					e.Resolution = store.Unanswered
				}
				if n == 0 {
					mustAddExchange(t, s, e, &th)
				} else {
					mustAddExchange(t, s, e, nil)
				}
			}
			th2 := newThread("p2", 2, At(0))
			mustAddExchange(t, s, newExchange("p2", 2, 5, At(2*time.Hour)), &th2)
			q := conversationsOf("p1")
			q.From, q.To = At(time.Hour), At(3*time.Hour)
			diff(t, "[1h, 3h)", []string{answerID(2), answerID(3)}, exchangeIDs(mustConversations(t, s, q).Exchanges))
			q.Resolution = store.Unanswered
			diff(t, "[1h, 3h) unanswered", []string{answerID(2)}, exchangeIDs(mustConversations(t, s, q).Exchanges))
			q.Resolution = store.Answered
			diff(t, "[1h, 3h) answered", []string{answerID(3)}, exchangeIDs(mustConversations(t, s, q).Exchanges))
			// Bounds between microseconds: From just after 1h leaves it
			// out, To just after 3h takes it in.
			q = conversationsOf("p1")
			q.From, q.To = At(time.Hour+time.Nanosecond), At(3*time.Hour+time.Nanosecond)
			diff(t, "(1h, 3h]", []string{answerID(3), answerID(4)}, exchangeIDs(mustConversations(t, s, q).Exchanges))
			// Open bounds.
			q = conversationsOf("p1")
			q.To = At(time.Hour)
			diff(t, "before 1h", []string{answerID(1)}, exchangeIDs(mustConversations(t, s, q).Exchanges))
			q = conversationsOf("p1")
			q.From = At(3 * time.Hour)
			diff(t, "from 3h", []string{answerID(4)}, exchangeIDs(mustConversations(t, s, q).Exchanges))
			page := mustConversations(t, s, conversationsOf("p9"))
			if len(page.Exchanges) != 0 || page.HasMore {
				t.Errorf("an unknown project's page: %v, HasMore %v; want empty", exchangeIDs(page.Exchanges), page.HasMore)
			}
			diff(t, "p2", []string{answerID(5)}, exchangeIDs(mustConversations(t, s, conversationsOf("p2")).Exchanges))
		}},
		{"QueryPagesByIDAfterACursor", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			// IDs in the reverse order of the times asked: pages go by ID.
			th := newThread("p1", 1, At(0))
			for n := 5; n >= 1; n-- {
				e := newExchange("p1", 1, n, At(time.Duration(5-n)*time.Minute))
				if n == 5 {
					mustAddExchange(t, s, e, &th)
				} else {
					mustAddExchange(t, s, e, nil)
				}
			}
			q := conversationsOf("p1")
			q.Limit = 2
			var got [][]string
			var more []bool
			for {
				page := mustConversations(t, s, q)
				got, more = append(got, exchangeIDs(page.Exchanges)), append(more, page.HasMore)
				if !page.HasMore || len(got) > 5 {
					break
				}
				q.After = page.Exchanges[len(page.Exchanges)-1].ID
			}
			diff(t, "pages", [][]string{{answerID(1), answerID(2)}, {answerID(3), answerID(4)}, {answerID(5)}}, got)
			diff(t, "HasMore", []bool{true, true, false}, more)
			q = conversationsOf("p1")
			q.Limit = 5
			page := mustConversations(t, s, q)
			if len(page.Exchanges) != 5 || page.HasMore {
				t.Errorf("a page of exactly the limit: %d exchanges, HasMore %v; want 5, false", len(page.Exchanges), page.HasMore)
			}
			q.Limit, q.After = 1, answerID(4)
			page = mustConversations(t, s, q)
			diff(t, "after the last but one", []string{answerID(5)}, exchangeIDs(page.Exchanges))
			if page.HasMore {
				t.Error("after the last but one: HasMore true, want false")
			}
			q.After = answerID(5)
			diff(t, "after the last", []string{}, exchangeIDs(mustConversations(t, s, q).Exchanges))
		}},
		{"QueryPagesNewestFirstBeforeACursor", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			// IDs in the reverse order of the times asked (pages go by ID),
			// the even ones unanswered, and a newer ID in p2.
			th := newThread("p1", 1, At(0))
			for n := 5; n >= 1; n-- {
				e := newExchange("p1", 1, n, At(time.Duration(5-n)*time.Minute))
				if n%2 == 0 {
					e.Resolution = store.Unanswered
				}
				if n == 5 {
					mustAddExchange(t, s, e, &th)
				} else {
					mustAddExchange(t, s, e, nil)
				}
			}
			th2 := newThread("p2", 2, At(0))
			mustAddExchange(t, s, newExchange("p2", 2, 6, At(2*time.Minute)), &th2)
			newest := func() store.ConversationsQuery {
				q := conversationsOf("p1")
				q.Newest = true
				return q
			}
			pages := func(what string, q store.ConversationsQuery, want [][]string, wantMore []bool) {
				t.Helper()
				var got [][]string
				var more []bool
				for {
					page := mustConversations(t, s, q)
					got, more = append(got, exchangeIDs(page.Exchanges)), append(more, page.HasMore)
					if !page.HasMore || len(page.Exchanges) == 0 || len(got) > 5 {
						break
					}
					q.After = page.Exchanges[len(page.Exchanges)-1].ID
				}
				diff(t, what+": pages", want, got)
				diff(t, what+": HasMore", wantMore, more)
			}
			diff(t, "all, newest first", []string{answerID(5), answerID(4), answerID(3), answerID(2), answerID(1)},
				exchangeIDs(mustConversations(t, s, newest()).Exchanges))
			q := newest()
			q.Limit = 2
			pages("by 2", q, [][]string{{answerID(5), answerID(4)}, {answerID(3), answerID(2)}, {answerID(1)}}, []bool{true, true, false})
			q = newest()
			q.Limit = 5
			if page := mustConversations(t, s, q); len(page.Exchanges) != 5 || page.HasMore {
				t.Errorf("a page of exactly the limit: %d exchanges, HasMore %v; want 5, false", len(page.Exchanges), page.HasMore)
			}
			q.After = answerID(5)
			diff(t, "before the newest", []string{answerID(4), answerID(3), answerID(2), answerID(1)}, exchangeIDs(mustConversations(t, s, q).Exchanges))
			q.Limit, q.After = 1, answerID(2)
			page := mustConversations(t, s, q)
			diff(t, "before the oldest but one", []string{answerID(1)}, exchangeIDs(page.Exchanges))
			if page.HasMore {
				t.Error("before the oldest but one: HasMore true, want false")
			}
			q.After = answerID(1)
			diff(t, "before the oldest", []string{}, exchangeIDs(mustConversations(t, s, q).Exchanges))
			// The unanswered ones, newest first, a page at a time.
			q = newest()
			q.Limit, q.Resolution = 1, store.Unanswered
			pages("unanswered by 1", q, [][]string{{answerID(4)}, {answerID(2)}}, []bool{true, false})
			// A range: [1m, 3m) holds 4 and 3, newest first; the same
			// query oldest first keeps the export's order.
			q = newest()
			q.From, q.To = At(time.Minute), At(3*time.Minute)
			diff(t, "[1m, 3m) newest first", []string{answerID(4), answerID(3)}, exchangeIDs(mustConversations(t, s, q).Exchanges))
			q.Newest = false
			diff(t, "[1m, 3m) oldest first", []string{answerID(3), answerID(4)}, exchangeIDs(mustConversations(t, s, q).Exchanges))
			q = conversationsOf("p9")
			q.Newest = true
			if page := mustConversations(t, s, q); len(page.Exchanges) != 0 || page.HasMore {
				t.Errorf("an unknown project's page: %v, HasMore %v; want empty", exchangeIDs(page.Exchanges), page.HasMore)
			}
		}},
		{"CallerStatsCountByKindInARange", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			ctx := t.Context()
			th := newThread("p1", 1, At(0))
			callers := []store.CallerKind{store.CallerWeb, store.CallerWeb, store.CallerAPI, store.CallerOther, store.CallerOther, store.CallerWeb}
			// Asked at -1h (before the range), 0, 1h, 2h, 3h, and 4h (the
			// range's end).
			for n, c := range callers {
				e := newExchange("p1", 1, n+1, At(time.Duration(n-1)*time.Hour))
				e.Caller = c
				if n == 0 {
					mustAddExchange(t, s, e, &th)
				} else {
					mustAddExchange(t, s, e, nil)
				}
			}
			th2 := newThread("p2", 2, At(0))
			mustAddExchange(t, s, newExchange("p2", 2, 9, At(time.Hour)), &th2)
			got, err := s.CallerStats(ctx, "p1", At(0), At(4*time.Hour))
			must(t, "CallerStats", err)
			diff(t, "[0, 4h)", store.CallerCounts{Web: 1, API: 1, Other: 2}, got)
			got, err = s.CallerStats(ctx, "p1", time.Time{}, time.Time{})
			must(t, "CallerStats", err)
			diff(t, "all time", store.CallerCounts{Web: 3, API: 1, Other: 2}, got)
			if got.Total() != 6 {
				t.Errorf("Total = %d, want 6", got.Total())
			}
			got, err = s.CallerStats(ctx, "p9", time.Time{}, time.Time{})
			must(t, "CallerStats", err)
			diff(t, "an unknown project", store.CallerCounts{}, got)
		}},
		{"TokensAddUpPerProjectAndUTCDay", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			ctx := t.Context()
			// At(0) is 05:06 UTC: At(18h) is the same day, At(19h) the next.
			for _, a := range []struct {
				project string
				at      time.Time
				n       int64
			}{{"p1", At(0), 100}, {"p1", At(18 * time.Hour), 50}, {"p1", At(19 * time.Hour), 7}, {"p2", At(time.Hour), 1000}} {
				must(t, "AddAssistantTokens", s.AddAssistantTokens(ctx, a.project, a.at, a.n))
			}
			for _, r := range []struct {
				what    string
				project string
				day     time.Time
				want    int64
			}{
				{"p1's first day", "p1", At(0), 150},
				{"p1's first day, read at its midnight", "p1", At(0).Truncate(24 * time.Hour), 150},
				{"p1's first day, read in another zone", "p1", At(0).In(time.FixedZone("UTC-7", -7*3600)), 150},
				{"p1's next day", "p1", At(19 * time.Hour), 7},
				{"p2's first day", "p2", At(0), 1000},
				{"a day without tokens", "p1", At(-48 * time.Hour), 0},
				{"an unknown project", "p9", At(0), 0},
			} {
				if got := mustTokens(t, s, r.project, r.day); got != r.want {
					t.Errorf("%s: %d tokens, want %d", r.what, got, r.want)
				}
			}
		}},
		{"DeleteBeforeRemovesOldExchangesEmptiedThreadsAndTokenDays", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			ctx := t.Context()
			a, b, c := newThread("p1", 1, At(0)), newThread("p1", 2, At(time.Hour)), newThread("p2", 3, At(3*time.Hour))
			mustAddExchange(t, s, newExchange("p1", 1, 1, At(0)), &a)
			mustAddExchange(t, s, newExchange("p1", 2, 2, At(time.Hour)), &b)
			mustAddExchange(t, s, newExchange("p1", 1, 3, At(2*time.Hour)), nil)
			mustAddExchange(t, s, newExchange("p2", 3, 4, At(3*time.Hour)), &c)
			for _, tk := range []struct {
				project string
				at      time.Time
			}{{"p1", At(-24 * time.Hour)}, {"p1", At(0)}, {"p2", At(-48 * time.Hour)}} {
				must(t, "AddAssistantTokens", s.AddAssistantTokens(ctx, tk.project, tk.at, 10))
			}
			n, err := s.DeleteConversationsBefore(ctx, At(2*time.Hour))
			must(t, "DeleteConversationsBefore", err)
			if n != 2 {
				t.Errorf("DeleteConversationsBefore deleted %d exchanges, want 2", n)
			}
			diff(t, "p1 after", []string{answerID(3)}, exchangeIDs(mustConversations(t, s, conversationsOf("p1")).Exchanges))
			diff(t, "p2 after", []string{answerID(4)}, exchangeIDs(mustConversations(t, s, conversationsOf("p2")).Exchanges))
			diff(t, "the thread that keeps one", storedThread(a, 1), mustThread(t, s, "p1", a.ID))
			diff(t, "its exchanges", []string{answerID(3)}, exchangeIDs(mustThreadExchanges(t, s, "p1", a.ID)))
			_, err = s.Thread(ctx, "p1", b.ID)
			wantErr(t, "the thread left with none", err, store.ErrNotFound)
			_, err = s.ThreadExchanges(ctx, "p1", b.ID)
			wantErr(t, "the exchanges of the thread left with none", err, store.ErrNotFound)
			for _, r := range []struct {
				what    string
				project string
				day     time.Time
				want    int64
			}{{"p1's day before", "p1", At(-24 * time.Hour), 0}, {"p1's day of the cut", "p1", At(0), 10}, {"p2's older day", "p2", At(-48 * time.Hour), 0}} {
				if got := mustTokens(t, s, r.project, r.day); got != r.want {
					t.Errorf("%s: %d tokens, want %d", r.what, got, r.want)
				}
			}
			// The thread's count is its exchanges': a cap of 2 takes one more.
			capped := newExchange("p1", 1, 5, At(5*time.Hour))
			capped.ThreadCap = 2
			mustAddExchange(t, s, capped, nil)
			n, err = s.DeleteConversationsBefore(ctx, At(2*time.Hour))
			must(t, "DeleteConversationsBefore again", err)
			if n != 0 {
				t.Errorf("DeleteConversationsBefore again deleted %d exchanges, want 0", n)
			}
		}},
		{"LinkGapsIsIdempotentAndListsInOrder", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			ctx := t.Context()
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			mustCreateJob(t, s, NewJob("p1", "j2", At(0)))
			must(t, "LinkGaps", s.LinkGaps(ctx, []store.GapLink{
				gapLink("p1", store.GapSearch, "rotate", "j2", At(time.Minute)),
				gapLink("p1", store.GapQuestion, "how to rotate", "j2", At(time.Minute)),
				gapLink("p1", store.GapPage, "/keys", "j1", At(2*time.Minute)),
				gapLink("p1", store.GapQuestion, "a", "j1", At(time.Minute)),
			}))
			must(t, "LinkGaps again", s.LinkGaps(ctx, []store.GapLink{
				gapLink("p1", store.GapQuestion, "how to rotate", "j2", At(5*time.Minute)),
				gapLink("p1", store.GapQuestion, "billing", "j1", At(0)),
				gapLink("p1", store.GapQuestion, "billing", "j1", At(0)),
			}))
			diff(t, "GapLinks", []store.GapLink{
				gapLink("p1", store.GapQuestion, "billing", "j1", At(0)),
				gapLink("p1", store.GapQuestion, "a", "j1", At(time.Minute)),
				gapLink("p1", store.GapQuestion, "how to rotate", "j2", At(time.Minute)),
				gapLink("p1", store.GapSearch, "rotate", "j2", At(time.Minute)),
				gapLink("p1", store.GapPage, "/keys", "j1", At(2*time.Minute)),
			}, mustGapLinks(t, s, "p1"))
			diff(t, "p2's", []store.GapLink{}, mustGapLinks(t, s, "p2"))
			diff(t, "an unknown project's", []store.GapLink{}, mustGapLinks(t, s, "p9"))
		}},
		{"LinkGapsNeedsAJobOfTheProject", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			ctx := t.Context()
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			mustCreateJob(t, s, NewJob("p2", "j9", At(0)))
			err := s.LinkGaps(ctx, []store.GapLink{
				gapLink("p1", store.GapQuestion, "billing", "j1", At(0)),
				gapLink("p1", store.GapQuestion, "billing", "j9", At(0)),
			})
			wantErr(t, "a link to another project's job", err, store.ErrNotFound)
			err = s.LinkGaps(ctx, []store.GapLink{
				gapLink("p1", store.GapQuestion, "billing", "j1", At(0)),
				gapLink("p1", store.GapPage, "/billing", "j404", At(0)),
			})
			wantErr(t, "a link to an unknown job", err, store.ErrNotFound)
			diff(t, "p1's links after", []store.GapLink{}, mustGapLinks(t, s, "p1"))
			diff(t, "p2's links after", []store.GapLink{}, mustGapLinks(t, s, "p2"))
		}},
		{"InvalidArgumentsAreRefusedAndStoreNothing", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			ctx := t.Context()
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			add := func(f func(*store.Exchange, *store.Thread)) error {
				e, th := newExchange("p1", 1, 1, At(0)), newThread("p1", 1, At(0))
				f(&e, &th)
				return s.AddExchange(ctx, e, &th)
			}
			many := make([]store.Source, store.MaxExchangeSources+1)
			for i := range many {
				many[i] = store.Source{Title: "t", URL: fmt.Sprintf("https://docs.example.com/%d", i)}
			}
			query := func(f func(*store.ConversationsQuery)) error {
				q := conversationsOf("p1")
				f(&q)
				_, err := s.QueryConversations(ctx, q)
				return err
			}
			link := func(f func(*store.GapLink)) error {
				l := gapLink("p1", store.GapQuestion, "billing", "j1", At(0))
				f(&l)
				return s.LinkGaps(ctx, []store.GapLink{l})
			}
			_, statsErr := s.CallerStats(ctx, "p1", At(time.Hour), At(time.Hour))
			_, statsNoProject := s.CallerStats(ctx, "", time.Time{}, time.Time{})
			_, tokensZeroDay := s.AssistantTokens(ctx, "p1", time.Time{})
			_, tokensNoProject := s.AssistantTokens(ctx, "", At(0))
			_, deleteZero := s.DeleteConversationsBefore(ctx, time.Time{})
			for name, err := range map[string]error{
				"an exchange without ID":           add(func(e *store.Exchange, _ *store.Thread) { e.ID = "" }),
				"an exchange ID in lower case":     add(func(e *store.Exchange, _ *store.Thread) { e.ID = strings.ToLower(e.ID) }),
				"a question ID that is not a ULID": add(func(e *store.Exchange, _ *store.Thread) { e.QuestionID = "q1" }),
				"the question's ID the answer's":   add(func(e *store.Exchange, _ *store.Thread) { e.QuestionID = e.ID }),
				"an exchange without project":      add(func(e *store.Exchange, _ *store.Thread) { e.ProjectID = "" }),
				"an empty question":                add(func(e *store.Exchange, _ *store.Thread) { e.Question = "" }),
				"a question with NUL":              add(func(e *store.Exchange, _ *store.Thread) { e.Question = "a\x00b" }),
				"an answer of invalid UTF-8":       add(func(e *store.Exchange, _ *store.Thread) { e.Answer = "a\xffb" }),
				"a zero time asked":                add(func(e *store.Exchange, _ *store.Thread) { e.AskedAt = time.Time{} }),
				"answered before asked":            add(func(e *store.Exchange, _ *store.Thread) { e.AnsweredAt = At(-time.Second) }),
				"an unknown response type":         add(func(e *store.Exchange, _ *store.Thread) { e.ResponseType = "essay" }),
				"an unknown resolution":            add(func(e *store.Exchange, _ *store.Thread) { e.Resolution = "maybe" }),
				"an unknown caller":                add(func(e *store.Exchange, _ *store.Thread) { e.Caller = "robot" }),
				"too many sources":                 add(func(e *store.Exchange, _ *store.Thread) { e.Sources = many }),
				"a source without URL":             add(func(e *store.Exchange, _ *store.Thread) { e.Sources[0].URL = "" }),
				"a source title too long": add(func(e *store.Exchange, _ *store.Thread) {
					e.Sources[0].Title = strings.Repeat("t", store.MaxSourceTitle+1)
				}),
				"a source URL too long":            add(func(e *store.Exchange, _ *store.Thread) { e.Sources[0].URL = strings.Repeat("u", store.MaxURL+1) }),
				"a source title with NUL":          add(func(e *store.Exchange, _ *store.Thread) { e.Sources[1].Title = "\x00" }),
				"a page URL too long":              add(func(e *store.Exchange, _ *store.Thread) { e.PageURL = strings.Repeat("u", store.MaxURL+1) }),
				"a negative thread cap":            add(func(e *store.Exchange, _ *store.Thread) { e.ThreadCap = -1 }),
				"a negative daily cap":             add(func(e *store.Exchange, _ *store.Thread) { e.DailyCap = -1 }),
				"a new thread of another ID":       add(func(_ *store.Exchange, th *store.Thread) { th.ID = threadID(2) }),
				"a new thread of another project":  add(func(_ *store.Exchange, th *store.Thread) { th.ProjectID = "p2" }),
				"a thread ID that is not a ULID":   add(func(e *store.Exchange, th *store.Thread) { e.ThreadID, th.ID = "t1", "t1" }),
				"a thread without key hash":        add(func(_ *store.Exchange, th *store.Thread) { th.KeyHash = nil }),
				"a thread of an unknown caller":    add(func(_ *store.Exchange, th *store.Thread) { th.Caller = "" }),
				"a thread fp too long":             add(func(_ *store.Exchange, th *store.Thread) { th.Fp = strings.Repeat("f", store.MaxThreadFp+1) }),
				"a thread fp of invalid UTF-8":     add(func(_ *store.Exchange, th *store.Thread) { th.Fp = "\xff" }),
				"a thread without creation time":   add(func(_ *store.Exchange, th *store.Thread) { th.CreatedAt = time.Time{} }),
				"a query without project":          query(func(q *store.ConversationsQuery) { q.ProjectID = "" }),
				"a query of limit 0":               query(func(q *store.ConversationsQuery) { q.Limit = 0 }),
				"a query past the largest limit":   query(func(q *store.ConversationsQuery) { q.Limit = store.MaxConversationsLimit + 1 }),
				"a query after a malformed ID":     query(func(q *store.ConversationsQuery) { q.After = "x" }),
				"a query of an unknown resolution": query(func(q *store.ConversationsQuery) { q.Resolution = "maybe" }),
				"a query of an empty range":        query(func(q *store.ConversationsQuery) { q.From, q.To = At(time.Hour), At(time.Hour) }),
				"caller stats of an empty range":   statsErr,
				"caller stats without project":     statsNoProject,
				"no tokens":                        s.AddAssistantTokens(ctx, "p1", At(0), 0),
				"negative tokens":                  s.AddAssistantTokens(ctx, "p1", At(0), -5),
				"tokens at zero time":              s.AddAssistantTokens(ctx, "p1", time.Time{}, 5),
				"tokens without project":           s.AddAssistantTokens(ctx, "", At(0), 5),
				"the tokens of a zero day":         tokensZeroDay,
				"the tokens of no project":         tokensNoProject,
				"deleting before the zero time":    deleteZero,
				"no links":                         s.LinkGaps(ctx, nil),
				"a link of an unknown kind":        link(func(l *store.GapLink) { l.Kind = "vote" }),
				"a link without key":               link(func(l *store.GapLink) { l.Key = "" }),
				"a link key too long":              link(func(l *store.GapLink) { l.Key = strings.Repeat("k", store.MaxGapKey+1) }),
				"a link key with NUL":              link(func(l *store.GapLink) { l.Key = "a\x00" }),
				"a link without job":               link(func(l *store.GapLink) { l.JobID = "" }),
				"a link without creation time":     link(func(l *store.GapLink) { l.CreatedAt = time.Time{} }),
				"links of two projects": s.LinkGaps(ctx, []store.GapLink{
					gapLink("p1", store.GapQuestion, "billing", "j1", At(0)),
					gapLink("p2", store.GapQuestion, "billing", "j1", At(0)),
				}),
			} {
				wantErr(t, name, err, store.ErrInvalid)
			}
			diff(t, "p1's exchanges", []store.Exchange{}, mustConversations(t, s, conversationsOf("p1")).Exchanges)
			diff(t, "p2's exchanges", []store.Exchange{}, mustConversations(t, s, conversationsOf("p2")).Exchanges)
			for _, id := range []string{threadID(1), threadID(2), "t1"} {
				for _, p := range []string{"p1", "p2"} {
					if _, err := s.Thread(ctx, p, id); err == nil {
						t.Errorf("thread %s of %s stored by a refused exchange", id, p)
					}
				}
			}
			if n := mustTokens(t, s, "p1", At(0)); n != 0 {
				t.Errorf("p1 holds %d tokens after refused additions", n)
			}
			diff(t, "p1's links", []store.GapLink{}, mustGapLinks(t, s, "p1"))
		}},
		{"ConcurrentAddsKeepTheCapsAndSumTokensExactly", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			const workers, each, capacity = 6, 4, 10
			// p1: one thread, capped; p2: a new thread per exchange, the
			// day capped.
			th := newThread("p1", 1, At(0))
			mustAddExchange(t, s, newExchange("p1", 1, 1000, At(0)), &th)
			var mu sync.Mutex
			stored, full := map[string]int{}, map[string]int{}
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for i := range each {
						n := w*each + i
						at := At(time.Duration(n+1) * time.Second)
						e := newExchange("p1", 1, n, at)
						e.ThreadCap = capacity
						errs := map[string]error{"p1": s.AddExchange(t.Context(), e, nil)}
						own := newThread("p2", 100+n, at)
						e = newExchange("p2", 100+n, 100+n, at)
						e.DailyCap = capacity
						errs["p2"] = s.AddExchange(t.Context(), e, &own)
						if err := s.AddAssistantTokens(t.Context(), "p1", at, int64(n+1)); err != nil {
							t.Errorf("AddAssistantTokens: %v", err)
						}
						mu.Lock()
						for p, err := range errs {
							switch {
							case err == nil:
								stored[p]++
							case errors.Is(err, store.ErrFull):
								full[p]++
							default:
								t.Errorf("AddExchange of %s: %v", p, err)
							}
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			// The thread held one exchange before the workers came.
			want := map[string]int{"p1": capacity - 1, "p2": capacity}
			for _, p := range []string{"p1", "p2"} {
				if stored[p] != want[p] || full[p] != workers*each-want[p] {
					t.Errorf("%s: stored %d and refused %d as full; want %d and %d", p, stored[p], full[p], want[p], workers*each-want[p])
				}
			}
			if got := len(mustThreadExchanges(t, s, "p1", th.ID)); got != capacity {
				t.Errorf("the thread holds %d exchanges, want its cap, %d", got, capacity)
			}
			if got := mustThread(t, s, "p1", th.ID).Exchanges; got != capacity {
				t.Errorf("the thread counts %d exchanges, want its cap, %d", got, capacity)
			}
			if got := len(mustConversations(t, s, conversationsOf("p2")).Exchanges); got != capacity {
				t.Errorf("p2's day holds %d exchanges, want the cap, %d", got, capacity)
			}
			sum := int64(workers * each * (workers*each + 1) / 2)
			if got := mustTokens(t, s, "p1", At(0)); got != sum {
				t.Errorf("p1's tokens: %d, want %d", got, sum)
			}
		}},
		{"TimesAreKeptToTheMicrosecond", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			zone := time.FixedZone("UTC+5:30", 5*3600+1800)
			at := At(1500 * time.Nanosecond).In(zone) // 1.5µs past the base
			th := newThread("p1", 1, at)
			e := newExchange("p1", 1, 1, at)
			e.AnsweredAt = At(2*time.Second + 999*time.Nanosecond).In(zone)
			mustAddExchange(t, s, e, &th)
			diff(t, "Thread", storedThread(th, 1), mustThread(t, s, "p1", th.ID))
			diff(t, "ThreadExchanges", []store.Exchange{stored(e)}, mustThreadExchanges(t, s, "p1", th.ID))
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			must(t, "LinkGaps", s.LinkGaps(t.Context(), []store.GapLink{gapLink("p1", store.GapPage, "/keys", "j1", at)}))
			diff(t, "GapLinks", []store.GapLink{gapLink("p1", store.GapPage, "/keys", "j1", micro(at))}, mustGapLinks(t, s, "p1"))
		}},
	})
}
