package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/store"
)

// CheckPageWork checks that a views page costs work bounded by the page,
// not by how many paths share a total: it adds 3,000 paths of one view
// each (a tie) and five ahead of them to s, an empty store whose views are
// kept in rollup's rolls, in three batches as flushes would; then every
// page, the first, one in the middle of the tie and the last, must name at
// most its own rows and read the same few segments. last returns the work
// of the store's last query (a backend's query hook). Before rolls were
// keyed by path, ranking looked up the path of every row of the tie.
func CheckPageWork(t *testing.T, s store.Store, last func() rollup.Stats) {
	t.Helper()
	hour := time.Date(2026, 5, 1, 3, 0, 0, 0, time.UTC)
	const tied, limit = 3000, 10
	var counts []store.ViewCount
	var names []string
	for i := range tied {
		p := fmt.Sprintf("/made-up/%08x", uint32(i)*2654435761)
		counts = append(counts, store.ViewCount{ProjectID: "p", Path: p, Hour: hour.Add(time.Duration(i%30) * time.Hour), Human: 1})
		names = append(names, p)
	}
	slices.Sort(names)
	for i := range 5 {
		counts = append(counts, store.ViewCount{ProjectID: "p", Path: fmt.Sprintf("/top/%d", i), Hour: hour, Human: int64(10 - i)})
		names = append([]string{fmt.Sprintf("/top/%d", 4-i)}, names...)
	}
	// In several batches, so that rolls have several segments.
	for b := range 3 {
		if err := s.AddViews(t.Context(), counts[b*len(counts)/3:(b+1)*len(counts)/3]); err != nil {
			t.Fatal(err)
		}
	}
	day := hour.Truncate(24 * time.Hour)
	for _, offset := range []int{0, 1, tied / 2, tied - 5} {
		q := store.ViewsQuery{ProjectID: "p", From: day, To: day.Add(48 * time.Hour), Limit: limit, Offset: offset}
		res, err := s.QueryViews(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range res.Rows {
			got = append(got, r.Path)
		}
		if want := names[offset:min(len(names), offset+limit)]; !slices.Equal(got, want) {
			t.Fatalf("offset %d: rows %q, want %q", offset, got, want)
		}
		st := last()
		t.Logf("offset %d: %+v", offset, st)
		if st.Named > limit+1 {
			t.Errorf("offset %d: %d paths named for a page of %d", offset, st.Named, limit)
		}
		// The range is two days: their day rolls, a few segments each,
		// whatever the number of paths.
		if st.Segments > 2*4 || st.Entries != tied+5 {
			t.Errorf("offset %d: %d segments, %d entries read; want at most 8 segments, and the range's %d paths once", offset, st.Segments, st.Entries, tied+5)
		}
	}
}
