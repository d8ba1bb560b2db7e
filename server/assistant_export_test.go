package server_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/internal/ulid"
	"github.com/docsapi/docsapi-go/server/store"
)

// conversationsPage reads a page of the assistant export as maps, so that
// the test sees exactly what was sent, nulls and absent fields apart.
func (e *env) conversationsPage(key, query string) (rows []map[string]any, next *string, hasMore bool) {
	e.T.Helper()
	var page struct {
		Conversations []map[string]any `json:"conversations"`
		NextCursor    *string          `json:"nextCursor"`
		HasMore       bool             `json:"hasMore"`
	}
	e.GetJSON(key, "/v1/analytics/alpha/assistant"+query, &page)
	return page.Conversations, page.NextCursor, page.HasMore
}

// allConversations follows the export's cursor from the first page of
// query on, limit rows a page, and returns the questions in the order sent
// and the pages' sizes.
func (e *env) allConversations(query string, limit int) (questions []string, sizes []int) {
	e.T.Helper()
	return e.conversationsFrom(query, "", limit)
}

// conversationsFrom is allConversations from the page after cursor.
func (e *env) conversationsFrom(query, cursor string, limit int) (questions []string, sizes []int) {
	e.T.Helper()
	base := "?limit=" + strconv.Itoa(limit)
	if query != "" {
		base += "&" + query
	}
	q := base
	if cursor != "" {
		q += "&cursor=" + url.QueryEscape(cursor)
	}
	for range 100 {
		rows, next, more := e.conversationsPage("ro", q)
		sizes = append(sizes, len(rows))
		for _, r := range rows {
			questions = append(questions, r["query"].(string))
		}
		if !more {
			if next != nil {
				e.T.Fatalf("last page: nextCursor %q with hasMore false", *next)
			}
			return questions, sizes
		}
		if next == nil || *next != rows[len(rows)-1]["id"] {
			e.T.Fatalf("hasMore with nextCursor %v, want the last row's id %v", next, rows[len(rows)-1]["id"])
		}
		q = base + "&cursor=" + url.QueryEscape(*next)
	}
	e.T.Fatal("the export never ended")
	return nil, nil
}

// Each conversation is the exchange stored, in the hosted shape: every
// field sent, queryCategory null, pageUrl null without a page, sources an
// empty list without any.
func TestAssistantExportShowsEachExchange(t *testing.T) {
	e := newEnv(t)
	first := e.Ask(servertest.Ask{Question: "How do I <install> it?", Answer: "Run the installer.", PageURL: "/guide",
		Sources: []store.Source{{Title: "Install", URL: "/guide/install"}, {Title: "FAQ", URL: "https://docs.example.com/faq"}}})
	e.Clock.Advance(time.Minute)
	second := e.Ask(servertest.Ask{Thread: first.ThreadID, Question: "Which version?", Answer: "Which system do you use?", Clarifying: true, Unanswered: true, Caller: store.CallerAPI})
	e.Ask(servertest.Ask{Project: "beta", Question: "Beta's question", Answer: "x"})

	rows, next, more := e.conversationsPage("ro", "")
	if next != nil || more {
		t.Fatalf("one page: nextCursor %v, hasMore %v", next, more)
	}
	want := []map[string]any{
		{"id": first.ID, "timestamp": "2026-08-14T09:00:00Z", "query": "How do I <install> it?", "response": "Run the installer.", "responseType": "answer",
			"sources":          []any{map[string]any{"title": "Install", "url": "/guide/install"}, map[string]any{"title": "FAQ", "url": "https://docs.example.com/faq"}},
			"resolutionStatus": "answered", "queryCategory": nil, "pageUrl": "/guide"},
		{"id": second.ID, "timestamp": "2026-08-14T09:01:00Z", "query": "Which version?", "response": "Which system do you use?", "responseType": "clarifying_question",
			"sources": []any{}, "resolutionStatus": "unanswered", "queryCategory": nil, "pageUrl": nil},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Fatalf("conversations (-want +got):\n%s", diff)
	}
	// beta's own key sees beta's alone; alpha's key cannot ask for beta's.
	var page docsapi.AssistantConversationsPage
	e.GetJSON("beta", "/v1/analytics/beta/assistant", &page)
	if len(page.Conversations) != 1 || page.Conversations[0].Query != "Beta's question" {
		t.Errorf("beta's export: %+v", page.Conversations)
	}
	for _, path := range []string{"assistant", "assistant/threads/" + first.ThreadID, "assistant/caller-stats"} {
		if resp, body := e.Do("ro", "GET", "/v1/analytics/beta/"+path, ""); resp.StatusCode != http.StatusForbidden {
			t.Errorf("alpha's key on beta's %s: %d %s, want 403", path, resp.StatusCode, body)
		}
		if resp, _ := e.Do("", "GET", "/v1/analytics/alpha/"+path, ""); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s without a key: %d, want 401", path, resp.StatusCode)
		}
	}
}

