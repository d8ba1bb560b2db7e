package ingest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// These tests drive the group committer alone, on a fake sink, inside a
// synctest bubble: time is fake, so the window is measured exactly, and
// the bubble fails the test if the committing goroutine outlives its work.

// fakeSink stores counts in a map. With a gate, each AddViews waits for a
// value (or the gate's closing) before it does anything, so tests can hold
// a commit while requests queue behind it.
type fakeSink struct {
	gate chan struct{}
	fail error

	mu     sync.Mutex
	sizes  []int            // counts per call, in call order
	stored map[string]int64 // path → views
}

func (f *fakeSink) AddViews(ctx context.Context, counts []store.ViewCount) error {
	f.mu.Lock()
	f.sizes = append(f.sizes, len(counts))
	f.mu.Unlock()
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if f.fail != nil {
		return f.fail
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stored == nil {
		f.stored = map[string]int64{}
	}
	for _, c := range counts {
		f.stored[c.Path] += c.Human + c.AI + c.Bot
	}
	return nil
}

func (f *fakeSink) calls() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sizes)
}

func (f *fakeSink) views(path string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stored[path]
}

func (f *fakeSink) total() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var n int64
	for _, v := range f.stored {
		n += v
	}
	return n
}

// testCommitter is a committer on sink with the given window and caps, 0
// taking the server's defaults.
func testCommitter(t *testing.T, sink viewsSink, window time.Duration, maxCommit, maxQueued int) *groupCommitter {
	t.Helper()
	cfg := Config{Window: cmp.Or(window, DefaultWindow), MaxCommit: cmp.Or(maxCommit, DefaultMaxCommit), MaxQueued: cmp.Or(maxQueued, DefaultMaxQueued)}
	c := newGroupCommitter(cfg)
	c.sink = sink
	return c
}

// counts is one request's counts: one view of each path.
func counts(paths ...string) []store.ViewCount {
	out := make([]store.ViewCount, len(paths))
	for i, p := range paths {
		out[i] = store.ViewCount{ProjectID: "p", Path: p, Hour: time.Date(2026, 8, 14, 9, 0, 0, 0, time.UTC), Human: 1}
	}
	return out
}

// result is what one submit returned, and when.
type result struct {
	err     error
	elapsed time.Duration
	stored  bool // the sink held the request's first path when submit returned
}

// submitAll submits each request from its own goroutine, all from arrivals
// made beforehand, and returns their results once every one has returned.
func submitAll(ctx context.Context, sink *fakeSink, arrivals []*arrival, reqs [][]store.ViewCount) []result {
	start := time.Now()
	results := make([]result, len(reqs))
	var wg sync.WaitGroup
	for i := range reqs {
		wg.Go(func() {
			err := arrivals[i].submit(ctx, reqs[i], nil)
			results[i] = result{err: err, elapsed: time.Since(start), stored: sink.views(reqs[i][0].Path) > 0}
		})
	}
	wg.Wait()
	return results
}

func arrive(c *groupCommitter, n int) []*arrival {
	out := make([]*arrival, n)
	for i := range out {
		out[i] = c.arrive()
	}
	return out
}

func TestIngestGroupCommitSharesOneCommit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &fakeSink{}
		c := testCommitter(t, sink, 2*time.Millisecond, 0, 0)
		const n = 8
		reqs := make([][]store.ViewCount, n)
		for i := range reqs {
			reqs[i] = counts(fmt.Sprintf("/r%d", i), "/shared")
		}
		// All eight arrive together: the first to queue waits for the
		// others, and the last one's arrival starts the commit at once.
		results := submitAll(t.Context(), sink, arrive(c, n), reqs)
		for i, r := range results {
			if r.err != nil || !r.stored || r.elapsed != 0 {
				t.Errorf("request %d: %+v, want nil, its views stored when answered, no wait", i, r)
			}
		}
		// One call, the shared page's counts merged into one row.
		if got := sink.calls(); !slices.Equal(got, []int{n + 1}) {
			t.Errorf("AddViews calls (counts each) = %v, want one call of %d", got, n+1)
		}
		if got := sink.views("/shared"); got != n {
			t.Errorf("/shared holds %d views, want %d", got, n)
		}
		synctest.Wait()
		if c.mu.Lock(); c.running {
			t.Error("the committing goroutine is still running with nothing queued")
		}
		c.mu.Unlock()
	})
}

