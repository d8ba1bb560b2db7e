// Package site is the public site endpoints, which a documentation site's
// pages call from readers' browsers: POST /v1/site/{projectId}/feedback and
// /searches, their CORS preflights, and the script that sends them
// (docsapi.js, with the feedback widget, and its stylesheet docsapi.css).
// They take no API key: a browser must never hold one. What stands in
// their way instead, in the order it is checked:
//
//  1. a budget per client address (ratelimit.PerAddress), before anything
//     costs a database read;
//  2. a site token (store.SiteToken): public by design, it names the
//     project and the origins allowed to use it, and can be revoked;
//  3. the request's Origin, which must be one of the token's: browsers
//     send it and scripts on other sites cannot forge it;
//  4. the body's size, then its fields (sizes, no control or
//     bidirectional formatting characters), and a honeypot field;
//  5. the client's share of the day's caps (shares), so that no address
//     or network can fill a cap for everyone;
//  6. the daily caps of the store.
//
// Package server wires the endpoints and owns their configuration
// (server.SiteConfig) and the Go API of site tokens; the exports of what
// the endpoints stored are the API's, in package server.
package site

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/clientip"
	"github.com/docsapi/docsapi-go/server/internal/public"
	"github.com/docsapi/docsapi-go/server/internal/ratelimit"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/store"
)

// TokenHeader carries the site token; a "token" query parameter may carry
// it instead, for navigator.sendBeacon, which cannot set headers.
const TokenHeader = "X-Docsapi-Site-Token"

// Config configures the Endpoints; package server resolves its values.
type Config struct {
	Limits  Limits
	Store   store.Store
	Logger  *slog.Logger
	Now     func() time.Time
	Proxies clientip.Proxies // who the client is (server.Config.TrustedProxies)
	// OnLimit, if set, is told of every submission that met a day's cap
	// or a client's share of it: its kind (KindFeedback, KindSearches)
	// and why (ReasonCap, ReasonShare). It runs on the request's
	// goroutine, so it must return quickly.
	OnLimit func(kind, reason string)
	// OnRequest, if set, is told what came of every request to a site
	// endpoint: its endpoint and outcome, constants of package
	// internal/public. It runs on the request's goroutine, so it must
	// return quickly.
	OnRequest func(endpoint, outcome string)
}

// Limits bound the endpoints: server.SiteConfig, its defaults applied
// (see there for each).
type Limits struct {
	PerAddress                                   ratelimit.Limit
	MaxAddresses                                 int
	MaxBodyBytes                                 int64
	MaxFeedbackPerDay, MaxQueriesPerDay          int
	MaxFeedbackPerAddress, MaxFeedbackPerNetwork int
	MaxQueriesPerAddress, MaxQueriesPerNetwork   int
}

// What Config.OnLimit is told.
const (
	// KindFeedback: feedback, refused with 429 and not stored.
	KindFeedback = "feedback"
	// KindSearches: a search, counted under store.OtherSearchesQuery or
	// its opened result counted without the result.
	KindSearches = "searches"
	// ReasonCap: the project's UTC day held its cap.
	ReasonCap = "cap"
	// ReasonShare: the client's address or network had added its share
	// of the day.
	ReasonShare = "share"
)

// Endpoints serve the public site endpoints. They are safe for concurrent
// use.
type Endpoints struct {
	cfg      Config
	limiter  *ratelimit.PerAddress
	shares   *shares
	counters counters
}

// New returns the Endpoints of cfg.
func New(cfg Config) *Endpoints {
	return &Endpoints{
		cfg:     cfg,
		limiter: ratelimit.NewPerAddress(cfg.Limits.PerAddress, cfg.Limits.MaxAddresses),
		shares:  newShares(cfg.Limits),
	}
}

// Mux is where Routes adds the routes: an http.ServeMux, or package
// server's, which remembers them.
type Mux interface {
	Handle(pattern string, h http.Handler)
}

// Routes adds the public site endpoints and their script to mux.
func (s *Endpoints) Routes(mux Mux) {
	mux.Handle("POST /v1/site/{projectId}/feedback", s.guard(public.Feedback, s.recordFeedback))
	mux.Handle("POST /v1/site/{projectId}/searches", s.guard(public.Searches, s.recordSearch))
	mux.Handle("OPTIONS /v1/site/{projectId}/feedback", s.observed(public.Preflight, s.preflight))
	mux.Handle("OPTIONS /v1/site/{projectId}/searches", s.observed(public.Preflight, s.preflight))
	mux.Handle("GET /v1/site/{projectId}/docsapi.js", http.HandlerFunc(serveScript))
	mux.Handle("GET /v1/site/{projectId}/docsapi.css", http.HandlerFunc(serveStyle))
}

