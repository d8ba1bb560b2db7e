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
// the hosted service does (creates and follow-ups; analytics). A zero Limit
// is no limit. The budgets are kept in memory, so each server replica
// enforces its own.
type RateLimits struct {
	Agent     Limit // every agent-job request
	Analytics Limit // every analytics request
}

// Limit allows Requests per Per, with bursts up to Requests.
type Limit struct {
	Requests int
	Per      time.Duration
}

func (l Limit) off() bool { return l.Requests == 0 && l.Per == 0 }

func (r RateLimits) validate() error {
	for name, l := range map[string]Limit{"Agent": r.Agent, "Analytics": r.Analytics} {
		if !l.off() && (l.Requests <= 0 || l.Per <= 0) {
			return fmt.Errorf("server: RateLimits.%s needs positive Requests and Per, got %d per %s", name, l.Requests, l.Per)
		}
	}
	return nil
}

// keyLimiter holds one token bucket per key and family. Keys are few and
// long-lived, so the map is not pruned.
type keyLimiter struct {
	limits  [2]Limit // by apiKind
	mu      sync.Mutex
	buckets map[bucketKey]*rate.Limiter
}

type bucketKey struct {
	kind  apiKind
	keyID string
}

func newKeyLimiter(l RateLimits) *keyLimiter {
	return &keyLimiter{limits: [2]Limit{agentAPI: l.Agent, analyticsAPI: l.Analytics}, buckets: map[bucketKey]*rate.Limiter{}}
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
