package server

import (
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
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

func (l Limit) off() bool { return l.Requests == 0 && l.Per == 0 }

func (r RateLimits) validate() error {
	for name, l := range map[string]Limit{"Agent": r.Agent, "Analytics": r.Analytics, "Ingest": r.Ingest} {
		if !l.off() && (l.Requests <= 0 || l.Per <= 0) {
			return fmt.Errorf("server: RateLimits.%s needs positive Requests and Per, got %d per %s", name, l.Requests, l.Per)
		}
	}
	return nil
}

// keyLimiter holds one token bucket per key and family. Keys are few and
// long-lived, so the map is not pruned.
type keyLimiter struct {
	limits  [apiKinds]Limit
	mu      sync.Mutex
	buckets map[bucketKey]*rate.Limiter
}

type bucketKey struct {
	kind  apiKind
	keyID string
}

func newKeyLimiter(l RateLimits) *keyLimiter {
	return &keyLimiter{limits: [apiKinds]Limit{agentAPI: l.Agent, analyticsAPI: l.Analytics, ingestAPI: l.Ingest}, buckets: map[bucketKey]*rate.Limiter{}}
}

// take spends a token, or reports how long until one is free.
func (k *keyLimiter) take(kind apiKind, keyID string, now time.Time) (time.Duration, bool) {
	l := k.limits[kind]
	if l.off() {
		return 0, false
	}
	k.mu.Lock()
	b, ok := k.buckets[bucketKey{kind, keyID}]
	if !ok {
		b = rate.NewLimiter(rate.Limit(float64(l.Requests)/l.Per.Seconds()), l.Requests)
		k.buckets[bucketKey{kind, keyID}] = b
	}
	k.mu.Unlock()
	res := b.ReserveN(now, 1)
	if wait := res.DelayFrom(now); wait > 0 {
		res.CancelAt(now) // a refused request must not spend the budget
		return wait, true
	}
	return 0, false
}

// retryAfterSeconds rounds up, so a client that waits as told finds a token.
func retryAfterSeconds(d time.Duration) string {
	return strconv.Itoa(int(math.Ceil(d.Seconds())))
}
