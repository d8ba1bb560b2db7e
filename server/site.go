package server

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/ratelimit"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/store"
)

// The public site endpoints (POST /v1/site/{projectId}/feedback and
// /searches) are called by a documentation site's pages from readers'
// browsers, so they take no API key: a browser must never hold one. What
// stands in its way instead, in the order it is checked:
//
//  1. a budget per client address (addrLimiter), before anything costs a
//     database read;
//  2. a site token (store.SiteToken): public by design, it names the
//     project and the origins allowed to use it, and can be revoked;
//  3. the request's Origin, which must be one of the token's: browsers
//     send it and scripts on other sites cannot forge it;
//  4. the body's size, then its fields (sizes, no control or
//     bidirectional formatting characters), and a honeypot field;
//  5. the client's share of the day's caps (siteShares), so that no
//     address or network can fill a cap for everyone;
//  6. the daily caps of the store.

// SiteTokenHeader carries the site token; a "token" query parameter may
// carry it instead, for navigator.sendBeacon, which cannot set headers.
const SiteTokenHeader = "X-Docsapi-Site-Token"

// Defaults of SiteConfig.
const (
	DefaultSiteMaxAddresses = 100_000
	DefaultSiteMaxBodyBytes = 64 << 10
)

// The default shares of a day's cap (SiteConfig.MaxFeedbackPerAddress and
// the like) are these fractions of it: filling a cap takes at least
// SiteAddressesToFillACap addresses in SiteNetworksToFillACap networks.
const (
	SiteAddressesToFillACap = 500
	SiteNetworksToFillACap  = 50
)

// SiteShareDefaults returns the default shares of one address and one
// network of a daily cap: a 500th and a 50th of it, at least 1 each.
func SiteShareDefaults(dailyCap int) (perAddress, perNetwork int) {
	return max(dailyCap/SiteAddressesToFillACap, 1), max(dailyCap/SiteNetworksToFillACap, 1)
}

// DefaultSitePerAddress returns the budget of one client address on the
// site endpoints: far above what a reader sends (a vote, a few searches a
// minute), with room for an office or a school behind one address.
func DefaultSitePerAddress() Limit { return Limit{Requests: 60, Per: time.Minute} }

// SiteConfig bounds the public site endpoints. Unlike RateLimits, its zero
// value is not "no limit" but the defaults: these endpoints are open to
// anyone on the Internet.
type SiteConfig struct {
	// PerAddress is the budget of one client address (an IPv6 client's
	// /64), preflights included; past it, 429 with Retry-After.
	// DefaultSitePerAddress() by default. The address is the connection's
	// peer, or what Config.TrustedProxies vouch for.
	PerAddress Limit
	// MaxAddresses bounds the addresses whose budgets are remembered at
	// once (about 100 bytes each), and separately the addresses and the
	// networks whose shares of the day's caps are (see
	// MaxFeedbackPerAddress). DefaultSiteMaxAddresses by default.
	MaxAddresses int
	// MaxBodyBytes bounds a request body (413 past it).
	// DefaultSiteMaxBodyBytes by default, which holds the longest fields
	// allowed even with every character escaped.
	MaxBodyBytes int64
	// MaxFeedbackPerDay bounds the feedback entries of a project's UTC
	// day; past it, 429 and nothing stored. store.DefaultDailyFeedbackCap
	// by default.
	MaxFeedbackPerDay int
	// MaxQueriesPerDay bounds the distinct search queries (and pairs of
	// query and opened result) of a project's UTC day; past it, searches
	// are counted under store.OtherSearchesQuery. store.DefaultDailyQueryCap
	// by default.
	MaxQueriesPerDay int

	// MaxFeedbackPerAddress bounds the feedback entries one client
	// address (an IPv6 client's /64) may add to a project's UTC day, and
	// MaxFeedbackPerNetwork those of its network (an IPv4 /24, an IPv6
	// /48); past either, 429 and nothing stored, while other addresses go
	// on. They are the shares that keep a script from filling
	// MaxFeedbackPerDay for every reader. By default SiteShareDefaults
	// of MaxFeedbackPerDay. Each process counts its own (replicas do not
	// add up), in memory, for the day; addresses beyond MaxAddresses
	// share one allowance (see siteShares).
	MaxFeedbackPerAddress, MaxFeedbackPerNetwork int
	// MaxQueriesPerAddress and MaxQueriesPerNetwork bound the searches one
	// address or network may make that add a query, or a pair of query
	// and opened result, new to a project's UTC day; past either, its
	// searches still count (totals stay exact), but those of queries the
	// day does not hold are counted under store.OtherSearchesQuery, and
	// results it opens that the day does not hold are counted without the
	// result. By default SiteShareDefaults of MaxQueriesPerDay; counted as
	// the feedback's are.
	MaxQueriesPerAddress, MaxQueriesPerNetwork int
}

