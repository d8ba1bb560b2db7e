// Package server implements the documentation platform's API as an
// http.Handler that a host application mounts where it likes, so the SDK in
// the root package (and any client written for the hosted service) can talk
// to a self-hosted deployment unchanged.
//
// A Server owns no listener and no global state: the host decides the
// address, TLS and the prefix (with http.StripPrefix). Storage is any
// store.Store; server/sqlite is the embedded default.
package server

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/api"
	"github.com/docsapi/docsapi-go/server/assistant"
	"github.com/docsapi/docsapi-go/server/dashboard"
	"github.com/docsapi/docsapi-go/server/ingest"
	"github.com/docsapi/docsapi-go/server/internal/assistantauth"
	"github.com/docsapi/docsapi-go/server/internal/clientip"
	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/lastsearch"
	"github.com/docsapi/docsapi-go/server/internal/ratelimit"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/site"
)

// Server serves the API. Create it with New; it is safe for concurrent use.
type Server struct {
	cfg     Config
	mux     *routeMux
	auth    *keyauth.Authenticator
	proxies clientip.Proxies

	// cursorKey seals the cursors of the exports and lists (cursor.go),
	// derived from Config.Secret (secret.go).
	cursorKey []byte

	// The features beside the API.
	site   *site.Endpoints      // the public site endpoints
	ingest *ingest.Handler      // POST /v1/analytics/{projectId}/views
	dash   *dashboard.Dashboard // nil without the dashboard

	// assistant admits the /discovery endpoints' requests: assistant
	// keys, domains, origins and budgets (assistantkeys.go).
	assistant *assistantauth.Gate
	// answers answers the assistant's questions (assistantanswers.go).
	answers *assistant.Handler
	// lastSearch remembers each client's last /discovery search a while,
	// to count a page it then fetches as its click (discovery.go).
	lastSearch *lastsearch.Memory
}

// New checks cfg and returns a Server.
func New(cfg Config) (*Server, error) {
	if err := cfg.resolve(); err != nil {
		return nil, err
	}
	secret, err := resolveSecret(cfg.Secret)
	if err != nil {
		return nil, err
	}
	cfg.Secret = nil // kept only as the keys derived from it
	s := &Server{cfg: cfg, cursorKey: derive(secret, "docsapi cursors"), proxies: clientip.NewProxies(cfg.TrustedProxies)}
	s.ingest = ingest.New(ingest.Config{
		Store: cfg.Store, Logger: cfg.Logger, Now: cfg.Now, Classifier: classifier(cfg.PageViews), MaxBodyBytes: cfg.MaxBodyBytes,
		Window: cfg.IngestWindow, MaxCommit: cfg.IngestMaxCommit, MaxQueued: cfg.IngestMaxQueued, OnCommit: onIngestCommit(cfg.OnIngestCommit),
	})
	s.auth = keyauth.New(keyauth.Config{
		Store: cfg.Store, Logger: cfg.Logger, Now: cfg.Now, KeyPrefix: cfg.KeyPrefix, CacheTTL: cfg.KeyCacheTTL,
		Limits: [keyauth.Kinds]ratelimit.Limit{
			keyauth.Agent:     ratelimit.Limit(cfg.RateLimits.Agent),
			keyauth.Analytics: ratelimit.Limit(cfg.RateLimits.Analytics),
			keyauth.Ingest:    ratelimit.Limit(cfg.RateLimits.Ingest),
		},
	})
	s.assistant = newAssistantGate(cfg, s)
	s.answers = newAnswers(cfg, s)
	s.lastSearch = lastsearch.New(searchClickWindow, cfg.Assistant.MaxAddresses)
	s.site = site.New(site.Config{
		Limits: siteLimits(cfg.Site), Store: cfg.Store, Logger: cfg.Logger, Now: cfg.Now, Proxies: s.proxies,
		OnLimit: onSiteLimit(cfg.OnSiteLimit), OnRequest: onPublicRequest(cfg.OnPublicRequest),
	})
	if cfg.Dashboard.Enabled {
		s.dash, err = dashboard.New(dashboard.Config{
			MaxAge: cfg.Dashboard.MaxAge, IdleTimeout: cfg.Dashboard.IdleTimeout,
			LoginPerAddress: ratelimit.Limit(cfg.Dashboard.LoginPerAddress), MaxAddresses: cfg.Site.MaxAddresses,
			Secret: secret, Store: cfg.Store, Logger: cfg.Logger, Now: cfg.Now, Proxies: s.proxies,
			Auth: s.auth, Jobs: dashJobs{s}, Feedback: dashFeedback{s}, Site: s.site, OnSignIn: onSignIn(cfg.OnSignIn),
		})
		if err != nil {
			return nil, err
		}
	}
	s.mux = s.routes()
	return s, nil
}

// ServeHTTP serves one request: it sets the request id, recovers from
// panics, logs the outcome and routes, answering unknown paths and methods
// with JSON like every other error.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w, r = closeUnreadBodies(w, r)
	start := s.cfg.Now()
	id := respond.RequestID(r)
	w.Header().Set("X-Request-Id", id)
	rec := &statusRecorder{ResponseWriter: w}
	r = r.WithContext(respond.WithRequestID(r.Context(), id))
	_, pattern := s.mux.Handler(r)
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.cfg.Logger.ErrorContext(r.Context(), "server: panic while serving",
				slog.String("request_id", id), slog.Any("panic", p))
			if !rec.wroteHeader {
				respond.Error(rec, http.StatusInternalServerError, respond.InternalMessage(id))
			}
		}
		took := s.cfg.Now().Sub(start)
		s.cfg.Logger.LogAttrs(r.Context(), slog.LevelInfo, "server: request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", rec.status()), slog.Duration("duration", took),
			slog.String("request_id", id))
		if s.cfg.OnRequest != nil {
			s.cfg.OnRequest(RequestInfo{Route: s.mux.registered(pattern), Status: rec.status(), Duration: took})
		}
	}()

	if pattern == "" {
		s.notRouted(rec, r)
		return
	}
	s.mux.ServeHTTP(rec, r)
}

// notRouted answers a request no route matched: 405 with Allow when the path
// exists for other methods, 404 otherwise. net/http would answer in plain
// text; the contract's clients expect JSON errors everywhere.
func (s *Server) notRouted(w http.ResponseWriter, r *http.Request) {
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "" {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) == 0 {
		respond.Error(w, http.StatusNotFound, "no such endpoint: "+r.URL.Path)
		return
	}
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	respond.Error(w, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed here; use "+strings.Join(allowed, " or "))
}

// health answers whether the storage answers. It needs no key, so load
// balancers can call it.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.cfg.Store.Ping(ctx); err != nil {
		s.cfg.Logger.ErrorContext(ctx, "server: health check failed", slog.Any("error", err))
		respond.JSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "error": "storage does not answer"})
		return
	}
	respond.JSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// serveOpenAPI serves the contract this server implements, so clients can
// generate code from the server they talk to.
func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	w.Write(api.OpenAPI())
}

// statusRecorder remembers the status a handler wrote, for the log line and
// for the panic handler, which must not write a second header.
type statusRecorder struct {
	http.ResponseWriter
	code        int
	wroteHeader bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wroteHeader {
		r.code, r.wroteHeader = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if !r.wroteHeader {
		r.WriteHeader(http.StatusOK)
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) status() int {
	if !r.wroteHeader {
		return http.StatusOK
	}
	return r.code
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
