package docsapi

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"time"
)

// MaxAssistantLimit is the largest page of the assistant conversations
// export, and the page size of AllAssistantConversations when
// AssistantConversationsParams.Limit is zero.
const MaxAssistantLimit = 1000

// AssistantResponseType says what kind of reply the assistant gave. The
// service may add types: an unknown one is kept as sent.
type AssistantResponseType string

// The response types the contract documents.
const (
	AssistantResponseAnswer             AssistantResponseType = "answer"
	AssistantResponseClarifyingQuestion AssistantResponseType = "clarifying_question"
)

// Known reports whether the type is one the contract documents.
func (t AssistantResponseType) Known() bool {
	return t == AssistantResponseAnswer || t == AssistantResponseClarifyingQuestion
}

// AssistantResolutionStatus says whether the assistant could answer. The
// service may add statuses: an unknown one is kept as sent.
type AssistantResolutionStatus string

// The resolution statuses the contract documents.
const (
	AssistantAnswered   AssistantResolutionStatus = "answered"
	AssistantUnanswered AssistantResolutionStatus = "unanswered"
)

// Known reports whether the status is one the contract documents.
func (s AssistantResolutionStatus) Known() bool {
	return s == AssistantAnswered || s == AssistantUnanswered
}

// AssistantRole says who wrote a message of a thread. The service may add
// roles: an unknown one is kept as sent.
type AssistantRole string

// The roles the contract documents.
const (
	AssistantRoleUser      AssistantRole = "user"
	AssistantRoleAssistant AssistantRole = "assistant"
)

// Known reports whether the role is one the contract documents.
func (r AssistantRole) Known() bool {
	return r == AssistantRoleUser || r == AssistantRoleAssistant
}

// AssistantConversationsParams selects the assistant's conversations. The
// zero value asks for the server's defaults, from the first page.
type AssistantConversationsParams struct {
	// DateFrom is the first instant counted (inclusive).
	DateFrom DateBound
	// DateTo is the end of the range (exclusive).
	DateTo DateBound
	// Limit is the page size, 1 to 1000. Zero leaves it to the server
	// (100) for AssistantConversations, and means 1000 for
	// AllAssistantConversations.
	Limit int
	// Cursor is where to start: the NextCursor of an earlier page (a
	// ULID), or "" for the first page.
	Cursor string
}

func (p AssistantConversationsParams) validate() error {
	if err := checkLimit(p.Limit, MaxAssistantLimit); err != nil {
		return err
	}
	return checkDates(p.DateFrom, p.DateTo)
}

func (p AssistantConversationsParams) query() string {
	q := dateQuery(p.DateFrom, p.DateTo)
	setPositive(q, "limit", p.Limit)
	setNonEmpty(q, "cursor", p.Cursor)
	return q.Encode()
}

// AssistantConversationsPage is one page of the assistant conversations
// export.
type AssistantConversationsPage struct {
	// Conversations holds one question and its reply each.
	Conversations []AssistantConversation
	// NextCursor asks for the next page; "" when the server sent null.
	NextCursor string
	// HasMore reports whether another page follows.
	HasMore bool
}

// AssistantConversation is one question put to the assistant and its reply.
// The nullable strings (QueryCategory, PageURL) decode null to "": neither
// has a meaningful empty value.
type AssistantConversation struct {
	// ID identifies the conversation.
	ID string
	// Timestamp is when the question was asked, in UTC.
	Timestamp time.Time
	// Query is the question.
	Query string
	// Response is the assistant's reply.
	Response string
	// ResponseType is the kind of reply: answer when the server left it
	// out, possibly a type the SDK does not know.
	ResponseType AssistantResponseType
	// Sources are the pages the reply cites.
	Sources []AssistantSource
	// ResolutionStatus says whether the question was answered, possibly a
	// status the SDK does not know.
	ResolutionStatus AssistantResolutionStatus
	// QueryCategory is the category the service gave the question, or "".
	QueryCategory string
	// PageURL is the page the question was asked from, or "".
	PageURL string
}

// AssistantSource is a page the assistant cited.
type AssistantSource struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

type assistantConversationWire struct {
	ID               string                    `json:"id"`
	Timestamp        *string                   `json:"timestamp"`
	Query            string                    `json:"query"`
	Response         string                    `json:"response"`
	ResponseType     *AssistantResponseType    `json:"responseType"`
	Sources          []AssistantSource         `json:"sources"`
	ResolutionStatus AssistantResolutionStatus `json:"resolutionStatus"`
	QueryCategory    *string                   `json:"queryCategory"`
	PageURL          *string                   `json:"pageUrl"`
}

type assistantPageWire struct {
	Conversations []assistantConversationWire `json:"conversations"`
	NextCursor    *string                     `json:"nextCursor"`
	HasMore       *bool                       `json:"hasMore"`
}

