package rollup

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server/store"
)

// rank sorts rows in the views query's order.
func rank(rows []store.PathCounts) {
	slices.SortFunc(rows, func(a, b store.PathCounts) int {
		return cmp.Or(cmp.Compare(b.Human+b.AI, a.Human+a.AI), strings.Compare(a.Path, b.Path))
	})
}

func TestTallyMatchesABruteForceRanking(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 400 {
		// Few distinct totals, so ties straddle page edges often; paths
		// that are prefixes of others; several segments per roll.
		paths := 1 + r.IntN(80)
		name := func(i int) string { return "/p" + strings.Repeat("x", i%3) + fmt.Sprint(i*37%101) }
		var segs [][]byte
		want := map[string]*store.Counts{}
		var totals store.Counts
		for range 1 + r.IntN(6) {
			var seg []Count
			for i := range paths {
				if r.IntN(3) == 0 {
					continue
				}
				// Bot views alone make an entry of the roll but no row
				// of the ranking.
				c := Count{Path: name(i), Human: r.Int64N(3), AI: r.Int64N(2), Bot: r.Int64N(2)}
				seg = append(seg, c)
				if c.Human+c.AI > 0 {
					if want[c.Path] == nil {
						want[c.Path] = &store.Counts{}
					}
					want[c.Path].Human += c.Human
					want[c.Path].AI += c.AI
					totals.Human += c.Human
					totals.AI += c.AI
				}
			}
			seg, err := Normalize(seg)
			if err != nil {
				t.Fatal(err)
			}
			segs = append(segs, Encode(nil, seg))
		}
		var all []store.PathCounts
		for p, c := range want {
			all = append(all, store.PathCounts{Path: p, Counts: *c})
		}
		rank(all)

		for range 10 {
			var tally Tally
			for _, seg := range segs {
				if err := tally.Add(seg); err != nil {
					t.Fatal(err)
				}
			}
			if got := tally.Totals(); got != totals {
				t.Fatalf("trial %d: totals %+v, want %+v", trial, got, totals)
			}
			limit, offset := 1+r.IntN(12), r.IntN(len(all)+3)
			if r.IntN(4) == 0 {
				limit = 300 + r.IntN(10) // past the short-head selection
			}
			got, more, err := tally.Page(offset, limit)
			if err != nil {
				t.Fatal(err)
			}
			wantRows := []store.PathCounts{}
			if offset < len(all) {
				wantRows = all[offset:min(len(all), offset+limit)]
			}
			wantMore := offset+limit < len(all)
			if !reflect.DeepEqual(got, wantRows) || more != wantMore {
				t.Fatalf("trial %d: Page(%d, %d) = %v, %v; want %v, %v", trial, offset, limit, got, more, wantRows, wantMore)
			}
			tally.Release()
		}
	}
}

// A page costs the same whatever the number of paths that share a total:
// only its own rows become strings, at any depth.
func TestTallyNamesOnlyThePage(t *testing.T) {
	var counts []Count
	for i := range 20_000 {
		counts = append(counts, Count{Path: fmt.Sprintf("/made-up/%08x", uint32(i)*2654435761), Human: 1})
	}
	counts = append(counts, Count{Path: "/popular", Human: 5})
	counts, _ = Normalize(counts)
	seg := Encode(nil, counts)
	names := make([]string, 0, len(counts))
	for _, c := range counts {
		if c.Path != "/popular" {
			names = append(names, c.Path)
		}
	}
	for _, offset := range []int{0, 1, 9_999, 19_950, 20_000} {
		var tally Tally
		if err := tally.Add(seg); err != nil {
			t.Fatal(err)
		}
		rows, _, err := tally.Page(offset, 50)
		if err != nil {
			t.Fatal(err)
		}
		st := tally.Stats()
		tally.Release()
		if st.Named > 51 || st.Segments != 1 || st.Paths != 20_001 {
			t.Fatalf("offset %d: stats %+v; want at most 51 paths named of 20,001", offset, st)
		}
		// The ranking: /popular, then the tied paths in byte order.
		var want []string
		if offset == 0 {
			want = append(want, "/popular")
		}
		from := max(offset-1, 0)
		want = append(want, names[from:min(len(names), offset-1+50)]...)
		var got []string
		for _, r := range rows {
			got = append(got, r.Path)
		}
		if !slices.Equal(got, want[:len(got)]) || len(got) != min(50, len(names)+1-offset) {
			t.Fatalf("offset %d: %d rows from %v, want from %v", offset, len(got), got[:min(3, len(got))], want[:min(3, len(want))])
		}
	}
}

func TestSelectDescAgreesWithSorting(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 500 {
		n := 1 + r.IntN(300)
		vals := make([]uint64, n)
		for i := range vals {
			vals[i] = uint64(r.IntN(1 + r.IntN(20)))
		}
		sorted := slices.Clone(vals)
		slices.SortFunc(sorted, func(a, b uint64) int { return cmp.Compare(b, a) })
		k := r.IntN(n)
		if got := selectDesc(vals, k); got != sorted[k] {
			t.Fatalf("selectDesc(%v, %d) = %d, want %d", sorted, k, got, sorted[k])
		}
		for _, v := range vals[:k] {
			if v < sorted[k] {
				t.Fatalf("selectDesc left %d before rank %d (value %d)", v, k, sorted[k])
			}
		}
	}
}

