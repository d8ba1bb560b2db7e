package keyauth

import (
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/docsapi/docsapi-go/server/internal/ratelimit"
)

// keyLimiter holds one token bucket per key and kind. Keys are few and
// long-lived, so the map is not pruned.
type keyLimiter struct {
	limits  [Kinds]ratelimit.Limit
	mu      sync.Mutex
	buckets map[bucketKey]*rate.Limiter
}

type bucketKey struct {
	kind  Kind
	keyID string
}

func newKeyLimiter(limits [Kinds]ratelimit.Limit) *keyLimiter {
	return &keyLimiter{limits: limits, buckets: map[bucketKey]*rate.Limiter{}}
}

// take spends a token, or reports how long until one is free.
func (k *keyLimiter) take(kind Kind, keyID string, now time.Time) (time.Duration, bool) {
	l := k.limits[kind]
	if l.Off() {
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
