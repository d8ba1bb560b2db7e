// Package pageviews counts page views of a documentation site, split into
// human, AI and bot traffic, and writes the counts to the store in batches.
//
// Counting is in memory, per project, path and hour, so recording a view
// costs a map update rather than a database write; a flush adds the counts
// to the store (adding, never overwriting) on an interval and at Close. A
// flush that fails keeps its counts for the next one: views are never
// dropped and, because the store applies a batch whole or not at all, never
// counted twice.
//
// # Memory
//
// Whoever can request a page can make up paths, so memory is bounded by
// counters, not by traffic. A counter costs about 150 bytes plus its
// project and path (the strings it is keyed by are kept until it is
// written), and a path is at most Config.MaxPathBytes long: views of longer
// paths are counted under Config.OverflowPath. AI and bot views are also
// counted per agent on their counter, about 40 bytes for each agent seen
// there; agents are the names of the classifier's rules (see
// traffic.Classifier.ClassifyAgent), never a user agent as sent, so a
// counter holds at most as many as the rule table has rules. A Recorder
// holds at most:
//
//   - live counters, between two flushes: Config.MaxKeys counters of
//     distinct (project, path, hour), then up to MaxKeys overflow counters,
//     one per project and hour, then one overflow counter per project for
//     each hour the views are recorded in (Config.Now; one or two, unless
//     FlushInterval is longer than an hour);
//   - pending counters, kept by failed flushes until the store takes them:
//     Config.MaxPendingKeys counters, plus one per project.
//
// The number of projects is the caller's: the middleware counts for one,
// the ingest endpoint for projects that exist.
//
// Past a bound, views are not dropped but counted on a coarser counter:
// under OverflowPath for their project, class and hour, and, past the last
// bound, at another hour (live: the hour the view is recorded in; pending:
// the first hour folded for its project). So every view is counted exactly
// once, and totals per project and class stay exact; what is given up is
// the path, and then the hour. Stats counts these views (Overflowed when
// recorded, Folded when a failed flush keeps them), and the Logger is
// warned once per flush that finds new ones.
//
// # Unique visitors
//
// If the Sink also implements VisitorSink, each counter of a page has a
// HyperLogLog sketch of its visitors beside it (humans and AI apart; bots
// are not visitors): the client's address and user agent hashed with the
// day's secret salt (package visitorhash). The salt is fetched by the
// flush goroutine, today's at Start and tomorrow's ahead of midnight, so a
// request never waits for the store; the value is kept only in sketches.
// A flush writes a batch's sketches (AddVisitors) once its views are
// written; sketches whose write failed are kept encoded for the next
// flush.
//
// Sketches are bounded by Config.MaxVisitorBytes, live and pending
// together, each charged an upper bound of its memory. Past it, visitors
// are inserted into the sketch of their project's overflow key (one per
// project, hour and class, uncharged, each at most a dense sketch), never
// into new sketches; pending sketches are bounded in number by
// MaxPendingKeys too, folded as pending counters are.
package pageviews

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"math"
	"math/bits"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/clientip"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/traffic"
)

// Defaults of Config.
const (
	DefaultFlushInterval = 10 * time.Second
	DefaultMaxKeys       = 100_000
	DefaultOverflowPath  = store.OtherPagesPath
	// DefaultMaxPathBytes is the ingest endpoint's limit on a path.
	DefaultMaxPathBytes = 2048
	// DefaultBatchSize bounds one AddViews call, so that a very large flush
	// does not hold the store's write lock for long.
	DefaultBatchSize = 5000
)

// Sink is where counts go: store.Store satisfies it.
type Sink interface {
	AddViews(ctx context.Context, counts []store.ViewCount) error
}

