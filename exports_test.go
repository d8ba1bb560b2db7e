package docsapi

import (
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jarcoal/httpmock"
)

// The exports beyond views: their requests, argument checks, fixtures and
// encodings.

func janDay(d int) DateBound { return Day(2026, time.January, d) }

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func strPtr(s string) *string { return &s }

// exportCall is one operation of the analytics service, called with the
// arguments of a test case. Iterators are ranged to their first pair.
type exportCall func(c *Client) error

func firstErrOf[T any](seq iter.Seq2[T, error]) error {
	for _, err := range seq {
		return err
	}
	return nil
}

func TestExportsSendExactRequests(t *testing.T) {
	const dates = "dateFrom=2026-01-01&dateTo=2026-01-31"
	tests := []struct {
		name      string
		call      exportCall
		reply     string // fixture
		wantPath  string
		wantQuery string
	}{
		{
			name:     "Visitors, zero params",
			call:     func(c *Client) error { _, err := c.Analytics.Visitors(t.Context(), "", VisitorsParams{}); return err },
			reply:    "visitors_page2.json",
			wantPath: "/v1/analytics/proj/visitors",
		},
		{
			name: "Visitors, everything",
			call: func(c *Client) error {
				_, err := c.Analytics.Visitors(t.Context(), "", VisitorsParams{DateFrom: janDay(1), DateTo: janDay(31), Limit: 250, Offset: 500})
				return err
			},
			reply:     "visitors_page2.json",
			wantPath:  "/v1/analytics/proj/visitors",
			wantQuery: dates + "&limit=250&offset=500",
		},
		{
			name: "AllVisitors defaults to 250 a page",
			call: func(c *Client) error {
				return firstErrOf(c.Analytics.AllVisitors(t.Context(), "other", VisitorsParams{}))
			},
			reply:     "visitors_page2.json",
			wantPath:  "/v1/analytics/other/visitors",
			wantQuery: "limit=250",
		},
		{
			name:     "Searches, zero params",
			call:     func(c *Client) error { _, err := c.Analytics.Searches(t.Context(), "", SearchesParams{}); return err },
			reply:    "searches_last.json",
			wantPath: "/v1/analytics/proj/searches",
		},
		{
			name: "Searches, everything, the cursor escaped",
			call: func(c *Client) error {
				_, err := c.Analytics.Searches(t.Context(), "", SearchesParams{DateFrom: janDay(1), DateTo: janDay(31), Limit: 100, Cursor: "a+b/c="})
				return err
			},
			reply:     "searches_last.json",
			wantPath:  "/v1/analytics/proj/searches",
			wantQuery: "cursor=a%2Bb%2Fc%3D&" + dates + "&limit=100",
		},
		{
			name:      "AllSearches defaults to 100 a page",
			call:      func(c *Client) error { return firstErrOf(c.Analytics.AllSearches(t.Context(), "", SearchesParams{})) },
			reply:     "searches_last.json",
			wantPath:  "/v1/analytics/proj/searches",
			wantQuery: "limit=100",
		},
		{
			name:     "Feedback, zero params",
			call:     func(c *Client) error { _, err := c.Analytics.Feedback(t.Context(), "", FeedbackParams{}); return err },
			reply:    "feedback_last.json",
			wantPath: "/v1/analytics/proj/feedback",
		},
		{
			name: "Feedback, statuses comma-separated, an unknown one passed on",
			call: func(c *Client) error {
				_, err := c.Analytics.Feedback(t.Context(), "", FeedbackParams{
					DateFrom: janDay(1), DateTo: janDay(31), Limit: 1, Cursor: "fb_06",
					Source: FeedbackSourceCodeSnippet,
					Status: []FeedbackStatus{FeedbackStatusPending, FeedbackStatusInProgress, "escalated"},
				})
				return err
			},
			reply:     "feedback_last.json",
			wantPath:  "/v1/analytics/proj/feedback",
			wantQuery: "cursor=fb_06&" + dates + "&limit=1&source=code_snippet&status=pending%2Cin_progress%2Cescalated",
		},
		{
			name: "AllFeedback defaults to 100 a page",
			call: func(c *Client) error {
				return firstErrOf(c.Analytics.AllFeedback(t.Context(), "", FeedbackParams{Source: "widget", Status: []FeedbackStatus{FeedbackStatusResolved}}))
			},
			reply:     "feedback_last.json",
			wantPath:  "/v1/analytics/proj/feedback",
			wantQuery: "limit=100&source=widget&status=resolved",
		},
		{
			name: "FeedbackByPage, zero params",
			call: func(c *Client) error {
				_, err := c.Analytics.FeedbackByPage(t.Context(), "", FeedbackByPageParams{})
				return err
			},
			reply:    "feedback_by_page.json",
			wantPath: "/v1/analytics/proj/feedback/by-page",
		},
		{
			name: "FeedbackByPage, everything",
			call: func(c *Client) error {
				_, err := c.Analytics.FeedbackByPage(t.Context(), "", FeedbackByPageParams{
					DateFrom: janDay(1), DateTo: janDay(31), Limit: 100,
					Source: FeedbackSourceContextual, Status: []FeedbackStatus{FeedbackStatusPending, FeedbackStatusDismissed},
				})
				return err
			},
			reply:     "feedback_by_page.json",
			wantPath:  "/v1/analytics/proj/feedback/by-page",
			wantQuery: dates + "&limit=100&source=contextual&status=pending%2Cdismissed",
		},
		{
			name: "AssistantConversations, everything",
			call: func(c *Client) error {
				_, err := c.Analytics.AssistantConversations(t.Context(), "", AssistantConversationsParams{
					DateFrom: janDay(1), DateTo: janDay(31), Limit: 1000, Cursor: "01JH8Z7M9N8P7Q6R5S4T3V2W1X",
				})
				return err
			},
			reply:     "assistant_last.json",
			wantPath:  "/v1/analytics/proj/assistant",
			wantQuery: "cursor=01JH8Z7M9N8P7Q6R5S4T3V2W1X&" + dates + "&limit=1000",
		},
		{
			name: "AllAssistantConversations defaults to 1000 a page",
			call: func(c *Client) error {
				return firstErrOf(c.Analytics.AllAssistantConversations(t.Context(), "", AssistantConversationsParams{}))
			},
			reply:     "assistant_last.json",
			wantPath:  "/v1/analytics/proj/assistant",
			wantQuery: "limit=1000",
		},
		{
			name: "AssistantThread escapes the thread ID",
			call: func(c *Client) error {
				_, err := c.Analytics.AssistantThread(t.Context(), "team docs", "a/b?c")
				return err
			},
			reply:    "assistant_thread.json",
			wantPath: "/v1/analytics/team%20docs/assistant/threads/a%2Fb%3Fc",
		},
		{
			name: "AssistantCallerStats sends the dates only",
			call: func(c *Client) error {
				_, err := c.Analytics.AssistantCallerStats(t.Context(), "", AssistantCallerStatsParams{
					DateFrom: Instant(time.Date(2026, 1, 1, 12, 0, 0, 0, time.FixedZone("UTC+2", 2*3600))), DateTo: janDay(31),
				})
				return err
			},
			reply:     "assistant_caller_stats.json",
			wantPath:  "/v1/analytics/proj/assistant/caller-stats",
			wantQuery: "dateFrom=2026-01-01T10%3A00%3A00Z&dateTo=2026-01-31",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := newTestClient(t)
			stub := serveInOrder(t, mt, replyFixture(t, http.StatusOK, tt.reply))
			if err := tt.call(c); err != nil {
				t.Fatalf("call: %v", err)
			}
			want := []sentRequest{{Method: http.MethodGet, Path: tt.wantPath, Query: tt.wantQuery, Header: authorized}}
			if diff := cmp.Diff(want, stub.Requests(), onTheWire); diff != "" {
				t.Errorf("requests mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExportsRefuseInvalidArgumentsBeforeSending(t *testing.T) {
	reversed := func() (DateBound, DateBound) { return janDay(3), janDay(2) }
	from, to := reversed()
	tests := []struct {
		name string
		call exportCall
		want *ValidationError
	}{
		{"Visitors limit above 250", func(c *Client) error {
			_, err := c.Analytics.Visitors(t.Context(), "", VisitorsParams{Limit: 251})
			return err
		},
			&ValidationError{Param: "limit", Reason: "must be between 1 and 250, got 251"}},
		{"Visitors negative offset", func(c *Client) error {
			_, err := c.Analytics.Visitors(t.Context(), "", VisitorsParams{Offset: -1})
			return err
		},
			&ValidationError{Param: "offset", Reason: "must not be negative, got -1"}},
		{"AllVisitors dates reversed", func(c *Client) error {
			return firstErrOf(c.Analytics.AllVisitors(t.Context(), "", VisitorsParams{DateFrom: from, DateTo: to}))
		}, &ValidationError{Param: "dateFrom", Reason: "2026-01-03 is after dateTo 2026-01-02"}},
		{"AllVisitors prefetch with WithResponse", func(c *Client) error {
			return firstErrOf(c.Analytics.AllVisitors(t.Context(), "", VisitorsParams{}, WithPrefetch(2), WithResponse(new(Response))))
		}, &ValidationError{Param: "prefetch", Reason: "cannot be combined with WithResponse"}},
		{"Searches limit above 100", func(c *Client) error {
			_, err := c.Analytics.Searches(t.Context(), "", SearchesParams{Limit: 101})
			return err
		},
			&ValidationError{Param: "limit", Reason: "must be between 1 and 100, got 101"}},
		{"Searches negative limit", func(c *Client) error {
			_, err := c.Analytics.Searches(t.Context(), "", SearchesParams{Limit: -1})
			return err
		},
			&ValidationError{Param: "limit", Reason: "must be between 1 and 100, got -1"}},
		{"AllSearches dates reversed", func(c *Client) error {
			return firstErrOf(c.Analytics.AllSearches(t.Context(), "", SearchesParams{DateFrom: from, DateTo: to}))
		}, &ValidationError{Param: "dateFrom", Reason: "2026-01-03 is after dateTo 2026-01-02"}},
		{"AllSearches bad request option", func(c *Client) error {
			return firstErrOf(c.Analytics.AllSearches(t.Context(), "", SearchesParams{}, WithHeader("Authorization", "x")))
		}, &ValidationError{Param: "header", Reason: "Authorization is set by the client, not by WithHeader"}},
		{"Feedback limit above 100", func(c *Client) error {
			_, err := c.Analytics.Feedback(t.Context(), "", FeedbackParams{Limit: 101})
			return err
		},
			&ValidationError{Param: "limit", Reason: "must be between 1 and 100, got 101"}},
		{"Feedback empty status", func(c *Client) error {
			_, err := c.Analytics.Feedback(t.Context(), "", FeedbackParams{Status: []FeedbackStatus{FeedbackStatusPending, ""}})
			return err
		}, &ValidationError{Param: "status", Reason: "entry 1 is empty"}},
		{"AllFeedback status with a comma", func(c *Client) error {
			return firstErrOf(c.Analytics.AllFeedback(t.Context(), "", FeedbackParams{Status: []FeedbackStatus{"pending,resolved"}}))
		}, &ValidationError{Param: "status", Reason: `entry 0 ("pending,resolved") contains a comma, which separates statuses`}},
		{"AllFeedback dates reversed", func(c *Client) error {
			return firstErrOf(c.Analytics.AllFeedback(t.Context(), "", FeedbackParams{DateFrom: from, DateTo: to}))
		}, &ValidationError{Param: "dateFrom", Reason: "2026-01-03 is after dateTo 2026-01-02"}},
		{"FeedbackByPage limit above 100", func(c *Client) error {
			_, err := c.Analytics.FeedbackByPage(t.Context(), "", FeedbackByPageParams{Limit: 101})
			return err
		}, &ValidationError{Param: "limit", Reason: "must be between 1 and 100, got 101"}},
		{"FeedbackByPage empty status", func(c *Client) error {
			_, err := c.Analytics.FeedbackByPage(t.Context(), "", FeedbackByPageParams{Status: []FeedbackStatus{""}})
			return err
		}, &ValidationError{Param: "status", Reason: "entry 0 is empty"}},
		{"FeedbackByPage dates reversed", func(c *Client) error {
			_, err := c.Analytics.FeedbackByPage(t.Context(), "", FeedbackByPageParams{DateFrom: from, DateTo: to})
			return err
		}, &ValidationError{Param: "dateFrom", Reason: "2026-01-03 is after dateTo 2026-01-02"}},
		{"AssistantConversations limit above 1000", func(c *Client) error {
			_, err := c.Analytics.AssistantConversations(t.Context(), "", AssistantConversationsParams{Limit: 1001})
			return err
		}, &ValidationError{Param: "limit", Reason: "must be between 1 and 1000, got 1001"}},
		{"AllAssistantConversations dates reversed", func(c *Client) error {
			return firstErrOf(c.Analytics.AllAssistantConversations(t.Context(), "", AssistantConversationsParams{DateFrom: from, DateTo: to}))
		}, &ValidationError{Param: "dateFrom", Reason: "2026-01-03 is after dateTo 2026-01-02"}},
		{"AssistantThread empty ID", func(c *Client) error { _, err := c.Analytics.AssistantThread(t.Context(), "", ""); return err },
			&ValidationError{Param: "threadID", Reason: "is empty"}},
		{"AssistantThread dot-dot", func(c *Client) error { _, err := c.Analytics.AssistantThread(t.Context(), "", ".."); return err },
			&ValidationError{Param: "threadID", Reason: `must not be ".."`}},
		{"AssistantCallerStats dates reversed", func(c *Client) error {
			_, err := c.Analytics.AssistantCallerStats(t.Context(), "", AssistantCallerStatsParams{DateFrom: from, DateTo: to})
			return err
		}, &ValidationError{Param: "dateFrom", Reason: "2026-01-03 is after dateTo 2026-01-02"}},
		{"Searches project dot-dot", func(c *Client) error { _, err := c.Analytics.Searches(t.Context(), "..", SearchesParams{}); return err },
			&ValidationError{Param: "projectID", Reason: `must not be ".."`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := newTestClient(t)
			stub := serveInOrder(t, mt)
			err := tt.call(c)
			var vErr *ValidationError
			if !errors.As(err, &vErr) {
				t.Fatalf("error = %v (%T), want *ValidationError", err, err)
			}
			if diff := cmp.Diff(tt.want, vErr); diff != "" {
				t.Errorf("validation error mismatch (-want +got):\n%s", diff)
			}
			if !errors.Is(err, ErrInvalidParam) {
				t.Error("errors.Is(err, ErrInvalidParam) = false")
			}
			if n := len(stub.Requests()); n != 0 {
				t.Errorf("sent %d requests, want 0", n)
			}
		})
	}
}

// Every operation needs a project: the argument, else the client's default.
func TestExportsWithoutAProjectSendNothing(t *testing.T) {
	c, mt := newTestClientWithoutProject(t)
	stub := serveInOrder(t, mt)
	ctx := t.Context()
	calls := map[string]func() error{
		"Visitors":       func() error { _, err := c.Analytics.Visitors(ctx, "", VisitorsParams{}); return err },
		"AllVisitors":    func() error { return firstErrOf(c.Analytics.AllVisitors(ctx, "", VisitorsParams{})) },
		"Searches":       func() error { _, err := c.Analytics.Searches(ctx, "", SearchesParams{}); return err },
		"AllSearches":    func() error { return firstErrOf(c.Analytics.AllSearches(ctx, "", SearchesParams{})) },
		"Feedback":       func() error { _, err := c.Analytics.Feedback(ctx, "", FeedbackParams{}); return err },
		"AllFeedback":    func() error { return firstErrOf(c.Analytics.AllFeedback(ctx, "", FeedbackParams{})) },
		"FeedbackByPage": func() error { _, err := c.Analytics.FeedbackByPage(ctx, "", FeedbackByPageParams{}); return err },
		"AssistantConversations": func() error {
			_, err := c.Analytics.AssistantConversations(ctx, "", AssistantConversationsParams{})
			return err
		},
		"AllAssistantConversations": func() error {
			return firstErrOf(c.Analytics.AllAssistantConversations(ctx, "", AssistantConversationsParams{}))
		},
		"AssistantThread": func() error { _, err := c.Analytics.AssistantThread(ctx, "", "t1"); return err },
		"AssistantCallerStats": func() error {
			_, err := c.Analytics.AssistantCallerStats(ctx, "", AssistantCallerStatsParams{})
			return err
		},
	}
	for name, call := range calls {
		var vErr *ValidationError
		if err := call(); !errors.As(err, &vErr) || vErr.Param != "projectID" {
			t.Errorf("%s: error = %v, want a *ValidationError for projectID", name, err)
		}
	}
	if n := len(stub.Requests()); n != 0 {
		t.Errorf("sent %d requests, want 0", n)
	}
}

// decodedFixtures are the fixtures as the SDK's types must show them.
var decodedFixtures = map[string]any{
	"visitors_page1.json": &VisitorsPage{
		// total is de-duplicated: 17, not 12 + 9.
		Totals: VisitorCounts{Human: 12, AI: 9, Total: 17},
		Visitors: []PageVisitors{
			{Path: "/quickstart", Human: 7, AI: 5, Total: 10},
			{Path: "/api-reference/auth", Human: 5, AI: 4, Total: 9},
		},
		HasMore: true,
	},
	"visitors_page2.json": &VisitorsPage{
		Totals: VisitorCounts{Human: 12, AI: 9, Total: 17},
		// No total sent: zero, not human + ai, which would overstate it.
		Visitors: []PageVisitors{{Path: "/guides/llms-txt", Human: 0, AI: 2, Total: 0}},
	},
	"searches_page1.json": &SearchesPage{
		Searches: []Search{
			{Query: "authentication", Hits: 12, CTR: 0.25, TopClickedPage: "/api-reference/auth", LastSearchedAt: mustTime("2026-01-31T23:59:59.5Z")},
			{Query: "rate limit", Hits: 9007199254740993, CTR: 0, TopClickedPage: "", LastSearchedAt: mustTime("2026-01-30T08:00:00Z")},
		},
		TotalSearches: 9007199254741005,
		NextCursor:    "eyJvZmZzZXQiOjJ9",
	},
	"searches_last.json": &SearchesPage{
		Searches: []Search{
			{Query: "webhooks", Hits: 1, CTR: 1, TopClickedPage: "/guides/webhooks", LastSearchedAt: mustTime("2026-01-02T10:00:00Z")},
		},
		TotalSearches: 9007199254741005,
	},
	"feedback_page1.json": &FeedbackPage{
		Feedback: []FeedbackEntry{
			{ID: "fb_01", Path: "/quickstart", Comment: strPtr("The install step is missing the Windows command."),
				CreatedAt: mustTime("2026-01-05T09:30:00Z"), Source: FeedbackSourceContextual, Status: FeedbackStatusPending,
				Helpful: VoteNo, Contact: "ada@example.com"},
			{ID: "fb_02", Path: "/quickstart", Comment: strPtr(""), // an empty box, not a missing one
				CreatedAt: mustTime("2026-01-05T10:00:00Z"), Source: FeedbackSourceContextual, Status: FeedbackStatusResolved,
				Helpful: VoteYes},
			{ID: "fb_03", Path: "/api-reference/auth", Comment: strPtr("This example sends the key in the query string."),
				CreatedAt: mustTime("2026-01-06T12:00:00.123Z"), Source: FeedbackSourceCodeSnippet, Status: FeedbackStatusInProgress,
				Code: "curl https://api.example.com/v1/jobs?key=...", Lang: "bash"},
			{ID: "fb_04", Path: "/guides/llms-txt", Comment: strPtr("Links in llms.txt point to the old domain."),
				CreatedAt: mustTime("2026-01-07T00:00:00Z"), Source: FeedbackSourceAgent, Status: FeedbackStatusDismissed},
			{ID: "fb_05", Path: "/changelog", Source: FeedbackSourceThumbsOnly, Status: FeedbackStatusPending},
			{ID: "fb_06", Path: "/changelog", Comment: strPtr("Sent from the new widget."),
				CreatedAt: mustTime("2026-01-08T00:00:00Z"), Source: "widget", Status: "escalated"},
		},
		NextCursor: "fb_06",
		HasMore:    true,
	},
	"feedback_last.json": &FeedbackPage{
		Feedback: []FeedbackEntry{
			{ID: "fb_07", Path: "/sdk/go", Comment: strPtr("Which Go versions are supported?"),
				CreatedAt: mustTime("2026-01-09T00:00:00Z"), Source: FeedbackSourceCodeSnippet, Status: FeedbackStatusPending,
				Code: "go get github.com/docsapi/docsapi-go", Filename: "install.sh"},
		},
	},
	"feedback_by_page.json": &FeedbackByPageResult{
		Feedback: []PageFeedback{
			{Path: "/quickstart", ThumbsUp: 12, ThumbsDown: 3, Code: 0, Total: 15},
			{Path: "/api-reference/auth", ThumbsUp: 0, ThumbsDown: 1, Code: 2, Total: 3},
		},
		HasMore: true,
	},
	"assistant_page1.json": &AssistantConversationsPage{
		Conversations: []AssistantConversation{
			{ID: "01JH8Z5Q4R7V2W3X4Y5Z6A7B8C", Timestamp: mustTime("2026-01-10T14:00:00Z"),
				Query: "How do I rotate an admin key?", Response: "Create a new key, deploy it, then revoke the old one.",
				ResponseType:     AssistantResponseAnswer, // absent on the wire
				Sources:          []AssistantSource{{Title: "Keys", URL: "https://docs.example.com/keys"}},
				ResolutionStatus: AssistantAnswered, QueryCategory: "security", PageURL: "https://docs.example.com/keys"},
			{ID: "01JH8Z6A1B2C3D4E5F6G7H8J9K", Timestamp: mustTime("2026-01-10T15:00:00Z"),
				Query: "Does it work offline?", Response: "Which part do you mean: the server or the SDK?",
				ResponseType: AssistantResponseClarifyingQuestion, Sources: []AssistantSource{}, ResolutionStatus: AssistantUnanswered},
			{ID: "01JH8Z7M9N8P7Q6R5S4T3V2W1X", Timestamp: mustTime("2026-01-10T16:00:00Z"),
				Query: "Write my thesis", Response: "I can only help with these docs.",
				ResponseType: "refusal", Sources: []AssistantSource{}, ResolutionStatus: "out_of_scope"},
		},
		NextCursor: "01JH8Z7M9N8P7Q6R5S4T3V2W1X",
		HasMore:    true,
	},
	"assistant_last.json": &AssistantConversationsPage{
		Conversations: []AssistantConversation{
			{ID: "01JH8Z8Z8Z8Z8Z8Z8Z8Z8Z8Z8Z", Timestamp: mustTime("2026-01-11T00:00:00Z"),
				Query: "What is the rate limit?", Response: "100 analytics requests per organisation per hour.",
				ResponseType: AssistantResponseAnswer, Sources: []AssistantSource{{Title: "Limits", URL: "https://docs.example.com/limits"}},
				ResolutionStatus: AssistantAnswered, QueryCategory: "limits", PageURL: "https://docs.example.com/analytics"},
		},
	},
	"assistant_thread.json": &AssistantThread{
		ThreadID:  "01JH8Z5Q4R7V2W3X4Y5Z6A7B8C",
		CreatedAt: mustTime("2026-01-10T14:00:00Z"),
		Messages: []AssistantMessage{
			{ID: "m1", Role: AssistantRoleUser, Content: "How do I rotate an admin key?", CreatedAt: mustTime("2026-01-10T14:00:00Z")},
			{ID: "m2", Role: AssistantRoleAssistant, Content: "Create a new key, deploy it, then revoke the old one.", CreatedAt: mustTime("2026-01-10T14:00:02.5Z")},
			{ID: "m3", Role: "tool", Content: "search: keys", CreatedAt: mustTime("2026-01-10T14:00:01Z")},
		},
	},
	"assistant_caller_stats.json": &AssistantCallerStats{Web: 1200, API: 300, Other: 4, Total: 1504},
}

// newDecodeTarget returns a new, empty value of the type the fixture decodes into.
func newDecodeTarget(t *testing.T, name string) any {
	t.Helper()
	switch {
	case strings.HasPrefix(name, "visitors_"):
		return new(VisitorsPage)
	case strings.HasPrefix(name, "searches_"):
		return new(SearchesPage)
	case name == "feedback_by_page.json":
		return new(FeedbackByPageResult)
	case strings.HasPrefix(name, "feedback_"):
		return new(FeedbackPage)
	case name == "assistant_thread.json":
		return new(AssistantThread)
	case name == "assistant_caller_stats.json":
		return new(AssistantCallerStats)
	case strings.HasPrefix(name, "assistant_"):
		return new(AssistantConversationsPage)
	}
	t.Fatalf("no type for %s", name)
	return nil
}

func TestExportsDecodeFixtures(t *testing.T) {
	for name, want := range decodedFixtures {
		t.Run(name, func(t *testing.T) {
			got := newDecodeTarget(t, name)
			if err := json.Unmarshal(fixture(t, name), got); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("decoded mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// A 200 answer that is not the export's body (a proxy's "{}", another
// endpoint's answer) is an error naming what is missing, never an empty
// page that would end an export early.
func TestExportsRequireTheirFields(t *testing.T) {
	tests := []struct {
		into        any
		body, field string
	}{
		{new(VisitorsPage), `{}`, "totals"},
		{new(VisitorsPage), `{"totals":{},"hasMore":true}`, "visitors"},
		{new(VisitorsPage), `{"totals":{},"visitors":[]}`, "hasMore"},
		{new(SearchesPage), `{}`, "searches"},
		{new(SearchesPage), `{"searches":[],"totalSearches":0}`, "nextCursor"},
		{new(FeedbackPage), `{"nextCursor":null,"hasMore":false}`, "feedback"},
		{new(FeedbackPage), `{"feedback":[],"nextCursor":null}`, "hasMore"},
		{new(FeedbackByPageResult), `{"hasMore":false}`, "feedback"},
		{new(FeedbackByPageResult), `{"feedback":[]}`, "hasMore"},
		{new(AssistantConversationsPage), `{"hasMore":false}`, "conversations"},
		{new(AssistantConversationsPage), `{"conversations":[]}`, "hasMore"},
		{new(AssistantThread), `{"messages":[]}`, "threadId"},
		{new(AssistantThread), `{"threadId":"t"}`, "messages"},
		{new(AssistantCallerStats), `{}`, "web"},
		{new(AssistantCallerStats), `{"web":1,"api":1,"other":1,"total":null}`, "total"},
	}
	for _, tt := range tests {
		err := json.Unmarshal([]byte(tt.body), tt.into)
		if err == nil || !strings.Contains(err.Error(), `required field "`+tt.field+`"`) {
			t.Errorf("Unmarshal(%s) into %T: error = %v, want one naming the required field %q", tt.body, tt.into, err, tt.field)
		}
	}
}

// Decoding errors name the API's field, for counts as for every other type.
func TestExportsDecodeErrorsNameTheField(t *testing.T) {
	tests := []struct {
		into any
		body string
		want string
	}{
		{new(VisitorsPage), `{"totals":{"human":1.5},"visitors":[],"hasMore":false}`,
			`docsapi: visitors page field "totals.human": 1.5 is not a whole number`},
		{new(VisitorsPage), `{"totals":{},"visitors":[{"path":"/a","ai":-2}],"hasMore":false}`,
			`docsapi: visitors page field "visitors.ai": -2 is negative`},
		{new(SearchesPage), `{"searches":[{"searchQuery":"q","hits":1e30}],"nextCursor":null}`,
			`docsapi: searches page field "searches.hits": 1e30 is out of range`},
		{new(SearchesPage), `{"searches":[{"searchQuery":"q","ctr":"high"}],"nextCursor":null}`,
			`docsapi: searches page field "searches.ctr": expected a number, got JSON string`},
		{new(SearchesPage), `{"searches":[],"nextCursor":5}`,
			`docsapi: searches page field "nextCursor": expected a string, got JSON number`},
		{new(SearchesPage), `{"searches":[{"lastSearchedAt":"yesterday"}],"nextCursor":null}`,
			`docsapi: searches page field searches.lastSearchedAt: "yesterday" is not an ISO 8601 timestamp`},
		{new(FeedbackPage), `{"feedback":[{"id":"f","createdAt":"soon"}],"hasMore":false}`,
			`docsapi: feedback page field feedback.createdAt: "soon" is not an ISO 8601 timestamp`},
		{new(FeedbackPage), `{"feedback":[{"id":"f","helpful":"yes"}],"hasMore":false}`,
			`docsapi: feedback page field "feedback.helpful": expected a boolean, got JSON string`},
		{new(FeedbackPage), `{"feedback":[{"id":"f","contact":7}],"hasMore":false}`,
			`docsapi: feedback page field "feedback.contact": expected a string, got JSON number`},
		{new(FeedbackByPageResult), `{"feedback":[{"path":"/a","thumbsUp":0.5}],"hasMore":false}`,
			`docsapi: feedback by page field "feedback.thumbsUp": 0.5 is not a whole number`},
		{new(AssistantConversationsPage), `{"conversations":[{"timestamp":"noon"}],"hasMore":false}`,
			`docsapi: assistant conversations page field conversations.timestamp: "noon" is not an ISO 8601 timestamp`},
		{new(AssistantConversationsPage), `{"conversations":[{"sources":{}}],"hasMore":false}`,
			`docsapi: assistant conversations page field "conversations.sources": expected an array, got JSON object`},
		{new(AssistantThread), `{"threadId":"t","createdAt":"x","messages":[]}`,
			`docsapi: assistant thread field createdAt: "x" is not an ISO 8601 timestamp`},
		{new(AssistantThread), `{"threadId":"t","messages":[{"createdAt":"x"}]}`,
			`docsapi: assistant thread field messages.createdAt: "x" is not an ISO 8601 timestamp`},
		{new(AssistantThread), `[]`, `docsapi: assistant thread: expected an object, got JSON array`},
		{new(AssistantCallerStats), `{"web":true}`, `docsapi: assistant caller stats field "web": true is not a number`},
	}
	for _, tt := range tests {
		err := json.Unmarshal([]byte(tt.body), tt.into)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Unmarshal(%s) into %T:\nerror %v\nwant  %s", tt.body, tt.into, err, tt.want)
		}
	}
}

// Decoding replaces every field: nothing of an earlier value survives.
func TestExportsDecodeOverwritesStaleValues(t *testing.T) {
	stats := AssistantCallerStats{Web: 9, API: 9, Other: 9, Total: 9}
	if err := json.Unmarshal([]byte(`{"web":1,"api":2,"other":3,"total":6}`), &stats); err != nil {
		t.Fatal(err)
	}
	if stats != (AssistantCallerStats{Web: 1, API: 2, Other: 3, Total: 6}) {
		t.Errorf("stats = %+v", stats)
	}
	page := SearchesPage{NextCursor: "stale", TotalSearches: 9, Searches: []Search{{Query: "stale"}}}
	if err := json.Unmarshal([]byte(`{"searches":[],"nextCursor":null}`), &page); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(SearchesPage{Searches: []Search{}}, page); diff != "" {
		t.Errorf("page mismatch (-want +got):\n%s", diff)
	}
}

func TestKnownEnumValues(t *testing.T) {
	for _, tt := range []struct {
		name  string
		known bool
	}{
		{"code_snippet", FeedbackSource("code_snippet").Known()},
		{"contextual", FeedbackSource("contextual").Known()},
		{"agent", FeedbackSource("agent").Known()},
		{"thumbs_only", FeedbackSource("thumbs_only").Known()},
		{"pending", FeedbackStatus("pending").Known()},
		{"in_progress", FeedbackStatus("in_progress").Known()},
		{"resolved", FeedbackStatus("resolved").Known()},
		{"dismissed", FeedbackStatus("dismissed").Known()},
		{"answer", AssistantResponseType("answer").Known()},
		{"clarifying_question", AssistantResponseType("clarifying_question").Known()},
		{"answered", AssistantResolutionStatus("answered").Known()},
		{"unanswered", AssistantResolutionStatus("unanswered").Known()},
		{"user", AssistantRole("user").Known()},
		{"assistant", AssistantRole("assistant").Known()},
	} {
		if !tt.known {
			t.Errorf("%s: Known() = false, want true", tt.name)
		}
	}
	for _, unknown := range []bool{
		FeedbackSource("widget").Known(), FeedbackSource("").Known(),
		FeedbackStatus("escalated").Known(), AssistantResponseType("refusal").Known(),
		AssistantResolutionStatus("out_of_scope").Known(), AssistantRole("tool").Known(),
	} {
		if unknown {
			t.Error("an unknown value reports Known() = true")
		}
	}
}

// The analytics error body, with its details, comes back for every export;
// an unknown thread is ErrNotFound.
func TestExportsReturnAPIErrors(t *testing.T) {
	c, mt := newTestClient(t)
	serveInOrder(t, mt,
		replyFixture(t, http.StatusBadRequest, "views_error_400.json"),
		replyJSON(http.StatusNotFound, `{"error":"Thread not found"}`),
	)
	_, err := c.Analytics.Searches(t.Context(), "", SearchesParams{})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || !errors.Is(err, ErrBadRequest) || len(apiErr.Details) != 2 || apiErr.Path != "/v1/analytics/proj/searches" {
		t.Errorf("Searches: error = %v, want a 400 *APIError with two details", err)
	}
	thread, err := c.Analytics.AssistantThread(t.Context(), "", "01JH8Z5Q4R7V2W3X4Y5Z6A7B8C")
	if thread != nil || !errors.Is(err, ErrNotFound) {
		t.Errorf("AssistantThread: %v, %v; want nil and ErrNotFound", thread, err)
	}
}

// The one-page methods return nil and the error when a call fails.
func TestExportsOnePageMethodsReturnNilOnError(t *testing.T) {
	c, mt := newTestClient(t, WithMaxRetries(0))
	mt.RegisterNoResponder(httpmock.NewStringResponder(http.StatusForbidden, `{"error":"no read scope"}`))
	ctx := t.Context()
	results := map[string]func() (any, error){
		"Visitors": func() (any, error) { return c.Analytics.Visitors(ctx, "", VisitorsParams{}) },
		"Searches": func() (any, error) { return c.Analytics.Searches(ctx, "", SearchesParams{}) },
		"Feedback": func() (any, error) { return c.Analytics.Feedback(ctx, "", FeedbackParams{}) },
		"FeedbackByPage": func() (any, error) {
			return c.Analytics.FeedbackByPage(ctx, "", FeedbackByPageParams{})
		},
		"AssistantConversations": func() (any, error) {
			return c.Analytics.AssistantConversations(ctx, "", AssistantConversationsParams{})
		},
		"AssistantCallerStats": func() (any, error) {
			return c.Analytics.AssistantCallerStats(ctx, "", AssistantCallerStatsParams{})
		},
	}
	for name, call := range results {
		v, err := call()
		if !errors.Is(err, ErrForbidden) {
			t.Errorf("%s: error = %v, want ErrForbidden", name, err)
		}
		// A typed nil pointer in an interface is not == nil.
		if rv := reflect.ValueOf(v); !rv.IsNil() {
			t.Errorf("%s returned %+v with its error", name, v)
		}
	}
}

// The vote keeps yes, no and none apart, whatever the source: a
// thumbs-only entry's vote (which the self-hosted server sends) decodes as
// yes or no, and an entry without one, or with null, as unknown, never as
// "no". The entries come through AllFeedback from a double of the API.
func TestFeedbackVotes(t *testing.T) {
	c, mt := newTestClient(t)
	entry := func(id, source, extra string) string {
		return `{"id":"` + id + `","path":"/a","comment":null,"createdAt":null,"source":"` + source + `","status":"pending"` + extra + `}`
	}
	body := `{"feedback":[` + strings.Join([]string{
		entry("up", "thumbs_only", `,"helpful":true`),
		entry("down", "thumbs_only", `,"helpful":false`),
		entry("hosted-thumbs", "thumbs_only", ``),
		entry("contextual-none", "contextual", `,"contact":null`),
		entry("contextual-null", "contextual", `,"helpful":null,"contact":null`),
		entry("contextual-no", "contextual", `,"helpful":false,"contact":null`),
	}, ",") + `],"nextCursor":null,"hasMore":false}`
	serve(t, mt, on(http.MethodGet, "/v1/analytics/proj/feedback", replyJSON(http.StatusOK, body)))
	got := map[string]Vote{}
	for e, err := range c.Analytics.AllFeedback(t.Context(), "", FeedbackParams{}) {
		if err != nil {
			t.Fatal(err)
		}
		got[e.ID] = e.Helpful
	}
	want := map[string]Vote{"up": VoteYes, "down": VoteNo, "hosted-thumbs": VoteUnknown,
		"contextual-none": VoteUnknown, "contextual-null": VoteUnknown, "contextual-no": VoteNo}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("votes (-want +got):\n%s", diff)
	}
}

// A Vote prints as a word and encodes as the API's helpful, so that an
// entry written out with encoding/json and read back keeps its vote.
func TestVoteTextAndJSON(t *testing.T) {
	for _, tc := range []struct {
		v          Vote
		word, json string
	}{{VoteYes, "yes", "true"}, {VoteNo, "no", "false"}, {VoteUnknown, "unknown", "null"}} {
		if got := tc.v.String(); got != tc.word {
			t.Errorf("%d.String() = %q, want %q", tc.v, got, tc.word)
		}
		b, err := json.Marshal(tc.v)
		if err != nil || string(b) != tc.json {
			t.Errorf("json.Marshal(%v) = %s, %v; want %s", tc.v, b, err, tc.json)
		}
		back := Vote(9)
		if err := json.Unmarshal(b, &back); err != nil || back != tc.v {
			t.Errorf("json.Unmarshal(%s) = %v, %v; want %v", b, back, err, tc.v)
		}
	}
	entry := FeedbackEntry{ID: "a", Helpful: VoteNo}
	b, err := json.Marshal(entry)
	if err != nil || !strings.Contains(string(b), `"Helpful":false`) {
		t.Errorf("an entry encodes as %s, %v", b, err)
	}
	if s := Vote(7).String(); s != "Vote(7)" {
		t.Errorf("an unknown value prints as %q", s)
	}
	if _, err := json.Marshal(Vote(7)); err == nil {
		t.Error("an unknown value was encoded")
	}
	var v Vote
	if err := json.Unmarshal([]byte(`"yes"`), &v); err == nil {
		t.Error(`"yes" was decoded as a vote`)
	}
}
