package ingest

import (
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/hll"
	"github.com/docsapi/docsapi-go/server/store"
)

// The visitors of a group's requests for one path and hour are merged
// into one count, a visitor in both counting once.
func TestMergeVisitors(t *testing.T) {
	hour := time.Date(2026, 8, 14, 9, 0, 0, 0, time.UTC)
	sketch := func(hashes ...uint64) []byte {
		var s hll.Sketch
		for _, h := range hashes {
			s.Insert(hll.Mix64(h))
		}
		return encodeSketch(&s)
	}
	vc := func(path string, human, ai []byte) store.VisitorCount {
		return store.VisitorCount{ProjectID: "docs", Path: path, Hour: hour, Human: human, AI: ai}
	}
	group := []*viewsBatch{
		{visitors: []store.VisitorCount{vc("/a", sketch(1, 2), nil), vc("/b", sketch(9), nil)}},
		{visitors: []store.VisitorCount{vc("/a", sketch(2, 3), sketch(7))}},
		{visitors: []store.VisitorCount{vc("/a", nil, sketch(7, 8))}},
	}
	got, err := mergeVisitors(group)
	if err != nil {
		t.Fatal(err)
	}
	estimate := func(b []byte) uint64 {
		var s hll.Sketch
		if len(b) > 0 {
			if err := s.UnmarshalBinary(b); err != nil {
				t.Fatal(err)
			}
		}
		return s.Estimate()
	}
	if len(got) != 2 || got[0].Path != "/a" || got[1].Path != "/b" {
		t.Fatalf("merged %+v, want /a and /b", got)
	}
	if h, a, b := estimate(got[0].Human), estimate(got[0].AI), estimate(got[1].Human); h != 3 || a != 2 || b != 1 {
		t.Errorf("/a: %d human, %d AI; /b: %d human; want 3, 2 and 1", h, a, b)
	}
}