// The cursor pages through every conversation once, in the order asked,
// whatever the page size, and questions asked while a client pages come
// after the cursor, never shifting the pages.
func TestAssistantExportCursor(t *testing.T) {
	e := newEnv(t)
	var want []string
	for i := range 7 {
		q := "question " + strconv.Itoa(i)
		e.Ask(servertest.Ask{Question: q, Answer: "a"})
		want = append(want, q)
		e.Clock.Advance(time.Second)
	}
	for _, tc := range []struct {
		limit int
		sizes []int
	}{{3, []int{3, 3, 1}}, {7, []int{7}}, {1, []int{1, 1, 1, 1, 1, 1, 1}}, {1000, []int{7}}} {
		got, sizes := e.allConversations("", tc.limit)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("limit %d (-want +got):\n%s", tc.limit, diff)
		}
		if !cmp.Equal(tc.sizes, sizes) {
			t.Errorf("limit %d: pages of %v, want %v", tc.limit, sizes, tc.sizes)
		}
	}

	// A question asked after the first page was read comes on a later one.
	rows, next, _ := e.conversationsPage("ro", "?limit=3")
	e.Ask(servertest.Ask{Question: "asked while paging", Answer: "a"})
	rest, _ := e.conversationsFrom("", *next, 3)
	if len(rows) != 3 || !cmp.Equal(append(want[3:], "asked while paging"), rest) {
		t.Errorf("after the first page: %v", rest)
	}
}

// Without a limit a page holds 100; the bounds and the cursor are checked,
// every problem named.
func TestAssistantExportQueryIsChecked(t *testing.T) {
	e := newEnv(t)
	for range 101 {
		e.Ask(servertest.Ask{Question: "q", Answer: "a"})
		e.Clock.Advance(time.Millisecond)
	}
	rows, next, more := e.conversationsPage("ro", "")
	if len(rows) != 100 || !more || next == nil {
		t.Fatalf("default page: %d rows, hasMore %v", len(rows), more)
	}
	if rows, _, more := e.conversationsPage("ro", "?limit=1000"); len(rows) != 101 || more {
		t.Errorf("limit=1000: %d rows, hasMore %v", len(rows), more)
	}
	valid := ulid.New(e.Clock.Now())
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"?limit=0", []string{"limit must be an integer from 1 to 1000"}},
		{"?limit=1001", []string{"limit must be an integer from 1 to 1000"}},
		{"?limit=ten", []string{"limit must be an integer from 1 to 1000"}},
		{"?cursor=abc", []string{`cursor must be the nextCursor of a page of this export, a ULID`}},
		{"?cursor=" + strings.ToLower(valid), []string{"cursor must be"}},
		{"?cursor=8" + valid[1:], []string{"cursor must be"}},
		{"?cursor=" + valid + "&cursor=" + valid, []string{"cursor is given 2 times"}},
		{"?limit=2000&cursor=x&dateFrom=soon", []string{"dateFrom", "limit must be", "cursor must be"}},
		{"?dateFrom=2026-02-01&dateTo=2026-01-01", []string{"dateFrom (2026-02-01T00:00:00Z) is after dateTo"}},
	} {
		resp, body := e.Do("ro", "GET", "/v1/analytics/alpha/assistant"+tc.query, "")
		details := analyticsDetails(t, body)
		if resp.StatusCode != http.StatusBadRequest || len(details) != len(tc.want) {
			t.Errorf("%s: %d %s, want 400 with %d details", tc.query, resp.StatusCode, body, len(tc.want))
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(details[i].Message, w) {
				t.Errorf("%s: detail %d = %q, want it to say %q", tc.query, i, details[i].Message, w)
			}
		}
	}
	// An empty cursor is the first page, as the other exports take it.
	if rows, _, _ := e.conversationsPage("ro", "?cursor=&limit=1000"); len(rows) != 101 {
		t.Errorf("an empty cursor: %d rows", len(rows))
	}
}

