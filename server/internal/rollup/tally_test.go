package rollup

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server/store"
)

// pathOf names path IDs so that ID order and path order differ.
func pathOf(id int64) string { return fmt.Sprintf("/p%03d", (id*37)%1000) }

// namesOf answers every ID with pathOf, recording how many it was asked.
func namesOf(asked *int) Names {
	return func(ids []int64) (map[int64]string, error) {
		*asked += len(ids)
		m := make(map[int64]string, len(ids))
		for _, id := range ids {
			m[id] = pathOf(id)
		}
		return m, nil
	}
}

func TestTallyMatchesABruteForceRanking(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		// Few distinct totals, so ties straddle page edges often.
		paths := 1 + r.IntN(60)
		var rolls [][]Count
		want := map[int64]*Count{}
		var totals store.Counts
		for range 1 + r.IntN(5) {
			var roll []Count
			for id := int64(1); id <= int64(paths); id++ {
				if r.IntN(3) == 0 {
					continue
				}
				c := Count{PathID: id, Human: r.Int64N(3), AI: r.Int64N(2)}
				roll = append(roll, c)
				if c.Human+c.AI > 0 {
					if want[id] == nil {
						want[id] = &Count{PathID: id}
					}
					want[id].Human += c.Human
					want[id].AI += c.AI
					totals.Human += c.Human
					totals.AI += c.AI
				}
			}
			roll, err := Normalize(roll)
			if err != nil {
				t.Fatal(err)
			}
			rolls = append(rolls, roll)
		}
		var all []store.PathCounts
		for id, c := range want {
			all = append(all, store.PathCounts{Path: pathOf(id), Counts: store.Counts{Human: c.Human, AI: c.AI}})
		}
		slices.SortFunc(all, func(a, b store.PathCounts) int {
			if c := cmp.Compare(b.Human+b.AI, a.Human+a.AI); c != 0 {
				return c
			}
			return strings.Compare(a.Path, b.Path)
		})

		var tally Tally
		for _, roll := range rolls {
			if err := tally.Add(Encode(nil, roll)); err != nil {
				t.Fatal(err)
			}
		}
		if got := tally.Totals(); got != totals {
			t.Fatalf("trial %d: totals %+v, want %+v", trial, got, totals)
		}
		for range 10 {
			limit, offset := 1+r.IntN(12), r.IntN(len(all)+3)
			var asked int
			got, more, err := tally.Page(offset, limit, namesOf(&asked))
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
		}
	}
}

func TestTallyNamesOnlyThePageWhenTotalsDiffer(t *testing.T) {
	var roll []Count
	for id := int64(1); id <= 5000; id++ {
		roll = append(roll, Count{PathID: id, Human: id})
	}
	var tally Tally
	if err := tally.Add(Encode(nil, roll)); err != nil {
		t.Fatal(err)
	}
	var asked int
	rows, more, err := tally.Page(100, 50, namesOf(&asked))
	if err != nil || len(rows) != 50 || !more {
		t.Fatalf("Page = %d rows, %v, %v", len(rows), more, err)
	}
	if rows[0].Human != 4900 {
		t.Fatalf("first row %+v, want the 101st largest (4900)", rows[0])
	}
	if asked != 51 {
		t.Fatalf("asked for %d paths, want the 50 of the page and the one after", asked)
	}
}

func TestTallyEdgeCases(t *testing.T) {
	var empty Tally
	rows, more, err := empty.Page(0, 10, namesOf(new(int)))
	if err != nil || rows == nil || len(rows) != 0 || more {
		t.Fatalf("empty tally: %v, %v, %v; want an empty non-nil page", rows, more, err)
	}

	var tally Tally
	if err := tally.Add(Encode(nil, []Count{{PathID: 1, Human: 1}})); err != nil {
		t.Fatal(err)
	}
	missing := func([]int64) (map[int64]string, error) { return map[int64]string{}, nil }
	if _, _, err := tally.Page(0, 10, missing); err == nil {
		t.Error("Page with a path ID the store cannot name: no error")
	}
	failing := func([]int64) (map[int64]string, error) { return nil, fmt.Errorf("boom") }
	if _, _, err := tally.Page(0, 10, failing); err == nil || err.Error() != "boom" {
		t.Errorf("Page with failing names: %v, want boom", err)
	}
	if err := tally.Add([]byte{format + 1}); err == nil {
		t.Error("Add of a roll of a newer format: no error")
	}
	if err := tally.Add(Encode(nil, []Count{{PathID: 2, AI: math.MaxInt64}})); err != nil {
		t.Fatal(err)
	}
	if err := tally.Add(Encode(nil, []Count{{PathID: 3, AI: 1}})); err == nil {
		t.Error("totals past int64: no error")
	}
}

func TestPathCacheKnowsOnlyWhatWasAdded(t *testing.T) {
	var c PathCache
	a, b := PathKey{"p", "/a"}, PathKey{"p", "/b"}
	ids, missing := c.Lookup([]PathKey{a, b})
	if len(ids) != 0 || !reflect.DeepEqual(missing, []PathKey{a, b}) {
		t.Fatalf("empty cache: %v, %v", ids, missing)
	}
	c.Add(map[PathKey]int64{a: 7})
	ids, missing = c.Lookup([]PathKey{a, b})
	if !reflect.DeepEqual(ids, map[PathKey]int64{a: 7}) || !reflect.DeepEqual(missing, []PathKey{b}) {
		t.Fatalf("after Add: %v, %v", ids, missing)
	}
	// Past its bound the cache starts over with what is being added.
	big := make(map[PathKey]int64, maxCachedPaths)
	for i := range maxCachedPaths {
		big[PathKey{"q", fmt.Sprint(i)}] = int64(i + 100)
	}
	c.Add(big)
	if _, missing := c.Lookup([]PathKey{a}); len(missing) != 1 {
		t.Fatal("the cache grew past its bound instead of starting over")
	}
}