// Config configures a Recorder. Sink is required.
type Config struct {
	Sink Sink
	// FlushInterval is how often counts are written to the Sink.
	FlushInterval time.Duration
	// MaxKeys bounds the live counters: the distinct (project, path, hour)
	// counters held between two flushes. Views of further paths are
	// counted under OverflowPath, one counter per project and hour, so
	// totals stay exact, and reported in Stats.Overflowed. The overflow
	// counters come on top, up to MaxKeys of them; past that, views of an
	// hour with no overflow counter are counted under the overflow counter
	// of the hour they are recorded in (Now), one per project. So between
	// two flushes at most 2×MaxKeys counters are held, plus one per
	// project and hour that passes. Default DefaultMaxKeys.
	MaxKeys int
	// MaxPendingKeys bounds the pending counters: those a failed flush
	// keeps for the next one, which pile up for as long as the store
	// fails. A flush writes every counter it holds; of those it fails to
	// write, the ones already pending stay as they are, and the others
	// become pending while fewer than MaxPendingKeys are. Past that, their
	// views are folded into the overflow counter of their project and hour
	// (OverflowPath), while it fits in the bound (the last 1/16 of which
	// is kept for overflow counters), else into one further counter per
	// project: the overflow counter of the first hour folded there. So at
	// most MaxPendingKeys counters are pending, plus one per project; a
	// flush that succeeds folds nothing; totals per project and class stay
	// exact; folded views are reported in Stats.Folded.
	//
	// Default 2×MaxKeys: a flush takes at most MaxKeys counters of paths,
	// so a site whose pages fit in MaxKeys keeps every page's count
	// through an outage across an hour boundary (every page viewed again
	// makes a new counter for the new hour). With the live counters, that
	// is at most about 4×MaxKeys counters, about 60 MiB at the default
	// MaxKeys and short paths.
	MaxPendingKeys int
	// MaxPathBytes bounds the length of a path kept in a counter: views of
	// longer paths are counted under OverflowPath (and in
	// Stats.Overflowed). Default DefaultMaxPathBytes.
	MaxPathBytes int
	// OverflowPath is the path that views past MaxKeys, MaxPendingKeys or
	// MaxPathBytes are counted under.
	OverflowPath string
	// BatchSize bounds the counters written by one AddViews call.
	BatchSize int
	// Classifier tells humans from AI and bots; traffic.Default() if nil.
	Classifier *traffic.Classifier
	// Logger receives flush failures and overflow and fold reports.
	Logger *slog.Logger
	// Now tells the time; tests inject a clock. Default time.Now.
	Now func() time.Time
	// OnFlush, if set, is told of every flush that had views to write
	// (server/metrics times flushes with it). It runs on the flushing
	// goroutine, which holds the flush lock, so it must return quickly.
	OnFlush func(FlushInfo)

	// MaxVisitorBytes bounds the memory of the visitor sketches, live and
	// pending, when the Sink counts visitors (see VisitorSink and the
	// package doc). Past it, visitors are counted in the sketch of their
	// project's overflow key, for their hour and class, instead of new
	// sketches. Default DefaultMaxVisitorBytes.
	MaxVisitorBytes int64
	// TrustedProxies are the networks of the reverse proxies in front of
	// the site: a request from one of them is taken to come from the
	// client its X-Forwarded-For or Forwarded header names, for its
	// visitor. Other requests' headers are ignored, so that a client
	// cannot choose the address it is counted by. Empty: none.
	TrustedProxies []netip.Prefix
}

// Recorder counts views and flushes them. It is safe for concurrent use.
type Recorder struct {
	cfg     Config
	classes *traffic.Memo // cfg.Classifier, remembering user agents' scans
	// agents is the names cfg.Classifier gives, for RecordAgent.
	agents map[traffic.Agent]bool
	shards [shardCount]shard
	keys   atomic.Int64 // counters held across shards, for MaxKeys
	// maxLive bounds keys but for the overflow counters of the hours
	// recorded in: 2×MaxKeys.
	maxLive int64

	flushMu sync.Mutex // one flush at a time; guards pending
	pending *pendingCounts

	stats struct {
		recorded, flushed, overflowed, folded, flushErrors atomic.Int64
		// rehoured counts overflowed views moved to the hour they were
		// recorded in, past the live overflow counters.
		rehoured atomic.Int64

		noSalt, visitorsOverflowed, visitorsFolded, visitorFlushErrors atomic.Int64
	}
	reportedOverflow, reportedRehoured int64 // views already logged; guarded by flushMu

	// Unique visitors, if the Sink counts them (visSink not nil).
	visSink     VisitorSink
	proxies     clientip.Proxies
	visBytes    atomic.Int64 // sketch bytes charged, live and pending
	overflowVis overflowVisitors
	pendingVis  *pendingVisitors // guarded by flushMu
	salts       atomic.Pointer[saltSet]
	saltMu      sync.Mutex // one refresh at a time; guards the fields below
	saltFailing bool       // the last refresh failed (and said so)
	noSaltBurst bool       // views without salt were logged; no fresh log until a quiet interval
	// reportedNoSalt is the Stats.NoSalt already logged.
	reportedNoSalt int64

	startOnce sync.Once
	started   atomic.Bool
	stopOnce  sync.Once
	stop      chan struct{}
	done      chan struct{} // closed when the flush loop of Start returns
}

