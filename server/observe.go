package server

import (
	"time"

	"github.com/docsapi/docsapi-go/server/dashboard"
	"github.com/docsapi/docsapi-go/server/internal/public"
	"github.com/docsapi/docsapi-go/server/site"
)

// What the server's hooks are told (Config.OnRequest, Config.OnIngestCommit,
// Config.OnSiteLimit, Config.OnPublicRequest, Config.OnSignIn):
// server/metrics counts with them.

// RequestInfo is what Config.OnRequest is told of a request.
type RequestInfo struct {
	// Route is the pattern of the route that answered, as registered
	// (such as "GET /v2/agent/{projectId}/job/{id}"), or "" when none did
	// (a 404 or 405 for a path or method the API does not have). It never
	// holds the request's path, so that a metric labelled with it has as
	// many values as the API has routes, whatever paths clients invent.
	Route string
	// Status is the status code of the response (200 if the handler
	// wrote none).
	Status int
	// Duration is how long the request took to serve, by Config.Now.
	Duration time.Duration
}

// IngestCommitInfo is what Config.OnIngestCommit is told of a commit of
// ingested page views: one AddViews call on behalf of the requests that
// arrived together.
type IngestCommitInfo struct {
	Requests int   // the requests answered by the commit
	Views    int64 // their views, human, AI and bot
	// Duration is how long the store took, by Config.Now.
	Duration time.Duration
	// Err is the store's error: nil if the views are stored, else every
	// request of the commit was answered 503.
	Err error
}

// The values of SiteLimitInfo.
const (
	// SiteLimitFeedback: feedback, refused with 429 and not stored.
	SiteLimitFeedback = site.KindFeedback
	// SiteLimitSearches: a search, counted under store.OtherSearchesQuery
	// or its opened result counted without the result.
	SiteLimitSearches = site.KindSearches
	// SiteLimitCap: the project's UTC day held its cap
	// (SiteConfig.MaxFeedbackPerDay, MaxQueriesPerDay).
	SiteLimitCap = site.ReasonCap
	// SiteLimitShare: the client's address or network had added its
	// share of the day (SiteConfig.MaxFeedbackPerAddress and the like).
	SiteLimitShare = site.ReasonShare
)

// SiteLimitInfo is what Config.OnSiteLimit is told of a submission to a
// public site endpoint that met a day's cap or a client's share of it.
type SiteLimitInfo struct {
	Kind   string // SiteLimitFeedback or SiteLimitSearches
	Reason string // SiteLimitCap or SiteLimitShare
}

// PublicRequestInfo is what Config.OnPublicRequest is told of a request
// to a site endpoint or the ingestion endpoint. Both fields take values
// of a fixed set (PublicRequestOutcomes lists every pair), never anything
// the request held.
type PublicRequestInfo struct {
	// Endpoint is "feedback" or "searches" (POST /v1/site/...),
	// "preflight" (their CORS preflights), "ingest" (POST
	// /v1/analytics/{projectId}/views), "discovery_search" or
	// "discovery_page" (POST /discovery/v1/search/{domain} and
	// /discovery/v1/page/{domain}), or "discovery_preflight" (theirs).
	Endpoint string
	// Outcome is "accepted", or why the request was refused:
	// "rate_limited" (the address's budget, or the key's for ingest),
	// "bad_token" (a site token missing, unknown, revoked or of another
	// project), "bad_key" (ingest: an API key refused; /discovery: an
	// assistant key refused, or not of the domain), "origin" (an Origin
	// the token or key does not allow), "not_found" (discovery_page: no
	// such page in the index), "bad_request" (a preflight
	// asking for another method or header), "too_large", "bad_body",
	// "share" and "cap" (feedback past a client's share of the day or the
	// project's cap), "busy" (ingest: no room to queue the views),
	// "cancelled" (ingest: the request ended first), "error" (the store
	// failed or refused the write); or "honeypot" (answered as accepted,
	// and dropped).
	Outcome string
}

// PublicRequestOutcomes returns every PublicRequestInfo that
// Config.OnPublicRequest may be told, so that a counter can start them
// all at zero.
func PublicRequestOutcomes() []PublicRequestInfo {
	var all []PublicRequestInfo
	for _, e := range public.Endpoints() {
		for _, o := range public.Outcomes(e) {
			all = append(all, PublicRequestInfo{Endpoint: e, Outcome: o})
		}
	}
	return all
}

// onPublicRequest tells hook, if set, what came of a site request.
func onPublicRequest(hook func(PublicRequestInfo)) func(endpoint, outcome string) {
	if hook == nil {
		return nil
	}
	return func(endpoint, outcome string) { hook(PublicRequestInfo{Endpoint: endpoint, Outcome: outcome}) }
}

// The values of SignInInfo.Result.
const (
	SignInOK      = dashboard.SignInOK      // a session opened
	SignInRefused = dashboard.SignInRefused // the key was refused: unknown, revoked or expired
	SignInLimited = dashboard.SignInLimited // the address had spent its budget of attempts (DashboardConfig.LoginPerAddress)
	SignInInvalid = dashboard.SignInInvalid // the form came from another site, or without its CSRF token
	SignInError   = dashboard.SignInError   // the store failed
)

// SignInInfo is what Config.OnSignIn is told of an attempt to sign in to
// the dashboard.
type SignInInfo struct {
	Result string // a SignIn constant
}

// SignInResults returns every SignInInfo.Result.
func SignInResults() []string { return dashboard.SignInResults() }

// onSignIn tells hook, if set, of a sign-in attempt.
func onSignIn(hook func(SignInInfo)) func(result string) {
	if hook == nil {
		return nil
	}
	return func(result string) { hook(SignInInfo{Result: result}) }
}
