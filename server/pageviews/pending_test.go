package pageviews

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/traffic"
)

// pendingKeys is the number of counters that failed flushes hold.
func pendingKeys(r *Recorder) int {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	return r.pending.len()
}

// The attack: a site answers 200 for made-up paths, so a client can make
// every request a new page. While the store is down, what failed flushes
// keep must stay within MaxPendingKeys (plus one counter per project), the
// heap with it; when the store recovers, every view is stored exactly once,
// the ones that did not fit under the overflow path, and (there being room
// for an overflow counter per project and hour) at their own hour.
func TestPendingStaysBoundedWhileStoreIsDown(t *testing.T) {
	const (
		intervals = 20
		perFlush  = 5_000 // new paths per flush interval: the live limit
		maxKeys   = perFlush
		bound     = 2 * maxKeys // the default MaxPendingKeys
	)
	projects := []string{"docs", "blog"}
	// The heap may hold the pending counters (at most bound + one per
	// project) and the live map, which Flush remakes with room for as
	// many counters as it took (perFlush); what the test keeps is small.
	// A counter costs about 150 bytes: a map slot of 48 (key 40, pointer
	// 8) and the spare slots a Go map keeps between growths, its counts
	// (24) and its path string (about 16). 400 bytes for each of the
	// 15,000 counters is over twice what they take. Without the bound,
	// the 20 intervals leave 100,000 pending counters, about 15 MiB, past
	// the heap's bound by the tenth.
	const heapBound = (bound + perFlush) * 400

	clock := at
	sink := &memSink{fail: 1 << 30}
	r := newRecorder(t, sink, func(c *Config) {
		c.MaxKeys = maxKeys
		c.Now = func() time.Time { return clock }
	})
	ctx := context.Background()

	type totals struct{ human, ai, bot int64 }
	sent := map[string]*totals{}
	for _, p := range projects {
		sent[p] = &totals{}
	}
	perHour := map[string]int64{} // views per project and hour
	var all, peak int64
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc

	record := func(i int) {
		for j := range perFlush {
			project := projects[j%len(projects)]
			n := int64(1 + j%3)
			class := []traffic.Class{traffic.Human, traffic.AI, traffic.OtherBot}[j%3]
			r.Record(project, fmt.Sprintf("/made-up/%d/%d", i, j), class, clock, n)
			switch class {
			case traffic.Human:
				sent[project].human += n
			case traffic.AI:
				sent[project].ai += n
			default:
				sent[project].bot += n
			}
			all += n
			perHour[project+" "+clock.Truncate(time.Hour).Format(time.RFC3339)] += n
		}
	}
	for i := range intervals {
		record(i)
		if err := r.Flush(ctx); err == nil {
			t.Fatalf("interval %d: a flush into a failing store reported success", i)
		}
		if got, limit := pendingKeys(r), bound+len(projects); got > limit {
			t.Fatalf("after failed flush %d: %d pending counters, want at most %d", i+1, got, limit)
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		grown := int64(ms.HeapAlloc) - int64(base)
		peak = max(peak, grown)
		if grown > heapBound {
			t.Fatalf("after failed flush %d: the heap grew by %.1f MiB, want at most %.1f MiB",
				i+1, float64(grown)/(1<<20), float64(heapBound)/(1<<20))
		}
		clock = clock.Add(10 * time.Minute) // the outage spans four hours
	}
	t.Logf("the heap grew by %.1f MiB at most, %.0f bytes per pending counter", float64(peak)/(1<<20), float64(peak)/float64(bound+len(projects)))

	sink.mu.Lock()
	sink.fail = 0 // the store recovers
	sink.mu.Unlock()
	record(intervals) // the pending counters are full: a flush that succeeds folds nothing
	folded := r.Stats().Folded
	if err := r.Flush(ctx); err != nil {
		t.Fatalf("flush after recovery: %v", err)
	}
	if f := r.Stats().Folded; f != folded {
		t.Errorf("the flush after recovery folded %d views; it writes them instead", f-folded)
	}
	got := map[string]*totals{}
	gotPerHour := map[string]int64{}
	var overflow int64
	for _, vc := range sink.snapshot() {
		gotPerHour[vc.ProjectID+" "+vc.Hour.Format(time.RFC3339)] += vc.Human + vc.AI + vc.Bot
		g := got[vc.ProjectID]
		if g == nil {
			g = &totals{}
			got[vc.ProjectID] = g
		}
		g.human += vc.Human
		g.ai += vc.AI
		g.bot += vc.Bot
		if vc.Path == DefaultOverflowPath {
			overflow += vc.Human + vc.AI + vc.Bot
		}
	}
	for _, p := range projects {
		if got[p] == nil || *got[p] != *sent[p] {
			t.Errorf("project %s: stored %+v, sent %+v", p, got[p], *sent[p])
		}
	}
	if len(got) != len(projects) {
		t.Errorf("stored views of %d projects, want %d", len(got), len(projects))
	}
	if !maps.Equal(gotPerHour, perHour) {
		t.Errorf("views per project and hour: stored %v, sent %v", gotPerHour, perHour)
	}
	st := r.Stats()
	if st.Overflowed != 0 {
		t.Fatalf("Overflowed = %d: the live counters overflowed, which this test means to avoid", st.Overflowed)
	}
	if st.Folded == 0 || overflow != st.Folded {
		t.Errorf("%d views stored under the overflow path, Stats().Folded = %d; want them equal and not 0", overflow, st.Folded)
	}
	if st.Recorded != all || st.Flushed != all || st.Pending != 0 || pendingKeys(r) != 0 {
		t.Errorf("stats after recovery = %+v with %d pending counters; want %d views recorded and flushed", st, pendingKeys(r), all)
	}
}

// merge keeps keys below the bound and folds views past it into overflow
// counters, adding to a fold target already pending, with every view
// counted once.
func TestPendingMergeFolds(t *testing.T) {
	const o = DefaultOverflowPath
	h1, h2 := hourOf(at), hourOf(at)+3600
	k := func(project, path string, hour int64) key { return key{project: project, path: path, hour: hour} }
	type add struct {
		k key
		c counts
	}
	for _, tc := range []struct {
		name    string
		max     int
		pending map[key]counts
		add     []add
		want    map[key]counts
		folded  int64
	}{{
		name: "below the bound every key is kept",
		max:  3,
		add:  []add{{k("docs", "/a", h1), counts{human: 1, ai: 0, bot: 0}}, {k("docs", "/b", h2), counts{human: 0, ai: 2, bot: 0}}, {k("blog", "/a", h1), counts{human: 0, ai: 0, bot: 3}}},
		want: map[key]counts{k("docs", "/a", h1): {human: 1, ai: 0, bot: 0}, k("docs", "/b", h2): {human: 0, ai: 2, bot: 0}, k("blog", "/a", h1): {human: 0, ai: 0, bot: 3}},
	}, {
		name:    "a pending key adds up at the bound",
		max:     1,
		pending: map[key]counts{k("docs", "/a", h1): {human: 1, ai: 1, bot: 1}},
		add:     []add{{k("docs", "/a", h1), counts{human: 2, ai: 0, bot: 5}}},
		want:    map[key]counts{k("docs", "/a", h1): {human: 3, ai: 1, bot: 6}},
	}, {
		name:    "past the bound into the overflow counter already pending",
		max:     2,
		pending: map[key]counts{k("docs", "/a", h1): {human: 1, ai: 0, bot: 0}, k("docs", o, h1): {human: 5, ai: 1, bot: 0}},
		add:     []add{{k("docs", "/b", h1), counts{human: 1, ai: 2, bot: 3}}, {k("docs", "/c", h1), counts{human: 0, ai: 0, bot: 1}}},
		want:    map[key]counts{k("docs", "/a", h1): {human: 1, ai: 0, bot: 0}, k("docs", o, h1): {human: 6, ai: 3, bot: 4}},
		folded:  7,
	}, {
		name:    "an overflow counter is kept while there is room, then folded into",
		max:     2,
		pending: map[key]counts{k("docs", "/a", h1): {human: 1, ai: 0, bot: 0}},
		add:     []add{{k("docs", o, h1), counts{human: 4, ai: 0, bot: 0}}, {k("docs", "/b", h1), counts{human: 1, ai: 0, bot: 0}}},
		want:    map[key]counts{k("docs", "/a", h1): {human: 1, ai: 0, bot: 0}, k("docs", o, h1): {human: 5, ai: 0, bot: 0}},
		folded:  1,
	}, {
		name:    "no room for an overflow counter: one catch-all per project, at the first hour folded",
		max:     2,
		pending: map[key]counts{k("docs", "/a", h1): {human: 1, ai: 0, bot: 0}, k("blog", "/a", h1): {human: 1, ai: 0, bot: 0}},
		add: []add{
			{k("docs", "/b", h2), counts{human: 1, ai: 0, bot: 0}}, // the catch-all of docs: its overflow counter at h2
			{k("docs", "/c", h1), counts{human: 0, ai: 1, bot: 0}}, // no overflow counter at h1: to the catch-all
			{k("blog", "/b", h1), counts{human: 0, ai: 0, bot: 2}}, // the catch-all of blog, at h1
			{k("blog", o, h2), counts{human: 3, ai: 0, bot: 0}},    // a live overflow counter: moved to h1
			{k("blog", "/a", h1), counts{human: 1, ai: 1, bot: 1}}, // pending: adds up
		},
		want: map[key]counts{
			k("docs", "/a", h1): {human: 1, ai: 0, bot: 0}, k("blog", "/a", h1): {human: 2, ai: 1, bot: 1},
			k("docs", o, h2): {human: 1, ai: 1, bot: 0}, k("blog", o, h1): {human: 3, ai: 0, bot: 2},
		},
		folded: 7,
	}, {
		name:    "the catch-all of a project is an overflow counter kept as it is",
		max:     1,
		pending: map[key]counts{k("docs", "/a", h1): {human: 1, ai: 0, bot: 0}},
		add:     []add{{k("blog", o, h2), counts{human: 0, ai: 4, bot: 0}}, {k("blog", "/x", h1), counts{human: 0, ai: 1, bot: 0}}},
		want:    map[key]counts{k("docs", "/a", h1): {human: 1, ai: 0, bot: 0}, k("blog", o, h2): {human: 0, ai: 5, bot: 0}},
		folded:  1,
	}, {
		// 16 keeps 1 for overflow counters: 15 paths fill the rest.
		name:    "the reserve keeps room for an overflow counter",
		max:     16,
		pending: fill(15, "docs", h1),
		add: []add{
			{k("docs", "/x", h1), counts{human: 1, ai: 0, bot: 0}}, // into a new overflow counter, in the reserve
			{k("docs", "/y", h2), counts{human: 0, ai: 1, bot: 0}}, // the bound is reached: the catch-all, at h2
			{k("docs", "/z", h2), counts{human: 0, ai: 0, bot: 1}}, // into it
			{k("docs", "/p0", h1), counts{human: 1, ai: 0, bot: 0}},
		},
		want: func() map[key]counts {
			m := fill(15, "docs", h1)
			m[k("docs", "/p0", h1)] = counts{human: 2, ai: 0, bot: 0}
			m[k("docs", o, h1)] = counts{human: 1, ai: 0, bot: 0}
			m[k("docs", o, h2)] = counts{human: 0, ai: 1, bot: 1}
			return m
		}(),
		folded: 3,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPendingCounts(tc.max, o)
			var in int64
			projects := map[string]bool{}
			for k, c := range tc.pending {
				p.m[k] = &c
				in += c.total()
				projects[k.project] = true
			}
			var folded int64
			for _, a := range tc.add {
				c := a.c
				folded += p.merge(a.k, &c)
				in += a.c.total()
				projects[a.k.project] = true
				if p.len() > tc.max+len(projects) {
					t.Fatalf("after adding %v: %d counters, want at most %d", a.k, p.len(), tc.max+len(projects))
				}
			}
			got := map[key]counts{}
			var out int64
			for k, c := range p.m {
				got[k] = *c
				out += c.total()
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("pending = %v\nwant      %v", got, tc.want)
			}
			if folded != tc.folded || in != out {
				t.Errorf("folded %d views, want %d; %d views in, %d pending", folded, tc.folded, in, out)
			}
		})
	}
}