// shardCount spreads counters over independent locks, so that concurrent
// requests for different pages rarely wait for each other.
const shardCount = 32

type shard struct {
	mu     sync.Mutex
	counts map[key]*liveCounter
	// vis holds the visitors of counters of counts, by the same key; a
	// counter of bots alone has none.
	vis map[key]*liveVisitors
	// last is the counter of counts found last, by lastKey: a page's
	// views come in bursts (a link shared, the pages everyone opens
	// first), and comparing a key costs less than hashing it for the map.
	last    *liveCounter
	lastKey key
}

// lookup returns k's counter of s (locked), or nil.
func (s *shard) lookup(k key) *liveCounter {
	if s.last != nil && s.lastKey == k {
		return s.last
	}
	c := s.counts[k]
	if c != nil {
		s.last, s.lastKey = c, k
	}
	return c
}

type key struct {
	project, path string
	hour          int64 // unix seconds of the hour's start
}

type counts struct {
	human, ai, bot int64
	// agents splits the ai and bot views by the agent the classifier
	// named: at most one entry per name of its table (and OtherAgent),
	// so a counter's agents are bounded whatever user agents are sent.
	agents []agentCount
}

// agentCount is an agent's views on a counter.
type agentCount struct {
	name  string
	class traffic.Class
	n     int64
}

// addAgent adds n views of the named agent. A counter sees few agents, so
// a scan beats a map, and a view of an agent already on the counter
// allocates nothing.
func (c *counts) addAgent(name string, class traffic.Class, n int64) {
	for i := range c.agents {
		if a := &c.agents[i]; a.name == name && a.class == class {
			a.n += n
			return
		}
	}
	c.agents = append(c.agents, agentCount{name: name, class: class, n: n})
}

// storeAgents returns c's agents as a store.ViewCount holds them.
func (c *counts) storeAgents() []store.AgentCount {
	if len(c.agents) == 0 {
		return nil
	}
	out := make([]store.AgentCount, len(c.agents))
	for i, a := range c.agents {
		out[i] = store.AgentCount{Name: a.name, Class: store.AgentClass(a.class.String()), Views: a.n}
	}
	return out
}

// liveCounter is a live counter: its counts and, for a request to count
// its visitor with the one map lookup that finds the counter, the
// counter's entry of its shard's vis map. Flush clears vis when it takes
// the counter, so that a pending counter keeps no sketch alive.
type liveCounter struct {
	counts
	vis *liveVisitors
}

// FlushInfo is what Config.OnFlush is told of a flush.
type FlushInfo struct {
	// Duration is how long the flush took, by Config.Now.
	Duration time.Duration
	// Err is the error Flush returned: nil if every view was written.
	Err error
}

// Stats reports what a Recorder has done since it was created.
type Stats struct {
	Recorded int64 // views counted
	Flushed  int64 // views written to the Sink
	// Overflowed counts views counted under OverflowPath when recorded,
	// because MaxKeys live counters were held or their path was longer
	// than MaxPathBytes (past MaxKeys overflow counters as well, at the
	// hour they were recorded in; the overflow warning says how many).
	Overflowed int64
	// Folded counts views that a failed flush moved from their own
	// counter to an overflow counter because MaxPendingKeys counters were
	// pending: views of a path moved under OverflowPath, and views already
	// under it moved to another hour. Overflowed views lose their path
	// when recorded, Folded ones when a flush fails to write them and has
	// no room to keep them; a view is counted in both only if it is moved
	// to another hour.
	Folded      int64
	FlushErrors int64 // failed AddViews calls (their counts were kept)
	Pending     int64 // views counted but not yet written

	// NoSalt counts views of humans and AI counted without their visitor:
	// the Recorder held no salt for their day (the store did not give it).
	NoSalt int64
	// VisitorsOverflowed counts visitors counted in the sketch of their
	// project's overflow key, not their page's, because MaxVisitorBytes
	// of sketches were held.
	VisitorsOverflowed int64
	// VisitorsFolded counts pending sketches (a page's visitors in an
	// hour) that a failed flush merged into an overflow key's, because
	// MaxPendingKeys or MaxVisitorBytes left no room to keep them apart.
	VisitorsFolded int64
	// VisitorFlushErrors counts failed AddVisitors calls (their sketches
	// were kept).
	VisitorFlushErrors int64
}

