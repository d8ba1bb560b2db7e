package server

import (
	"fmt"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/ratelimit"
)

// RateLimits bounds requests per API key, each family on its own budget, as
// the hosted service does (creates and follow-ups; analytics), with page-view
// ingestion apart from analytics reads, since a site sends views far more
// often than anyone reads them. A zero Limit is no limit, so the zero
// RateLimits limits nothing: a host application that mounts the Server
// chooses its limits (DefaultRateLimits are `docsapi serve`'s). The budgets
// are kept in memory, so each server replica enforces its own.
type RateLimits struct {
	Agent     Limit // every agent-job request
	Analytics Limit // analytics reads: GET /v1/analytics/{projectId}/views
	Ingest    Limit // page views sent to POST /v1/analytics/{projectId}/views
}

// DefaultRateLimits are the limits `docsapi serve` applies unless its
// configuration says otherwise: generous for any real client, and a bound
// on what one key can make the server do.
//
//   - Analytics: 600 reads a minute (10 a second, in bursts of up to 600),
//     enough for dashboards and for exporting every row 250 at a time.
//   - Ingest: 6,000 requests a minute (100 a second). A request carries up to
//     1,000 views, so a sender that batches never comes near it; one that
//     posts each view as it happens (an edge function) stays under it up to
//     about 100 views a second, several million a day.
//   - Agent: no limit, as before; jobs queue for the engine, which runs a
//     bounded number at once.
func DefaultRateLimits() RateLimits {
	return RateLimits{
		Analytics: Limit{Requests: 600, Per: time.Minute},
		Ingest:    Limit{Requests: 6000, Per: time.Minute},
	}
}

// Limit allows Requests per Per, with bursts up to Requests.
type Limit struct {
	Requests int
	Per      time.Duration
}

func (r RateLimits) validate() error {
	for name, l := range map[string]Limit{"Agent": r.Agent, "Analytics": r.Analytics, "Ingest": r.Ingest} {
		if !ratelimit.Limit(l).Off() && (l.Requests <= 0 || l.Per <= 0) {
			return fmt.Errorf("server: RateLimits.%s needs positive Requests and Per, got %d per %s", name, l.Requests, l.Per)
		}
	}
	return nil
}
