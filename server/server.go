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
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"reflect"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/api"
	"github.com/docsapi/docsapi-go/server/dashboard"
	"github.com/docsapi/docsapi-go/server/ingest"
	"github.com/docsapi/docsapi-go/server/internal/clientip"
	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/ratelimit"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/pageviews"
	"github.com/docsapi/docsapi-go/server/site"
	"github.com/docsapi/docsapi-go/server/store"
)

// Defaults of Config.
const (
	DefaultKeyPrefix       = "mint_"
	DefaultMaxPromptLength = 32000   // characters
	DefaultMaxBodyBytes    = 1 << 20 // bytes
	// DefaultMaxJobPrompts caps a job's prompts, its first included. A
	// docs job takes a few follow-ups; fifty is far past a conversation
	// and far below the history an agent would have to read at every run
	// if it were unbounded.
	DefaultMaxJobPrompts = 50
	// DefaultMaxJobPromptLength caps the characters of a job's prompts
	// together: four prompts of the longest length, or fifty of 2,560.
	// Every run hands the whole history to the agent, a model's context
	// included, so it stays a small part of what a model reads.
	DefaultMaxJobPromptLength = 4 * DefaultMaxPromptLength
	// DefaultKeyCacheTTL is how long a Server trusts a key it verified,
	// and the project it read, without asking the Store again
	// (Config.KeyCacheTTL).
	DefaultKeyCacheTTL = time.Second
)

// Defaults of Config's ingestion fields (see package ingest).
const (
	// DefaultIngestWindow is how long the ingestion endpoint holds a
	// request's views, at most, for requests arriving with it.
	DefaultIngestWindow = ingest.DefaultWindow
	// DefaultIngestMaxCommit bounds the counts of one shared commit.
	DefaultIngestMaxCommit = ingest.DefaultMaxCommit
	// DefaultIngestMaxQueued bounds the counts waiting for a commit.
	DefaultIngestMaxQueued = ingest.DefaultMaxQueued
)