// WithDefaults checks c and returns it with its zero fields set to their
// defaults, as New uses it: so that a program can show the values in
// effect.
func (c SiteConfig) WithDefaults() (SiteConfig, error) {
	if c.PerAddress == (Limit{}) {
		c.PerAddress = DefaultSitePerAddress()
	}
	if c.PerAddress.Requests <= 0 || c.PerAddress.Per <= 0 {
		return c, fmt.Errorf("server: Config.Site.PerAddress needs positive Requests and Per, got %d per %s", c.PerAddress.Requests, c.PerAddress.Per)
	}
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{
		{"MaxAddresses", &c.MaxAddresses, DefaultSiteMaxAddresses},
		{"MaxFeedbackPerDay", &c.MaxFeedbackPerDay, store.DefaultDailyFeedbackCap},
		{"MaxQueriesPerDay", &c.MaxQueriesPerDay, store.DefaultDailyQueryCap},
	} {
		switch {
		case *f.v < 0:
			return c, fmt.Errorf("server: Config.Site.%s must not be negative, got %d", f.name, *f.v)
		case *f.v == 0:
			*f.v = f.def
		}
	}
	switch {
	case c.MaxBodyBytes < 0:
		return c, fmt.Errorf("server: Config.Site.MaxBodyBytes must not be negative, got %d", c.MaxBodyBytes)
	case c.MaxBodyBytes == 0:
		c.MaxBodyBytes = DefaultSiteMaxBodyBytes
	}
	for _, sh := range []struct {
		kind                   string
		dailyCap               int
		perAddress, perNetwork *int
	}{
		{"Feedback", c.MaxFeedbackPerDay, &c.MaxFeedbackPerAddress, &c.MaxFeedbackPerNetwork},
		{"Queries", c.MaxQueriesPerDay, &c.MaxQueriesPerAddress, &c.MaxQueriesPerNetwork},
	} {
		addr, net := SiteShareDefaults(sh.dailyCap)
		for _, f := range []struct {
			level string
			v     *int
			def   int
		}{{"Address", sh.perAddress, addr}, {"Network", sh.perNetwork, net}} {
			switch {
			case *f.v < 0:
				return c, fmt.Errorf("server: Config.Site.Max%sPer%s must not be negative, got %d", sh.kind, f.level, *f.v)
			case *f.v == 0:
				*f.v = f.def
			}
		}
		switch {
		case *sh.perAddress > *sh.perNetwork:
			return c, fmt.Errorf("server: Config.Site.Max%[1]sPerAddress (%[2]d) must not be more than Max%[1]sPerNetwork (%[3]d): an address is part of its network", sh.kind, *sh.perAddress, *sh.perNetwork)
		case *sh.perNetwork > sh.dailyCap:
			return c, fmt.Errorf("server: Config.Site.Max%[1]sPerNetwork (%[2]d) must not be more than Max%[1]sPerDay (%[3]d)", sh.kind, *sh.perNetwork, sh.dailyCap)
		}
	}
	return c, nil
}

// SiteStats counts what the site endpoints refused or folded since the
// Server was made, in this process.
type SiteStats struct {
	// Honeypot counts submissions whose honeypot field was filled: they
	// were answered as if stored, and dropped.
	Honeypot int64
	// RateLimited counts requests refused by the per-address budget.
	RateLimited int64
	// FeedbackFull counts feedback refused because its project's day
	// held MaxFeedbackPerDay entries.
	FeedbackFull int64
	// FeedbackShare counts feedback refused because its address or
	// network had added its share of the day (MaxFeedbackPerAddress,
	// MaxFeedbackPerNetwork).
	FeedbackShare int64
	// FoldedSearches counts searches counted under
	// store.OtherSearchesQuery, past MaxQueriesPerDay or a share.
	FoldedSearches int64
	// UnattributedClicks counts openings of a result counted without the
	// result, past MaxQueriesPerDay pairs or a share.
	UnattributedClicks int64
	// SearchesShare counts searches that lost their query or opened
	// result (counted as FoldedSearches or UnattributedClicks) because
	// their address or network had added its share of the day
	// (MaxQueriesPerAddress, MaxQueriesPerNetwork).
	SearchesShare int64
	// Addresses is the number of client addresses whose budgets are
	// remembered now (at most MaxAddresses).
	Addresses int
	// ShareEntries is the number of addresses and networks whose shares
	// of today's caps are remembered now (at most MaxAddresses of each).
	ShareEntries int
}

// siteCounters are SiteStats as they are counted.
type siteCounters struct {
	honeypot, rateLimited, feedbackFull, feedbackShare, foldedSearches, unattributed, searchesShare atomic.Int64
}

// SiteStats returns what the site endpoints refused and folded so far.
func (s *Server) SiteStats() SiteStats {
	c := &s.siteCounters
	return SiteStats{
		Honeypot: c.honeypot.Load(), RateLimited: c.rateLimited.Load(),
		FeedbackFull: c.feedbackFull.Load(), FeedbackShare: c.feedbackShare.Load(),
		FoldedSearches: c.foldedSearches.Load(), UnattributedClicks: c.unattributed.Load(), SearchesShare: c.searchesShare.Load(),
		Addresses: s.siteLimiter.Size(), ShareEntries: s.siteShares.size(),
	}
}

