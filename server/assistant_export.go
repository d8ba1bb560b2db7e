package server

import (
	"net/http"
	"strconv"

	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/internal/ulid"
	"github.com/docsapi/docsapi-go/server/internal/wire"
	"github.com/docsapi/docsapi-go/server/store"
)

// The default page of the assistant conversations export, as the contract
// states it; its largest is the store's (store.MaxConversationsLimit).
const defaultAssistantLimit = 100

// assistantExport: GET /v1/analytics/{projectId}/assistant, the project's
// exchanges with the assistant in the order they were asked, by cursor.
//
// The cursor is the last exchange's ID, a ULID as the hosted service's, not
// a sealed position (cursor.go): IDs are ULIDs, ordered as strings by the
// time they were made, so the ID alone is the keyset position, and it
// names nothing the project's key could not read anyway. It is checked to
// be a ULID, so that a mistyped one is a 400 rather than a silently empty
// or shifted page.
func (s *Server) assistantExport(w http.ResponseWriter, r *http.Request, c keyauth.Caller) {
	qs := newExportQuery(r.URL.RawQuery)
	var q store.ConversationsQuery
	q.From, q.To = qs.dates()
	q.Limit = qs.limit(defaultAssistantLimit, store.MaxConversationsLimit)
	if cursor, ok := qs.one("cursor"); ok && cursor != "" {
		if !ulid.Valid(cursor) {
			qs.fail("cursor must be the nextCursor of a page of this export, a ULID (26 characters of Crockford's base 32, upper case), got %s", strconv.Quote(cursor))
		}
		q.After = cursor
	}
	if len(qs.details) > 0 {
		respond.ErrorDetails(w, http.StatusBadRequest, "invalid query parameters", qs.details)
		return
	}
	q.ProjectID = c.Project.ID
	res, err := s.cfg.Store.QueryConversations(r.Context(), q)
	if err != nil {
		respond.StoreError(w, r, s.cfg.Logger, err, "project "+respond.Quote(c.Project.ID), "exporting assistant conversations")
		return
	}
	page := wire.AssistantConversationsPage{Conversations: make([]wire.AssistantConversation, len(res.Exchanges)), HasMore: res.HasMore}
	for i, e := range res.Exchanges {
		page.Conversations[i] = assistantConversation(e)
	}
	if res.HasMore && len(res.Exchanges) > 0 {
		page.NextCursor = wire.NullString(res.Exchanges[len(res.Exchanges)-1].ID)
	}
	respond.JSON(w, http.StatusOK, page)
}

// assistantConversation is e as the conversations export shows it. A
// response type or resolution the store left empty is the contract's
// default (answer) and the one that claims nothing (unanswered).
func assistantConversation(e store.Exchange) wire.AssistantConversation {
	c := wire.AssistantConversation{
		ID: e.ID, Timestamp: wire.Time(e.AskedAt), Query: e.Question, Response: e.Answer,
		ResponseType: string(e.ResponseType), Sources: make([]wire.AssistantSource, len(e.Sources)),
		ResolutionStatus: string(e.Resolution), PageURL: wire.NullString(e.PageURL),
	}
	if c.ResponseType == "" {
		c.ResponseType = string(store.ResponseAnswer)
	}
	if c.ResolutionStatus == "" {
		c.ResolutionStatus = string(store.Unanswered)
	}
	for i, src := range e.Sources {
		c.Sources[i] = wire.AssistantSource{Title: src.Title, URL: src.URL}
	}
	return c
}

// assistantThread: GET /v1/analytics/{projectId}/assistant/threads/{threadId},
// a thread's exchanges as messages: each the reader's question, then the
// reply. A thread of another project is not found, as an unknown one.
func (s *Server) assistantThread(w http.ResponseWriter, r *http.Request, c keyauth.Caller) {
	id := r.PathValue("threadId")
	if !ulid.Valid(id) {
		respond.ErrorDetails(w, http.StatusBadRequest, "invalid thread ID", []wire.ErrorDetail{{Message: "threadId must be a ULID (26 characters of Crockford's base 32, upper case), got " + respond.Quote(id)}})
		return
	}
	subject := "thread " + respond.Quote(id)
	th, err := s.cfg.Store.Thread(r.Context(), c.Project.ID, id)
	if err != nil {
		respond.StoreError(w, r, s.cfg.Logger, err, subject, "reading an assistant thread")
		return
	}
	exchanges, err := s.cfg.Store.ThreadExchanges(r.Context(), c.Project.ID, id)
	if err != nil {
		respond.StoreError(w, r, s.cfg.Logger, err, subject, "reading an assistant thread")
		return
	}
	out := wire.AssistantThread{ThreadID: th.ID, CreatedAt: wire.Time(th.CreatedAt), Messages: make([]wire.AssistantMessage, 0, 2*len(exchanges))}
	for _, e := range exchanges {
		out.Messages = append(out.Messages,
			wire.AssistantMessage{ID: e.QuestionID, Role: "user", Content: e.Question, CreatedAt: wire.Time(e.AskedAt)},
			wire.AssistantMessage{ID: e.ID, Role: "assistant", Content: e.Answer, CreatedAt: wire.Time(e.AnsweredAt)})
	}
	respond.JSON(w, http.StatusOK, out)
}

// assistantCallerStats: GET /v1/analytics/{projectId}/assistant/caller-stats,
// the questions asked in the range by the kind of caller.
func (s *Server) assistantCallerStats(w http.ResponseWriter, r *http.Request, c keyauth.Caller) {
	qs := newExportQuery(r.URL.RawQuery)
	from, to := qs.dates()
	if len(qs.details) > 0 {
		respond.ErrorDetails(w, http.StatusBadRequest, "invalid query parameters", qs.details)
		return
	}
	n, err := s.cfg.Store.CallerStats(r.Context(), c.Project.ID, from, to)
	if err != nil {
		respond.StoreError(w, r, s.cfg.Logger, err, "project "+respond.Quote(c.Project.ID), "counting assistant callers")
		return
	}
	respond.JSON(w, http.StatusOK, wire.AssistantCallerStats{Web: n.Web, API: n.API, Other: n.Other, Total: n.Total()})
}
