package assistantauth

import (
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/docsapi/docsapi-go/server/internal/ratelimit"
)

// projectLimiter holds one token bucket per project. Only projects whose
// key verified get one, so the map grows with the projects, not with what
// clients send.
type projectLimiter struct {
	limit   ratelimit.Limit
	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

func newProjectLimiter(l ratelimit.Limit) *projectLimiter {
	return &projectLimiter{limit: l, buckets: map[string]*rate.Limiter{}}
}

// take spends a token of the project's budget, or reports how long until
// one is free.
func (p *projectLimiter) take(project string, now time.Time) (time.Duration, bool) {
	if p.limit.Off() {
		return 0, false
	}
	p.mu.Lock()
	b, ok := p.buckets[project]
	if !ok {
		b = rate.NewLimiter(rate.Limit(float64(p.limit.Requests)/p.limit.Per.Seconds()), p.limit.Requests)
		p.buckets[project] = b
	}
	p.mu.Unlock()
	res := b.ReserveN(now, 1)
	if wait := res.DelayFrom(now); wait > 0 {
		res.CancelAt(now) // a refused request must not spend the budget
		return wait, true
	}
	return 0, false
}