// Config configures a Server. Store is required; the zero value of every
// other field picks its default.
type Config struct {
	// Store keeps projects, keys, jobs and page views.
	Store store.Store
	// Logger receives one line per request and every internal error.
	// The default discards them.
	Logger *slog.Logger
	// KeyPrefix starts every key the server generates. "mint_" by default,
	// the hosted service's admin key prefix, so tools that check the prefix
	// accept self-hosted keys too.
	KeyPrefix string
	// MaxPromptLength bounds a prompt, in characters.
	MaxPromptLength int
	// MaxBodyBytes bounds a request body; a larger one answers 413.
	MaxBodyBytes int64
	// MaxJobPrompts caps the prompts a job holds, its first included: a
	// follow-up past it is answered 400 naming the cap, and not stored.
	// DefaultMaxJobPrompts by default.
	MaxJobPrompts int
	// MaxJobPromptLength caps the characters of a job's prompts together:
	// a follow-up that would take them past it is answered 400 naming the
	// cap, and not stored. DefaultMaxJobPromptLength by default; at least
	// MaxPromptLength, so that a job of one prompt always fits.
	MaxJobPromptLength int
	// RateLimits bounds requests per API key. Off by default (the zero
	// value); DefaultRateLimits are those `docsapi serve` applies.
	RateLimits RateLimits
	// Now tells the time; tests inject a clock. Default time.Now.
	Now func() time.Time
	// KeyCacheTTL is how long a verified API key, and a project it
	// addresses, are trusted without reading the Store again, so that a
	// request costs no store read for them. A key revoked through another
	// Server sharing the Store, or by the command line, keeps working here
	// for at most this long (through this Server: not at all); its expiry
	// time is checked on every request. Default DefaultKeyCacheTTL;
	// negative turns the cache off.
	KeyCacheTTL time.Duration
	// PageViews, if set, lends its Classifier to the ingestion endpoint, so
	// that ingested views are classified as its middleware classifies
	// requests. Ingested views never go through it: the endpoint answers
	// 202 only once they are committed to the Store.
	PageViews *pageviews.Recorder
	// IngestWindow bounds how long the ingestion endpoint holds a
	// request's views for others arriving at the same time, so that they
	// share one commit (see DefaultIngestWindow); negative: no wait, only
	// requests that queued during the previous commit share the next.
	// At most one second.
	IngestWindow time.Duration
	// IngestMaxCommit bounds the counts (one per path and hour of a
	// request) written by one shared commit. A request is never split: a
	// larger one is committed alone. DefaultIngestMaxCommit by default.
	IngestMaxCommit int
	// IngestMaxQueued bounds the counts waiting for a commit; a request
	// that finds no room is answered 503 with Retry-After (a request
	// always fits an empty queue). DefaultIngestMaxQueued by default.
	IngestMaxQueued int
	// TrustedProxies are the networks of the reverse proxies in front of
	// the server. A request whose connection comes from one of them is
	// taken to come from the client its X-Forwarded-For or Forwarded
	// header names (the rightmost address no trusted proxy has); other
	// requests' headers are ignored, so a client cannot choose the address
	// that per-address limits and visitor counts see. Empty: none.
	TrustedProxies []netip.Prefix
	// Site bounds the public site endpoints, which record readers'
	// feedback and searches from the browser (see SiteConfig); its zero
	// value is the defaults, not "no limit".
	Site SiteConfig
	// Secret seals what clients carry back: the dashboard's session
	// cookies and the cursors of the paginated exports and lists. It is
	// SecretBytes random bytes, each use getting a key of its own derived
	// from it. Keep it out of the Store: it is what a copy of the
	// database lacks, so that a backup or a dump cannot seal a session.
	// Every Server sharing a Store must have the same, or each refuses the
	// others' sessions and cursors. Replacing it ends every session and
	// invalidates every cursor, and changes nothing else.
	//
	// Without it, New draws a random secret for this Server alone: its
	// sessions and cursors work until it ends, and no other Server (a
	// replica, or this program after a restart) accepts them. docsapi
	// serve reads it from a file (see its help).
	Secret []byte
	// Dashboard configures the operators' web pages under /dashboard/
	// (see DashboardConfig); off unless Enabled. Its sessions are sealed
	// with a key derived from Secret, and signing out is recorded in the
	// Store, so replicas share both.
	Dashboard DashboardConfig

	// Runs, if set, says whether this server can run a project's jobs
	// (docsapi serve: whether its configuration has a runner for the
	// project). A job created, or followed up, for a project it refuses is
	// answered 503 with its error and not stored, rather than accepted
	// only to fail when an engine claims it.
	Runs func(ctx context.Context, project store.Project) error

	// Jobs, if set, hears of queued and archived jobs, so that a job
	// engine in this process starts them at once and stops archived runs
	// (an *engine.Engine does). Without it, engines find jobs by polling.
	Jobs JobEvents

	// OnRequest, if set, is told of every request once it is answered
	// (server/metrics counts them with it). It runs on the request's
	// goroutine, after the response, so it must return quickly.
	OnRequest func(RequestInfo)
	// OnIngestCommit, if set, is told of every commit of the views sent
	// to the ingestion endpoint, before the commit's requests are
	// answered. It runs on the committing goroutine, which the requests
	// and the next commit wait for, so it must return quickly.
	OnIngestCommit func(IngestCommitInfo)
	// OnSiteLimit, if set, is told of every submission to a public site
	// endpoint that met a day's cap or a client's share of it (see
	// SiteLimitInfo). It runs on the request's goroutine, so it must
	// return quickly.
	OnSiteLimit func(SiteLimitInfo)
}

// JobEvents is told about job changes made through the API.
type JobEvents interface {
	// JobQueued says a job was created or given a follow-up.
	JobQueued()
	// JobArchived says a job was archived.
	JobArchived(jobID string)
}

