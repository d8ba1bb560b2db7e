package rollup

import (
	"fmt"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/hll"
	"github.com/docsapi/docsapi-go/server/store"
)

func sketchOf(ids ...uint64) []byte {
	var s hll.Sketch
	for _, id := range ids {
		s.Insert(hll.Mix64(id))
	}
	return s.AppendBinary(nil)
}

// visitorSegment is the hour segment of a batch of paths /p000.. with
// visitors of their own, path i having i+1.
func visitorSegment(t *testing.T, paths int) []byte {
	t.Helper()
	hour := time.Date(2026, 5, 1, 3, 0, 0, 0, time.UTC)
	var counts []store.VisitorCount
	for i := range paths {
		var ids []uint64
		for v := range i + 1 {
			ids = append(ids, uint64(i*1000+v))
		}
		counts = append(counts, store.VisitorCount{ProjectID: "p", Path: fmt.Sprintf("/p%03d", i), Hour: hour, Human: sketchOf(ids...), AI: sketchOf(uint64(i * 1000))})
	}
	rolls, err := GroupVisitors(counts)
	if err != nil {
		t.Fatal(err)
	}
	if len(rolls[Hourly]) != 1 || len(rolls[Daily]) != 1 || len(rolls[Weekly]) != 1 {
		t.Fatalf("rolls %d/%d/%d, want one of each", len(rolls[Hourly]), len(rolls[Daily]), len(rolls[Weekly]))
	}
	return rolls[Hourly][0].Segment
}

func TestVisitorSegmentsMergeAndRank(t *testing.T) {
	seg := visitorSegment(t, 40)
	var tally VisitorTally
	defer tally.Release()
	// The same segment twice: the same visitors, counted once.
	for range 2 {
		if err := tally.Add(seg); err != nil {
			t.Fatal(err)
		}
	}
	res, err := tally.Result(store.ViewsQuery{ProjectID: "p", Limit: 3, Offset: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []store.PathVisitors{{Path: "/p038", Human: 39, AI: 1, Total: 39}, {Path: "/p037", Human: 38, AI: 1, Total: 38}, {Path: "/p036", Human: 37, AI: 1, Total: 37}}
	if fmt.Sprint(res.Rows) != fmt.Sprint(want) || !res.HasMore {
		t.Errorf("rows %+v, hasMore %v; want %+v, true", res.Rows, res.HasMore, want)
	}
	if res.Totals != (store.VisitorTotals{Human: 820, AI: 40, Total: 820}) {
		t.Errorf("totals %+v", res.Totals)
	}
	if st := tally.Stats(); st.Segments != 2 || st.Entries != 80 || st.Paths != 40 {
		t.Errorf("stats %+v", st)
	}
}

func TestAppendVisitorsMergesSmallSegments(t *testing.T) {
	seg := visitorSegment(t, 10)
	stored := [][]byte{seg}
	a, err := AppendVisitors(VisitorRoll{ProjectID: "p", Segment: seg}, []Segment{{Seq: 3, Entries: int64(len(seg))}},
		func(from int64) ([][]byte, error) {
			if from != 3 {
				t.Errorf("read from %d, want 3", from)
			}
			return stored, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	// The same visitors twice: merged, the segment is the same size.
	if a.Seq != 4 || a.Replaces != 3 || a.Entries != len(a.Segment) || len(a.Segment) != len(seg) {
		t.Errorf("appended seq %d replacing %d, %d bytes (entries %d), want seq 4 replacing 3, %d bytes", a.Seq, a.Replaces, len(a.Segment), a.Entries, len(seg))
	}
}

// A damaged segment is refused, never misread, whatever byte is wrong or
// missing: by Add, or by Result when the tally read it after Add returned.
func TestDamagedVisitorSegmentsAreRefused(t *testing.T) {
	seg := visitorSegment(t, 5)
	q := store.ViewsQuery{ProjectID: "p", Limit: 10}
	refuses := func(seg []byte) bool {
		var tally VisitorTally
		defer tally.Release()
		if tally.Add(seg) != nil {
			return true
		}
		_, err := tally.Result(q)
		return err != nil
	}
	for n := range len(seg) {
		if !refuses(seg[:n]) {
			t.Errorf("a segment cut at %d of %d bytes was read", n, len(seg))
		}
	}
	refused := 0
	for i := range seg {
		bad := append([]byte(nil), seg...)
		bad[i] ^= 0x01
		if refuses(bad) {
			refused++
		}
	}
	// Every flip lands in a header, a path or a checksummed sketch, except
	// those that keep a valid layout (a path byte that stays in order).
	if refused < len(seg)*9/10 {
		t.Errorf("only %d of %d flipped bytes were refused", refused, len(seg))
	}
}

// A tally whose reader has failed refuses the segments added after, and
// one added to after its result is refused rather than read past.
func TestVisitorTallyStopsAtTheFirstDamage(t *testing.T) {
	seg := visitorSegment(t, 5)
	var tally VisitorTally
	defer tally.Release()
	bad := append([]byte(nil), seg...)
	bad[1] ^= 0xff
	var err error
	for range 100 {
		if err = tally.Add(bad); err != nil {
			break
		}
	}
	if err == nil {
		if _, err = tally.Result(store.ViewsQuery{ProjectID: "p", Limit: 10}); err == nil {
			t.Fatal("a damaged segment was read")
		}
	}
	var done VisitorTally
	defer done.Release()
	if err := done.Add(seg); err != nil {
		t.Fatal(err)
	}
	if _, err := done.Result(store.ViewsQuery{ProjectID: "p", Limit: 10}); err != nil {
		t.Fatal(err)
	}
	if err := done.Add(seg); err == nil {
		t.Error("a segment added after the result was taken")
	}
}