// site wraps a public site endpoint: the address budget, the token, the
// origin and the declared body size, in that order (see the top of this
// file). None of these refusals reads the body, so each closes the
// connection (see closeUnreadBodies). Once the origin is known to be
// allowed, every answer carries Access-Control-Allow-Origin, so that the
// page's script can read its errors; no other answer does.
func (s *Server) site(h func(http.ResponseWriter, *http.Request, store.SiteToken)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Origin")
		if !s.spendSiteBudget(w, r) {
			return
		}
		tok, status, msg := s.siteToken(r)
		if status != 0 {
			respond.Error(w, status, msg)
			return
		}
		origin, ok := requestOrigin(r)
		switch {
		case !ok:
			respond.Error(w, http.StatusForbidden, "missing Origin header: the site endpoints answer pages of the site's allowed origins")
			return
		case !slices.Contains(tok.Origins, origin):
			respond.Error(w, http.StatusForbidden, "origin "+respond.Quote(origin)+" is not allowed to use this site token")
			return
		}
		w.Header().Set("Access-Control-Allow-Origin", origin)
		if r.ContentLength > s.cfg.Site.MaxBodyBytes {
			respond.Error(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than %d bytes", s.cfg.Site.MaxBodyBytes))
			return
		}
		h(w, r, tok)
	})
}

// spendSiteBudget takes a token of the client address's budget, or answers
// 429 and reports false.
func (s *Server) spendSiteBudget(w http.ResponseWriter, r *http.Request) bool {
	wait, limited := s.siteLimiter.Take(s.proxies.Addr(r), s.cfg.Now())
	if limited {
		s.siteCounters.rateLimited.Add(1)
		w.Header().Set("Retry-After", ratelimit.RetryAfter(wait))
		respond.Error(w, http.StatusTooManyRequests, "too many requests from this address; retry later")
	}
	return !limited
}

// siteToken finds the request's site token, which must be active and of
// the path's project. It returns a status and message when the request
// must be refused: 400 for a token given twice, 401 for none or one that
// does not work, 403 for one of another project.
func (s *Server) siteToken(r *http.Request) (store.SiteToken, int, string) {
	secret, problem := tokenOf(r)
	if problem != "" {
		return store.SiteToken{}, http.StatusBadRequest, problem
	}
	if secret == "" {
		return store.SiteToken{}, http.StatusUnauthorized, "missing site token: send the header " + SiteTokenHeader + " or the query parameter token"
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
	headers := r.Header.Values(SiteTokenHeader)
	query := r.URL.Query()["token"]
	switch {
	case len(headers) > 1 || len(query) > 1:
		return "", "the site token is given more than once"
	case len(headers) == 1 && len(query) == 1 && headers[0] != query[0]:
		return "", "the header " + SiteTokenHeader + " and the query parameter token disagree"
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
	o, err := normalizeOrigin(vs[0])
	if err != nil {
		return vs[0], vs[0] != ""
	}
	return o, true
}

// sitePreflight answers the CORS preflight of a site endpoint: the
// browser asks whether the page's origin may POST with the site token's
// header. The origin must be one of an active token's of the project (the
// token's own, when the query names it: a preflight carries no header
// values), and the request may ask for no other method or header.
func (s *Server) sitePreflight(w http.ResponseWriter, r *http.Request) {
	w.Header().Add("Vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
	if !s.spendSiteBudget(w, r) {
		return
	}
	origin, ok := requestOrigin(r)
	if !ok || r.Header.Get("Access-Control-Request-Method") == "" {
		// Not a CORS preflight: say what the resource allows.
		w.Header().Set("Allow", "OPTIONS, POST")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if m := r.Header.Get("Access-Control-Request-Method"); m != http.MethodPost {
		respond.Error(w, http.StatusForbidden, "method "+respond.Quote(m)+" is not allowed; the site endpoints take POST")
		return
	}
	for _, h := range strings.Split(r.Header.Get("Access-Control-Request-Headers"), ",") {
		h = strings.ToLower(strings.TrimSpace(h))
		if h != "" && h != "content-type" && h != strings.ToLower(SiteTokenHeader) {
			respond.Error(w, http.StatusForbidden, "header "+respond.Quote(h)+" is not allowed; the site endpoints take Content-Type and "+SiteTokenHeader)
			return
		}
	}
	allowed, err := s.projectOrigins(r)
	if err != nil {
		respond.InternalError(w, r, s.cfg.Logger, "loading site tokens", err)
		return
	}
	if !slices.Contains(allowed, origin) {
		respond.Error(w, http.StatusForbidden, "origin "+respond.Quote(origin)+" is not allowed to use this project's site endpoints")
		return
	}
	w.Header().Set("Access-Control-Allow-Origin", origin)
	w.Header().Set("Access-Control-Allow-Methods", "POST")
	w.Header().Set("Access-Control-Allow-Headers", "Content-Type, "+SiteTokenHeader)
	w.Header().Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}

// projectOrigins lists the origins a preflight of r may be allowed for:
// those of the token its query names, if it is an active token of the
// path's project, or else those of every active token of the project.
func (s *Server) projectOrigins(r *http.Request) ([]string, error) {
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
