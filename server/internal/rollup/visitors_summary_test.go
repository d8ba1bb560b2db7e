package rollup

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// daySegment is the segment of one hour's visitors of paths /p0.. of day
// d: path i has visitors d*100_000 + i*1000 + 0..i (human) and one AI
// visitor; every path's visitors are new each day, as the daily salts
// make them.
func daySegment(t *testing.T, d, paths int, hour int) []byte {
	t.Helper()
	at := time.Date(2026, 5, 4+d, hour, 0, 0, 0, time.UTC)
	var counts []store.VisitorCount
	for i := range paths {
		var ids []uint64
		for v := range i + 1 {
			ids = append(ids, uint64(d*100_000+i*1000+v))
		}
		counts = append(counts, store.VisitorCount{ProjectID: "p", Path: fmt.Sprintf("/p%d", i), Hour: at,
			Human: sketchOf(ids...), AI: sketchOf(uint64(d*100_000 + i*1000 + 999))})
	}
	rolls, err := GroupVisitors(counts)
	if err != nil {
		t.Fatal(err)
	}
	return rolls[Daily][0].Segment
}

func tallied(t *testing.T, q store.ViewsQuery, segs ...[]byte) (store.VisitorsResult, VisitorStats) {
	t.Helper()
	var tally VisitorTally
	defer tally.Release()
	for _, s := range segs {
		if err := tally.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	res, err := tally.Result(q)
	if err != nil {
		t.Fatal(err)
	}
	return res, tally.Stats()
}

func summaryOf(t *testing.T, segs ...[]byte) []byte {
	t.Helper()
	s, err := SummarizeVisitorDay(segs)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A day's summary stands for its segments: a tally of summaries and
// other days' segments answers as the tally of all the segments, page by
// page, since days share no visitor.
func TestVisitorSummariesAddUpWithSegments(t *testing.T) {
	// Day 0's two hours share their visitors (one salt a day): its
	// summary counts them once.
	day0 := [][]byte{daySegment(t, 0, 30, 3), daySegment(t, 0, 30, 9)}
	day1 := [][]byte{daySegment(t, 1, 12, 5)}
	day2 := [][]byte{daySegment(t, 2, 45, 1), daySegment(t, 2, 20, 22)}
	all := slices.Concat(day0, day1, day2)
	for _, page := range []struct{ offset, limit int }{{0, 100}, {0, 3}, {10, 5}, {44, 5}, {45, 1}} {
		q := store.ViewsQuery{ProjectID: "p", Offset: page.offset, Limit: page.limit}
		want, _ := tallied(t, q, all...)
		for name, segs := range map[string][][]byte{
			"day 0 summarized":     slices.Concat([][]byte{summaryOf(t, day0...)}, day1, day2),
			"days 0 and 2":         slices.Concat([][]byte{summaryOf(t, day2...)}, day1, [][]byte{summaryOf(t, day0...)}),
			"every day summarized": {summaryOf(t, day0...), summaryOf(t, day1...), summaryOf(t, day2...)},
		} {
			got, st := tallied(t, q, segs...)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s, offset %d limit %d:\n got %+v\nwant %+v", name, page.offset, page.limit, got, want)
			}
			if st.Summaries == 0 {
				t.Errorf("%s: stats %+v count no summary", name, st)
			}
		}
	}
	// The summary of a day is its visitors once each: day 0's two hours
	// hold path /p29's 30 human visitors each, the same ones.
	res, _ := tallied(t, store.ViewsQuery{ProjectID: "p", Limit: 1}, summaryOf(t, day0...))
	if want := []store.PathVisitors{{Path: "/p29", Human: 30, AI: 1, Total: 31}}; fmt.Sprint(res.Rows) != fmt.Sprint(want) {
		t.Errorf("day 0's top row %+v, want %+v", res.Rows, want)
	}
	if res.Totals != (store.VisitorTotals{Human: 465, AI: 30, Total: 495}) {
		t.Errorf("day 0's totals %+v", res.Totals)
	}
}

// Every damage to a summary is refused, with an error that says so:
// truncation anywhere, any flipped bit (the checksum), a segment's bytes.
func TestDamagedVisitorSummariesAreRefused(t *testing.T) {
	sum := summaryOf(t, daySegment(t, 0, 8, 3))
	check := func(what string, b []byte) {
		t.Helper()
		var tally VisitorTally
		defer tally.Release()
		err := tally.Add(b)
		if err == nil {
			_, err = tally.Result(store.ViewsQuery{ProjectID: "p", Limit: 10})
		}
		if err == nil || !strings.Contains(err.Error(), "damaged visitors summary") {
			t.Errorf("%s: %v, want a damaged summary", what, err)
		}
	}
	for n := 1; n < len(sum); n++ {
		check(fmt.Sprintf("truncated to %d bytes", n), sum[:n])
	}
	for i := 1; i < len(sum); i++ {
		for bit := range 8 {
			b := slices.Clone(sum)
			b[i] ^= 1 << bit
			check(fmt.Sprintf("bit %d of byte %d flipped", bit, i), b)
		}
	}
}

// Summaries of days without a visitor are empty but valid.
func TestVisitorSummaryOfNothing(t *testing.T) {
	res, st := tallied(t, store.ViewsQuery{ProjectID: "p", Limit: 5}, summaryOf(t))
	if len(res.Rows) != 0 || res.Totals != (store.VisitorTotals{}) || st.Summaries != 1 {
		t.Errorf("result %+v, stats %+v", res, st)
	}
}

func TestPlanVisitors(t *testing.T) {
	// Monday 2026-05-04 and the days after it, as day starts.
	mon := WeekOf(time.Date(2026, 5, 4, 0, 0, 0, 0, time.UTC).Unix())
	day := func(n int) int64 { return mon + int64(n)*Day }
	summed := func(n int) VisitorDay { return VisitorDay{Day: day(n), LastSeq: 4, SummarySeq: 4} }
	stale := func(n int) VisitorDay { return VisitorDay{Day: day(n), LastSeq: 5, SummarySeq: 4} }
	bare := func(n int) VisitorDay { return VisitorDay{Day: day(n), LastSeq: 2} }
	// From the Saturday before to 3 days into the third week, with ragged
	// hours: days -2, -1; weeks 0 and 7; days 14 to 16.
	span := Split(time.Unix(day(-2)-5*Hour, 0), time.Unix(day(17)+4*Hour, 0))
	if span.Weeks != [2]int64{day(0), day(14)} {
		t.Fatalf("span %+v", span)
	}
	if from, to, ok := span.DayRange(); !ok || from != day(-2) || to != day(17) {
		t.Fatalf("DayRange %d, %d, %v", from, to, ok)
	}
	week := func(w int, days ...VisitorDay) VisitorWeek { return VisitorWeek{Week: day(7 * w), Days: days} }
	for _, c := range []struct {
		name  string
		days  []VisitorDay
		weeks []VisitorWeek
		want  VisitorPlan
	}{
		{"nothing recorded", nil, nil, VisitorPlan{}},
		{"every day summarized",
			[]VisitorDay{summed(-2), summed(-1), summed(0), summed(3), summed(6), summed(7), summed(14), summed(16)}, nil,
			VisitorPlan{Summaries: []int64{day(-2), day(-1), day(0), day(3), day(6), day(7), day(14), day(16)}}},
		{"a stale day opens its week",
			[]VisitorDay{summed(0), stale(3), summed(6), summed(7), summed(8)}, nil,
			VisitorPlan{Summaries: []int64{day(7), day(8)}, Weeks: []int64{day(0)}}},
		{"a day without a summary opens its week, not the others",
			[]VisitorDay{summed(0), summed(7), bare(13)}, nil,
			VisitorPlan{Summaries: []int64{day(0)}, Weeks: []int64{day(7)}}},
		{"days outside the weeks one by one",
			[]VisitorDay{bare(-2), summed(-1), stale(14), summed(15), bare(16)}, nil,
			VisitorPlan{Summaries: []int64{day(-1), day(15)}, Days: []int64{day(-2), day(14), day(16)}}},
		{"the days' order does not matter",
			[]VisitorDay{summed(16), bare(8), summed(-1), summed(1), summed(10)}, nil,
			VisitorPlan{Summaries: []int64{day(-1), day(1), day(16)}, Weeks: []int64{day(7)}}},
		{"a week summary that describes its week",
			[]VisitorDay{summed(0), summed(3), stale(7), summed(9)},
			[]VisitorWeek{week(0, summed(3), summed(0)), week(1, stale(7), summed(9))},
			VisitorPlan{WeekSummaries: []int64{day(0), day(7)}}},
		{"a week summary of other seqs, or other days, does not",
			[]VisitorDay{summed(0), stale(3), summed(7), summed(9), summed(10)},
			[]VisitorWeek{week(0, summed(0), summed(3)), week(1, summed(7), summed(9))},
			VisitorPlan{Summaries: []int64{day(7), day(9), day(10)}, Weeks: []int64{day(0)}}},
		{"a week summary of more days than the week has does not",
			[]VisitorDay{summed(7)},
			[]VisitorWeek{week(1, summed(7), summed(9))},
			VisitorPlan{Summaries: []int64{day(7)}}},
	} {
		c.want.Hours = span.Hours
		if got := PlanVisitors(span, c.days, c.weeks); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
	// A range of hours holds no whole day.
	if _, _, ok := Split(time.Unix(day(2)+Hour, 0), time.Unix(day(2)+5*Hour, 0)).DayRange(); ok {
		t.Error("a range of hours has a day range")
	}
}

func TestWeeksToSum(t *testing.T) {
	mon := WeekOf(time.Date(2026, 5, 4, 0, 0, 0, 0, time.UTC).Unix())
	day := func(n int) int64 { return mon + int64(n)*Day }
	summed := func(n int) VisitorDay { return VisitorDay{Day: day(n), LastSeq: 4, SummarySeq: 4} }
	stale := func(n int) VisitorDay { return VisitorDay{Day: day(n), LastSeq: 5, SummarySeq: 4} }
	days := []VisitorDay{
		summed(-3),           // a week that starts before from
		summed(0), summed(6), // summed already
		summed(7), summed(12), // to sum
		summed(14), stale(15), // a stale day
		summed(21), summed(22), // its summary is of other seqs
		summed(28), summed(30), // to sum
		summed(35), // not over by before
	}
	weeks := []VisitorWeek{
		{Week: day(0), Days: []VisitorDay{summed(0), summed(6)}},
		{Week: day(21), Days: []VisitorDay{summed(21), {Day: day(22), LastSeq: 3}}},
	}
	got := WeeksToSum(days, weeks, day(0), day(40))
	if want := []int64{day(28), day(21), day(7)}; !slices.Equal(got, want) {
		t.Errorf("WeeksToSum = %v, want %v", got, want)
	}
}

// A week's summary is its days' summed; the days it names round-trip and
// any damage to them is refused.
func TestSumVisitorWeek(t *testing.T) {
	segs := [][]byte{daySegment(t, 0, 10, 3), daySegment(t, 1, 20, 3), daySegment(t, 2, 5, 3)}
	var sums [][]byte
	var days []VisitorDay
	for i, seg := range segs {
		sums = append(sums, summaryOf(t, seg))
		days = append(days, VisitorDay{Day: int64(i) * Day, LastSeq: int64(3 + i), SummarySeq: int64(3 + i)})
	}
	summary, daySeqs, ok, err := SumVisitorWeek(days, sums)
	if err != nil || !ok {
		t.Fatalf("SumVisitorWeek: %v, %v", ok, err)
	}
	for _, page := range []struct{ offset, limit int }{{0, 30}, {3, 4}} {
		q := store.ViewsQuery{ProjectID: "p", Offset: page.offset, Limit: page.limit}
		want, _ := tallied(t, q, segs...)
		if got, _ := tallied(t, q, summary); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("offset %d: the week's summary gives %+v, its days %+v", page.offset, got, want)
		}
	}
	got, err := ParseVisitorDays(daySeqs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i].Day != days[i].Day || got[i].LastSeq != days[i].LastSeq {
			t.Fatalf("days %+v, want %+v", got, days)
		}
	}
	for n := range len(daySeqs) {
		if _, err := ParseVisitorDays(daySeqs[:n]); err == nil {
			t.Errorf("days truncated to %d bytes parsed", n)
		}
	}
	if _, err := ParseVisitorDays(append(slices.Clone(daySeqs), 0)); err == nil {
		t.Error("days with a byte after them parsed")
	}
	// Not every day summarized: nothing is made.
	days[1].SummarySeq = 2
	if _, _, ok, err := SumVisitorWeek(days, sums); ok || err != nil {
		t.Errorf("a stale day summed: %v, %v", ok, err)
	}
}
