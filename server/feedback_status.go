package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/input"
	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/internal/strictjson"
	"github.com/docsapi/docsapi-go/server/store"
)

// maxStatusBodyBytes bounds the body of a status change, {"status": ...}.
const maxStatusBodyBytes = 1 << 10

// statusBody is the body of PATCH .../feedback/{id}.
type statusBody struct {
	Status *string `json:"status"`
}

// ErrUnknownFeedbackStatus is the error of SetFeedbackStatus for a status
// the contract does not list.
var ErrUnknownFeedbackStatus = errors.New("server: unknown feedback status: use " + joinValues(feedbackStatuses))

// SetFeedbackStatus moves a feedback entry of a project to status
// (pending, in_progress, resolved or dismissed) and returns it as stored.
// An entry already in that status is returned unchanged. The error
// matches store.ErrNotFound when the project has no such entry.
func (s *Server) SetFeedbackStatus(ctx context.Context, projectID, id string, status store.FeedbackStatus) (store.Feedback, error) {
	if !slices.Contains(feedbackStatuses, status) {
		return store.Feedback{}, fmt.Errorf("%w, not %q", ErrUnknownFeedbackStatus, status)
	}
	f, err := s.cfg.Store.SetFeedbackStatus(ctx, store.FeedbackStatusChange{
		ProjectID: projectID, ID: id, Status: status, At: s.cfg.Now().UTC().Truncate(time.Microsecond),
	})
	if err != nil {
		return store.Feedback{}, fmt.Errorf("server: feedback %q of project %q: %w", id, projectID, err)
	}
	return f, nil
}

// setFeedbackStatus: PATCH /v1/analytics/{projectId}/feedback/{id}, a
// self-hosted addition for operators (write scope). It answers the entry
// as the export shows it.
func (s *Server) setFeedbackStatus(w http.ResponseWriter, r *http.Request, c keyauth.Caller) {
	body, bad := input.ReadBody(w, r, maxStatusBodyBytes)
	var in statusBody
	if bad == nil {
		bad = input.DecodeJSON(body, &in, strictjson.Options{})
	}
	if bad == nil && in.Status == nil {
		bad = input.Invalid(`field "status" is required: one of %s`, joinValues(feedbackStatuses))
	}
	if bad == nil && !slices.Contains(feedbackStatuses, store.FeedbackStatus(*in.Status)) {
		bad = input.Invalid(`field "status" must be one of %s, got %s`, joinValues(feedbackStatuses), respond.Quote(*in.Status))
	}
	if bad != nil {
		respond.Error(w, bad.Status, bad.Message)
		return
	}
	id := r.PathValue("id")
	f, err := s.SetFeedbackStatus(r.Context(), c.Project.ID, id, store.FeedbackStatus(*in.Status))
	if err != nil {
		respond.StoreError(w, r, s.cfg.Logger, err, "feedback "+respond.Quote(id), "changing a feedback status")
		return
	}
	respond.JSON(w, http.StatusOK, feedbackEntry(f))
}