// New checks cfg and returns a Recorder. Start begins the periodic flushes;
// without it, flushes happen only through Flush and Close.
func New(cfg Config) (*Recorder, error) {
	if cfg.Sink == nil {
		return nil, errors.New("pageviews: Config.Sink is nil")
	}
	switch {
	case cfg.FlushInterval < 0:
		return nil, fmt.Errorf("pageviews: Config.FlushInterval must not be negative, got %s", cfg.FlushInterval)
	case cfg.MaxKeys < 0:
		return nil, fmt.Errorf("pageviews: Config.MaxKeys must not be negative, got %d", cfg.MaxKeys)
	case cfg.MaxPendingKeys < 0:
		return nil, fmt.Errorf("pageviews: Config.MaxPendingKeys must not be negative, got %d", cfg.MaxPendingKeys)
	case cfg.MaxPathBytes < 0:
		return nil, fmt.Errorf("pageviews: Config.MaxPathBytes must not be negative, got %d", cfg.MaxPathBytes)
	case cfg.BatchSize < 0:
		return nil, fmt.Errorf("pageviews: Config.BatchSize must not be negative, got %d", cfg.BatchSize)
	case cfg.MaxVisitorBytes < 0:
		return nil, fmt.Errorf("pageviews: Config.MaxVisitorBytes must not be negative, got %d", cfg.MaxVisitorBytes)
	}
	if cfg.MaxVisitorBytes == 0 {
		cfg.MaxVisitorBytes = DefaultMaxVisitorBytes
	}
	if cfg.FlushInterval == 0 {
		cfg.FlushInterval = DefaultFlushInterval
	}
	if cfg.MaxKeys == 0 {
		cfg.MaxKeys = DefaultMaxKeys
	}
	if cfg.MaxPendingKeys == 0 {
		cfg.MaxPendingKeys = cfg.MaxKeys * 2
		if cfg.MaxKeys > math.MaxInt/2 {
			cfg.MaxPendingKeys = math.MaxInt
		}
	}
	if cfg.MaxPathBytes == 0 {
		cfg.MaxPathBytes = DefaultMaxPathBytes
	}
	if cfg.OverflowPath == "" {
		cfg.OverflowPath = DefaultOverflowPath
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	if cfg.Classifier == nil {
		cfg.Classifier = traffic.Default()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	r := &Recorder{cfg: cfg, pending: newPendingCounts(cfg.MaxPendingKeys, cfg.OverflowPath), stop: make(chan struct{}), done: make(chan struct{})}
	r.classes = traffic.NewMemo(cfg.Classifier)
	r.agents = map[traffic.Agent]bool{}
	for _, a := range cfg.Classifier.Agents() {
		r.agents[a] = true
	}
	r.maxLive = math.MaxInt64
	if int64(cfg.MaxKeys) <= math.MaxInt64/2 {
		r.maxLive = 2 * int64(cfg.MaxKeys)
	}
	for i := range r.shards {
		r.shards[i].counts = map[key]*liveCounter{}
		r.shards[i].vis = map[key]*liveVisitors{}
	}
	if vs, ok := cfg.Sink.(VisitorSink); ok {
		r.visSink = vs
		r.proxies = clientip.NewProxies(cfg.TrustedProxies)
		r.overflowVis.m = map[key]*liveVisitors{}
		r.pendingVis = newPendingVisitors(cfg.MaxPendingKeys, cfg.OverflowPath, r.charge, func(n int64) { r.visBytes.Add(n) })
	}
	return r, nil
}

// Record counts n views of path in project at the time at, of the given
// class. It does not touch the store. For a path already counted in the
// same hour it allocates nothing.
func (r *Recorder) Record(project, path string, class traffic.Class, at time.Time, n int64) {
	r.record(project, path, class, "", at, n, 0, false)
}

// RecordAgent is Record of views by the named agent, as the Recorder's
// classifier names it (traffic.Classifier.ClassifyAgent): an AI or bot
// view is also counted under its agent. A name the classifier does not
// give for that class is counted as traffic.OtherAgent, so that the names
// a Recorder keeps are its classifier's, whatever a caller passes.
func (r *Recorder) RecordAgent(project, path string, class traffic.Class, agent string, at time.Time, n int64) {
	if class != traffic.Human && !r.agents[traffic.Agent{Name: agent, Class: class}] {
		agent = traffic.OtherAgent
	}
	r.record(project, path, class, agent, at, n, 0, false)
}

// record is Record, counting the views under agent too when it is not
// empty and the class is not Human, and the visitor when hasVisitor.
func (r *Recorder) record(project, path string, class traffic.Class, agent string, at time.Time, n int64, visitor uint64, hasVisitor bool) {
	if n <= 0 {
		return
	}
	k := key{project: project, path: path, hour: hourOf(at)}
	if len(path) > r.cfg.MaxPathBytes {
		k.path = r.cfg.OverflowPath
		r.stats.overflowed.Add(n)
	}
	s := &r.shards[shardOf(project, k.path)]
	s.mu.Lock()
	c := s.lookup(k)
	if c == nil {
		s, c, k = r.newCounter(s, k, n)
	}
	switch class {
	case traffic.Human:
		c.human += n
	case traffic.AI:
		c.ai += n
	default:
		c.bot += n
	}
	if agent != "" && class != traffic.Human {
		c.addAgent(agent, class, n)
	}
	vi := -1
	if hasVisitor {
		vi = visitorClass(class)
	}
	overflowVisitor := vi >= 0 && !r.addVisitor(s, c, k, vi, visitor)
	s.mu.Unlock()
	if overflowVisitor {
		if k.path != r.cfg.OverflowPath {
			r.stats.visitorsOverflowed.Add(1)
		}
		r.overflowVis.add(key{project: k.project, path: r.cfg.OverflowPath, hour: k.hour}, vi, visitor)
	}
	r.stats.recorded.Add(n)
}

// newCounter finds the counter for n views of k, which s (locked) has no
// counter for, making one within the live bounds: k's own below MaxKeys,
// else the overflow counter of k's project and hour below 2×MaxKeys, else
// the overflow counter of k's project and the hour of Now. It returns that
// counter, its shard, locked, and its key.
func (r *Recorder) newCounter(s *shard, k key, n int64) (*shard, *liveCounter, key) {
	if k.path != r.cfg.OverflowPath {
		if r.keys.Add(1) <= int64(r.cfg.MaxKeys) {
			c := new(liveCounter)
			s.counts[k] = c
			return s, c, k
		}
		r.keys.Add(-1)
		r.stats.overflowed.Add(n)
		k.path = r.cfg.OverflowPath
		s.mu.Unlock()
		s = &r.shards[shardOf(k.project, k.path)]
		s.mu.Lock()
		if c := s.counts[k]; c != nil {
			return s, c, k
		}
	}
	// An overflow counter counts as a key once made, so that Flush, which
	// frees every key it takes, stays balanced.
	if r.keys.Add(1) > r.maxLive {
		if now := hourOf(r.cfg.Now()); now != k.hour {
			r.keys.Add(-1)
			r.stats.rehoured.Add(n)
			k.hour = now // the same shard: shardOf ignores the hour
			if c := s.counts[k]; c != nil {
				return s, c, k
			}
			r.keys.Add(1)
		}
		// The overflow counter of the hour recorded in is made past the
		// bound: one per project for every hour a flush interval spans.
	}
	c := new(liveCounter)
	s.counts[k] = c
	return s, c, k
}

// hourOf returns the unix seconds of the start of t's hour.
func hourOf(t time.Time) int64 {
	u := t.Unix()
	h := u - u%3600
	if u < 0 && u%3600 != 0 {
		h -= 3600 // floor, not truncation towards zero, before 1970
	}
	return h
}

// shardOf picks the shard of a counter. It hashes with maphash (the
// runtime's string hash, the one maps use, rather than a loop of our own
// over the bytes) under a seed of the process: shards live in memory
// only, and a seed that clients cannot know keeps them from choosing paths
// that all fall in one shard.
func shardOf(project, path string) int {
	h := maphash.String(shardSeed, path) ^ bits.RotateLeft64(maphash.String(shardSeed, project), 32)
	return int(h % shardCount)
}

var shardSeed = maphash.MakeSeed()

// Flush writes every count held so far to the Sink, in batches. Counts of a
// batch that fails stay held and are written by the next flush, added to
// whatever was counted meanwhile, within MaxPendingKeys: past it, they are
// folded into overflow counters. It returns the first error.
func (r *Recorder) Flush(ctx context.Context) (err error) {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	start := r.cfg.Now()
	// Take every shard's counters, leaving empty maps: recording goes on
	// while the batch is written. Counts of a key already pending are
	// added to it; the others stay in taken, which is written as it is:
	// only what fails to be written is held within MaxPendingKeys.
	var taken [shardCount]map[key]*liveCounter
	var takenVis [shardCount]map[key]*liveVisitors
	held := r.pending.len()
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		if len(s.counts) == 0 {
			// Still the live map: not to be read once unlocked. (A
			// shard without counters has no visitors either.)
			s.mu.Unlock()
			continue
		}
		taken[i] = s.counts
		s.counts = make(map[key]*liveCounter, len(taken[i]))
		s.last, s.lastKey = nil, key{}
		if len(s.vis) > 0 {
			// Not sized like the counters' map: visitors' room is
			// charged as it is taken (visitorPairCost).
			takenVis[i] = s.vis
			s.vis = map[key]*liveVisitors{}
		}
		s.mu.Unlock()
		r.keys.Add(-int64(len(taken[i])))
		for k, c := range taken[i] {
			c.vis = nil // the sketches go by takenVis
			if have := r.pending.m[k]; have != nil {
				have.add(&c.counts)
				delete(taken[i], k)
			}
		}
		held += len(taken[i])
	}
	if held > 0 && r.cfg.OnFlush != nil {
		defer func() { r.cfg.OnFlush(FlushInfo{Duration: r.cfg.Now().Sub(start), Err: err}) }()
	}
	if over, moved := r.stats.overflowed.Load(), r.stats.rehoured.Load(); over > r.reportedOverflow {
		r.cfg.Logger.WarnContext(ctx, "pageviews: more distinct pages than MaxKeys; views of the rest were counted under the overflow path",
			slog.Int64("views", over-r.reportedOverflow), slog.Int64("views_moved_to_the_current_hour", moved-r.reportedRehoured),
			slog.Int("max_keys", r.cfg.MaxKeys), slog.Int("max_path_bytes", r.cfg.MaxPathBytes), slog.String("overflow_path", r.cfg.OverflowPath))
		r.reportedOverflow, r.reportedRehoured = over, moved
	}
	var firstErr error
	batch := make([]store.ViewCount, 0, min(held, r.cfg.BatchSize))
	// from tells where each counter of batch is held: the shard whose
	// taken map holds it, or -1 for pending.
	type from struct {
		k     key
		shard int
	}
	froms := make([]from, 0, cap(batch))
	vf := r.newVisitorFlush(ctx)
	write := func() {
		if len(batch) == 0 {
			return
		}
		err := r.cfg.Sink.AddViews(ctx, batch)
		if err != nil {
			r.stats.flushErrors.Add(1)
			if firstErr == nil {
				firstErr = err
			}
		} else {
			for i, f := range froms {
				if f.shard < 0 {
					r.pending.remove(f.k)
				} else {
					delete(taken[f.shard], f.k)
				}
				r.stats.flushed.Add(batch[i].Human + batch[i].AI + batch[i].Bot)
			}
			// The batch's visitors follow its views, never precede them:
			// the store keeps visitors of a day's paths only once the
			// day holds their views.
			for _, f := range froms {
				vf.take(f.k, takenVis[shardOf(f.k.project, f.k.path)])
			}
			vf.write()
		}
		batch, froms = batch[:0], froms[:0]
	}
	add := func(k key, c *counts, shard int) {
		batch = append(batch, store.ViewCount{ProjectID: k.project, Path: k.path, Hour: time.Unix(k.hour, 0).UTC(), Human: c.human, AI: c.ai, Bot: c.bot, Agents: c.storeAgents()})
		froms = append(froms, from{k, shard})
		if len(batch) == r.cfg.BatchSize {
			write()
		}
	}
	for k, c := range r.pending.m {
		add(k, c, -1)
	}
	for i := range taken {
		for k, c := range taken[i] {
			add(k, &c.counts, i)
		}
	}
	write()
	// Visitors whose views were not written wait with the pending ones;
	// these are written only by a flush that wrote every view.
	for _, m := range takenVis {
		for k := range m {
			vf.take(k, m)
		}
	}
	if r.visSink != nil {
		for k, v := range r.overflowVis.take() {
			vf.add(k, v)
		}
	}
	vf.keep()
	if firstErr == nil {
		vf.writePending()
	}
	// What failed of taken becomes pending, folded past MaxPendingKeys.
	var folded int64
	for i := range taken {
		for k, c := range taken[i] {
			folded += r.pending.merge(k, &c.counts)
		}
	}
	if folded > 0 {
		r.stats.folded.Add(folded)
		r.cfg.Logger.WarnContext(ctx, "pageviews: more pending counters than MaxPendingKeys while flushes fail; views of the rest were folded into the overflow path",
			slog.Int64("views", folded), slog.Int("max_pending_keys", r.cfg.MaxPendingKeys), slog.String("overflow_path", r.cfg.OverflowPath))
	}
	visErr := vf.finish()
	if firstErr != nil {
		r.cfg.Logger.WarnContext(ctx, "pageviews: flush failed; the counts are kept for the next flush",
			slog.Int("pending_counters", r.pending.len()), slog.Any("error", firstErr))
		return fmt.Errorf("pageviews: flush: %w", firstErr)
	}
	return visErr
}

// Start flushes every FlushInterval until Close. Calling it again does
// nothing.
func (r *Recorder) Start() {
	r.startOnce.Do(r.start)
}

func (r *Recorder) start() {
	r.started.Store(true)
	go func() {
		defer close(r.done)
		t := time.NewTicker(r.cfg.FlushInterval)
		defer t.Stop()
		ctx, cancel := context.WithTimeout(context.Background(), r.cfg.FlushInterval)
		r.refreshSalts(ctx) // logged by refreshSalts; retried every tick
		cancel()
		for {
			select {
			case <-r.stop:
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), r.cfg.FlushInterval)
				r.refreshSalts(ctx)
				_ = r.Flush(ctx) // logged by Flush; the counts stay for the next try
				cancel()
			}
		}
	}()
}

