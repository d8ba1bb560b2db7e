package store

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNormaliseQuery(t *testing.T) {
	for in, want := range map[string]string{
		"Install":            "install",
		"  API\tKeys \n":     "api keys",
		"ÉTÉ  à Paris":       "été à paris",
		"rate   limits":      "rate limits",
		"\u00a0nbsp\u00a0":   "nbsp",
		"":                   "",
		" \t\n":              "",
		OtherSearchesQuery:   OtherSearchesQuery,
		"(Other   Searches)": OtherSearchesQuery,
	} {
		if got := NormaliseQuery(in); got != want {
			t.Errorf("NormaliseQuery(%q) = %q, want %q", in, got, want)
		}
		if got := NormaliseQuery(NormaliseQuery(in)); got != NormaliseQuery(in) {
			t.Errorf("NormaliseQuery is not idempotent on %q: %q", in, got)
		}
	}
}

// TallySearches, on one day that holds one query and one pair already,
// with room for one more of each: the new query first in byte order is
// admitted, the other folds; the held pair counts, the first new pair in
// byte order is admitted, the next one folds.
func TestTallySearches(t *testing.T) {
	at := time.Date(2026, 8, 14, 9, 0, 0, 0, time.UTC)
	s := func(q, p string, min int) Search {
		return Search{ProjectID: "p", Query: q, ClickedPath: p, At: at.Add(time.Duration(min) * time.Minute)}
	}
	batch := []Search{s("held", "/old", 1), s("zeta", "", 2), s("alpha", "/b", 3), s("alpha", "/a", 4), s("alpha", "/a", 5), s("held", "/new", 6)}
	queries, pairs := SearchKeys(batch)
	if want := []string{"alpha", "held", "zeta"}; !cmp.Equal(queries, want) {
		t.Errorf("SearchKeys queries = %v, want %v", queries, want)
	}
	if want := [][2]string{{"alpha", "/a"}, {"alpha", "/b"}, {"held", "/new"}, {"held", "/old"}}; !cmp.Equal(pairs, want) {
		t.Errorf("SearchKeys pairs = %v, want %v", pairs, want)
	}
	got := TallySearches(batch, SearchDayCounts{Queries: 1, ClickPaths: 1},
		map[string]bool{"held": true}, map[[2]string]bool{{"held", "/old"}: true}, 2)
	want := SearchTally{
		Queries: []QueryCount{
			{Query: OtherSearchesQuery, Hits: 1, LastAt: at.Add(2 * time.Minute)},
			{Query: "alpha", Hits: 3, Clicks: 3, LastAt: at.Add(5 * time.Minute)},
			{Query: "held", Hits: 2, Clicks: 2, LastAt: at.Add(6 * time.Minute)},
		},
		Clicks: []ClickCount{{Query: "alpha", Path: "/a", Clicks: 2}, {Query: "held", Path: "/old", Clicks: 1}},
		Added:  SearchDayCounts{Queries: 1, ClickPaths: 1},
		Folds:  SearchFolds{Searches: 1, Clicks: 2, Added: SearchDayCounts{Queries: 1, ClickPaths: 1}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("TallySearches (-want +got):\n%s", diff)
	}
}
