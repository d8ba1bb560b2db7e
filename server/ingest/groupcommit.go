package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// The bounds of the group commit (Config.Window, MaxCommit, MaxQueued):
// server.Config's defaults, and the longest window it allows.
const (
	// DefaultWindow is how long the ingestion endpoint holds a request's
	// views, at most, for requests arriving with it.
	DefaultWindow = 2 * time.Millisecond
	// DefaultMaxCommit bounds the counts of one shared commit, as
	// pageviews.DefaultBatchSize bounds a flush: a commit holds the
	// store's write lock while it runs.
	DefaultMaxCommit = 5000
	// DefaultMaxQueued bounds the counts waiting for a commit: 20
	// requests of 1,000 distinct pages.
	DefaultMaxQueued = 20_000
	// MaxWindow keeps the window what it is for, a few milliseconds:
	// every request waits up to the window.
	MaxWindow = time.Second
	// ingestCommitTimeout bounds one shared commit. The commit runs on
	// behalf of every request of its group, so it cannot use any one
	// request's context.
	ingestCommitTimeout = 30 * time.Second
)

// CommitInfo is what Config.OnCommit is told of a commit of ingested page
// views: one AddViews call on behalf of the requests that arrived together.
type CommitInfo struct {
	Requests int   // the requests answered by the commit
	Views    int64 // their views, human, AI and bot
	// Duration is how long the store took, by Config.Now.
	Duration time.Duration
	// Err is the store's error: nil if the views are stored, else every
	// request of the commit was answered 503.
	Err error
}

// Why a request's views were not stored; RecordViews answers 503 for both.
var (
	errIngestQueueFull = errors.New("too many page views are waiting to be stored")
	errIngestCancelled = errors.New("the request ended before its page views were stored")
)

// viewsSink is where committed views go: store.Store satisfies it.
type viewsSink interface {
	AddViews(ctx context.Context, counts []store.ViewCount) error
}

// groupCommitter stores ingested views durably while keeping the number of
// transactions low: requests that arrive together share one AddViews call
// (group commit), and each is answered with that call's outcome. A request
// is never split, so its views are stored all together or not at all, and
// never acknowledged before they are.
//
// One goroutine commits, one group at a time. It starts with the first
// request queued and ends as soon as the queue is empty, so a Handler that
// stops receiving requests holds no goroutine and needs no Close: an
// http.Server's Shutdown, which waits for the handlers, waits for their
// commits too.
//
// A group is committed as soon as one of these holds:
//   - no other ingestion request is being read or parsed (none would join),
//   - the group's oldest request has waited window,
//   - the queue holds maxCommit counts.
//
// So a request waits for a commit at most window, plus the commit running
// when it arrived, plus its own.
//
// Visitors (sketches of the views' visitor keys) ride along: once the
// group's AddViews succeeded, one AddVisitors adds the group's visitors.
// The answer is AddViews' alone, so 202 means the views are committed; a
// failure of AddVisitors is logged and those visitors are not counted (an
// ingester holds nothing once it has answered, and a retry of the request
// would count its views twice).
type groupCommitter struct {
	sink      viewsSink
	visitors  visitorsSink // nil: the store keeps no visitors
	salts     ingestSalts
	logger    *slog.Logger
	window    time.Duration // ≤ 0: commit without waiting for arrivals
	maxCommit int           // counts per commit; a larger request goes alone
	maxQueued int           // counts waiting; a lone request always fits
	now       func() time.Time
	onCommit  func(CommitInfo) // nil: none
	// stored counts the views of successful commits (Handler.Stats).
	stored atomic.Int64

	mu       sync.Mutex
	queue    []*viewsBatch
	queued   int  // counts in queue
	arriving int  // requests being read and parsed, which may join a group
	running  bool // the committing goroutine is alive
	// wake tells the committing goroutine that the queue or arriving
	// changed; it holds one token at most, a stale one costs a re-check.
	wake chan struct{}
}

// viewsBatch is one request's views on their way to the store.
type viewsBatch struct {
	counts   []store.ViewCount
	visitors []store.VisitorCount
	queued   time.Time
	taken    bool       // in a group being committed; guarded by mu
	done     chan error // receives the commit's outcome; buffered
}

