package store

import (
	"context"
	"time"
)

// ConversationStore keeps what readers asked the assistant and what it
// answered: threads, each a run of exchanges (a question and its answer),
// the tokens each project's model spent per UTC day, and the links from
// the content gaps an operator turned into agent jobs to those jobs. The
// hosted assistant exports (conversations, a thread, caller statistics)
// read it.
type ConversationStore interface {
	// AddExchange stores e. With thread non-nil, the thread is created in
	// the same transaction (ErrConflict if its ID is taken; ErrNotFound if
	// the project is; its ProjectID and ID must be e's, ErrInvalid
	// otherwise). Otherwise e.ThreadID must name a thread of e.ProjectID
	// (ErrNotFound otherwise, a thread of another project included). The
	// checks of e and thread are ValidateAddExchange's.
	//
	// Two caps bound what traffic can store, checked in the transaction:
	// a thread holds at most e.ThreadCap exchanges, and a project's UTC
	// day (of e.AskedAt) at most e.DailyCap; when either is reached,
	// nothing is stored and the error is ErrFull. A cap of 0 is no cap.
	// ErrConflict if e.ID or e.QuestionID is taken (they are unique
	// across projects, and across questions and answers).
	AddExchange(ctx context.Context, e Exchange, thread *Thread) error

	// Thread returns the thread id of project projectID, with Exchanges
	// filled, or ErrNotFound (a thread of another project included).
	Thread(ctx context.Context, projectID, id string) (Thread, error)

	// ThreadExchanges returns the thread's exchanges in the order they
	// were added (AskedAt, then ID), or ErrNotFound as Thread does.
	ThreadExchanges(ctx context.Context, projectID, id string) ([]Exchange, error)

	// QueryConversations returns one page of a project's exchanges whose
	// AskedAt falls in [q.From, q.To), ordered by ID ascending (IDs are
	// ULIDs, so this is the order they were asked in), or with q.Newest
	// descending. With q.After the page holds the IDs that follow it in
	// that order: greater than it, or with q.Newest less. q.Resolution,
	// when set, keeps only the exchanges of that resolution. HasMore
	// reports whether an exchange follows the page in its order. Unknown
	// projects give an empty page.
	QueryConversations(ctx context.Context, q ConversationsQuery) (ConversationsPage, error)

	// CallerStats counts a project's exchanges asked in [from, to) by
	// the kind of caller that asked.
	CallerStats(ctx context.Context, projectID string, from, to time.Time) (CallerCounts, error)

	// AddAssistantTokens adds n (> 0) to the tokens the project's model
	// spent on the UTC day of at; AssistantTokens reads that sum (0 for a
	// day or project with none). They bound what readers can cost a
	// project in a day.
	AddAssistantTokens(ctx context.Context, projectID string, at time.Time, n int64) error
	AssistantTokens(ctx context.Context, projectID string, day time.Time) (int64, error)

	// DeleteConversationsBefore deletes every project's exchanges asked
	// before t, threads left with none (the others' Exchanges count what
	// they keep), and token days (and the daily cap's counts) before t's
	// UTC day, and returns how many exchanges it deleted. It is the
	// retention of the privacy notes.
	DeleteConversationsBefore(ctx context.Context, t time.Time) (int, error)

	// LinkGaps records that job JobID was made from the gaps ls, all of
	// one project, in one transaction; a link stored already is kept as
	// it is. ErrNotFound, and nothing stored, if a link's job is not the
	// project's; ErrInvalid for no links (see ValidateLinkGaps).
	LinkGaps(ctx context.Context, ls []GapLink) error
	// GapLinks returns a project's links, ordered by CreatedAt, then
	// JobID, Kind and Key.
	GapLinks(ctx context.Context, projectID string) ([]GapLink, error)
}

// Thread is a conversation with the assistant: the exchanges asked under
// one thread ID. Only its creator can continue it or read it from the
// public endpoint, by the thread key, whose SHA-256 alone is kept.
type Thread struct {
	ID        string // a ULID
	ProjectID string
	KeyHash   []byte     // SHA-256 of the thread's key
	Fp        string     // the request's fp: "anonymous" or the reader's ID, as sent
	Caller    CallerKind // who opened it
	CreatedAt time.Time
	// Exchanges is how many exchanges the thread holds (filled by
	// Thread; ignored by AddExchange).
	Exchanges int
}

// Exchange is one question to the assistant and its answer: a row of the
// conversations export, and two messages of its thread.
type Exchange struct {
	// ID is the exchange's ID in the conversations export and the
	// answer's message ID in the thread export; QuestionID is the
	// question's message ID. Both are ULIDs.
	ID         string
	QuestionID string
	ProjectID  string
	ThreadID   string

	Question   string // the reader's text, as asked
	AskedAt    time.Time
	Answer     string // the text streamed back, as sent
	AnsweredAt time.Time

	ResponseType ResponseType
	Resolution   Resolution
	Sources      []Source // the pages retrieval found, best first
	// PageURL is the page the question was asked from (the request's
	// currentPath), or "".
	PageURL string
	Caller  CallerKind

	// ThreadCap and DailyCap are AddExchange's caps (0: none); they are
	// not stored.
	ThreadCap int
	DailyCap  int
}

// Source is a page an answer drew on, as the conversations export lists it.
type Source struct {
	Title string
	URL   string
}

// ResponseType is what kind of reply an exchange got.
type ResponseType string

// The response types of the hosted export.
const (
	ResponseAnswer             ResponseType = "answer"
	ResponseClarifyingQuestion ResponseType = "clarifying_question"
)

// Resolution says whether the docs held what the question asked.
type Resolution string

// The resolutions of the hosted export.
const (
	Answered   Resolution = "answered"
	Unanswered Resolution = "unanswered"
)

// CallerKind is who asked: a web page (the widget, or any browser
// origin), a program with the key and no origin, or something else.
type CallerKind string

// The caller kinds of the hosted caller statistics.
const (
	CallerWeb   CallerKind = "web"
	CallerAPI   CallerKind = "api"
	CallerOther CallerKind = "other"
)

// ConversationsQuery selects a page of QueryConversations.
type ConversationsQuery struct {
	ProjectID  string
	From, To   time.Time // AskedAt in [From, To)
	After      string    // an exchange ID; "" for the first page
	Limit      int       // 1..MaxConversationsLimit
	Resolution Resolution
	// Newest pages from the newest exchange back, for people who read
	// today's questions first; the export keeps the hosted order, oldest
	// first.
	Newest bool
}

// MaxConversationsLimit is the largest page of QueryConversations, the
// hosted export's largest limit.
const MaxConversationsLimit = 1000

// ConversationsPage is one page of QueryConversations.
type ConversationsPage struct {
	Exchanges []Exchange
	HasMore   bool
}

// CallerCounts counts exchanges by caller kind.
type CallerCounts struct {
	Web, API, Other int64
}

// Total is the sum of the three counts.
func (c CallerCounts) Total() int64 { return c.Web + c.API + c.Other }

// GapKind is what a content gap is made of.
type GapKind string

// The kinds of content gaps.
const (
	GapQuestion GapKind = "question" // a question the assistant could not answer from the docs
	GapSearch   GapKind = "search"   // a search no result of which was opened
	GapPage     GapKind = "page"     // a page readers voted down
)

// GapLink ties a content gap to the agent job made from it. Key names the
// gap within its kind: the normalised question or query (NormaliseQuery),
// or the page's path.
type GapLink struct {
	ProjectID string
	Kind      GapKind
	Key       string
	JobID     string
	CreatedAt time.Time
}
