package pageviews

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/hll"
	"github.com/docsapi/docsapi-go/server/internal/visitorhash"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/traffic"
)

// DefaultMaxVisitorBytes is the default of Config.MaxVisitorBytes.
const DefaultMaxVisitorBytes = 64 << 20

// VisitorSink is where unique visitors go: store.Store satisfies it. A
// Recorder whose Sink also implements VisitorSink counts unique visitors.
type VisitorSink interface {
	AddVisitors(ctx context.Context, counts []store.VisitorCount) error
	VisitorSalt(ctx context.Context, day time.Time) ([]byte, error)
}

// What a sketch is charged against Config.MaxVisitorBytes while live: its
// pair's allocation, its map slot and the first allocation of both its
// sketches once, and for every hash inserted that differs from the one
// before it, more than a sparse sketch keeps per entry (its set of recent
// entries, its compressed list and the slack of their growth). A dense
// sketch takes less than its sparse form did, so counting on past the
// switch only overstates. Repeats of the last visitor are neither
// inserted nor charged: a reader's views come in runs.
const (
	visitorPairCost  = 512
	visitorEntryCost = 16
)

// liveVisitors are the sketches of one counter's visitors, human and AI,
// between two flushes.
type liveVisitors struct {
	sk      [2]hll.Sketch
	last    [2]uint64
	seen    [2]bool
	charged int64 // bytes charged against MaxVisitorBytes
}

// visitorClass is the index of class's sketch, or -1 for bots, which are
// not visitors.
func visitorClass(class traffic.Class) int {
	switch class {
	case traffic.Human:
		return 0
	case traffic.AI:
		return 1
	}
	return -1
}

// insert adds h to the sketch of class i and returns whether it was new
// to the run (and so charged).
func (v *liveVisitors) insert(i int, h uint64) {
	v.sk[i].Insert(h)
	v.last[i], v.seen[i] = h, true
}

// repeat reports whether h is the last visitor of class i: nothing to do.
func (v *liveVisitors) repeat(i int, h uint64) bool {
	return v != nil && v.seen[i] && v.last[i] == h
}

// encode returns the encodings of the sketches; nil for an empty one.
func (v *liveVisitors) encode() (human, ai []byte) {
	enc := func(s *hll.Sketch, seen bool) []byte {
		if !seen {
			return nil
		}
		return s.AppendBinary(nil)
	}
	return enc(&v.sk[0], v.seen[0]), enc(&v.sk[1], v.seen[1])
}

// charge reserves n bytes of MaxVisitorBytes, if they fit.
func (r *Recorder) charge(n int64) bool {
	if r.visBytes.Add(n) <= r.cfg.MaxVisitorBytes {
		return true
	}
	r.visBytes.Add(-n)
	return false
}

// addVisitor counts visitor h of class i under k, whose counter c and
// shard s (locked) are given, in k's sketch while MaxVisitorBytes allow;
// it reports false when the visitor must go to the overflow sketch of k's
// project and hour instead.
func (r *Recorder) addVisitor(s *shard, c *liveCounter, k key, i int, h uint64) bool {
	v := c.vis
	if v.repeat(i, h) {
		return true
	}
	if k.path == r.cfg.OverflowPath {
		return false
	}
	cost := int64(visitorEntryCost)
	if v == nil {
		cost += visitorPairCost
	}
	if !r.charge(cost) {
		return false
	}
	if v == nil {
		v = new(liveVisitors)
		s.vis[k], c.vis = v, v
	}
	v.charged += cost
	v.insert(i, h)
	return true
}

// overflowVisitors holds the sketches of the overflow keys: one per
// project and hour recorded in (Config.Now) at most, so few and not
// charged; each grows at most to a dense sketch.
type overflowVisitors struct {
	mu sync.Mutex
	m  map[key]*liveVisitors
}

