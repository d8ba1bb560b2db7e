package docsapi

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Page size bounds of the feedback exports.
const (
	// MaxFeedbackLimit is the largest page of the feedback export, and the
	// page size of AllFeedback when FeedbackParams.Limit is zero.
	MaxFeedbackLimit = 100
	// MaxFeedbackByPageLimit is the most paths FeedbackByPage returns.
	MaxFeedbackByPageLimit = 100
)

// FeedbackSource is where a piece of feedback was given. The service may add
// sources: an unknown one is kept as sent, and can be sent as a filter.
type FeedbackSource string

// The sources the contract documents.
const (
	FeedbackSourceCodeSnippet FeedbackSource = "code_snippet" // about a code block: Code, Filename, Lang
	FeedbackSourceContextual  FeedbackSource = "contextual"   // the page's feedback form: Helpful, Contact
	FeedbackSourceAgent       FeedbackSource = "agent"        // left by an AI agent
	FeedbackSourceThumbsOnly  FeedbackSource = "thumbs_only"  // a thumbs up or down without a form: Helpful, when sent
)

// Known reports whether the source is one the contract documents.
func (s FeedbackSource) Known() bool {
	switch s {
	case FeedbackSourceCodeSnippet, FeedbackSourceContextual, FeedbackSourceAgent, FeedbackSourceThumbsOnly:
		return true
	}
	return false
}

// FeedbackStatus is where a piece of feedback stands in its triage. The
// service may add statuses: an unknown one is kept as sent, and can be sent
// as a filter.
type FeedbackStatus string

// The statuses the contract documents.
const (
	FeedbackStatusPending    FeedbackStatus = "pending"
	FeedbackStatusInProgress FeedbackStatus = "in_progress"
	FeedbackStatusResolved   FeedbackStatus = "resolved"
	FeedbackStatusDismissed  FeedbackStatus = "dismissed"
)

// Known reports whether the status is one the contract documents.
func (s FeedbackStatus) Known() bool {
	switch s {
	case FeedbackStatusPending, FeedbackStatusInProgress, FeedbackStatusResolved, FeedbackStatusDismissed:
		return true
	}
	return false
}

// Vote is a reader's answer to "was this page helpful?". Its zero value,
// VoteUnknown, stands for no answer sent: a plain bool would read a missing
// vote as "no".
type Vote int8

// The answers a Vote holds.
const (
	// VoteUnknown: the server sent no vote (or null). The hosted service
	// sends none on thumbs-only entries, though the reader voted.
	VoteUnknown Vote = iota
	// VoteYes: the page was helpful (a thumbs up).
	VoteYes
	// VoteNo: the page was not helpful (a thumbs down).
	VoteNo
)

// voteOf is the Vote of the wire's helpful: nil is VoteUnknown.
func voteOf(helpful *bool) Vote {
	switch {
	case helpful == nil:
		return VoteUnknown
	case *helpful:
		return VoteYes
	}
	return VoteNo
}

// String returns "yes", "no" or "unknown".
func (v Vote) String() string {
	switch v {
	case VoteYes:
		return "yes"
	case VoteNo:
		return "no"
	case VoteUnknown:
		return "unknown"
	}
	return "Vote(" + strconv.Itoa(int(v)) + ")"
}

// MarshalJSON writes the vote as the API does: true, false, or null for
// VoteUnknown, so that an entry encoded with encoding/json keeps the
// three answers apart.
func (v Vote) MarshalJSON() ([]byte, error) {
	switch v {
	case VoteYes:
		return []byte("true"), nil
	case VoteNo:
		return []byte("false"), nil
	case VoteUnknown:
		return []byte("null"), nil
	}
	return nil, fmt.Errorf("docsapi: cannot encode %v", v)
}

// UnmarshalJSON reads true, false or null, as MarshalJSON writes them.
func (v *Vote) UnmarshalJSON(b []byte) error {
	var helpful *bool
	if err := json.Unmarshal(b, &helpful); err != nil {
		return fmt.Errorf("docsapi: a vote is true, false or null: %w", err)
	}
	*v = voteOf(helpful)
	return nil
}