// fill returns n pending counters of paths /p0, /p1, …, one view each.
func fill(n int, project string, hour int64) map[key]counts {
	m := map[key]counts{}
	for i := range n {
		m[key{project: project, path: fmt.Sprintf("/p%d", i), hour: hour}] = counts{human: 1, ai: 0, bot: 0}
	}
	return m
}

// Once written, a project's catch-all is forgotten: the next fold past the
// bound makes a new one, at its own hour.
func TestPendingRemoveFreesTheCatchAll(t *testing.T) {
	h1, h2 := hourOf(at), hourOf(at)+3600
	p := newPendingCounts(1, DefaultOverflowPath)
	p.merge(key{"docs", "/a", h1}, &counts{human: 1})
	p.merge(key{"docs", "/b", h1}, &counts{human: 1}) // the catch-all, at h1
	first := key{"docs", DefaultOverflowPath, h1}
	if p.m[first] == nil || p.len() != 2 {
		t.Fatalf("pending = %v, want /a and the catch-all at h1", p.m)
	}
	p.remove(first)
	if len(p.catchAll) != 0 {
		t.Fatalf("catch-alls after writing the only one: %v", p.catchAll)
	}
	if f := p.merge(key{"docs", "/c", h2}, &counts{ai: 2}); f != 2 || p.m[key{"docs", DefaultOverflowPath, h2}] == nil || p.len() != 2 {
		t.Fatalf("folded %d; pending = %v, want /a and a catch-all at h2", f, p.m)
	}
}

