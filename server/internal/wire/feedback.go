package wire

// FeedbackEntry is one piece of feedback (the FeedbackEntry schema): the
// base fields every entry has, and groups of fields present or absent as a
// whole: Vote for contextual and thumbs_only entries, Contextual for
// contextual ones, CodeSnippet for code_snippet ones.
type FeedbackEntry struct {
	ID        string  `json:"id"`
	Path      string  `json:"path"`
	Comment   *string `json:"comment"` // null: no comment was sent
	CreatedAt *string `json:"createdAt"`
	Source    string  `json:"source"` // a FeedbackSource
	Status    string  `json:"status"` // a FeedbackStatus
	*Vote
	*Contextual
	*CodeSnippet
}

// Vote is the reader's answer to "was this page helpful?", which
// contextual and thumbs_only entries carry. A group of its own, since
// contextual entries share it with thumbs_only ones, which have no contact.
type Vote struct {
	Helpful bool `json:"helpful"`
}

// Contextual is the fields of a contextual entry besides its Vote.
type Contextual struct {
	Contact *string `json:"contact"`
}

// CodeSnippet is the fields of a code_snippet entry.
type CodeSnippet struct {
	Code     string  `json:"code"`
	Filename *string `json:"filename"`
	Lang     *string `json:"lang"`
}

// FeedbackPage is one page of the feedback export (the FeedbackPage
// schema).
type FeedbackPage struct {
	Feedback   []FeedbackEntry `json:"feedback"`
	NextCursor *string         `json:"nextCursor"`
	HasMore    bool            `json:"hasMore"`
}

// FeedbackByPage is the feedback counts per path (the FeedbackByPage
// schema).
type FeedbackByPage struct {
	Feedback []PageFeedback `json:"feedback"`
	HasMore  bool           `json:"hasMore"`
}

// PageFeedback counts the feedback of one path (the PageFeedback schema).
type PageFeedback struct {
	Path       string `json:"path"`
	ThumbsUp   int64  `json:"thumbsUp"`
	ThumbsDown int64  `json:"thumbsDown"`
	Code       int64  `json:"code"`
	Total      int64  `json:"total"`
}