// UnmarshalJSON decodes a page in the API's shape. conversations and
// hasMore are required.
func (p *AssistantConversationsPage) UnmarshalJSON(b []byte) error { return p.decodeBody(b) }

func (p *AssistantConversationsPage) decodeBody(b []byte) error {
	const what = "assistant conversations page"
	var w assistantPageWire
	if err := decodeWire(what, b, &w); err != nil {
		return err
	}
	switch {
	case w.Conversations == nil:
		return missingField(what, "conversations")
	case w.HasMore == nil:
		return missingField(what, "hasMore")
	}
	page := AssistantConversationsPage{
		Conversations: make([]AssistantConversation, len(w.Conversations)),
		NextCursor:    deref(w.NextCursor),
		HasMore:       *w.HasMore,
	}
	for i, c := range w.Conversations {
		at, err := parseTimestamp(what, "conversations.timestamp", c.Timestamp)
		if err != nil {
			return err
		}
		kind := AssistantResponseAnswer // the contract's default when absent
		if c.ResponseType != nil {
			kind = *c.ResponseType
		}
		page.Conversations[i] = AssistantConversation{
			ID:               c.ID,
			Timestamp:        at,
			Query:            c.Query,
			Response:         c.Response,
			ResponseType:     kind,
			Sources:          c.Sources,
			ResolutionStatus: c.ResolutionStatus,
			QueryCategory:    deref(c.QueryCategory),
			PageURL:          deref(c.PageURL),
		}
		if page.Conversations[i].Sources == nil {
			page.Conversations[i].Sources = []AssistantSource{}
		}
	}
	*p = page
	return nil
}

// AssistantConversations returns one page of the questions put to the
// assistant and its replies: GET /v1/analytics/{projectId}/assistant. On the
// hosted service each call counts against the budget of 100 analytics
// requests per organisation per hour that every export shares. Pass the
// page's NextCursor as params.Cursor for the next page while HasMore is
// true, or use AllAssistantConversations.
func (s *AnalyticsService) AssistantConversations(ctx context.Context, projectID string, params AssistantConversationsParams, opts ...RequestOption) (*AssistantConversationsPage, error) {
	return getOne[AssistantConversationsPage](ctx, s.client, projectID, params, func(p string) string { return analyticsPath(p, "assistant") }, opts)
}

// AllAssistantConversations returns an iterator over the conversations of
// every page of GET /v1/analytics/{projectId}/assistant from params.Cursor
// on, following nextCursor while hasMore is true; 1000 conversations a
// request unless params.Limit says otherwise, each request counting against
// the hosted budget of 100 analytics requests per organisation per hour.
//
// It keeps the promises of AllFeedback: lazy, restartable, one error then
// stop, nothing sent after a break, an empty page or a repeated cursor ends
// it, params never changed.
func (s *AnalyticsService) AllAssistantConversations(ctx context.Context, projectID string, params AssistantConversationsParams, opts ...RequestOption) iter.Seq2[AssistantConversation, error] {
	project, err := s.client.project(projectID)
	if err == nil {
		err = params.validate()
	}
	if err != nil {
		return failed[AssistantConversation](err)
	}
	if params.Limit == 0 {
		params.Limit = MaxAssistantLimit
	}
	path := analyticsPath(project, "assistant")
	return cursorPager(ctx, "GET "+path, whileHasMore, params.Cursor, func(ctx context.Context, cursor string) ([]AssistantConversation, string, bool, error) {
		p := params
		p.Cursor = cursor
		var page AssistantConversationsPage
		req := apiRequest{method: http.MethodGet, path: path, query: p.query()}
		if err := s.client.do(ctx, req, opts, &page); err != nil {
			return nil, "", false, err
		}
		return page.Conversations, page.NextCursor, page.HasMore, nil
	})
}

// AssistantThread is a conversation with the assistant, message by message.
type AssistantThread struct {
	// ThreadID identifies the thread (a ULID).
	ThreadID string
	// CreatedAt is when the thread started, in UTC.
	CreatedAt time.Time
	// Messages are the thread's messages, in the server's order.
	Messages []AssistantMessage
}

// AssistantMessage is one message of a thread.
type AssistantMessage struct {
	// ID identifies the message.
	ID string
	// Role says who wrote it, possibly a role the SDK does not know.
	Role AssistantRole
	// Content is the message's text.
	Content string
	// CreatedAt is when it was written, in UTC.
	CreatedAt time.Time
}

type assistantMessageWire struct {
	ID        string        `json:"id"`
	Role      AssistantRole `json:"role"`
	Content   string        `json:"content"`
	CreatedAt *string       `json:"createdAt"`
}

