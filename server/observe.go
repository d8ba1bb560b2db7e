package server

import (
	"time"

	"github.com/docsapi/docsapi-go/server/site"
)

// What the server's hooks are told (Config.OnRequest, Config.OnIngestCommit,
// Config.OnSiteLimit): server/metrics counts with them.

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
