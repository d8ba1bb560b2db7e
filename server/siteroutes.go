package server

import (
	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/store"
)

// siteRoutes adds the routes of readers' feedback and searches: the public
// site endpoints and their script, the exports (with the assistant's, which
// this server does not have), and the operators' status change.
func (s *Server) siteRoutes(mux *routeMux) {
	mux.Handle("POST /v1/site/{projectId}/feedback", s.site(s.recordFeedback))
	mux.Handle("POST /v1/site/{projectId}/searches", s.site(s.recordSearch))
	mux.HandleFunc("OPTIONS /v1/site/{projectId}/feedback", s.sitePreflight)
	mux.HandleFunc("OPTIONS /v1/site/{projectId}/searches", s.sitePreflight)
	mux.HandleFunc("GET /v1/site/{projectId}/docsapi.js", serveSiteScript)

	mux.Handle("GET /v1/analytics/{projectId}/feedback", s.api(keyauth.Analytics, store.ScopeRead, s.feedbackExport))
	mux.Handle("GET /v1/analytics/{projectId}/feedback/by-page", s.api(keyauth.Analytics, store.ScopeRead, s.feedbackByPage))
	mux.Handle("PATCH /v1/analytics/{projectId}/feedback/{id}", s.api(keyauth.Analytics, store.ScopeWrite, s.setFeedbackStatus))
	mux.Handle("GET /v1/analytics/{projectId}/searches", s.api(keyauth.Analytics, store.ScopeRead, s.searchesExport))
	mux.Handle("GET /v1/analytics/{projectId}/assistant", s.api(keyauth.Analytics, store.ScopeRead, s.noAssistant))
	mux.Handle("GET /v1/analytics/{projectId}/assistant/threads/{threadId}", s.api(keyauth.Analytics, store.ScopeRead, s.noAssistant))
	mux.Handle("GET /v1/analytics/{projectId}/assistant/caller-stats", s.api(keyauth.Analytics, store.ScopeRead, s.noAssistant))
}
