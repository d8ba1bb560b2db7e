package rollup

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/hll"
	"github.com/docsapi/docsapi-go/server/store"
)

// TestVisitorRankMatchesFullMerge checks the ranking that merges only the
// paths that can reach a page against merging every path: over segments
// of many paths, a few with tens of thousands of visitors (dense
// sketches), many with a handful, visitors shared across segments and
// ties, every page of several sizes must hold the same rows. The first
// page must leave most paths unmerged, or the bound does nothing.
func TestVisitorRankMatchesFullMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const paths = 300
	hour := time.Date(2026, 5, 4, 0, 0, 0, 0, time.UTC)
	var segs [][]byte
	type union struct{ human, ai hll.Sketch }
	full := make([]union, paths)
	for seg := range 6 {
		var counts []store.VisitorCount
		for p := range paths {
			if rng.IntN(3) == 0 {
				continue
			}
			// Path 0 and 1 are large; the rest from 1 to a few hundred,
			// many alike so that totals tie.
			n := 1 + rng.IntN(5)
			switch {
			case p < 2:
				n = 20_000 + rng.IntN(20_000)
			case p < 40:
				n = 100 + rng.IntN(3_000)
			}
			var h, a hll.Sketch
			for range n {
				// Visitors come back: ids are drawn from a range twice
				// the count, and the same range in every segment.
				id := hll.Mix64(uint64(p)<<32 | uint64(rng.IntN(2*n)))
				if rng.IntN(5) == 0 {
					a.Insert(id)
				} else {
					h.Insert(id)
				}
			}
			c := store.VisitorCount{ProjectID: "p", Path: fmt.Sprintf("/docs/%03d", p), Hour: hour.Add(time.Duration(seg) * time.Hour)}
			if h.Estimate() > 0 {
				c.Human = h.AppendBinary(nil)
				full[p].human.Merge(&h)
			}
			if a.Estimate() > 0 {
				c.AI = a.AppendBinary(nil)
				full[p].ai.Merge(&a)
			}
			if c.Human == nil && c.AI == nil {
				continue
			}
			counts = append(counts, c)
		}
		rolls, err := GroupVisitors(counts)
		if err != nil {
			t.Fatal(err)
		}
		segs = append(segs, rolls[Hourly][0].Segment)
	}
	var want []store.PathVisitors
	for p := range full {
		h, a := &full[p].human, &full[p].ai
		if h.Estimate() == 0 && a.Estimate() == 0 {
			continue
		}
		u := h.Clone()
		u.Merge(a)
		want = append(want, store.PathVisitors{Path: fmt.Sprintf("/docs/%03d", p), Human: int64(h.Estimate()), AI: int64(a.Estimate()), Total: int64(u.Estimate())})
	}
	slices.SortFunc(want, func(x, y store.PathVisitors) int {
		return cmp.Or(cmp.Compare(y.Total, x.Total), cmp.Compare(x.Path, y.Path))
	})
	for _, limit := range []int{1, 7, 50} {
		for offset := 0; offset <= len(want); offset += limit {
			var tally VisitorTally
			for _, seg := range segs {
				if err := tally.Add(seg); err != nil {
					t.Fatal(err)
				}
			}
			res, err := tally.Result(store.ViewsQuery{ProjectID: "p", Offset: offset, Limit: limit})
			if err != nil {
				t.Fatal(err)
			}
			end := min(len(want), offset+limit)
			if fmt.Sprint(res.Rows) != fmt.Sprint(want[offset:end]) || res.HasMore != (end < len(want)) {
				t.Fatalf("offset %d, limit %d: rows %v (more %v), want %v", offset, limit, res.Rows, res.HasMore, want[offset:end])
			}
			// Visitors come back across segments here, which loosens the
			// bounds (a sum of the segments' counts): still, most paths
			// of the tail are never merged.
			if st := tally.Stats(); offset == 0 && limit == 7 && st.Merged > st.Paths/4 {
				t.Errorf("the first page of %d merged %d of %d paths", limit, st.Merged, st.Paths)
			}
			tally.Release()
		}
	}
}
