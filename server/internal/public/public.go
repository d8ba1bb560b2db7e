// Package public names what came of the requests to the endpoints anyone
// may call (the site endpoints, with a public token) or that take their
// data from outside (the ingestion endpoint): the endpoint and the
// outcome, as the hooks that count them are told (server.Config.
// OnPublicRequest). Every value is one of the constants below, never
// anything a request holds, so a metric labelled with them has a fixed set
// of series whatever clients send.
package public

// The endpoints.
const (
	Feedback  = "feedback"  // POST /v1/site/{projectId}/feedback
	Searches  = "searches"  // POST /v1/site/{projectId}/searches
	Preflight = "preflight" // OPTIONS of either: the CORS preflights
	Ingest    = "ingest"    // POST /v1/analytics/{projectId}/views
	// DiscoverySearch, DiscoveryPage and DiscoveryPreflight are the
	// Assistant API's: POST /discovery/v1/search/{domain} and
	// /discovery/v1/page/{domain}, and the OPTIONS of either.
	DiscoverySearch    = "discovery_search"
	DiscoveryPage      = "discovery_page"
	DiscoveryPreflight = "discovery_preflight"
	// DiscoveryAssistant is POST /discovery/v2/assistant/{domain}/message,
	// the assistant's answers (its preflight is DiscoveryPreflight).
	DiscoveryAssistant = "discovery_assistant"
)

// The outcomes: Accepted, or why the request was refused (or, for
// Honeypot, answered as accepted and dropped).
const (
	// Accepted: answered 2xx and kept (a search past a cap or share is
	// accepted too, folded; docsapi_site_limited_total counts those).
	Accepted = "accepted"
	// RateLimited: the client address's budget (site endpoints), or the
	// key's (ingestion).
	RateLimited = "rate_limited"
	// BadToken: a site token missing, unknown, revoked, given twice or of
	// another project.
	BadToken = "bad_token"
	// BadKey: an API key missing, invalid, revoked, expired, of another
	// project or without the write scope; for the /discovery endpoints,
	// an assistant key missing, invalid, revoked or not of the path's
	// domain.
	BadKey = "bad_key"
	// Origin: no Origin, or one the token (or the project, for a
	// preflight) does not allow.
	Origin = "origin"
	// BadRequest: a preflight asking for a method or header the
	// endpoints do not take.
	BadRequest = "bad_request"
	// TooLarge: a body past the bound.
	TooLarge = "too_large"
	// BadBody: a body that is not what the endpoint takes.
	BadBody = "bad_body"
	// Honeypot: a submission that filled the hidden field, answered as
	// accepted and dropped.
	Honeypot = "honeypot"
	// Share: feedback past its client address's or network's share of
	// the day.
	Share = "share"
	// Cap: feedback past its project's cap of the day; an assistant
	// question past its thread's cap, or its project's daily cap of
	// questions or of tokens.
	Cap = "cap"
	// Busy: ingested views the server had no room to queue (503).
	Busy = "busy"
	// Cancelled: a request that ended before its views were stored.
	Cancelled = "cancelled"
	// NotFound: a page the index does not hold (discovery_page).
	NotFound = "not_found"
	// Unanswered: an assistant question retrieval found no source for,
	// answered that the docs do not cover it, without the model.
	Unanswered = "unanswered"
	// Unavailable: the project has no assistant model (503).
	Unavailable = "unavailable"
	// Error: the store failed, or refused the write (a project removed
	// meanwhile).
	Error = "error"
)

// Outcomes returns every outcome of endpoint, nil for an unknown one.
func Outcomes(endpoint string) []string {
	switch endpoint {
	case Feedback:
		return []string{Accepted, RateLimited, BadToken, Origin, TooLarge, BadBody, Honeypot, Share, Cap, Error}
	case Searches:
		return []string{Accepted, RateLimited, BadToken, Origin, TooLarge, BadBody, Honeypot, Error}
	case Preflight:
		return []string{Accepted, RateLimited, Origin, BadRequest, Error}
	case Ingest:
		return []string{Accepted, RateLimited, BadKey, TooLarge, BadBody, Busy, Cancelled, Error}
	case DiscoverySearch:
		return []string{Accepted, RateLimited, BadKey, Origin, TooLarge, BadBody, Error}
	case DiscoveryPage:
		return []string{Accepted, NotFound, RateLimited, BadKey, Origin, TooLarge, BadBody, Error}
	case DiscoveryAssistant:
		return []string{Accepted, Unanswered, NotFound, RateLimited, BadKey, Origin, TooLarge, BadBody, Cap, Unavailable, Error}
	case DiscoveryPreflight:
		return []string{Accepted, RateLimited, Origin, BadRequest, Error}
	}
	return nil
}

// Endpoints returns every endpoint.
func Endpoints() []string {
	return []string{Feedback, Searches, Preflight, Ingest, DiscoverySearch, DiscoveryPage, DiscoveryAssistant, DiscoveryPreflight}
}