// Stats counts what the endpoints refused or folded since they were made
// (the fields of server.SiteStats, which says what each is).
type Stats struct {
	Honeypot, RateLimited, FeedbackFull, FeedbackShare int64
	FoldedSearches, UnattributedClicks, SearchesShare  int64
	Addresses, ShareEntries                            int
}

// counters are Stats as they are counted.
type counters struct {
	honeypot, rateLimited, feedbackFull, feedbackShare, foldedSearches, unattributed, searchesShare atomic.Int64
}

// Stats returns what the endpoints refused and folded so far.
func (s *Endpoints) Stats() Stats {
	c := &s.counters
	return Stats{
		Honeypot: c.honeypot.Load(), RateLimited: c.rateLimited.Load(),
		FeedbackFull: c.feedbackFull.Load(), FeedbackShare: c.feedbackShare.Load(),
		FoldedSearches: c.foldedSearches.Load(), UnattributedClicks: c.unattributed.Load(), SearchesShare: c.searchesShare.Load(),
		Addresses: s.limiter.Size(), ShareEntries: s.shares.size(),
	}
}

// Met is what one kind of submission of a project met on a UTC day: the
// day's cap, and how many a client's share refused (feedback) or folded
// (searches).
type Met struct {
	CapReached   bool
	ShareRefused int64
}

// Today returns what project's feedback and searches met on the UTC day of
// now, as this process counted it (the dashboard shows it).
func (s *Endpoints) Today(project string, now time.Time) (feedback, searches Met) {
	t := s.shares.todayOf(project, now)
	return t[shareFeedback], t[shareSearches]
}

// observed serves h, a handler that returns what came of the request (a
// constant of package public), and tells Config.OnRequest.
func (s *Endpoints) observed(endpoint string, h func(http.ResponseWriter, *http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		outcome := h(w, r)
		if s.cfg.OnRequest != nil {
			s.cfg.OnRequest(endpoint, outcome)
		}
	})
}

// guard wraps a public site endpoint: the address budget, the token, the
// origin and the declared body size, in that order (see the package's
// doc). None of these refusals reads the body, so each closes the
// connection (see package server's closeUnreadBodies). Once the origin is
// known to be allowed, every answer carries Access-Control-Allow-Origin,
// so that the page's script can read its errors; no other answer does.
// h returns the outcome, as the guard's refusals do.
func (s *Endpoints) guard(endpoint string, h func(http.ResponseWriter, *http.Request, store.SiteToken) string) http.Handler {
	return s.observed(endpoint, func(w http.ResponseWriter, r *http.Request) string {
		w.Header().Add("Vary", "Origin")
		if !s.spendBudget(w, r) {
			return public.RateLimited
		}
		tok, status, msg := s.token(r)
		if status != 0 {
			respond.Error(w, status, msg)
			if status >= http.StatusInternalServerError {
				return public.Error
			}
			return public.BadToken
		}
		origin, ok := requestOrigin(r)
		switch {
		case !ok:
			respond.Error(w, http.StatusForbidden, "missing Origin header: the site endpoints answer pages of the site's allowed origins")
			return public.Origin
		case !slices.Contains(tok.Origins, origin):
			respond.Error(w, http.StatusForbidden, "origin "+respond.Quote(origin)+" is not allowed to use this site token")
			return public.Origin
		}
		w.Header().Set("Access-Control-Allow-Origin", origin)
		if r.ContentLength > s.cfg.Limits.MaxBodyBytes {
			respond.Error(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than %d bytes", s.cfg.Limits.MaxBodyBytes))
			return public.TooLarge
		}
		return h(w, r, tok)
	})
}

// spendBudget takes a token of the client address's budget, or answers
// 429 and reports false.
func (s *Endpoints) spendBudget(w http.ResponseWriter, r *http.Request) bool {
	wait, limited := s.limiter.Take(s.cfg.Proxies.Addr(r), s.cfg.Now())
	if limited {
		s.counters.rateLimited.Add(1)
		w.Header().Set("Retry-After", ratelimit.RetryAfter(wait))
		respond.Error(w, http.StatusTooManyRequests, "too many requests from this address; retry later")
	}
	return !limited
}

// token finds the request's site token, which must be active and of
// the path's project. It returns a status and message when the request
// must be refused: 400 for a token given twice, 401 for none or one that
// does not work, 403 for one of another project.
func (s *Endpoints) token(r *http.Request) (store.SiteToken, int, string) {
	secret, problem := tokenOf(r)
	if problem != "" {
		return store.SiteToken{}, http.StatusBadRequest, problem
	}
	if secret == "" {
		return store.SiteToken{}, http.StatusUnauthorized, "missing site token: send the header " + TokenHeader + " or the query parameter token"
	}
	tok, err := s.cfg.Store.SiteToken(r.Context(), secret)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.SiteToken{}, http.StatusUnauthorized, "unknown site token"
	case err != nil:
		return store.SiteToken{}, http.StatusInternalServerError, respond.LogInternal(r, s.cfg.Logger, "loading site token", err)
	case !tok.RevokedAt.IsZero():
		return store.SiteToken{}, http.StatusUnauthorized, "this site token was revoked"
	case tok.ProjectID != r.PathValue("projectId"):
		return store.SiteToken{}, http.StatusForbidden, "this site token is for another project"
	}
	return tok, 0, ""
}

