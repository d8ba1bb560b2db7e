// Package pageviews counts page views of a documentation site, split into
// human, AI and bot traffic, and writes the counts to the store in batches.
//
// Counting is in memory, per project, path and hour, so recording a view
// costs a map update rather than a database write; a flush adds the counts
// to the store (adding, never overwriting) on an interval and at Close. A
// flush that fails keeps its counts for the next one: views are never
// dropped and, because the store applies a batch whole or not at all, never
// counted twice.
package pageviews

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/traffic"
)

// Defaults of Config.
const (
	DefaultFlushInterval = 10 * time.Second
	DefaultMaxKeys       = 100_000
	DefaultOverflowPath  = "/(other pages)"
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
	// MaxKeys bounds memory: the number of distinct (project, path, hour)
	// counters held between flushes. Views of further paths are counted
	// under OverflowPath, so totals stay exact, and reported in Stats. The
	// overflow counters (one per project and hour at most) come on top.
	MaxKeys int
	// OverflowPath is the path that views past MaxKeys are counted under.
	OverflowPath string
	// BatchSize bounds the counters written by one AddViews call.
	BatchSize int
	// Classifier tells humans from AI and bots; traffic.Default() if nil.
	Classifier *traffic.Classifier
	// Logger receives flush failures and overflow reports.
	Logger *slog.Logger
	// Now tells the time; tests inject a clock. Default time.Now.
	Now func() time.Time
}

// Recorder counts views and flushes them. It is safe for concurrent use.
type Recorder struct {
	cfg    Config
	shards [shardCount]shard
	keys   atomic.Int64 // counters held across shards, for MaxKeys

	flushMu sync.Mutex // one flush at a time; guards pending
	pending map[key]*counts

	stats struct {
		recorded, flushed, overflowed, flushErrors atomic.Int64
	}
	reportedOverflow int64 // overflowed views already logged; guarded by flushMu

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
	counts map[key]*counts
}

type key struct {
	project, path string
	hour          int64 // unix seconds of the hour's start
}

type counts struct {
	human, ai, bot int64
}

// Stats reports what a Recorder has done since it was created.
type Stats struct {
	Recorded    int64 // views counted
	Flushed     int64 // views written to the Sink
	Overflowed  int64 // views counted under OverflowPath because MaxKeys was reached
	FlushErrors int64 // failed AddViews calls (their counts were kept)
	Pending     int64 // views counted but not yet written
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
	case cfg.BatchSize < 0:
		return nil, fmt.Errorf("pageviews: Config.BatchSize must not be negative, got %d", cfg.BatchSize)
	}
	if cfg.FlushInterval == 0 {
		cfg.FlushInterval = DefaultFlushInterval
	}
	if cfg.MaxKeys == 0 {
		cfg.MaxKeys = DefaultMaxKeys
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
	r := &Recorder{cfg: cfg, pending: map[key]*counts{}, stop: make(chan struct{}), done: make(chan struct{})}
	for i := range r.shards {
		r.shards[i].counts = map[key]*counts{}
	}
	return r, nil
}

// Record counts n views of path in project at the time at, of the given
// class. It does not touch the store. For a path already counted in the
// same hour it allocates nothing.
func (r *Recorder) Record(project, path string, class traffic.Class, at time.Time, n int64) {
	if n <= 0 {
		return
	}
	k := key{project: project, path: path, hour: at.Unix() - at.Unix()%3600}
	if at.Unix() < 0 && at.Unix()%3600 != 0 {
		k.hour -= 3600 // floor, not truncation towards zero, before 1970
	}
	s := &r.shards[shardOf(project, path)]
	s.mu.Lock()
	c := s.counts[k]
	if c == nil {
		if r.keys.Add(1) > int64(r.cfg.MaxKeys) {
			r.keys.Add(-1)
			r.stats.overflowed.Add(n)
			k.path = r.cfg.OverflowPath
			s.mu.Unlock()
			s = &r.shards[shardOf(project, k.path)]
			s.mu.Lock()
			c = s.counts[k]
			if c == nil {
				// The overflow counter counts as a key once made, so that
				// Flush, which frees every key it takes, stays balanced.
				r.keys.Add(1)
			}
		}
		if c == nil {
			c = new(counts)
			s.counts[k] = c
		}
	}
	switch class {
	case traffic.Human:
		c.human += n
	case traffic.AI:
		c.ai += n
	default:
		c.bot += n
	}
	s.mu.Unlock()
	r.stats.recorded.Add(n)
}

// shardOf hashes without allocating (FNV-1a over both strings).
func shardOf(project, path string) int {
	h := uint32(2166136261)
	for i := 0; i < len(project); i++ {
		h = (h ^ uint32(project[i])) * 16777619
	}
	for i := 0; i < len(path); i++ {
		h = (h ^ uint32(path[i])) * 16777619
	}
	return int(h % shardCount)
}

// Flush writes every count held so far to the Sink, in batches. Counts of a
// batch that fails stay held and are written by the next flush, added to
// whatever was counted meanwhile. It returns the first error.
func (r *Recorder) Flush(ctx context.Context) error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	// Take every shard's counters, leaving empty maps: recording goes on
	// while the batch is written.
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		taken := s.counts
		if len(taken) == 0 {
			// Still the live map: not to be read once unlocked.
			s.mu.Unlock()
			continue
		}
		s.counts = make(map[key]*counts, len(taken))
		s.mu.Unlock()
		r.keys.Add(-int64(len(taken)))
		for k, c := range taken {
			if p := r.pending[k]; p != nil {
				p.human += c.human
				p.ai += c.ai
				p.bot += c.bot
			} else {
				r.pending[k] = c
			}
		}
	}
	if over := r.stats.overflowed.Load(); over > r.reportedOverflow {
		r.cfg.Logger.WarnContext(ctx, "pageviews: more distinct pages than MaxKeys; views of the rest were counted under the overflow path",
			slog.Int64("views", over-r.reportedOverflow), slog.Int("max_keys", r.cfg.MaxKeys), slog.String("overflow_path", r.cfg.OverflowPath))
		r.reportedOverflow = over
	}
	var firstErr error
	batch := make([]store.ViewCount, 0, min(len(r.pending), r.cfg.BatchSize))
	keys := make([]key, 0, cap(batch))
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
			for i, k := range keys {
				delete(r.pending, k)
				r.stats.flushed.Add(batch[i].Human + batch[i].AI + batch[i].Bot)
			}
		}
		batch, keys = batch[:0], keys[:0]
	}
	for k, c := range r.pending {
		batch = append(batch, store.ViewCount{ProjectID: k.project, Path: k.path, Hour: time.Unix(k.hour, 0).UTC(), Human: c.human, AI: c.ai, Bot: c.bot})
		keys = append(keys, k)
		if len(batch) == r.cfg.BatchSize {
			write()
		}
	}
	write()
	if firstErr != nil {
		r.cfg.Logger.WarnContext(ctx, "pageviews: flush failed; the counts are kept for the next flush",
			slog.Int("pending_counters", len(r.pending)), slog.Any("error", firstErr))
		return fmt.Errorf("pageviews: flush: %w", firstErr)
	}
	return nil
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
		for {
			select {
			case <-r.stop:
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), r.cfg.FlushInterval)
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
		FlushErrors: r.stats.flushErrors.Load(),
	}
	st.Pending = st.Recorded - st.Flushed
	return st
}
