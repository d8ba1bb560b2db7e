package rollup

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// fakeDays is a DayStore in memory.
type fakeDays struct {
	held    map[ProjectDay]map[string]bool
	paths   map[ProjectDay]int64
	folds   map[ProjectDay]store.ViewFolds
	askedOf []string // the paths Held was asked about
}

func newFakeDays() *fakeDays {
	return &fakeDays{held: map[ProjectDay]map[string]bool{}, paths: map[ProjectDay]int64{}, folds: map[ProjectDay]store.ViewFolds{}}
}

func (f *fakeDays) Held(d ProjectDay, paths []string) ([]string, error) {
	f.askedOf = append(f.askedOf, paths...)
	var held []string
	for _, p := range paths {
		if f.held[d][p] {
			held = append(held, p)
		}
	}
	return held, nil
}

func (f *fakeDays) Paths(d ProjectDay) (int64, error) { return f.paths[d], nil }

func (f *fakeDays) Record(d ProjectDay, admitted []string, folds store.ViewFolds) error {
	if !slices.IsSorted(admitted) {
		return fmt.Errorf("admitted %q out of order", admitted)
	}
	f.paths[d] += int64(len(admitted))
	x := f.folds[d]
	x.Counts += folds.Counts
	x.Views += folds.Views
	f.folds[d] = x
	return nil
}

// commit stores the batch's rows' paths as the store would.
func (f *fakeDays) commit(counts []store.ViewCount) {
	for _, c := range counts {
		d := ProjectDay{c.ProjectID, DayOf(c.Hour.Unix())}
		if f.held[d] == nil {
			f.held[d] = map[string]bool{}
		}
		f.held[d][c.Path] = true
	}
}

func TestCapFoldsNewPathsPastTheCap(t *testing.T) {
	day := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	h := func(n int) time.Time { return day.Add(time.Duration(n) * time.Hour) }
	d0 := ProjectDay{"p", day.Unix()}
	fd := newFakeDays()
	var cache DayCache
	run := func(counts ...store.ViewCount) Capped {
		t.Helper()
		res, err := Cap(counts, 3, &cache, fd)
		if err != nil {
			t.Fatal(err)
		}
		fd.commit(res.Counts)
		cache.Add(res.Learned)
		return res
	}
	paths := func(cs []store.ViewCount) []string {
		var ps []string
		for _, c := range cs {
			ps = append(ps, c.Path)
		}
		return ps
	}

	// Five new paths in one batch: the first three in byte order are
	// admitted, the others folded; OtherPagesPath and empty counts never
	// count; a bot-only path is a path.
	res := run(
		store.ViewCount{ProjectID: "p", Path: "/e", Hour: h(1), Human: 1},
		store.ViewCount{ProjectID: "p", Path: "/c", Hour: h(1), Bot: 1},
		store.ViewCount{ProjectID: "p", Path: store.OtherPagesPath, Hour: h(1), Human: 9},
		store.ViewCount{ProjectID: "p", Path: "/a", Hour: h(1), Human: 1},
		store.ViewCount{ProjectID: "p", Path: "/zero", Hour: h(1)},
		store.ViewCount{ProjectID: "p", Path: "/d", Hour: h(2), AI: 2, Bot: 1},
		store.ViewCount{ProjectID: "p", Path: "/b", Hour: h(1), Human: 1},
		store.ViewCount{ProjectID: "q", Path: "/x", Hour: h(1), Human: 1}, // another project
	)
	if got, want := paths(res.Counts), []string{store.OtherPagesPath, "/c", store.OtherPagesPath, "/a", store.OtherPagesPath, "/b", "/x"}; !slices.Equal(got, want) {
		t.Fatalf("paths after the cap %q, want %q", got, want)
	}
	if want := (store.ViewFolds{Counts: 2, Views: 4}); res.Folds != want || fd.folds[d0] != want || fd.paths[d0] != 3 {
		t.Fatalf("folds %+v, recorded %+v and %d paths; want %+v and 3", res.Folds, fd.folds[d0], fd.paths[d0], want)
	}

	// Known paths keep counting, in any hour of the day, without asking
	// the store: the cache knows them.
	fd.askedOf = nil
	res = run(store.ViewCount{ProjectID: "p", Path: "/a", Hour: h(23), Human: 1}, store.ViewCount{ProjectID: "p", Path: "/c", Hour: h(5), AI: 1})
	if got := paths(res.Counts); !slices.Equal(got, []string{"/a", "/c"}) || res.Folds != (store.ViewFolds{}) || len(fd.askedOf) != 0 {
		t.Fatalf("known paths became %q (folds %+v, store asked of %q)", got, res.Folds, fd.askedOf)
	}
	// A path the cache lost is asked of the store, and still counts.
	cache = DayCache{}
	res = run(store.ViewCount{ProjectID: "p", Path: "/b", Hour: h(3), Human: 1}, store.ViewCount{ProjectID: "p", Path: "/new", Hour: h(3), Human: 1})
	if got := paths(res.Counts); !slices.Equal(got, []string{"/b", store.OtherPagesPath}) || !slices.Equal(fd.askedOf, []string{"/b", "/new"}) {
		t.Fatalf("after the cache was lost: %q (asked of %q)", got, fd.askedOf)
	}
	// The next day starts fresh.
	res = run(store.ViewCount{ProjectID: "p", Path: "/e", Hour: h(24), Human: 1})
	if got := paths(res.Counts); !slices.Equal(got, []string{"/e"}) {
		t.Fatalf("next day: %q", got)
	}
	if want := map[ProjectDay][]string{{"p", day.Unix() + Day}: {"/e"}}; !reflect.DeepEqual(res.Learned, want) {
		t.Fatalf("learned %v, want %v", res.Learned, want)
	}
}
