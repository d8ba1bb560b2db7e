package server

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/internal/wire"
	"github.com/docsapi/docsapi-go/server/store"
)

// Bounds of the feedback exports, as the contract states them.
const (
	defaultFeedbackLimit       = 50
	defaultFeedbackByPageLimit = 10
	maxFeedbackLimit           = 100
)

// The values the source and status filters take.
var (
	feedbackSources  = []store.FeedbackSource{store.FeedbackSourceCodeSnippet, store.FeedbackSourceContextual, store.FeedbackSourceAgent, store.FeedbackSourceThumbsOnly}
	feedbackStatuses = []store.FeedbackStatus{store.FeedbackStatusPending, store.FeedbackStatusInProgress, store.FeedbackStatusResolved, store.FeedbackStatusDismissed}
)

// feedbackExport: GET /v1/analytics/{projectId}/feedback, newest first,
// by cursor (see cursor.go).
func (s *Server) feedbackExport(w http.ResponseWriter, r *http.Request, c keyauth.Caller) {
	page, next, details, err := s.feedbackPage(r.Context(), c.Project.ID, r.URL.RawQuery)
	switch {
	case len(details) > 0:
		respond.ErrorDetails(w, http.StatusBadRequest, "invalid query parameters", details)
		return
	case err != nil:
		respond.StoreError(w, r, s.cfg.Logger, err, "project "+respond.Quote(c.Project.ID), "exporting feedback")
		return
	}
	out := wire.FeedbackPage{Feedback: make([]wire.FeedbackEntry, len(page.Entries)), HasMore: page.HasMore, NextCursor: wire.NullString(next)}
	for i, e := range page.Entries {
		out.Feedback[i] = feedbackEntry(e)
	}
	respond.JSON(w, http.StatusOK, out)
}

// feedbackPage reads the page of a project's feedback that raw, the query
// string of GET .../feedback, asks for, and the cursor of the page after
// it ("" on the last); the dashboard reads feedback through it too.
// details lists what is wrong with the query (a 400); err is the store's.
func (s *Server) feedbackPage(ctx context.Context, projectID, raw string) (page store.FeedbackPage, next string, details []wire.ErrorDetail, err error) {
	qs := newExportQuery(raw)
	f := parseFeedbackFilter(qs)
	q := store.FeedbackQuery{FeedbackFilter: f, Limit: qs.limit(defaultFeedbackLimit, maxFeedbackLimit)}
	cursor, hasCursor := qs.one("cursor")
	if len(qs.details) > 0 {
		return page, "", qs.details, nil
	}
	q.ProjectID = projectID
	scope := feedbackScope(q.FeedbackFilter)
	key := s.cursorKey
	if hasCursor && cursor != "" {
		at, id, err := openTimeID(key, scope, cursor)
		if err != nil {
			return page, "", []wire.ErrorDetail{{Message: err.Error()}}, nil
		}
		q.After = &store.FeedbackKey{CreatedAt: at, ID: id}
	}
	if page, err = s.cfg.Store.QueryFeedback(ctx, q); err != nil {
		return page, "", nil, err
	}
	if page.HasMore {
		last := page.Entries[len(page.Entries)-1]
		next = sealTimeID(key, scope, last.CreatedAt, last.ID)
	}
	return page, next, nil, nil
}

// feedbackByPage: GET /v1/analytics/{projectId}/feedback/by-page. It has
// no cursor: hasMore says that paths were left out.
func (s *Server) feedbackByPage(w http.ResponseWriter, r *http.Request, c keyauth.Caller) {
	res, details, err := s.feedbackCounts(r.Context(), c.Project.ID, r.URL.RawQuery)
	switch {
	case len(details) > 0:
		respond.ErrorDetails(w, http.StatusBadRequest, "invalid query parameters", details)
		return
	case err != nil:
		respond.StoreError(w, r, s.cfg.Logger, err, "project "+respond.Quote(c.Project.ID), "counting feedback by page")
		return
	}
	out := wire.FeedbackByPage{Feedback: make([]wire.PageFeedback, len(res.Rows)), HasMore: res.HasMore}
	for i, p := range res.Rows {
		out.Feedback[i] = wire.PageFeedback{Path: p.Path, ThumbsUp: p.ThumbsUp, ThumbsDown: p.ThumbsDown, Code: p.Code, Total: p.Total}
	}
	respond.JSON(w, http.StatusOK, out)
}