func TestIngestGroupCommitWindow(t *testing.T) {
	const window = 2 * time.Millisecond
	t.Run("nobody else arriving: no wait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sink := &fakeSink{}
			c := testCommitter(t, sink, window, 0, 0)
			r := submitAll(t.Context(), sink, arrive(c, 1), [][]store.ViewCount{counts("/a")})[0]
			if r.err != nil || r.elapsed != 0 {
				t.Errorf("%+v, want stored at once", r)
			}
		})
	})
	t.Run("another request arriving: at most the window", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sink := &fakeSink{}
			c := testCommitter(t, sink, window, 0, 0)
			slow := c.arrive() // still reading its body, say
			r := submitAll(t.Context(), sink, arrive(c, 1), [][]store.ViewCount{counts("/a")})[0]
			if r.err != nil || r.elapsed != window {
				t.Errorf("%+v, want stored after exactly the window (%s)", r, window)
			}
			slow.leave()
		})
	})
	t.Run("a request that arrives within the window joins the group", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sink := &fakeSink{}
			c := testCommitter(t, sink, window, 0, 0)
			arrivals := arrive(c, 2)
			start := time.Now()
			var wg sync.WaitGroup
			var elapsed [2]time.Duration
			wg.Go(func() {
				if err := arrivals[0].submit(t.Context(), counts("/a"), nil); err != nil {
					t.Error(err)
				}
				elapsed[0] = time.Since(start)
			})
			time.Sleep(window / 2)
			wg.Go(func() {
				if err := arrivals[1].submit(t.Context(), counts("/b"), nil); err != nil {
					t.Error(err)
				}
				elapsed[1] = time.Since(start)
			})
			wg.Wait()
			if got := sink.calls(); !slices.Equal(got, []int{2}) {
				t.Errorf("AddViews calls = %v, want one of 2 counts", got)
			}
			if elapsed != [2]time.Duration{window / 2, window / 2} {
				t.Errorf("answered after %v, want both when the second arrived", elapsed)
			}
		})
	})
	t.Run("negative window: no wait at all", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sink := &fakeSink{}
			c := testCommitter(t, sink, -1, 0, 0)
			slow := c.arrive()
			r := submitAll(t.Context(), sink, arrive(c, 1), [][]store.ViewCount{counts("/a")})[0]
			if r.err != nil || r.elapsed != 0 {
				t.Errorf("%+v, want stored at once", r)
			}
			slow.leave()
		})
	})
	t.Run("a full group does not wait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sink := &fakeSink{}
			c := testCommitter(t, sink, window, 4, 0)
			slow := c.arrive()
			results := submitAll(t.Context(), sink, arrive(c, 2), [][]store.ViewCount{counts("/a", "/b"), counts("/c", "/d")})
			for i, r := range results {
				if r.err != nil || r.elapsed != 0 {
					t.Errorf("request %d: %+v, want stored at once: the group holds IngestMaxCommit counts", i, r)
				}
			}
			slow.leave()
		})
	})
}

func TestIngestGroupCommitCapSplitsGroups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &fakeSink{}
		c := testCommitter(t, sink, 2*time.Millisecond, 4, 0)
		// A request larger than the cap is never split: it goes alone.
		reqs := [][]store.ViewCount{counts("/a", "/b"), counts("/c", "/d"), counts("/e", "/f"), counts("/g", "/h", "/i", "/j", "/k")}
		arrivals := arrive(c, len(reqs))
		// Queued in order, so the groups are deterministic.
		var wg sync.WaitGroup
		for i := range reqs {
			wg.Go(func() {
				if err := arrivals[i].submit(t.Context(), reqs[i], nil); err != nil {
					t.Errorf("request %d: %v", i, err)
				}
			})
			synctest.Wait()
		}
		wg.Wait()
		if got := sink.calls(); !slices.Equal(got, []int{4, 2, 5}) {
			t.Errorf("AddViews calls (counts each) = %v, want [4 2 5]", got)
		}
		if sink.total() != 11 {
			t.Errorf("stored %d views, want 11", sink.total())
		}
	})
}

func TestIngestGroupCommitFailureFailsTheWholeGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		diskFull := errors.New("disk full")
		sink := &fakeSink{fail: diskFull}
		c := testCommitter(t, sink, 2*time.Millisecond, 0, 0)
		const n = 5
		reqs := make([][]store.ViewCount, n)
		for i := range reqs {
			reqs[i] = counts(fmt.Sprintf("/r%d", i))
		}
		for i, r := range submitAll(t.Context(), sink, arrive(c, n), reqs) {
			if !errors.Is(r.err, diskFull) {
				t.Errorf("request %d: %v, want the commit's error", i, r.err)
			}
		}
		if got := sink.calls(); len(got) != 1 {
			t.Errorf("AddViews calls = %v, want one shared call", got)
		}
		if sink.total() != 0 {
			t.Errorf("a failed commit stored %d views", sink.total())
		}
	})
}

