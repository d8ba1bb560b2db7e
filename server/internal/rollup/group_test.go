package rollup

import (
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

func TestKindNamesTablesAndColumns(t *testing.T) {
	if Hourly.Table() != "view_hour_rolls" || Hourly.Column() != "hour" ||
		Daily.Table() != "view_day_rolls" || Daily.Column() != "day" ||
		Weekly.Table() != "view_week_rolls" || Weekly.Column() != "week" {
		t.Fatal("the names the stores' migrations use changed")
	}
}
