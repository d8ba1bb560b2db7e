package rollup

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

func TestGroupSplitsABatchIntoHourAndDayRolls(t *testing.T) {
	day := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	at := func(h int) time.Time { return day.Add(time.Duration(h) * time.Hour) }
	counts := []store.ViewCount{
		{ProjectID: "p", Path: "/b", Hour: at(25), Human: 1},
		{ProjectID: "p", Path: "/a", Hour: at(3), Human: 2, AI: 1},
		{ProjectID: "p", Path: "/a", Hour: at(3), AI: 4, Bot: 9},
		{ProjectID: "p", Path: "/b", Hour: at(5), AI: 1},
		{ProjectID: "p", Path: "/bots", Hour: at(5), Bot: 3}, // no roll entry, no ID needed
		{ProjectID: "o", Path: "/a", Hour: at(3).In(time.FixedZone("X", 3600)), Human: 7},
	}
	if got, want := Paths(counts), []PathKey{{"o", "/a"}, {"p", "/a"}, {"p", "/b"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Paths = %v, want %v", got, want)
	}
	ids := map[PathKey]int64{{"o", "/a"}: 9, {"p", "/a"}: 1, {"p", "/b"}: 2}
	hours, days, err := Group(counts, ids)
	if err != nil {
		t.Fatal(err)
	}
	u := func(h int) int64 { return at(h).Unix() }
	wantHours := []Roll{
		{"o", u(3), []Count{{PathID: 9, Human: 7}}},
		{"p", u(3), []Count{{PathID: 1, Human: 2, AI: 5}}},
		{"p", u(5), []Count{{PathID: 2, AI: 1}}},
		{"p", u(25), []Count{{PathID: 2, Human: 1}}},
	}
	wantDays := []Roll{
		{"o", u(0), []Count{{PathID: 9, Human: 7}}},
		{"p", u(0), []Count{{PathID: 1, Human: 2, AI: 5}, {PathID: 2, AI: 1}}},
		{"p", u(24), []Count{{PathID: 2, Human: 1}}},
	}
	if !reflect.DeepEqual(hours, wantHours) {
		t.Errorf("hour rolls %v, want %v", hours, wantHours)
	}
	if !reflect.DeepEqual(days, wantDays) {
		t.Errorf("day rolls %v, want %v", days, wantDays)
	}
	if _, _, err := Group(counts, map[PathKey]int64{{"p", "/a"}: 1}); err == nil {
		t.Error("Group without an ID for every path: no error")
	}
}

func TestApplyAssignsOnlyUnknownPaths(t *testing.T) {
	hour := time.Date(2026, 5, 1, 7, 0, 0, 0, time.UTC)
	counts := []store.ViewCount{
		{ProjectID: "p", Path: "/known", Hour: hour, Human: 1},
		{ProjectID: "p", Path: "/new", Hour: hour, AI: 2},
	}
	var cache PathCache
	cache.Add(map[PathKey]int64{{"p", "/known"}: 4})
	var asked []PathKey
	merged := map[Kind][]Roll{}
	fresh, err := Apply(counts, &cache,
		func(paths []PathKey) (map[PathKey]int64, error) {
			asked = append(asked, paths...)
			return map[PathKey]int64{{"p", "/new"}: 5}, nil
		},
		func(k Kind, rolls []Roll) error { merged[k] = rolls; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(asked, []PathKey{{"p", "/new"}}) || !reflect.DeepEqual(fresh, map[PathKey]int64{{"p", "/new"}: 5}) {
		t.Fatalf("asked %v, fresh %v: want only /new", asked, fresh)
	}
	want := []Count{{PathID: 4, Human: 1}, {PathID: 5, AI: 2}}
	if len(merged[Hourly]) != 1 || !reflect.DeepEqual(merged[Hourly][0].Counts, want) ||
		len(merged[Daily]) != 1 || !reflect.DeepEqual(merged[Daily][0].Counts, want) {
		t.Fatalf("merged %v", merged)
	}
	if _, missing := cache.Lookup([]PathKey{{"p", "/new"}}); len(missing) != 1 {
		t.Error("Apply added to the cache itself: only the store may, after commit")
	}

	boom := errors.New("boom")
	noMerge := func(Kind, []Roll) error { return nil }
	if _, err := Apply(counts, &PathCache{}, func([]PathKey) (map[PathKey]int64, error) { return nil, boom }, noMerge); !errors.Is(err, boom) {
		t.Errorf("assign failing: %v", err)
	}
	all := func([]PathKey) (map[PathKey]int64, error) {
		return map[PathKey]int64{{"p", "/known"}: 4, {"p", "/new"}: 5}, nil
	}
	for _, failing := range []Kind{Hourly, Daily} {
		merge := func(k Kind, _ []Roll) error {
			if k == failing {
				return boom
			}
			return nil
		}
		if _, err := Apply(counts, &PathCache{}, all, merge); !errors.Is(err, boom) {
			t.Errorf("merge of %s failing: %v", failing.Table(), err)
		}
	}
	if _, err := Apply(counts, &PathCache{}, func([]PathKey) (map[PathKey]int64, error) { return nil, nil }, noMerge); err == nil {
		t.Error("assign that gives no IDs: no error")
	}
}

func TestKindNamesTablesAndColumns(t *testing.T) {
	if Hourly.Table() != "view_hour_rolls" || Hourly.Column() != "hour" ||
		Daily.Table() != "view_day_rolls" || Daily.Column() != "day" {
		t.Fatal("the names the stores' migrations use changed")
	}
}