// panicSink panics in AddViews.
type panicSink struct{}

func (panicSink) AddViews(context.Context, []store.ViewCount) error { panic("corrupt page") }

func TestIngestGroupCommitPanicFailsTheGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := testCommitter(t, panicSink{}, 2*time.Millisecond, 0, 0)
		for i, r := range submitAll(t.Context(), &fakeSink{}, arrive(c, 2), [][]store.ViewCount{counts("/a"), counts("/b")}) {
			if r.err == nil || !strings.Contains(r.err.Error(), "corrupt page") {
				t.Errorf("request %d: %v, want the panic as an error", i, r.err)
			}
		}
		// The committer survived: the next request is served.
		c.sink = &fakeSink{}
		if err := c.arrive().submit(t.Context(), counts("/c"), nil); err != nil {
			t.Errorf("after the panic: %v", err)
		}
	})
}

func TestIngestGroupCommitQueueIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &fakeSink{gate: make(chan struct{})}
		c := testCommitter(t, sink, 2*time.Millisecond, 0, 3)
		var wg sync.WaitGroup
		submit := func(paths ...string) {
			a := c.arrive()
			wg.Go(func() {
				if err := a.submit(t.Context(), counts(paths...), nil); err != nil {
					t.Errorf("%v: %v", paths, err)
				}
			})
			synctest.Wait()
		}
		submit("/a1", "/a2") // being committed, held at the gate
		submit("/b1", "/b2") // queued: 2 of 3
		// No room for two more: refused at once, nothing queued.
		if err := c.arrive().submit(t.Context(), counts("/c1", "/c2"), nil); !errors.Is(err, errIngestQueueFull) {
			t.Fatalf("submit to a full queue: %v, want errIngestQueueFull", err)
		}
		submit("/d1") // room for one: 3 of 3
		if batches, n := queueLen(c); batches != 2 || n != 3 {
			t.Errorf("queue holds %d batches of %d counts, want 2 of 3", batches, n)
		}
		close(sink.gate)
		wg.Wait()
		if got := sink.calls(); !slices.Equal(got, []int{2, 3}) {
			t.Errorf("AddViews calls (counts each) = %v, want [2 3]", got)
		}
		if sink.views("/c1") != 0 || sink.total() != 5 {
			t.Errorf("stored %d views (/c1: %d), want the 5 admitted", sink.total(), sink.views("/c1"))
		}
		// A lone request larger than the whole queue still fits an empty one.
		if err := c.arrive().submit(t.Context(), counts("/e1", "/e2", "/e3", "/e4"), nil); err != nil {
			t.Errorf("a large request on an empty queue: %v", err)
		}
	})
}

func TestIngestGroupCommitCancelledRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &fakeSink{gate: make(chan struct{})}
		c := testCommitter(t, sink, 2*time.Millisecond, 0, 0)
		var wg sync.WaitGroup
		first := c.arrive()
		wg.Go(func() {
			if err := first.submit(t.Context(), counts("/first"), nil); err != nil {
				t.Error(err)
			}
		})
		synctest.Wait() // /first is being committed, held at the gate
		ctx, cancel := context.WithCancel(t.Context())
		queued := c.arrive()
		errc := make(chan error, 1)
		wg.Go(func() { errc <- queued.submit(ctx, counts("/gone"), nil) })
		synctest.Wait()
		cancel()
		err := <-errc
		// Its client went away before its group started: withdrawn.
		if batches, n := queueLen(c); !errors.Is(err, errIngestCancelled) || batches != 0 || n != 0 {
			t.Errorf("cancelled while queued: %v, queue %d batches of %d counts; want errIngestCancelled and an empty queue", err, batches, n)
		}
		close(sink.gate)
		wg.Wait()
		if sink.views("/gone") != 0 || sink.views("/first") != 1 {
			t.Errorf("stored /gone %d, /first %d; want 0 and 1", sink.views("/gone"), sink.views("/first"))
		}
	})
}

// queueLen is the batches and counts waiting.
func queueLen(c *groupCommitter) (batches, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue), c.queued
}