// tokenOf returns the site token of r, from the header or the query, or a
// problem when it is given more than once, or twice differently.
func tokenOf(r *http.Request) (token, problem string) {
	headers := r.Header.Values(TokenHeader)
	query := r.URL.Query()["token"]
	switch {
	case len(headers) > 1 || len(query) > 1:
		return "", "the site token is given more than once"
	case len(headers) == 1 && len(query) == 1 && headers[0] != query[0]:
		return "", "the header " + TokenHeader + " and the query parameter token disagree"
	case len(headers) == 1:
		return strings.TrimSpace(headers[0]), ""
	case len(query) == 1:
		return query[0], ""
	}
	return "", ""
}

// requestOrigin returns the request's Origin, as origins are compared
// (see normalizeOrigin), and whether it has one that can be allowed.
func requestOrigin(r *http.Request) (string, bool) {
	vs := r.Header.Values("Origin")
	if len(vs) != 1 {
		return "", false
	}
	o, err := NormalizeOrigin(vs[0])
	if err != nil {
		return vs[0], vs[0] != ""
	}
	return o, true
}

// preflight answers the CORS preflight of a site endpoint: the
// browser asks whether the page's origin may POST with the site token's
// header. The origin must be one of an active token's of the project (the
// token's own, when the query names it: a preflight carries no header
// values), and the request may ask for no other method or header.
func (s *Endpoints) preflight(w http.ResponseWriter, r *http.Request) string {
	w.Header().Add("Vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
	if !s.spendBudget(w, r) {
		return public.RateLimited
	}
	origin, ok := requestOrigin(r)
	if !ok || r.Header.Get("Access-Control-Request-Method") == "" {
		// Not a CORS preflight: say what the resource allows.
		w.Header().Set("Allow", "OPTIONS, POST")
		w.WriteHeader(http.StatusNoContent)
		return public.Accepted
	}
	if m := r.Header.Get("Access-Control-Request-Method"); m != http.MethodPost {
		respond.Error(w, http.StatusForbidden, "method "+respond.Quote(m)+" is not allowed; the site endpoints take POST")
		return public.BadRequest
	}
	for _, h := range strings.Split(r.Header.Get("Access-Control-Request-Headers"), ",") {
		h = strings.ToLower(strings.TrimSpace(h))
		if h != "" && h != "content-type" && h != strings.ToLower(TokenHeader) {
			respond.Error(w, http.StatusForbidden, "header "+respond.Quote(h)+" is not allowed; the site endpoints take Content-Type and "+TokenHeader)
			return public.BadRequest
		}
	}
	allowed, err := s.projectOrigins(r)
	if err != nil {
		respond.InternalError(w, r, s.cfg.Logger, "loading site tokens", err)
		return public.Error
	}
	if !slices.Contains(allowed, origin) {
		respond.Error(w, http.StatusForbidden, "origin "+respond.Quote(origin)+" is not allowed to use this project's site endpoints")
		return public.Origin
	}
	w.Header().Set("Access-Control-Allow-Origin", origin)
	w.Header().Set("Access-Control-Allow-Methods", "POST")
	w.Header().Set("Access-Control-Allow-Headers", "Content-Type, "+TokenHeader)
	w.Header().Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return public.Accepted
}

// projectOrigins lists the origins a preflight of r may be allowed for:
// those of the token its query names, if it is an active token of the
// path's project, or else those of every active token of the project.
func (s *Endpoints) projectOrigins(r *http.Request) ([]string, error) {
	project := r.PathValue("projectId")
	if token, problem := tokenOf(r); problem == "" && token != "" {
		tok, err := s.cfg.Store.SiteToken(r.Context(), token)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (tok.ProjectID != project || !tok.RevokedAt.IsZero())) {
			return nil, nil
		}
		return tok.Origins, err
	}
	toks, err := s.cfg.Store.SiteTokens(r.Context(), project)
	var origins []string
	for _, t := range toks {
		if t.RevokedAt.IsZero() {
			origins = append(origins, t.Origins...)
		}
	}
	return origins, err
}

// writeAccepted answers a site submission: the same for one stored and
// one dropped by the honeypot, so that a bot learns nothing from it.
func writeAccepted(w http.ResponseWriter) {
	respond.JSON(w, http.StatusAccepted, map[string]bool{"accepted": true})
}