// Live overflow counters are bounded too: views recorded for many past
// hours (as the ingest endpoint allows) past MaxKeys make at most MaxKeys
// overflow counters, then go to the overflow counter of the hour recorded
// in, with totals exact.
func TestLiveOverflowCountersAreBoundedAcrossHours(t *testing.T) {
	sink := &memSink{}
	r := newRecorder(t, sink, func(c *Config) { c.MaxKeys = 2 })
	r.Record("docs", "/a", traffic.Human, at, 1)
	r.Record("docs", "/b", traffic.Human, at, 1)
	for h := 1; h <= 100; h++ {
		r.Record("docs", "/c", traffic.AI, at.Add(-time.Duration(h)*time.Hour), 1)
	}
	// /a and /b, the overflow counters of the first two hours, and that
	// of the hour recorded in.
	if got := r.keys.Load(); got != 5 {
		t.Fatalf("%d live counters, want 5", got)
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := sink.snapshot()
	overflow := func(d time.Duration) int64 {
		return got["docs "+DefaultOverflowPath+" "+at.Truncate(time.Hour).Add(d).Format(time.RFC3339)].AI
	}
	if len(got) != 5 || overflow(-time.Hour) != 1 || overflow(-2*time.Hour) != 1 || overflow(0) != 98 {
		t.Fatalf("flushed %v", got)
	}
	if st := r.Stats(); st.Overflowed != 100 || st.Flushed != 102 || st.Folded != 0 {
		t.Fatalf("stats = %+v", st)
	}
}

// A path longer than MaxPathBytes is not kept: its view is counted under
// the overflow path.
func TestLongPathsAreNotKept(t *testing.T) {
	sink := &memSink{}
	r := newRecorder(t, sink)
	long := "/" + strings.Repeat("x", DefaultMaxPathBytes)
	r.Record("docs", long, traffic.Human, at, 2)
	r.Record("docs", long[:DefaultMaxPathBytes], traffic.Human, at, 1) // just fits
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := sink.snapshot()
	if got["docs "+DefaultOverflowPath+" 2026-08-14T09:00:00Z"].Human != 2 || got["docs "+long[:DefaultMaxPathBytes]+" 2026-08-14T09:00:00Z"].Human != 1 || len(got) != 2 {
		t.Fatalf("flushed %d counters", len(got))
	}
	if st := r.Stats(); st.Overflowed != 2 {
		t.Fatalf("Overflowed = %d, want 2", st.Overflowed)
	}
}

// A flush folds only what it fails to write: with batches of 2 and room
// for 2 pending counters, a flush whose first two batches fail keeps the
// two counters pending and folds the two of the second batch, with a
// warning; the store gets every view once it recovers.
func TestPartlyFailedFlushFoldsOnlyWhatFailed(t *testing.T) {
	sink := &memSink{fail: 1}
	var log bytes.Buffer
	r := newRecorder(t, sink, func(c *Config) {
		c.BatchSize, c.MaxPendingKeys = 2, 2
		c.Logger = slog.New(slog.NewTextHandler(&log, nil))
	})
	ctx := context.Background()
	for _, p := range []string{"/a", "/b", "/c", "/d", "/e", "/f"} {
		r.Record("docs", p, traffic.Human, at, 1)
	}
	if err := r.Flush(ctx); err == nil || pendingKeys(r) != 2 || r.Stats().Folded != 0 {
		t.Fatalf("first flush: %v, %d pending counters, stats %+v; want an error and 2 pending", err, pendingKeys(r), r.Stats())
	}
	for _, p := range []string{"/g", "/h", "/i", "/j", "/k", "/l"} {
		r.Record("docs", p, traffic.AI, at, 1)
	}
	sink.mu.Lock()
	sink.fail = 2 // the pending batch (written first) and one of the new ones
	sink.mu.Unlock()
	if err := r.Flush(ctx); err == nil {
		t.Fatal("second flush reported success")
	}
	if st := r.Stats(); st.Folded != 2 || st.Flushed != 8 || pendingKeys(r) != 3 {
		t.Fatalf("second flush: stats %+v with %d pending counters; want 2 folded into a third, 8 flushed", st, pendingKeys(r))
	}
	if n := strings.Count(log.String(), "folded into the overflow path"); n != 1 || !strings.Contains(log.String(), "views=2 max_pending_keys=2") {
		t.Fatalf("%d fold warnings, want 1 with views=2:\n%s", n, log.String())
	}
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := sink.snapshot()
	var human, ai int64
	for _, vc := range got {
		human += vc.Human
		ai += vc.AI
	}
	if human != 6 || ai != 6 || got["docs "+DefaultOverflowPath+" 2026-08-14T09:00:00Z"].AI != 2 || len(got) != 11 {
		t.Fatalf("stored %v", got)
	}
}
