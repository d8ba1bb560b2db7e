package rollup

import (
	"fmt"
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
		{ProjectID: "p", Path: "/b", Hour: at(3), Human: 2, AI: 1},
		{ProjectID: "p", Path: "/b", Hour: at(3), AI: 4, Bot: 9},
		{ProjectID: "p", Path: "/a", Hour: at(5), AI: 1},
		{ProjectID: "p", Path: "/bots", Hour: at(5), Bot: 3},
		{ProjectID: "p", Path: "/none", Hour: at(5)}, // no views: no entry
		{ProjectID: "o", Path: "/a", Hour: at(3).In(time.FixedZone("X", 3600)), Human: 7},
	}
	rolls, err := Group(counts)
	if err != nil {
		t.Fatal(err)
	}
	hours, days, weeks := rolls[Hourly], rolls[Daily], rolls[Weekly]
	u := func(h int) int64 { return at(h).Unix() }
	wantHours := []Roll{
		{"o", u(3), []Count{{Path: "/a", Human: 7}}},
		{"p", u(3), []Count{{Path: "/b", Human: 2, AI: 5, Bot: 9}}},
		{"p", u(5), []Count{{Path: "/a", AI: 1}, {Path: "/bots", Bot: 3}}},
		{"p", u(25), []Count{{Path: "/b", Human: 1}}},
	}
	wantDays := []Roll{
		{"o", u(0), []Count{{Path: "/a", Human: 7}}},
		{"p", u(0), []Count{{Path: "/a", AI: 1}, {Path: "/b", Human: 2, AI: 5, Bot: 9}, {Path: "/bots", Bot: 3}}},
		{"p", u(24), []Count{{Path: "/b", Human: 1}}},
	}
	if !reflect.DeepEqual(hours, wantHours) {
		t.Errorf("hour rolls %v, want %v", hours, wantHours)
	}
	if !reflect.DeepEqual(days, wantDays) {
		t.Errorf("day rolls %v, want %v", days, wantDays)
	}
	// 2026-05-01 is a Friday: its week started on Monday, April 27th.
	monday := day.AddDate(0, 0, -4).Unix()
	wantWeeks := []Roll{
		{"o", monday, []Count{{Path: "/a", Human: 7}}},
		{"p", monday, []Count{{Path: "/a", AI: 1}, {Path: "/b", Human: 3, AI: 5, Bot: 9}, {Path: "/bots", Bot: 3}}},
	}
	if !reflect.DeepEqual(weeks, wantWeeks) {
		t.Errorf("week rolls %v, want %v", weeks, wantWeeks)
	}
}

func TestGroupOrdersRollsAndPathsWhateverTheBatchOrder(t *testing.T) {
	// Counts of two projects over eight weeks, in a scrambled order
	// with a path repeated: every roll's counts come out normalized, and
	// the rolls of each kind sorted by project, then start.
	start := time.Date(2026, 4, 13, 0, 0, 0, 0, time.UTC)
	var counts []store.ViewCount
	var human int64
	for i := range 200 {
		human += int64(i%3 + 1)
		counts = append(counts, store.ViewCount{
			ProjectID: []string{"q", "p"}[i%2], Path: fmt.Sprintf("/%d", (i*37)%23),
			Hour: start.Add(time.Duration((i*101)%(56*24)) * time.Hour), Human: int64(i%3 + 1), Bot: int64(i % 2),
		})
	}
	rolls, err := Group(counts)
	if err != nil {
		t.Fatal(err)
	}
	for k, rs := range rolls {
		var sum int64
		for i, r := range rs {
			if i > 0 && (rs[i-1].ProjectID > r.ProjectID || rs[i-1].ProjectID == r.ProjectID && rs[i-1].At >= r.At) {
				t.Errorf("kind %d: roll %d (%s, %d) after (%s, %d)", k, i, r.ProjectID, r.At, rs[i-1].ProjectID, rs[i-1].At)
			}
			if r.At != Kind(k).Of(r.At) {
				t.Errorf("kind %d: roll at %d does not start a roll", k, r.At)
			}
			for j, c := range r.Counts {
				if j > 0 && r.Counts[j-1].Path >= c.Path {
					t.Errorf("kind %d: roll (%s, %d) not in path order: %q after %q", k, r.ProjectID, r.At, c.Path, r.Counts[j-1].Path)
				}
				sum += c.Human
			}
		}
		if sum != human {
			t.Errorf("kind %d: rolls hold %d human views, want %d", k, sum, human)
		}
	}
	if n := len(rolls[Weekly]); n != 16 {
		t.Errorf("%d week rolls, want eight weeks of two projects", n)
	}
}

func TestKindNamesTablesAndColumns(t *testing.T) {
	if Hourly.Table() != "view_hour_rolls" || Hourly.Column() != "hour" ||
		Daily.Table() != "view_day_rolls" || Daily.Column() != "day" ||
		Weekly.Table() != "view_week_rolls" || Weekly.Column() != "week" {
		t.Fatal("the names the stores' migrations use changed")
	}
}
