package pages

import "github.com/docsapi/docsapi-go/server/store"

// FeedbackPage is a page of a project's feedback, newest first, under the
// filters asked for, with the thumbs of the pages that have the most
// feedback under the same filters.
type FeedbackPage struct {
	Frame
	// The filters, "" for any, and the choices of the first two.
	Status, Source, Path string
	Statuses             []store.FeedbackStatus
	Sources              []store.FeedbackSource
	Entries              []store.Feedback
	Next                 string // the next page's URL, "" on the last
	First                string // the first page's URL, "" on it
	Thumbs               []store.PageFeedback
	ThumbsMore           bool   // more pages have feedback than Thumbs lists
	Problem              string // what is wrong with the filters asked for
	// CanWrite says the key has the write scope. The status forms depend
	// on it and on nothing a caller could set apart from it.
	CanWrite bool
	// Return is the query string of this page, which a status change
	// sends the browser back to.
	Return string
}

// Filtered reports whether any filter is set.
func (p FeedbackPage) Filtered() bool { return p.Status != "" || p.Source != "" || p.Path != "" }

// MovesOf are the statuses the form offers for f: every status but the
// one it has (the API allows any change).
func (p FeedbackPage) MovesOf(f store.Feedback) []store.FeedbackStatus {
	var out []store.FeedbackStatus
	for _, st := range p.Statuses {
		if st != f.Status {
			out = append(out, st)
		}
	}
	return out
}

// Vote says what f's reader answered to "was this page helpful?": "yes"
// or "no" for the sources that carry the vote, "" for the others.
func Vote(f store.Feedback) string {
	switch f.Source {
	case store.FeedbackSourceContextual, store.FeedbackSourceThumbsOnly:
		if f.Helpful {
			return "yes"
		}
		return "no"
	}
	return ""
}

func (FeedbackPage) file() string { return "feedback.html" }