// newGroupCommitter returns the committer of cfg.
func newGroupCommitter(cfg Config) *groupCommitter {
	visitors, _ := cfg.Store.(visitorsSink)
	now := cfg.Now
	if now == nil { // New has one; a committer made alone may have none
		now = time.Now
	}
	return &groupCommitter{
		sink:      cfg.Store,
		visitors:  visitors,
		logger:    cfg.Logger,
		window:    cfg.Window,
		maxCommit: cfg.MaxCommit,
		maxQueued: cfg.MaxQueued,
		now:       now,
		onCommit:  cfg.OnCommit,
		wake:      make(chan struct{}, 1),
	}
}

// arrival is an ingestion request on its way to the queue. Until it is
// submitted or left, the committer may hold a group for it.
type arrival struct {
	c    *groupCommitter
	gone bool
}

// arrive says an ingestion request started: until its arrival is submitted
// or left, a group waits for it (up to the window).
func (c *groupCommitter) arrive() *arrival {
	c.mu.Lock()
	c.arriving++
	c.mu.Unlock()
	return &arrival{c: c}
}

// leave says the request will not submit views (it was refused). It may be
// called after submit, and more than once; only the first call counts.
func (a *arrival) leave() {
	if a.gone {
		return
	}
	a.gone = true
	c := a.c
	c.mu.Lock()
	c.arriving--
	last := c.arriving == 0
	c.mu.Unlock()
	if last {
		c.signal()
	}
}

// submit queues counts for the next group commit and waits for its outcome:
// nil once they are stored. errIngestQueueFull means the queue had no room
// (nothing was queued); errIngestCancelled, that ctx ended first, in which
// case the views were withdrawn if their group had not started, and
// otherwise may or may not be stored. Any other error is the commit's:
// nothing of the group was stored.
func (a *arrival) submit(ctx context.Context, counts []store.ViewCount, visitors []store.VisitorCount) error {
	if a.gone {
		panic("server: arrival submitted after it left")
	}
	a.gone = true
	c := a.c
	b := &viewsBatch{counts: counts, visitors: visitors, done: make(chan error, 1)}
	c.mu.Lock()
	c.arriving--
	if len(c.queue) > 0 && c.queued+len(counts) > c.maxQueued {
		c.mu.Unlock()
		c.signal() // arriving changed
		return errIngestQueueFull
	}
	b.queued = time.Now()
	c.queue = append(c.queue, b)
	c.queued += len(counts)
	if !c.running {
		c.running = true
		go c.run()
	}
	c.mu.Unlock()
	c.signal()

	select {
	case err := <-b.done:
		return err
	case <-ctx.Done():
	}
	c.mu.Lock()
	if !b.taken {
		c.withdraw(b)
	}
	c.mu.Unlock()
	return errIngestCancelled
}

// withdraw removes b, not yet taken, from the queue. c.mu must be held.
func (c *groupCommitter) withdraw(b *viewsBatch) {
	for i, q := range c.queue {
		if q == b {
			c.queue = append(c.queue[:i], c.queue[i+1:]...)
			c.queued -= len(b.counts)
			return
		}
	}
}

func (c *groupCommitter) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// run commits groups until the queue is empty.
func (c *groupCommitter) run() {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		c.mu.Lock()
		for {
			if len(c.queue) == 0 {
				c.running = false
				c.mu.Unlock()
				return
			}
			wait := c.window - time.Since(c.queue[0].queued)
			if c.arriving == 0 || c.queued >= c.maxCommit || wait <= 0 {
				break
			}
			c.mu.Unlock()
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			select {
			case <-c.wake:
				timer.Stop()
			case <-timer.C:
			}
			c.mu.Lock()
		}
		group := c.take()
		c.mu.Unlock()
		c.commit(group)
	}
}