func TestTallyEdgeCases(t *testing.T) {
	var empty Tally
	rows, more, err := empty.Page(0, 10)
	if err != nil || rows == nil || len(rows) != 0 || more {
		t.Fatalf("empty tally: %v, %v, %v; want an empty non-nil page", rows, more, err)
	}
	if empty.Totals() != (store.Counts{}) {
		t.Fatal("empty tally has totals")
	}
	var tally Tally
	defer tally.Release()
	if err := tally.Add(Encode(nil, nil)); err != nil {
		t.Fatal(err)
	}
	if rows, _, err := tally.Page(0, 10); err != nil || len(rows) != 0 {
		t.Fatalf("tally of an empty segment: %v, %v", rows, err)
	}
	if err := tally.Add([]byte{format + 1}); err == nil {
		t.Error("Add of a segment of another format: no error")
	}
}

// BenchmarkTally sums and ranks 30 day rolls of the shapes of the bench
// module's datasets: 5,000 paths every day (varied), 200,000 paths of one
// view spread over the days (tied), a million paths in one day (day1m).
func BenchmarkTally(b *testing.B) {
	for _, ds := range []struct {
		name        string
		days, paths int
		path        func(d, i int) string
		offset      int
	}{
		{"varied", 30, 5000, func(d, i int) string { return fmt.Sprintf("/docs/section-%03d/page-%05d", i%97, i) }, 0},
		{"tied", 30, 6667, func(d, i int) string { return fmt.Sprintf("/made-up/%08x", uint32(i*30+d)*2654435761) }, 100_000},
		{"day1m", 1, 1_000_000, func(d, i int) string { return fmt.Sprintf("/made-up/%08x", uint32(i)*2654435761) }, 500_000},
	} {
		var segs [][]byte
		for d := range ds.days {
			var cs []Count
			for i := range ds.paths {
				cs = append(cs, Count{Path: ds.path(d, i), Human: int64(1 + i%3*d%2)})
			}
			cs, _ = Normalize(cs)
			segs = append(segs, Encode(nil, cs))
		}
		b.Run(ds.name, func(b *testing.B) {
			for b.Loop() {
				var t Tally
				for _, s := range segs {
					if err := t.Add(s); err != nil {
						b.Fatal(err)
					}
				}
				if _, _, err := t.Page(ds.offset, 50); err != nil {
					b.Fatal(err)
				}
				t.Release()
			}
		})
	}
}

// A tally of one path answers what the whole ranking has of it, in views
// and visitors tallies alike, and refuses a damaged segment as the whole
// one does.
func TestTallyOfOnePathIsItsRowOfTheWhole(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	names := []string{"/a", "/a/b", "/ab", "/b", "/bots", "/c"}
	for trial := range 200 {
		var segs [][]byte
		for range 1 + r.IntN(5) {
			var seg []Count
			for _, p := range names {
				if r.IntN(3) == 0 {
					continue
				}
				c := Count{Path: p, Human: r.Int64N(3), AI: r.Int64N(2), Bot: 1 + r.Int64N(3)}
				if p == "/bots" {
					c.Human, c.AI = 0, 0
				}
				seg = append(seg, c)
			}
			seg, err := Normalize(seg)
			if err != nil {
				t.Fatal(err)
			}
			segs = append(segs, Encode(nil, seg))
		}
		for _, visitors := range []bool{false, true} {
			whole := Tally{Visitors: visitors}
			for _, seg := range segs {
				if err := whole.Add(seg); err != nil {
					t.Fatal(err)
				}
			}
			// A tally is paged once, as a query does.
			var views []store.PathCounts
			var vis []store.PathVisitors
			var err error
			if visitors {
				vis, _, err = whole.VisitorsPage(0, 100)
			} else {
				views, _, err = whole.Page(0, 100)
			}
			if err != nil {
				t.Fatal(err)
			}
			whole.Release()
			for _, path := range append(names, "/", "/none") {
				one := Tally{Visitors: visitors, Path: path}
				for _, seg := range segs {
					if err := one.Add(seg); err != nil {
						t.Fatal(err)
					}
				}
				for _, offset := range []int{0, 1} {
					if visitors {
						got, more, err := one.VisitorsPage(offset, 5)
						want := []store.PathVisitors{}
						var totals store.VisitorTotals
						for _, row := range vis {
							if row.Path == path {
								totals = store.VisitorTotals{Human: row.Human, AI: row.AI, Total: row.Total}
								if offset == 0 {
									want = append(want, row)
								}
							}
						}
						if err != nil || more || !reflect.DeepEqual(got, want) || one.PathVisitors() != totals {
							t.Fatalf("trial %d: visitors of %q from %d: %v (totals %+v), %v, %v; want %v (totals %+v)", trial, path, offset, got, one.PathVisitors(), more, err, want, totals)
						}
						continue
					}
					got, more, err := one.Page(offset, 5)
					want := []store.PathCounts{}
					var totals store.Counts
					for _, row := range views {
						if row.Path == path {
							totals = row.Counts
							if offset == 0 {
								want = append(want, row)
							}
						}
					}
					if err != nil || more || !reflect.DeepEqual(got, want) || one.Totals() != totals {
						t.Fatalf("trial %d: views of %q from %d: %v (totals %+v), %v, %v; want %v (totals %+v)", trial, path, offset, got, one.Totals(), more, err, want, totals)
					}
				}
				one.Release()
			}
		}
	}
	one := Tally{Path: "/a"}
	if err := one.Add([]byte{format + 1}); err == nil {
		t.Error("Add of a segment of another format to a tally of one path: no error")
	}
}