// The dates select the questions asked in [dateFrom, dateTo), exactly:
// not widened to whole days, dateTo excluded.
func TestAssistantExportDateRange(t *testing.T) {
	e := newEnv(t)
	day := time.Date(2026, 8, 10, 0, 0, 0, 0, time.UTC)
	for _, at := range []time.Time{day.Add(-time.Millisecond), day, day.Add(11 * time.Hour), day.Add(24*time.Hour - time.Millisecond), day.Add(24 * time.Hour)} {
		e.Ask(servertest.Ask{Question: at.Format(time.RFC3339Nano), Answer: "a", At: at, Caller: store.CallerWeb})
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"dateFrom=2026-08-10&dateTo=2026-08-11", []string{"2026-08-10T00:00:00Z", "2026-08-10T11:00:00Z", "2026-08-10T23:59:59.999Z"}},
		{"dateFrom=2026-08-10T11:00:00Z&dateTo=2026-08-10T11:00:00.001Z", []string{"2026-08-10T11:00:00Z"}},
		{"dateFrom=2026-08-10T11:00:00.001Z&dateTo=2026-08-10T23:59:59.999Z", nil},
		{"dateTo=2026-08-10", []string{"2026-08-09T23:59:59.999Z"}},
		{"dateFrom=2026-08-11", []string{"2026-08-11T00:00:00Z"}},
		{"", []string{"2026-08-09T23:59:59.999Z", "2026-08-10T00:00:00Z", "2026-08-10T11:00:00Z", "2026-08-10T23:59:59.999Z", "2026-08-11T00:00:00Z"}},
	} {
		got, _ := e.allConversations(tc.query, 2)
		if !cmp.Equal(tc.want, got, cmp.Comparer(func(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") })) {
			t.Errorf("%s: %v, want %v", tc.query, got, tc.want)
		}
	}
	// Caller stats count over the same range.
	var stats map[string]any
	e.GetJSON("ro", "/v1/analytics/alpha/assistant/caller-stats?dateFrom=2026-08-10&dateTo=2026-08-11", &stats)
	if diff := cmp.Diff(map[string]any{"web": 3.0, "api": 0.0, "other": 0.0, "total": 3.0}, stats); diff != "" {
		t.Errorf("caller stats of the day (-want +got):\n%s", diff)
	}
}

// A thread is its exchanges as messages, question then reply, in the order
// asked; a malformed ID is a 400, an unknown thread or another project's a
// 404.
func TestAssistantThreadExport(t *testing.T) {
	e := newEnv(t)
	first := e.Ask(servertest.Ask{Question: "How do I install it?", Answer: "Run the installer."})
	e.Clock.Advance(90 * time.Second)
	second := e.Ask(servertest.Ask{Thread: first.ThreadID, Question: "And on Windows?", Answer: "The same, as an administrator."})
	other := e.Ask(servertest.Ask{Question: "Unrelated", Answer: "x"})
	beta := e.Ask(servertest.Ask{Project: "beta", Question: "Beta's", Answer: "x"})

	var got map[string]any
	e.GetJSON("ro", "/v1/analytics/alpha/assistant/threads/"+first.ThreadID, &got)
	want := map[string]any{"threadId": first.ThreadID, "createdAt": "2026-08-14T09:00:00Z", "messages": []any{
		map[string]any{"id": first.QuestionID, "role": "user", "content": "How do I install it?", "createdAt": "2026-08-14T09:00:00Z"},
		map[string]any{"id": first.ID, "role": "assistant", "content": "Run the installer.", "createdAt": "2026-08-14T09:00:01Z"},
		map[string]any{"id": second.QuestionID, "role": "user", "content": "And on Windows?", "createdAt": "2026-08-14T09:01:30Z"},
		map[string]any{"id": second.ID, "role": "assistant", "content": "The same, as an administrator.", "createdAt": "2026-08-14T09:01:31Z"},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("thread (-want +got):\n%s", diff)
	}
	e.GetJSON("ro", "/v1/analytics/alpha/assistant/threads/"+other.ThreadID, &got)
	if msgs := got["messages"].([]any); len(msgs) != 2 || got["threadId"] != other.ThreadID {
		t.Errorf("the other thread: %v", got)
	}

	for _, tc := range []struct {
		id     string
		status int
		want   string
	}{
		{"not-a-ulid", 400, "invalid thread ID"},
		{strings.ToLower(first.ThreadID), 400, "invalid thread ID"},
		{first.ThreadID + "0", 400, "invalid thread ID"},
		{ulid.New(e.Clock.Now()), 404, "not found"},
		{beta.ThreadID, 404, "not found"},
		{first.ID, 404, "not found"}, // an exchange's ID is no thread's
	} {
		resp, body := e.Do("ro", "GET", "/v1/analytics/alpha/assistant/threads/"+url.PathEscape(tc.id), "")
		if resp.StatusCode != tc.status || !strings.Contains(servertest.ErrorOf(t, body), tc.want) {
			t.Errorf("thread %q: %d %s, want %d saying %q", tc.id, resp.StatusCode, body, tc.status, tc.want)
		}
		if tc.status == 400 && !strings.Contains(string(body), "threadId must be a ULID") {
			t.Errorf("thread %q: %s, want the detail to name threadId", tc.id, body)
		}
	}
}

// Caller stats count each exchange by its caller kind, over the dates.
func TestAssistantCallerStats(t *testing.T) {
	e := newEnv(t)
	web := e.Ask(servertest.Ask{Question: "1", Answer: "a"})
	e.Ask(servertest.Ask{Thread: web.ThreadID, Question: "2", Answer: "a"})
	e.Ask(servertest.Ask{Question: "3", Answer: "a", Caller: store.CallerAPI})
	e.Ask(servertest.Ask{Question: "4", Answer: "a", Caller: store.CallerOther})
	e.Ask(servertest.Ask{Question: "5", Answer: "a", Caller: store.CallerAPI, At: e.Clock.Now().AddDate(0, 0, -3)})
	e.Ask(servertest.Ask{Project: "beta", Question: "6", Answer: "a"})
	for _, tc := range []struct {
		query string
		want  map[string]any
	}{
		{"", map[string]any{"web": 2.0, "api": 2.0, "other": 1.0, "total": 5.0}},
		{"?dateFrom=2026-08-14", map[string]any{"web": 2.0, "api": 1.0, "other": 1.0, "total": 4.0}},
		{"?dateTo=2026-08-14", map[string]any{"web": 0.0, "api": 1.0, "other": 0.0, "total": 1.0}},
		{"?dateFrom=2026-09-01", map[string]any{"web": 0.0, "api": 0.0, "other": 0.0, "total": 0.0}},
	} {
		var got map[string]any
		e.GetJSON("ro", "/v1/analytics/alpha/assistant/caller-stats"+tc.query, &got)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.query, diff)
		}
	}
	resp, body := e.Do("ro", "GET", "/v1/analytics/alpha/assistant/caller-stats?dateFrom=yesterday", "")
	if details := analyticsDetails(t, body); resp.StatusCode != http.StatusBadRequest || len(details) != 1 || !strings.Contains(details[0].Message, "dateFrom") {
		t.Errorf("a bad date: %d %s", resp.StatusCode, body)
	}
}

