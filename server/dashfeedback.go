package server

import (
	"context"
	"slices"

	"github.com/docsapi/docsapi-go/server/store"
)

// dashFeedback is what the dashboard reads and does of feedback
// (dashboard.Feedback): what the API's feedback endpoints do, with their
// filters, cursors and status changes, so that its pages show and allow
// what the API does.
type dashFeedback struct{ s *Server }

// Sources are the values of the source filter.
func (f dashFeedback) Sources() []store.FeedbackSource { return slices.Clone(feedbackSources) }

// Statuses are the values of the status filter, and the statuses an
// entry may be moved to.
func (f dashFeedback) Statuses() []store.FeedbackStatus { return slices.Clone(feedbackStatuses) }

// List reads a page of feedback as GET .../feedback does.
func (f dashFeedback) List(ctx context.Context, projectID, query string) (store.FeedbackPage, string, string, error) {
	page, next, details, err := f.s.feedbackPage(ctx, projectID, query)
	return page, next, problemsOf(details), err
}

// ByPage counts feedback per page as GET .../feedback/by-page does.
func (f dashFeedback) ByPage(ctx context.Context, projectID, query string) (store.FeedbackByPage, string, error) {
	res, details, err := f.s.feedbackCounts(ctx, projectID, query)
	return res, problemsOf(details), err
}

// SetStatus moves an entry to status (Server.SetFeedbackStatus), as
// PATCH .../feedback/{id} does.
func (f dashFeedback) SetStatus(ctx context.Context, projectID, id string, status store.FeedbackStatus) (store.Feedback, error) {
	return f.s.SetFeedbackStatus(ctx, projectID, id, status)
}
