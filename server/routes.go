package server

import (
	"net/http"

	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/public"
	"github.com/docsapi/docsapi-go/server/store"
)

// routeMux is the server's ServeMux, which remembers the patterns it was
// given. ServeMux.Handler may report a path as a pattern (that of its
// redirect to the path with a trailing slash), and a route's label must
// never come from the request.
type routeMux struct {
	*http.ServeMux
	patterns map[string]bool
}

func newRouteMux() *routeMux {
	return &routeMux{ServeMux: http.NewServeMux(), patterns: map[string]bool{}}
}

// Handle registers h for pattern, as ServeMux.Handle does.
func (m *routeMux) Handle(pattern string, h http.Handler) {
	m.ServeMux.Handle(pattern, h)
	m.patterns[pattern] = true
}

// HandleFunc registers h for pattern, as ServeMux.HandleFunc does.
func (m *routeMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(h))
}

// registered returns pattern if it is one of the routes, else "".
func (m *routeMux) registered(pattern string) string {
	if m.patterns[pattern] {
		return pattern
	}
	return ""
}

// routes are every route of the Server: the API's, then the features'.
func (s *Server) routes() *routeMux {
	mux := newRouteMux()
	mux.Handle("POST /v2/agent/{projectId}/job", s.api(keyauth.Agent, store.ScopeWrite, s.createJob))
	mux.Handle("GET /v2/agent/{projectId}/job/{id}", s.api(keyauth.Agent, store.ScopeRead, s.getJob))
	mux.Handle("POST /v2/agent/{projectId}/job/{id}/message", s.api(keyauth.Agent, store.ScopeWrite, s.sendMessage))
	mux.Handle("POST /v2/agent/{projectId}/job/{id}/archive", s.api(keyauth.Agent, store.ScopeWrite, s.archiveJob))
	mux.Handle("GET /v2/agent/{projectId}/jobs", s.api(keyauth.Agent, store.ScopeRead, s.listJobs))
	mux.Handle("GET /v1/analytics/{projectId}/views", s.api(keyauth.Analytics, store.ScopeRead, s.views))
	mux.Handle("POST /v1/analytics/{projectId}/views", s.ingestRoute())
	mux.Handle("GET /v1/analytics/{projectId}/visitors", s.api(keyauth.Analytics, store.ScopeRead, s.visitors))
	mux.Handle("GET /v1/analytics/{projectId}/views/series", s.api(keyauth.Analytics, store.ScopeRead, s.viewsSeries))
	mux.Handle("GET /v1/analytics/{projectId}/agents", s.api(keyauth.Analytics, store.ScopeRead, s.agents))
	mux.Handle("GET /v1/analytics/{projectId}/feedback", s.api(keyauth.Analytics, store.ScopeRead, s.feedbackExport))
	mux.Handle("GET /v1/analytics/{projectId}/feedback/by-page", s.api(keyauth.Analytics, store.ScopeRead, s.feedbackByPage))
	mux.Handle("PATCH /v1/analytics/{projectId}/feedback/{id}", s.api(keyauth.Analytics, store.ScopeWrite, s.setFeedbackStatus))
	mux.Handle("GET /v1/analytics/{projectId}/searches", s.api(keyauth.Analytics, store.ScopeRead, s.searchesExport))
	mux.Handle("GET /v1/analytics/{projectId}/assistant", s.api(keyauth.Analytics, store.ScopeRead, s.noAssistant))
	mux.Handle("GET /v1/analytics/{projectId}/assistant/threads/{threadId}", s.api(keyauth.Analytics, store.ScopeRead, s.noAssistant))
	mux.Handle("GET /v1/analytics/{projectId}/assistant/caller-stats", s.api(keyauth.Analytics, store.ScopeRead, s.noAssistant))
	mux.Handle("POST /v1/project/update/{projectId}", s.api(keyauth.Agent, store.ScopeWrite, s.triggerUpdate))
	mux.Handle("GET /v1/project/update-status/{statusId}", s.updateStatus())
	s.site.Routes(mux)
	s.discoveryRoutes(mux)
	s.assistantRoutes(mux)
	if s.dash != nil {
		s.dash.Routes(mux)
	}
	mux.HandleFunc("GET /healthz", s.health)
	mux.HandleFunc("GET /openapi.yaml", serveOpenAPI)
	return mux
}

// ingestRoute: POST /v1/analytics/{projectId}/views (package ingest),
// behind the API's key checks, telling Config.OnPublicRequest what came
// of each request: the handler's outcome, or, for a request the key
// checks refused, the outcome of their status.
func (s *Server) ingestRoute() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var outcome string
		rec := &statusRecorder{ResponseWriter: w}
		s.api(keyauth.Ingest, store.ScopeWrite, func(w http.ResponseWriter, r *http.Request, c keyauth.Caller) {
			outcome = s.ingest.RecordViews(w, r, c.Project.ID)
		}).ServeHTTP(rec, r)
		if s.cfg.OnPublicRequest == nil {
			return
		}
		if outcome == "" { // the key checks answered
			switch status := rec.status(); {
			case status == http.StatusTooManyRequests:
				outcome = public.RateLimited
			case status == http.StatusRequestEntityTooLarge:
				outcome = public.TooLarge
			case status >= http.StatusInternalServerError:
				outcome = public.Error
			default: // 401, 403: no key, a key refused, or one of another project or scope
				outcome = public.BadKey
			}
		}
		s.cfg.OnPublicRequest(PublicRequestInfo{Endpoint: public.Ingest, Outcome: outcome})
	})
}