// The exports share the analytics budget of the key.
func TestAssistantExportsShareTheAnalyticsBudget(t *testing.T) {
	e := newEnv(t, func(c *server.Config) {
		c.RateLimits = server.RateLimits{Analytics: server.Limit{Requests: 3, Per: time.Hour}}
	})
	for _, path := range []string{"assistant", "assistant/caller-stats", "searches"} {
		if resp, body := e.Do("ro", "GET", "/v1/analytics/alpha/"+path, ""); resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
		}
	}
	resp, body := e.Do("ro", "GET", "/v1/analytics/alpha/assistant/threads/"+ulid.New(e.Clock.Now()), "")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("the fourth analytics request: %d %s, want 429 with Retry-After", resp.StatusCode, body)
	}
}

// The SDK reads the three exports as the server writes them.
func TestSDKReadsAssistantExports(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var asked []store.Exchange
	for i := range 5 {
		a := servertest.Ask{Question: "question " + strconv.Itoa(i), Answer: "answer " + strconv.Itoa(i), PageURL: "/p" + strconv.Itoa(i)}
		if i%2 == 1 {
			a.Thread, a.Unanswered, a.Caller = asked[i-1].ThreadID, true, store.CallerAPI
		} else {
			a.Sources = []store.Source{{Title: "Page " + strconv.Itoa(i), URL: "/page-" + strconv.Itoa(i)}}
		}
		asked = append(asked, e.Ask(a))
		e.Clock.Advance(time.Minute)
	}
	c := e.client("ro")

	page, err := c.Analytics.AssistantConversations(ctx, "", docsapi.AssistantConversationsParams{Limit: 2})
	if err != nil || len(page.Conversations) != 2 || !page.HasMore || page.NextCursor != asked[1].ID {
		t.Fatalf("first page: %+v, %v", page, err)
	}
	if got := page.Conversations[0]; got.ID != asked[0].ID || !got.Timestamp.Equal(asked[0].AskedAt) || got.Query != "question 0" || got.Response != "answer 0" ||
		got.ResponseType != docsapi.AssistantResponseAnswer || got.ResolutionStatus != docsapi.AssistantAnswered || got.QueryCategory != "" || got.PageURL != "/p0" ||
		!cmp.Equal(got.Sources, []docsapi.AssistantSource{{Title: "Page 0", URL: "/page-0"}}) {
		t.Errorf("first conversation: %+v", got)
	}
	if got := page.Conversations[1]; got.ResolutionStatus != docsapi.AssistantUnanswered || len(got.Sources) != 0 {
		t.Errorf("second conversation: %+v", got)
	}
	var ids []string
	for conv, err := range c.Analytics.AllAssistantConversations(ctx, "", docsapi.AssistantConversationsParams{Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, conv.ID)
	}
	var want []string
	for _, x := range asked {
		want = append(want, x.ID)
	}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("AllAssistantConversations (-want +got):\n%s", diff)
	}
	from := docsapi.Instant(asked[2].AskedAt)
	ids = nil
	for conv, err := range c.Analytics.AllAssistantConversations(ctx, "", docsapi.AssistantConversationsParams{DateFrom: from}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, conv.ID)
	}
	if diff := cmp.Diff(want[2:], ids); diff != "" {
		t.Errorf("from the third question (-want +got):\n%s", diff)
	}

	thread, err := c.Analytics.AssistantThread(ctx, "", asked[0].ThreadID)
	if err != nil || thread.ThreadID != asked[0].ThreadID || !thread.CreatedAt.Equal(asked[0].AskedAt) || len(thread.Messages) != 4 {
		t.Fatalf("AssistantThread: %+v, %v", thread, err)
	}
	for i, m := range thread.Messages {
		x := asked[i/2]
		wantMsg := docsapi.AssistantMessage{ID: x.QuestionID, Role: docsapi.AssistantRoleUser, Content: x.Question, CreatedAt: x.AskedAt}
		if i%2 == 1 {
			wantMsg = docsapi.AssistantMessage{ID: x.ID, Role: docsapi.AssistantRoleAssistant, Content: x.Answer, CreatedAt: x.AnsweredAt}
		}
		if !cmp.Equal(wantMsg, m) {
			t.Errorf("message %d: %+v, want %+v", i, m, wantMsg)
		}
	}
	if _, err := c.Analytics.AssistantThread(ctx, "", ulid.New(e.Clock.Now())); !errors.Is(err, docsapi.ErrNotFound) {
		t.Errorf("an unknown thread: %v, want ErrNotFound", err)
	}
	if _, err := c.Analytics.AssistantThread(ctx, "", "nope"); !errors.Is(err, docsapi.ErrBadRequest) {
		t.Errorf("a malformed thread ID: %v, want ErrBadRequest", err)
	}

	stats, err := c.Analytics.AssistantCallerStats(ctx, "", docsapi.AssistantCallerStatsParams{})
	if err != nil || *stats != (docsapi.AssistantCallerStats{Web: 3, API: 2, Total: 5}) {
		t.Errorf("AssistantCallerStats: %+v, %v", stats, err)
	}
	stats, err = c.Analytics.AssistantCallerStats(ctx, "", docsapi.AssistantCallerStatsParams{DateFrom: from, DateTo: docsapi.Instant(asked[4].AskedAt)})
	if err != nil || *stats != (docsapi.AssistantCallerStats{Web: 1, API: 1, Total: 2}) {
		t.Errorf("AssistantCallerStats of two questions: %+v, %v", stats, err)
	}
}
