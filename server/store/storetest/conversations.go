package storetest

import (
	"fmt"
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
	})
}
