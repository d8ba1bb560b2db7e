package pageviews

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/traffic"
)

// slowSink is a memSink whose writes take a while on a clock of its own.
type slowSink struct {
	memSink
	mu   sync.Mutex
	now  time.Time
	took time.Duration // per AddViews call
}

func (s *slowSink) AddViews(ctx context.Context, counts []store.ViewCount) error {
	s.mu.Lock()
	s.now = s.now.Add(s.took)
	s.mu.Unlock()
	return s.memSink.AddViews(ctx, counts)
}

func (s *slowSink) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now
}

// OnFlush hears of each flush that had views to write, with its duration
// and error; a flush with nothing to write is not one.
func TestOnFlushTellsDurationAndError(t *testing.T) {
	sink := &slowSink{memSink: memSink{fail: 1}, now: at, took: 3 * time.Second}
	var got []FlushInfo
	r := newRecorder(t, sink, func(c *Config) {
		c.Now = sink.Now
		c.BatchSize = 2
		c.OnFlush = func(f FlushInfo) { got = append(got, f) }
	})
	ctx := context.Background()
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("an empty flush was reported: %+v", got)
	}
	for _, p := range []string{"/a", "/b", "/c"} {
		r.Record("docs", p, traffic.Human, at, 1)
	}
	failed := r.Flush(ctx) // two batches: the first fails, the second is written
	if failed == nil {
		t.Fatal("a flush into failing storage reported success")
	}
	if err := r.Flush(ctx); err != nil { // the kept counts: one batch
		t.Fatal(err)
	}
	want := []FlushInfo{{Duration: 6 * time.Second, Err: failed}, {Duration: 3 * time.Second}}
	if len(got) != len(want) {
		t.Fatalf("OnFlush got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("flush %d: OnFlush got %+v, want %+v", i, got[i], want[i])
		}
	}
}