func (o *overflowVisitors) add(k key, i int, h uint64) {
	o.mu.Lock()
	v := o.m[k]
	if v == nil {
		v = new(liveVisitors)
		o.m[k] = v
	}
	if !v.repeat(i, h) {
		v.insert(i, h)
	}
	o.mu.Unlock()
}

// take returns the sketches held and leaves none.
func (o *overflowVisitors) take() map[key]*liveVisitors {
	o.mu.Lock()
	defer o.mu.Unlock()
	m := o.m
	o.m = map[key]*liveVisitors{}
	return m
}

// saltSet is the salts the recorder holds: today's, and tomorrow's once
// fetched ahead of midnight. Never older ones: once a day is over its
// salt is dropped, so its visitors cannot be hashed again.
type saltSet struct {
	salts [2]*visitorhash.Salt
}

// index returns the index of the salt of t's day, or -1.
func (ss *saltSet) index(t time.Time) int {
	if ss == nil {
		return -1
	}
	for i, s := range ss.salts {
		if s.For(t) {
			return i
		}
	}
	return -1
}

// find returns the salt of t's day, or nil.
func (ss *saltSet) find(t time.Time) *visitorhash.Salt {
	if i := ss.index(t); i >= 0 {
		return ss.salts[i]
	}
	return nil
}

// saltLead is how long before midnight (UTC) the next day's salt is
// fetched: long enough for several flush intervals to retry a store that
// is slow to answer.
func (r *Recorder) saltLead() time.Duration {
	return max(10*time.Minute, 3*r.cfg.FlushInterval)
}

// refreshSalts fetches the salts the recorder lacks, today's and, ahead of
// midnight, tomorrow's, and drops the others. It runs on the flush
// goroutine, so requests never wait for the store: a request of a day
// with no salt counts its view without its visitor (Stats.NoSalt). A
// failing store and the views it leaves without visitors are logged once
// per run of intervals they last, not on every interval.
func (r *Recorder) refreshSalts(ctx context.Context) {
	if r.visSink == nil {
		return
	}
	r.saltMu.Lock()
	defer r.saltMu.Unlock()
	now := r.cfg.Now()
	cur := r.salts.Load()
	var next saltSet
	var fetchErr error
	for i, t := range [...]time.Time{now, now.Add(r.saltLead())} {
		if i == 1 && visitorhash.DayOf(t) == visitorhash.DayOf(now) {
			break
		}
		var s *visitorhash.Salt
		if j := cur.index(t); j >= 0 {
			s = cur.salts[j]
		} else {
			secret, err := r.visSink.VisitorSalt(ctx, t)
			switch {
			case err != nil:
				fetchErr = err
			case len(secret) == 0:
				fetchErr = errors.New("the store returned an empty salt")
			default:
				s = visitorhash.New(t, secret)
			}
		}
		next.salts[i] = s
	}
	if cur == nil || next != *cur {
		r.salts.Store(&next)
	}
	if fetchErr != nil && !r.saltFailing {
		r.cfg.Logger.WarnContext(ctx, "pageviews: cannot get a day's visitor salt; until it comes, views of that day are counted without their visitors",
			slog.Any("error", fetchErr))
	}
	r.saltFailing = fetchErr != nil
	if missed := r.stats.noSalt.Load(); missed > r.reportedNoSalt {
		if !r.noSaltBurst {
			r.cfg.Logger.WarnContext(ctx, "pageviews: views counted without their visitors: no salt for their day",
				slog.Int64("views", missed-r.reportedNoSalt))
		}
		r.reportedNoSalt, r.noSaltBurst = missed, true
	} else {
		r.noSaltBurst = false
	}
}

// visitorOf returns the visitor value of a request's client, or false when
// no salt is held for at's day (counted in Stats.NoSalt).
func (r *Recorder) visitorOf(project string, at time.Time, addr netip.Addr, userAgent string) (uint64, bool) {
	s := r.salts.Load().find(at)
	if s == nil {
		r.stats.noSalt.Add(1)
		return 0, false
	}
	return s.Client(project, addr, userAgent), true
}
