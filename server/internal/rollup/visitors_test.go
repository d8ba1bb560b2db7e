package rollup

import (
	"reflect"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/hll"
	"github.com/docsapi/docsapi-go/server/store"
)

func sketch(ids ...uint64) []byte {
	var s hll.Sketch
	for _, id := range ids {
		s.Insert(hll.Mix64(id))
	}
	return s.AppendBinary(nil)
}

// A flush's hours of one day become that day's visitors, each counted
// once per path and for the project; days and projects apart, in order.
func TestGroupVisitorsMergesTheHoursOfADay(t *testing.T) {
	day := time.Date(2026, 5, 4, 0, 0, 0, 0, time.UTC)
	counts := []store.VisitorCount{
		{ProjectID: "q", Path: "/a", Hour: day.Add(3 * time.Hour), Human: sketch(9)},
		{ProjectID: "p", Path: "/b", Hour: day.Add(30 * time.Hour), Human: sketch(1)},
		{ProjectID: "p", Path: "/b", Hour: day.Add(3 * time.Hour), Human: sketch(1, 2), AI: sketch(3)},
		{ProjectID: "p", Path: "/a", Hour: day.Add(9 * time.Hour), Human: sketch(2, 4)},
		{ProjectID: "p", Path: "/b", Hour: day.Add(9 * time.Hour), Human: sketch(2, 5), AI: sketch(1)},
	}
	days, err := GroupVisitors(counts)
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		project string
		day     int64
		paths   []Count
		totals  store.VisitorTotals
	}
	var all []got
	for i := range days {
		paths, totals := days[i].Numbers()
		all = append(all, got{days[i].ProjectID, days[i].Day, paths, totals})
	}
	d := day.Unix()
	want := []got{
		{"p", d, []Count{{Path: "/a", Human: 2, Bot: 2}, {Path: "/b", Human: 3, AI: 2, Bot: 4}}, store.VisitorTotals{Human: 4, AI: 2, Total: 5}},
		{"p", d + Day, []Count{{Path: "/b", Human: 1, Bot: 1}}, store.VisitorTotals{Human: 1, Total: 1}},
		{"q", d, []Count{{Path: "/a", Human: 1, Bot: 1}}, store.VisitorTotals{Human: 1, Total: 1}},
	}
	if !reflect.DeepEqual(all, want) {
		t.Errorf("days\n got %+v\nwant %+v", all, want)
	}
}

// An open day's numbers are made anew for the paths a flush touches; the
// others keep theirs.
func TestReplaceCountsReplacesTheFreshPathsOnly(t *testing.T) {
	seg, n, err := ReplaceCounts(nil, []Count{{Path: "/a", Human: 1, Bot: 1}, {Path: "/c", AI: 2, Bot: 2}, {Path: "/e", Human: 5, Bot: 5}})
	if err != nil || n != 3 {
		t.Fatalf("first: %d entries, %v", n, err)
	}
	seg, n, err = ReplaceCounts(seg, []Count{{Path: "/b", Human: 1, Bot: 1}, {Path: "/c", Human: 1, AI: 3, Bot: 4}, {Path: "/f", AI: 1, Bot: 1}})
	if err != nil || n != 5 {
		t.Fatalf("second: %d entries, %v", n, err)
	}
	got, err := Decode(seg)
	if err != nil {
		t.Fatal(err)
	}
	want := []Count{{Path: "/a", Human: 1, Bot: 1}, {Path: "/b", Human: 1, Bot: 1}, {Path: "/c", Human: 1, AI: 3, Bot: 4}, {Path: "/e", Human: 5, Bot: 5}, {Path: "/f", AI: 1, Bot: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// A visitors tally adds up its days' numbers and ranks by total visitors,
// not by human plus AI.
func TestVisitorsTallyRanksByTotal(t *testing.T) {
	tally := Tally{Visitors: true}
	defer tally.Release()
	for _, seg := range [][]byte{
		Encode(nil, []Count{{Path: "/a", Human: 3, AI: 3, Bot: 4}, {Path: "/b", Human: 5, Bot: 5}}),
		Encode(nil, []Count{{Path: "/a", Human: 1, Bot: 1}, {Path: "/c", AI: 6, Bot: 6}}),
	} {
		if err := tally.Add(seg); err != nil {
			t.Fatal(err)
		}
	}
	rows, more, err := tally.VisitorsPage(0, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.PathVisitors{{Path: "/c", AI: 6, Total: 6}, {Path: "/a", Human: 4, AI: 3, Total: 5}}
	if !reflect.DeepEqual(rows, want) || !more {
		t.Errorf("page %+v (more %v), want %+v and more", rows, more, want)
	}
}