// take removes the next group from the queue: at least one batch, and more
// while the group stays within maxCommit counts. c.mu must be held.
func (c *groupCommitter) take() []*viewsBatch {
	n, size := 0, 0
	for n < len(c.queue) && (n == 0 || size+len(c.queue[n].counts) <= c.maxCommit) {
		size += len(c.queue[n].counts)
		c.queue[n].taken = true
		n++
	}
	group := make([]*viewsBatch, n)
	copy(group, c.queue)
	// Shift rather than reslice, so the array does not grow without end
	// under steady load and taken batches are not kept alive by it.
	rest := copy(c.queue, c.queue[n:])
	clear(c.queue[rest:])
	c.queue = c.queue[:rest]
	c.queued -= size
	return group
}

// commit stores the group's counts in one AddViews call and tells each
// request the outcome.
func (c *groupCommitter) commit(group []*viewsBatch) {
	counts := group[0].counts
	if len(group) > 1 {
		counts = mergeCounts(group)
	}
	start := c.now()
	err := c.addViews(counts)
	took := c.now().Sub(start)
	var views int64
	for _, vc := range counts {
		views += vc.Human + vc.AI + vc.Bot
	}
	// The counts and the hook hear of the commit before the requests are
	// answered, so that whoever sees a 202 can count on the commit being
	// counted.
	if err == nil {
		c.stored.Add(views)
	}
	if c.onCommit != nil {
		c.onCommit(CommitInfo{Requests: len(group), Views: views, Duration: took, Err: err})
	}
	for _, b := range group {
		b.done <- err
	}
	if err == nil {
		c.addVisitors(group)
	}
}

// addVisitors adds the visitors of a committed group, after its views:
// the store keeps the visitors of a day's paths only once the day holds
// their views. Its failure is logged; the requests were answered already.
func (c *groupCommitter) addVisitors(group []*viewsBatch) {
	if c.visitors == nil {
		return
	}
	visitors := group[0].visitors
	if len(group) > 1 {
		var err error
		if visitors, err = mergeVisitors(group); err != nil {
			c.logger.Error("server: cannot merge ingested visitor sketches; these visitors are not counted", slog.Any("error", err))
			return
		}
	}
	if len(visitors) == 0 {
		return
	}
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("storing visitors panicked: %v", p)
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), ingestCommitTimeout)
		defer cancel()
		return c.visitors.AddVisitors(ctx, visitors)
	}()
	if err != nil {
		c.logger.Warn("server: storing ingested visitors failed; their views are stored, these visitors are not counted",
			slog.Int("counts", len(visitors)), slog.Any("error", err))
	}
}

// addViews is one AddViews call. A panic in the store becomes the group's
// error: the handlers' recovery cannot see this goroutine, and the requests
// waiting for it must still be answered.
func (c *groupCommitter) addViews(counts []store.ViewCount) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("storing page views panicked: %v", p)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), ingestCommitTimeout)
	defer cancel()
	return c.sink.AddViews(ctx, counts)
}

// addAgentCount adds a's views to its agent's entry of agents.
func addAgentCount(agents []store.AgentCount, a store.AgentCount) []store.AgentCount {
	for i := range agents {
		if agents[i].Name == a.Name && agents[i].Class == a.Class {
			agents[i].Views += a.Views
			return agents
		}
	}
	return append(agents, a)
}

// mergeCounts adds up the group's counts of the same project, path and
// hour, so that the commit writes each row once. The store adds counts, so
// the sum stored is the same either way.
func mergeCounts(group []*viewsBatch) []store.ViewCount {
	type key struct {
		project, path string
		hour          int64
	}
	size := 0
	for _, b := range group {
		size += len(b.counts)
	}
	at := make(map[key]int, size)
	out := make([]store.ViewCount, 0, size)
	for _, b := range group {
		for _, vc := range b.counts {
			k := key{vc.ProjectID, vc.Path, vc.Hour.Unix()}
			if i, ok := at[k]; ok {
				out[i].Human += vc.Human
				out[i].AI += vc.AI
				out[i].Bot += vc.Bot
				for _, a := range vc.Agents {
					out[i].Agents = addAgentCount(out[i].Agents, a)
				}
				continue
			}
			at[k] = len(out)
			// The agents are copied: merging must not change a
			// request's own counts, which a failed commit may retry.
			vc.Agents = slices.Clone(vc.Agents)
			out = append(out, vc)
		}
	}
	return out
}