// feedbackCounts counts a project's feedback per page as raw, the query
// string of GET .../feedback/by-page, asks; the dashboard counts through
// it too. details lists what is wrong with the query; err is the store's.
func (s *Server) feedbackCounts(ctx context.Context, projectID, raw string) (store.FeedbackByPage, []wire.ErrorDetail, error) {
	qs := newExportQuery(raw)
	q := store.FeedbackByPageQuery{FeedbackFilter: parseFeedbackFilter(qs), Limit: qs.limit(defaultFeedbackByPageLimit, maxFeedbackLimit)}
	if len(qs.details) > 0 {
		return store.FeedbackByPage{}, qs.details, nil
	}
	q.ProjectID = projectID
	res, err := s.cfg.Store.FeedbackByPage(ctx, q)
	return res, nil, err
}

// parseFeedbackFilter reads dateFrom, dateTo (exact instants: entries keep
// their time), source, status (a comma-separated list) and path (one
// page, exactly; empty for any).
func parseFeedbackFilter(qs *exportQuery) store.FeedbackFilter {
	var f store.FeedbackFilter
	f.From, f.To = qs.dates()
	if v, ok := qs.one("path"); ok {
		f.Path = v
	}
	if v, ok := qs.one("source"); ok {
		if src := store.FeedbackSource(v); slices.Contains(feedbackSources, src) {
			f.Source = src
		} else {
			qs.fail("source must be one of %s, got %q", joinValues(feedbackSources), v)
		}
	}
	f.Statuses = parseStatuses(qs, feedbackStatuses)
	return f
}

// parseStatuses reads status, a comma-separated list of the values known,
// each kept once, in the order given; nil when omitted.
func parseStatuses[S ~string](qs *exportQuery, known []S) []S {
	v, ok := qs.one("status")
	if !ok {
		return nil
	}
	var statuses []S
	for _, part := range strings.Split(v, ",") {
		st := S(strings.TrimSpace(part))
		if !slices.Contains(known, st) {
			qs.fail("status must be a comma-separated list of %s, got %q", joinValues(known), part)
			continue
		}
		if !slices.Contains(statuses, st) {
			statuses = append(statuses, st)
		}
	}
	return statuses
}

// statusesParam writes a list of statuses for a cursor's scope, in a
// canonical order, so that the same filter in another order is the same
// scope.
func statusesParam[S ~string](statuses []S) string {
	names := make([]string, len(statuses))
	for i, st := range statuses {
		names[i] = string(st)
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

func joinValues[T ~string](vs []T) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// feedbackScope is the scope of a feedback cursor: the project and every
// filter, statuses in a canonical order. The path is a part only when one
// is asked for, so that cursors sealed before it was a filter stay valid.
func feedbackScope(f store.FeedbackFilter) []byte {
	parts := []string{"feedback", f.ProjectID, timeParam(f.From), timeParam(f.To), string(f.Source), statusesParam(f.Statuses)}
	if f.Path != "" {
		parts = append(parts, f.Path)
	}
	return scope(parts...)
}

// writeBadCursor answers a refused cursor.
func writeBadCursor(w http.ResponseWriter, err error) {
	respond.ErrorDetails(w, http.StatusBadRequest, "invalid query parameters", []wire.ErrorDetail{{Message: err.Error()}})
}

// feedbackEntry is f as the export shows it: each source with its own
// fields (see wire.FeedbackEntry). A thumbs-only entry carries its vote,
// which the hosted service's leave out: an addition clients that follow
// the hosted contract ignore, and without which its direction is lost.
func feedbackEntry(f store.Feedback) wire.FeedbackEntry {
	e := wire.FeedbackEntry{ID: f.ID, Path: f.Path, Comment: f.Comment, CreatedAt: wire.NullTime(f.CreatedAt), Source: string(f.Source), Status: string(f.Status)}
	switch f.Source {
	case store.FeedbackSourceThumbsOnly:
		e.Vote = &wire.Vote{Helpful: f.Helpful}
	case store.FeedbackSourceContextual:
		e.Vote = &wire.Vote{Helpful: f.Helpful}
		e.Contextual = &wire.Contextual{Contact: wire.NullString(f.Contact)}
	case store.FeedbackSourceCodeSnippet:
		e.CodeSnippet = &wire.CodeSnippet{Code: f.Code, Filename: wire.NullString(f.Filename), Lang: wire.NullString(f.Lang)}
	}
	return e
}