// Close stops the periodic flushes and flushes what remains, retrying a
// failing Sink until ctx ends; then it returns the last error, and the
// views not written are counted in Stats().Pending.
func (r *Recorder) Close(ctx context.Context) error {
	r.startOnce.Do(func() {}) // a Start after Close must not begin flushing
	r.stopOnce.Do(func() { close(r.stop) })
	if r.started.Load() {
		<-r.done // the periodic flush has returned: no flush runs beside ours
	}
	for delay := 50 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
		err := r.Flush(ctx)
		if err == nil {
			return nil
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// Classifier returns the classifier the Recorder's middleware uses, so that
// views reported by other means are classified alike.
func (r *Recorder) Classifier() *traffic.Classifier { return r.cfg.Classifier }

// Stats returns the Recorder's counters.
func (r *Recorder) Stats() Stats {
	st := Stats{
		Recorded:    r.stats.recorded.Load(),
		Flushed:     r.stats.flushed.Load(),
		Overflowed:  r.stats.overflowed.Load(),
		Folded:      r.stats.folded.Load(),
		FlushErrors: r.stats.flushErrors.Load(),

		NoSalt:             r.stats.noSalt.Load(),
		VisitorsOverflowed: r.stats.visitorsOverflowed.Load(),
		VisitorsFolded:     r.stats.visitorsFolded.Load(),
		VisitorFlushErrors: r.stats.visitorFlushErrors.Load(),
	}
	st.Pending = st.Recorded - st.Flushed
	return st
}