// FeedbackParams selects feedback entries. The zero value asks for every
// source and status, with the server's defaults, from the first page.
type FeedbackParams struct {
	// DateFrom is the first instant counted (inclusive).
	DateFrom DateBound
	// DateTo is the end of the range (exclusive).
	DateTo DateBound
	// Limit is the page size, 1 to 100. Zero leaves it to the server (50)
	// for Feedback, and means 100 for AllFeedback.
	Limit int
	// Cursor is where to start: the NextCursor of an earlier page, or ""
	// for the first page.
	Cursor string
	// Source keeps only the entries of one source; "" keeps all.
	Source FeedbackSource
	// Status keeps only the entries in one of these statuses; empty keeps
	// all. It is sent as one comma-separated value.
	Status []FeedbackStatus
}

func (p FeedbackParams) validate() error {
	if err := checkLimit(p.Limit, MaxFeedbackLimit); err != nil {
		return err
	}
	if err := checkStatuses(p.Status); err != nil {
		return err
	}
	return checkDates(p.DateFrom, p.DateTo)
}

func (p FeedbackParams) query() string {
	q := dateQuery(p.DateFrom, p.DateTo)
	setPositive(q, "limit", p.Limit)
	setNonEmpty(q, "cursor", p.Cursor)
	setFeedbackFilters(q, p.Source, p.Status)
	return q.Encode()
}

// checkStatuses refuses a status that the comma-separated list cannot
// carry. Unknown statuses pass: the service may know them.
func checkStatuses[S ~string](statuses []S) error {
	for i, s := range statuses {
		switch {
		case s == "":
			return invalid("status", "entry %d is empty", i)
		case strings.Contains(string(s), ","):
			return invalid("status", "entry %d (%q) contains a comma, which separates statuses", i, s)
		}
	}
	return nil
}

func setFeedbackFilters(q url.Values, source FeedbackSource, statuses []FeedbackStatus) {
	setNonEmpty(q, "source", string(source))
	setStatuses(q, statuses)
}

// setStatuses sets status to the comma-separated list of statuses, if any.
func setStatuses[S ~string](q url.Values, statuses []S) {
	if len(statuses) > 0 {
		names := make([]string, len(statuses))
		for i, s := range statuses {
			names[i] = string(s)
		}
		q.Set("status", strings.Join(names, ","))
	}
}

// FeedbackPage is one page of the feedback export.
type FeedbackPage struct {
	// Feedback holds the entries, in the server's order.
	Feedback []FeedbackEntry
	// NextCursor asks for the next page; "" when the server sent null.
	NextCursor string
	// HasMore reports whether another page follows.
	HasMore bool
}

// FeedbackEntry is one piece of feedback. Every source shares one type:
// Source says which of the source-specific fields are meaningful. Every
// field the server sent is kept, whatever the source, so the fields of
// another source are zero unless the server sent them too.
//
// Nullable fields follow one rule: free text the reader wrote (Comment)
// keeps null apart from "" as a nil pointer, since "left the box empty" and
// "had no box" differ in a report; for the other nullable strings (Contact,
// Filename, Lang) null carries nothing that "" does not, and decodes to "".
// A null or absent helpful is VoteUnknown, apart from either answer. A null
// CreatedAt is the zero time.
type FeedbackEntry struct {
	// ID identifies the entry.
	ID string
	// Path is the documentation page the feedback is about.
	Path string
	// Comment is the text left with the feedback; nil when the server sent
	// null (thumbs-only feedback has none).
	Comment *string
	// CreatedAt is when the feedback was given, in UTC; zero when unknown.
	CreatedAt time.Time
	// Source is where the feedback was given; it may be a source the SDK
	// does not know (see FeedbackSource.Known).
	Source FeedbackSource
	// Status is the entry's triage status, possibly one the SDK does not know.
	Status FeedbackStatus

	// Helpful is the reader's answer to "was this page helpful?":
	// VoteYes, VoteNo, or VoteUnknown when the server sent none. The
	// hosted service sends it on contextual feedback; the self-hosted
	// server on thumbs-only feedback too.
	Helpful Vote
	// Contact is the e-mail address the reader left, or "" (contextual
	// feedback only).
	Contact string

	// Code is the code block the feedback is about (code-snippet feedback
	// only).
	Code string
	// Filename is the code block's file name, or "" (code-snippet only).
	Filename string
	// Lang is the code block's language, or "" (code-snippet only).
	Lang string
}