type assistantThreadWire struct {
	ThreadID  *string                `json:"threadId"`
	CreatedAt *string                `json:"createdAt"`
	Messages  []assistantMessageWire `json:"messages"`
}

// UnmarshalJSON decodes a thread in the API's shape. threadId and messages
// are required.
func (t *AssistantThread) UnmarshalJSON(b []byte) error { return t.decodeBody(b) }

func (t *AssistantThread) decodeBody(b []byte) error {
	const what = "assistant thread"
	var w assistantThreadWire
	if err := decodeWire(what, b, &w); err != nil {
		return err
	}
	switch {
	case w.ThreadID == nil:
		return missingField(what, "threadId")
	case w.Messages == nil:
		return missingField(what, "messages")
	}
	created, err := parseTimestamp(what, "createdAt", w.CreatedAt)
	if err != nil {
		return err
	}
	thread := AssistantThread{ThreadID: *w.ThreadID, CreatedAt: created, Messages: make([]AssistantMessage, len(w.Messages))}
	for i, m := range w.Messages {
		at, err := parseTimestamp(what, "messages.createdAt", m.CreatedAt)
		if err != nil {
			return err
		}
		thread.Messages[i] = AssistantMessage{ID: m.ID, Role: m.Role, Content: m.Content, CreatedAt: at}
	}
	*t = thread
	return nil
}

// AssistantThread returns one conversation with the assistant, message by
// message: GET /v1/analytics/{projectId}/assistant/threads/{threadId}. On the
// hosted service each call counts against the budget of 100 analytics
// requests per organisation per hour that every export shares. A thread
// that does not exist yields an error matching ErrNotFound.
func (s *AnalyticsService) AssistantThread(ctx context.Context, projectID, threadID string, opts ...RequestOption) (*AssistantThread, error) {
	project, err := s.client.project(projectID)
	if err == nil {
		err = checkID("threadID", threadID)
	}
	if err != nil {
		return nil, err
	}
	thread := new(AssistantThread)
	req := apiRequest{method: http.MethodGet, path: analyticsPath(project, "assistant/threads/"+url.PathEscape(threadID))}
	if err := s.client.do(ctx, req, opts, thread); err != nil {
		return nil, err
	}
	return thread, nil
}

// AssistantCallerStatsParams selects the date range of the caller counts.
type AssistantCallerStatsParams struct {
	// DateFrom is the first instant counted (inclusive).
	DateFrom DateBound
	// DateTo is the end of the range (exclusive).
	DateTo DateBound
}

// AssistantCallerStats counts the assistant's questions by where they came
// from.
type AssistantCallerStats struct {
	// Web counts the questions asked on the documentation site.
	Web int64 `json:"web"`
	// API counts the questions asked through the API.
	API int64 `json:"api"`
	// Other counts the rest.
	Other int64 `json:"other"`
	// Total is the server's total, as sent.
	Total int64 `json:"total"`
}

type callerStatsWire struct {
	Web   count `json:"web"`
	API   count `json:"api"`
	Other count `json:"other"`
	Total count `json:"total"`
}

// UnmarshalJSON decodes the API's shape, counts in any JSON number form.
// All four counts are required: the answer has nothing else by which to
// tell it from another body.
func (s *AssistantCallerStats) UnmarshalJSON(b []byte) error { return s.decodeBody(b) }

func (s *AssistantCallerStats) decodeBody(b []byte) error {
	const what = "assistant caller stats"
	var w callerStatsWire
	if err := decodeWire(what, b, &w); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		c    count
	}{{"web", w.Web}, {"api", w.API}, {"other", w.Other}, {"total", w.Total}} {
		if !f.c.set {
			return missingField(what, f.name)
		}
	}
	*s = AssistantCallerStats{Web: w.Web.n, API: w.API.n, Other: w.Other.n, Total: w.Total.n}
	return nil
}

// AssistantCallerStats counts the assistant's questions by caller (the
// site, the API, other): GET /v1/analytics/{projectId}/assistant/caller-stats.
// On the hosted service each call counts against the budget of 100
// analytics requests per organisation per hour that every export shares.
func (s *AnalyticsService) AssistantCallerStats(ctx context.Context, projectID string, params AssistantCallerStatsParams, opts ...RequestOption) (*AssistantCallerStats, error) {
	project, err := s.client.project(projectID)
	if err == nil {
		err = checkDates(params.DateFrom, params.DateTo)
	}
	if err != nil {
		return nil, err
	}
	stats := new(AssistantCallerStats)
	q := dateQuery(params.DateFrom, params.DateTo).Encode()
	req := apiRequest{method: http.MethodGet, path: analyticsPath(project, "assistant/caller-stats"), query: q}
	if err := s.client.do(ctx, req, opts, stats); err != nil {
		return nil, err
	}
	return stats, nil
}
