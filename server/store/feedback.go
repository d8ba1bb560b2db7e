package store

import (
	"context"
	"time"
)

// FeedbackStore keeps what readers say about the documentation: one entry
// per piece of feedback, and the triage status operators move it through.
type FeedbackStore interface {
	// AddFeedback stores f as a new pending entry (see the function
	// AddFeedback) and returns it as stored. With f.DailyCap set, the
	// store counts the entries of each project's UTC day, and when the day
	// of f.CreatedAt holds that many already, nothing is stored and the
	// error is ErrFull. ErrConflict if the ID is taken (feedback IDs are
	// unique across projects); ErrNotFound if the project is.
	AddFeedback(ctx context.Context, f NewFeedback) (Feedback, error)
	// QueryFeedback returns one page of the entries q selects, newest
	// first: CreatedAt descending, then ID descending (bytes). With
	// q.After the page starts after that place in the order, whether or
	// not an entry still holds it, so entries added while a client pages
	// never shift the pages still to come. HasMore reports whether a
	// selected entry follows the page. Unknown projects give an empty page.
	QueryFeedback(ctx context.Context, q FeedbackQuery) (FeedbackPage, error)
	// FeedbackByPage counts the entries q selects per path (see
	// PageFeedback), ordered by Total descending, then Path ascending, and
	// returns the first q.Limit paths; HasMore reports whether more follow.
	FeedbackByPage(ctx context.Context, q FeedbackByPageQuery) (FeedbackByPage, error)
	// SetFeedbackStatus moves an entry to c.Status, as the function
	// SetFeedbackStatus says, and returns it as stored. ErrNotFound if the
	// project has no such entry.
	SetFeedbackStatus(ctx context.Context, c FeedbackStatusChange) (Feedback, error)
}

// ErrFull: a cap the caller set is reached: a project's UTC day holds as
// many feedback entries (or exchanges with the assistant) as the cap, or a
// thread as many exchanges. Nothing was stored; a day's cap has room again
// the next day.
const ErrFull Error = "the cap is reached"

// DefaultDailyFeedbackCap is the cap on feedback entries per project and
// UTC day that the server applies unless configured otherwise: far above
// what readers of a documentation site leave in a day, and a bound on what
// a script posting made-up feedback can make the store keep.
const DefaultDailyFeedbackCap = 10_000

// Feedback is one piece of feedback as stored. Source says which of the
// source-specific fields mean something: Helpful for contextual and
// thumbs-only feedback, Contact for contextual, Code, Filename and Lang
// for code snippets.
type Feedback struct {
	ID        string
	ProjectID string
	Path      string // the documentation page the feedback is about
	Source    FeedbackSource
	Status    FeedbackStatus
	Helpful   bool    // "was this page helpful?": yes or no
	Comment   *string // nil: no comment box was sent; "" an empty one
	Contact   string  // an e-mail address the reader left, or ""
	Code      string  // the code block
	Filename  string  // its file name, or ""
	Lang      string  // its language, or ""
	CreatedAt time.Time
	UpdatedAt time.Time // the last status change; CreatedAt until one
}

// NewFeedback is what AddFeedback stores.
type NewFeedback struct {
	ID        string
	ProjectID string
	Path      string
	Source    FeedbackSource
	Helpful   bool
	Comment   *string
	Contact   string
	Code      string
	Filename  string
	Lang      string
	CreatedAt time.Time
	// DailyCap, when positive, is the most entries the project's UTC day
	// of CreatedAt may hold (see DefaultDailyFeedbackCap); 0 is no cap.
	DailyCap int
}

// FeedbackKey is a place in the order of QueryFeedback: an entry's
// CreatedAt and ID.
type FeedbackKey struct {
	CreatedAt time.Time
	ID        string
}

// Key returns f's place in the order of QueryFeedback.
func (f Feedback) Key() FeedbackKey { return FeedbackKey{CreatedAt: f.CreatedAt, ID: f.ID} }

// FeedbackFilter selects entries: those of one project created in [From,
// To) (a zero bound leaves that side open), of Source ("" for any), in
// one of Statuses (empty for any) and about Path ("" for any; else that
// page exactly, byte for byte, so that "/a" never selects "/a/b").
type FeedbackFilter struct {
	ProjectID string
	From, To  time.Time
	Source    FeedbackSource
	Statuses  []FeedbackStatus
	Path      string
}

// FeedbackQuery asks QueryFeedback for a page.
type FeedbackQuery struct {
	FeedbackFilter
	Limit int          // entries per page, at least 1
	After *FeedbackKey // nil: the first page
}

// FeedbackPage is one page of QueryFeedback.
type FeedbackPage struct {
	Entries []Feedback
	HasMore bool
}

// FeedbackByPageQuery asks FeedbackByPage for the counts of at most Limit
// paths.
type FeedbackByPageQuery struct {
	FeedbackFilter
	Limit int // at least 1
}

// PageFeedback counts the selected entries of one path: ThumbsUp and
// ThumbsDown the contextual and thumbs-only entries that found the page
// helpful or not, Code the code-snippet entries, and Total every entry,
// agent feedback included.
type PageFeedback struct {
	Path                       string
	ThumbsUp, ThumbsDown, Code int64
	Total                      int64
}

// FeedbackByPage is the result of FeedbackByPage.
type FeedbackByPage struct {
	Rows    []PageFeedback
	HasMore bool
}

// FeedbackStatusChange asks SetFeedbackStatus to move the entry ID of
// ProjectID to Status at At.
type FeedbackStatusChange struct {
	ProjectID string
	ID        string
	Status    FeedbackStatus
	At        time.Time
}

// Created returns the entry Store.AddFeedback stores for n: pending,
// last updated when it was created.
func (n NewFeedback) Created() Feedback {
	return Feedback{
		ID:        n.ID,
		ProjectID: n.ProjectID,
		Path:      n.Path,
		Source:    n.Source,
		Status:    FeedbackStatusPending,
		Helpful:   n.Helpful,
		Comment:   n.Comment,
		Contact:   n.Contact,
		Code:      n.Code,
		Filename:  n.Filename,
		Lang:      n.Lang,
		CreatedAt: n.CreatedAt,
		UpdatedAt: n.CreatedAt,
	}
}

// WithStatus returns f as Store.SetFeedbackStatus leaves it, with
// changed true: in c.Status, last updated at c.At. An entry already in
// c.Status is returned as it is, with changed false, so that repeating a
// change does not move its UpdatedAt.
func (f Feedback) WithStatus(c FeedbackStatusChange) (entry Feedback, changed bool) {
	if f.Status == c.Status {
		return f, false
	}
	f.Status = c.Status
	f.UpdatedAt = c.At
	return f, true
}

// FeedbackDay returns the UTC day (its midnight) whose entries t counts
// among for the daily cap.
func FeedbackDay(t time.Time) time.Time { return t.UTC().Truncate(24 * time.Hour) }