// feedbackEntryWire is FeedbackEntry on the wire. Every field may be null,
// or absent where the source has no such field.
type feedbackEntryWire struct {
	ID        string         `json:"id"`
	Path      string         `json:"path"`
	Comment   *string        `json:"comment"`
	CreatedAt *string        `json:"createdAt"`
	Source    FeedbackSource `json:"source"`
	Status    FeedbackStatus `json:"status"`
	Helpful   *bool          `json:"helpful"`
	Contact   *string        `json:"contact"`
	Code      *string        `json:"code"`
	Filename  *string        `json:"filename"`
	Lang      *string        `json:"lang"`
}

type feedbackPageWire struct {
	Feedback   []feedbackEntryWire `json:"feedback"`
	NextCursor *string             `json:"nextCursor"`
	HasMore    *bool               `json:"hasMore"`
}

func (w *feedbackEntryWire) entry(what string) (FeedbackEntry, error) {
	created, err := parseTimestamp(what, "feedback.createdAt", w.CreatedAt)
	if err != nil {
		return FeedbackEntry{}, err
	}
	e := FeedbackEntry{
		ID:        w.ID,
		Path:      w.Path,
		Comment:   w.Comment,
		CreatedAt: created,
		Source:    w.Source,
		Status:    w.Status,
		Helpful:   voteOf(w.Helpful),
		Contact:   deref(w.Contact),
		Code:      deref(w.Code),
		Filename:  deref(w.Filename),
		Lang:      deref(w.Lang),
	}
	return e, nil
}

// UnmarshalJSON decodes a page in the API's shape, entries of every source
// alike. feedback and hasMore are required.
func (p *FeedbackPage) UnmarshalJSON(b []byte) error { return p.decodeBody(b) }

func (p *FeedbackPage) decodeBody(b []byte) error {
	const what = "feedback page"
	var w feedbackPageWire
	if err := decodeWire(what, b, &w); err != nil {
		return err
	}
	switch {
	case w.Feedback == nil:
		return missingField(what, "feedback")
	case w.HasMore == nil:
		return missingField(what, "hasMore")
	}
	page := FeedbackPage{Feedback: make([]FeedbackEntry, len(w.Feedback)), NextCursor: deref(w.NextCursor), HasMore: *w.HasMore}
	for i := range w.Feedback {
		e, err := w.Feedback[i].entry(what)
		if err != nil {
			return err
		}
		page.Feedback[i] = e
	}
	*p = page
	return nil
}

// Feedback returns one page of feedback entries: GET
// /v1/analytics/{projectId}/feedback. On the hosted service each call counts
// against the budget of 100 analytics requests per organisation per hour
// that every export shares. Pass the page's NextCursor as params.Cursor for
// the next page while HasMore is true, or use AllFeedback.
func (s *AnalyticsService) Feedback(ctx context.Context, projectID string, params FeedbackParams, opts ...RequestOption) (*FeedbackPage, error) {
	return getOne[FeedbackPage](ctx, s.client, projectID, params, func(p string) string { return analyticsPath(p, "feedback") }, opts)
}

// AllFeedback returns an iterator over the entries of every page of GET
// /v1/analytics/{projectId}/feedback from params.Cursor on, following
// nextCursor while hasMore is true; 100 entries a request unless
// params.Limit says otherwise, each request counting against the hosted
// budget of 100 analytics requests per organisation per hour.
//
// It keeps the promises of AllSearches: lazy, restartable, one error then
// stop, nothing sent after a break, an empty page or a repeated cursor ends
// it, params never changed (Status included). A page that says hasMore
// without a nextCursor is an error.
func (s *AnalyticsService) AllFeedback(ctx context.Context, projectID string, params FeedbackParams, opts ...RequestOption) iter.Seq2[FeedbackEntry, error] {
	project, err := s.client.project(projectID)
	if err == nil {
		err = params.validate()
	}
	if err != nil {
		return failed[FeedbackEntry](err)
	}
	if params.Limit == 0 {
		params.Limit = MaxFeedbackLimit
	}
	// The iterator outlives this call: its own copy of the list keeps a
	// caller's later change to theirs out of the pages still to come.
	params.Status = slices.Clone(params.Status)
	path := analyticsPath(project, "feedback")
	return cursorPager(ctx, "GET "+path, whileHasMore, params.Cursor, func(ctx context.Context, cursor string) ([]FeedbackEntry, string, bool, error) {
		p := params
		p.Cursor = cursor
		var page FeedbackPage
		req := apiRequest{method: http.MethodGet, path: path, query: p.query()}
		if err := s.client.do(ctx, req, opts, &page); err != nil {
			return nil, "", false, err
		}
		return page.Feedback, page.NextCursor, page.HasMore, nil
	})
}