// Server serves the API. Create it with New; it is safe for concurrent use.
type Server struct {
	cfg     Config
	mux     *routeMux
	auth    *keyauth.Authenticator
	proxies clientip.Proxies

	// The keys derived from Config.Secret (secret.go).
	keys serverKeys

	// The features beside the API.
	site   *site.Endpoints      // the public site endpoints
	ingest *ingest.Handler      // POST /v1/analytics/{projectId}/views
	dash   *dashboard.Dashboard // nil without the dashboard
}

// New checks cfg and returns a Server.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("server: Config.Store is nil")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.KeyPrefix == "" {
		cfg.KeyPrefix = DefaultKeyPrefix
	}
	if !validKeyPrefix(cfg.KeyPrefix) {
		return nil, fmt.Errorf("server: Config.KeyPrefix %q must be 1 to 16 letters or digits followed by an underscore", cfg.KeyPrefix)
	}
	switch {
	case cfg.MaxPromptLength < 0:
		return nil, fmt.Errorf("server: Config.MaxPromptLength must not be negative, got %d", cfg.MaxPromptLength)
	case cfg.MaxPromptLength == 0:
		cfg.MaxPromptLength = DefaultMaxPromptLength
	}
	switch {
	case cfg.MaxJobPrompts < 0:
		return nil, fmt.Errorf("server: Config.MaxJobPrompts must not be negative, got %d", cfg.MaxJobPrompts)
	case cfg.MaxJobPrompts == 0:
		cfg.MaxJobPrompts = DefaultMaxJobPrompts
	}
	switch {
	case cfg.MaxJobPromptLength < 0:
		return nil, fmt.Errorf("server: Config.MaxJobPromptLength must not be negative, got %d", cfg.MaxJobPromptLength)
	case cfg.MaxJobPromptLength == 0:
		cfg.MaxJobPromptLength = max(DefaultMaxJobPromptLength, cfg.MaxPromptLength)
	case cfg.MaxJobPromptLength < cfg.MaxPromptLength:
		return nil, fmt.Errorf("server: Config.MaxJobPromptLength (%d characters) is below Config.MaxPromptLength (%d): a job could be created with a prompt longer than its whole history may be", cfg.MaxJobPromptLength, cfg.MaxPromptLength)
	}
	switch {
	case cfg.MaxBodyBytes < 0:
		return nil, fmt.Errorf("server: Config.MaxBodyBytes must not be negative, got %d", cfg.MaxBodyBytes)
	case cfg.MaxBodyBytes == 0:
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if err := cfg.RateLimits.validate(); err != nil {
		return nil, err
	}
	if v := reflect.ValueOf(cfg.Jobs); cfg.Jobs != nil && v.Kind() == reflect.Pointer && v.IsNil() {
		// A nil *engine.Engine in the interface is not nil, and would
		// panic on the first job; refuse it here, where it is plain.
		return nil, errors.New("server: Config.Jobs holds a nil pointer")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := resolveIngest(&cfg); err != nil {
		return nil, err
	}
	var err error
	if cfg.Site, err = cfg.Site.WithDefaults(); err != nil {
		return nil, err
	}
	if cfg.Dashboard, err = cfg.Dashboard.WithDefaults(); err != nil {
		return nil, err
	}
	keys, secret, err := newServerKeys(cfg.Secret)
	if err != nil {
		return nil, err
	}
	cfg.Secret = nil // kept only as the keys derived from it
	switch {
	case cfg.KeyCacheTTL == 0:
		cfg.KeyCacheTTL = DefaultKeyCacheTTL
	case cfg.KeyCacheTTL < 0:
		cfg.KeyCacheTTL = 0
	}
	s := &Server{cfg: cfg, keys: keys, proxies: clientip.NewProxies(cfg.TrustedProxies)}
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
	s.site = site.New(site.Config{
		Limits: siteLimits(cfg.Site), Store: cfg.Store, Logger: cfg.Logger, Now: cfg.Now, Proxies: s.proxies,
		OnLimit: onSiteLimit(cfg.OnSiteLimit),
	})
	if cfg.Dashboard.Enabled {
		s.dash, err = dashboard.New(dashboard.Config{
			MaxAge: cfg.Dashboard.MaxAge, IdleTimeout: cfg.Dashboard.IdleTimeout,
			LoginPerAddress: ratelimit.Limit(cfg.Dashboard.LoginPerAddress), MaxAddresses: cfg.Site.MaxAddresses,
			Secret: secret, Store: cfg.Store, Logger: cfg.Logger, Now: cfg.Now, Proxies: s.proxies,
			Auth: s.auth, Jobs: dashJobs{s}, Site: s.site,
		})
		if err != nil {
			return nil, err
		}
	}
	s.mux = s.routes()
	return s, nil
}

func (s *Server) routes() *routeMux {
	mux := newRouteMux()
	mux.Handle("POST /v2/agent/{projectId}/job", s.api(keyauth.Agent, store.ScopeWrite, s.createJob))
	mux.Handle("GET /v2/agent/{projectId}/job/{id}", s.api(keyauth.Agent, store.ScopeRead, s.getJob))
	mux.Handle("POST /v2/agent/{projectId}/job/{id}/message", s.api(keyauth.Agent, store.ScopeWrite, s.sendMessage))
	mux.Handle("POST /v2/agent/{projectId}/job/{id}/archive", s.api(keyauth.Agent, store.ScopeWrite, s.archiveJob))
	mux.Handle("GET /v2/agent/{projectId}/jobs", s.api(keyauth.Agent, store.ScopeRead, s.listJobs))
	mux.Handle("GET /v1/analytics/{projectId}/views", s.api(keyauth.Analytics, store.ScopeRead, s.views))
	mux.Handle("POST /v1/analytics/{projectId}/views", s.api(keyauth.Ingest, store.ScopeWrite, s.recordViews))
	mux.Handle("GET /v1/analytics/{projectId}/visitors", s.api(keyauth.Analytics, store.ScopeRead, s.visitors))
	mux.Handle("GET /v1/analytics/{projectId}/views/series", s.api(keyauth.Analytics, store.ScopeRead, s.viewsSeries))
	mux.Handle("GET /v1/analytics/{projectId}/feedback", s.api(keyauth.Analytics, store.ScopeRead, s.feedbackExport))
	mux.Handle("GET /v1/analytics/{projectId}/feedback/by-page", s.api(keyauth.Analytics, store.ScopeRead, s.feedbackByPage))
	mux.Handle("PATCH /v1/analytics/{projectId}/feedback/{id}", s.api(keyauth.Analytics, store.ScopeWrite, s.setFeedbackStatus))
	mux.Handle("GET /v1/analytics/{projectId}/searches", s.api(keyauth.Analytics, store.ScopeRead, s.searchesExport))
	mux.Handle("GET /v1/analytics/{projectId}/assistant", s.api(keyauth.Analytics, store.ScopeRead, s.noAssistant))
	mux.Handle("GET /v1/analytics/{projectId}/assistant/threads/{threadId}", s.api(keyauth.Analytics, store.ScopeRead, s.noAssistant))
	mux.Handle("GET /v1/analytics/{projectId}/assistant/caller-stats", s.api(keyauth.Analytics, store.ScopeRead, s.noAssistant))
	s.site.Routes(mux)
	if s.dash != nil {
		s.dash.Routes(mux)
	}
	mux.HandleFunc("GET /healthz", s.health)
	mux.HandleFunc("GET /openapi.yaml", serveOpenAPI)
	return mux
}

// recordViews: POST /v1/analytics/{projectId}/views (package ingest).
func (s *Server) recordViews(w http.ResponseWriter, r *http.Request, c keyauth.Caller) {
	s.ingest.RecordViews(w, r, c.Project.ID)
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