// FeedbackByPageParams selects the feedback counts per documentation page.
type FeedbackByPageParams struct {
	// DateFrom is the first instant counted (inclusive).
	DateFrom DateBound
	// DateTo is the end of the range (exclusive).
	DateTo DateBound
	// Limit is how many paths to return, 1 to 100; zero leaves it to the
	// server (10). The export has no offset or cursor: HasMore only says
	// that paths were left out.
	Limit int
	// Source counts only the feedback of one source; "" counts all.
	Source FeedbackSource
	// Status counts only the feedback in one of these statuses; empty
	// counts all. It is sent as one comma-separated value.
	Status []FeedbackStatus
}

func (p FeedbackByPageParams) validate() error {
	if err := checkLimit(p.Limit, MaxFeedbackByPageLimit); err != nil {
		return err
	}
	if err := checkStatuses(p.Status); err != nil {
		return err
	}
	return checkDates(p.DateFrom, p.DateTo)
}

func (p FeedbackByPageParams) query() string {
	q := dateQuery(p.DateFrom, p.DateTo)
	setPositive(q, "limit", p.Limit)
	setFeedbackFilters(q, p.Source, p.Status)
	return q.Encode()
}

// FeedbackByPageResult is the feedback counted per documentation page.
type FeedbackByPageResult struct {
	// Feedback holds one row per path, in the server's order.
	Feedback []PageFeedback
	// HasMore reports that more paths have feedback than Limit allowed.
	HasMore bool
}

// PageFeedback counts the feedback on one documentation page.
type PageFeedback struct {
	Path string `json:"path"`
	// ThumbsUp and ThumbsDown count the helpful and unhelpful votes.
	ThumbsUp   int64 `json:"thumbsUp"`
	ThumbsDown int64 `json:"thumbsDown"`
	// Code counts the feedback on the page's code blocks.
	Code int64 `json:"code"`
	// Total is the server's total for the page, as sent.
	Total int64 `json:"total"`
}

type pageFeedbackWire struct {
	Path       string `json:"path"`
	ThumbsUp   count  `json:"thumbsUp"`
	ThumbsDown count  `json:"thumbsDown"`
	Code       count  `json:"code"`
	Total      count  `json:"total"`
}

type feedbackByPageWire struct {
	Feedback []pageFeedbackWire `json:"feedback"`
	HasMore  *bool              `json:"hasMore"`
}

// UnmarshalJSON decodes the API's shape, counts in any JSON number form.
// feedback and hasMore are required.
func (r *FeedbackByPageResult) UnmarshalJSON(b []byte) error { return r.decodeBody(b) }

func (r *FeedbackByPageResult) decodeBody(b []byte) error {
	const what = "feedback by page"
	var w feedbackByPageWire
	if err := decodeWire(what, b, &w); err != nil {
		return err
	}
	switch {
	case w.Feedback == nil:
		return missingField(what, "feedback")
	case w.HasMore == nil:
		return missingField(what, "hasMore")
	}
	res := FeedbackByPageResult{Feedback: make([]PageFeedback, len(w.Feedback)), HasMore: *w.HasMore}
	for i, f := range w.Feedback {
		res.Feedback[i] = PageFeedback{Path: f.Path, ThumbsUp: f.ThumbsUp.n, ThumbsDown: f.ThumbsDown.n, Code: f.Code.n, Total: f.Total.n}
	}
	*r = res
	return nil
}

// FeedbackByPage returns the feedback counted per documentation page: GET /v1/analytics/{projectId}/feedback/by-page. On the hosted
// service each call counts against the budget of 100 analytics requests per
// organisation per hour that every export shares. The export does not page:
// when HasMore is true, ask again with a larger Limit (at most 100).
func (s *AnalyticsService) FeedbackByPage(ctx context.Context, projectID string, params FeedbackByPageParams, opts ...RequestOption) (*FeedbackByPageResult, error) {
	project, err := s.client.project(projectID)
	if err == nil {
		err = params.validate()
	}
	if err != nil {
		return nil, err
	}
	res := new(FeedbackByPageResult)
	req := apiRequest{method: http.MethodGet, path: analyticsPath(project, "feedback/by-page"), query: params.query()}
	if err := s.client.do(ctx, req, opts, res); err != nil {
		return nil, err
	}
	return res, nil
}
