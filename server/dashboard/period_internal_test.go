package dashboard

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/dashboard/internal/pages"
	"github.com/docsapi/docsapi-go/server/store"
)

func date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func TestDashPeriod(t *testing.T) {
	now := time.Date(2026, 8, 14, 9, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		query       string
		period      string
		from, to    time.Time // to exclusive
		prev        time.Time // the previous span's first day
		prevLabel   string
		iv          pages.Interval
		wantProblem string
	}{
		{"", "30d", date(2026, 7, 16), date(2026, 8, 15), date(2026, 6, 16), "previous 30 days", pages.Day, ""},
		{"period=today", "today", date(2026, 8, 14), date(2026, 8, 15), date(2026, 8, 13), "previous day", pages.Hour, ""},
		{"period=7d", "7d", date(2026, 8, 8), date(2026, 8, 15), date(2026, 8, 1), "previous 7 days", pages.Day, ""},
		{"period=30d", "30d", date(2026, 7, 16), date(2026, 8, 15), date(2026, 6, 16), "previous 30 days", pages.Day, ""},
		{"period=mtd", "mtd", date(2026, 8, 1), date(2026, 8, 15), date(2026, 7, 1), "previous month to date", pages.Day, ""},
		{"period=12m", "12m", date(2025, 9, 1), date(2026, 8, 15), date(2024, 9, 1), "previous 12 months", pages.Month, ""},
		{"period=custom&from=2026-08-01&to=2026-08-02", "custom", date(2026, 8, 1), date(2026, 8, 3), date(2026, 7, 30), "previous 2 days", pages.Hour, ""},
		{"from=2026-06-01&to=2026-08-01", "custom", date(2026, 6, 1), date(2026, 8, 2), date(2026, 3, 31), "previous 62 days", pages.Day, ""},
		{"from=2026-06-01&to=2026-08-02", "custom", date(2026, 6, 1), date(2026, 8, 3), date(2026, 3, 30), "previous 63 days", pages.Week, ""},
		{"from=2026-02-01&to=2026-08-01", "custom", date(2026, 2, 1), date(2026, 8, 2), date(2025, 8, 3), "previous 182 days", pages.Week, ""},
		{"from=2026-01-31&to=2026-08-01", "custom", date(2026, 1, 31), date(2026, 8, 2), date(2025, 8, 1), "previous 183 days", pages.Month, ""},
		{"period=custom", "custom", date(2026, 7, 16), date(2026, 8, 15), date(2026, 6, 16), "previous 30 days", pages.Day, ""},
		// A range with its end alone is the 30 days up to it.
		{"to=2026-03-31", "custom", date(2026, 3, 2), date(2026, 4, 1), date(2026, 1, 31), "previous 30 days", pages.Day, ""},
		// Problems: named, and the default span shown.
		{"period=8d", "30d", date(2026, 7, 16), date(2026, 8, 15), date(2026, 6, 16), "previous 30 days", pages.Day, `period must be one of today, 7d, 30d, mtd, 12m, custom, got "8d"`},
		{"period=7d&from=2026-08-01", "30d", date(2026, 7, 16), date(2026, 8, 15), date(2026, 6, 16), "previous 30 days", pages.Day, "from and to go with period=custom, not with period=7d"},
		{"period=custom&from=2026-8-1", "30d", date(2026, 7, 16), date(2026, 8, 15), date(2026, 6, 16), "previous 30 days", pages.Day, `from must be a day such as 2026-08-14, got "2026-8-1"`},
		{"from=2026-08-10&to=2026-08-01", "30d", date(2026, 7, 16), date(2026, 8, 15), date(2026, 6, 16), "previous 30 days", pages.Day, "from (2026-08-10) is after to (2026-08-01)"},
		{"from=2020-01-01&to=2026-08-01", "30d", date(2026, 7, 16), date(2026, 8, 15), date(2026, 6, 16), "previous 30 days", pages.Day, "the range holds 2405 days; the dashboard shows at most 1000"},
	} {
		q, err := url.ParseQuery(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		span, problem := dashPeriod(q, now)
		prev := span.Previous()
		if problem != tc.wantProblem || span.Period != tc.period || !span.From.Equal(tc.from) || !span.To.Equal(tc.to) {
			t.Errorf("?%s: %s [%s, %s) %q; want %s [%s, %s) %q", tc.query, span.Period, day0(span.From), day0(span.To), problem,
				tc.period, day0(tc.from), day0(tc.to), tc.wantProblem)
			continue
		}
		// The previous span is as many days just before, but for the
		// presets named by months (TestDashPreviousOfNamedPeriods).
		prevTo := span.From
		if span.Period == "mtd" || span.Period == "12m" {
			prevTo = tc.prev.AddDate(0, 0, span.Days())
		}
		if !prev.From.Equal(tc.prev) || !prev.To.Equal(prevTo) || span.PreviousLabel() != tc.prevLabel {
			t.Errorf("?%s: the previous span is [%s, %s), %q; want from %s, %q", tc.query, day0(prev.From), day0(prev.To), span.PreviousLabel(), day0(tc.prev), tc.prevLabel)
		}
		if got := span.Interval(); got != tc.iv {
			t.Errorf("?%s: %d days are charted per %s, want per %s", tc.query, span.Days(), got, tc.iv)
		}
		// The links of the span ask for it again.
		again, problem := dashPeriod(span.Query(), now)
		if problem != "" || again != span {
			t.Errorf("?%s: its links (%s) ask for %+v %q", tc.query, span.Query().Encode(), again, problem)
		}
	}
}

func day0(t time.Time) string { return t.Format(time.DateOnly) }

// Month to date compares with the previous month up to the same day, cut
// at its end; 12 months with the same days a year before, leap days
// included as the calendar has them.
func TestDashPreviousOfNamedPeriods(t *testing.T) {
	for _, tc := range []struct {
		period   string
		today    time.Time
		from, to time.Time // the previous span's first and last days
	}{
		{"mtd", date(2026, 8, 14), date(2026, 7, 1), date(2026, 7, 14)},
		{"mtd", date(2026, 8, 1), date(2026, 7, 1), date(2026, 7, 1)},
		{"mtd", date(2026, 8, 31), date(2026, 7, 1), date(2026, 7, 31)},
		{"mtd", date(2026, 3, 30), date(2026, 2, 1), date(2026, 2, 28)},
		{"mtd", date(2028, 3, 29), date(2028, 2, 1), date(2028, 2, 29)},
		{"mtd", date(2026, 1, 20), date(2025, 12, 1), date(2025, 12, 20)},
		{"12m", date(2026, 8, 14), date(2024, 9, 1), date(2025, 8, 14)},
		{"12m", date(2028, 2, 29), date(2026, 3, 1), date(2027, 2, 28)},
		{"12m", date(2029, 2, 28), date(2027, 3, 1), date(2028, 2, 29)},
		{"7d", date(2026, 3, 3), date(2026, 2, 18), date(2026, 2, 24)},
	} {
		span, problem := dashPeriod(url.Values{"period": {tc.period}}, tc.today.Add(15*time.Hour))
		prev := span.Previous()
		if problem != "" || !prev.From.Equal(tc.from) || !prev.To.Equal(tc.to.Add(day)) {
			t.Errorf("%s on %s (%s to %s): compared with %s to %s %q, want %s to %s", tc.period, day0(tc.today), day0(span.From), day0(span.To.Add(-day)),
				day0(prev.From), day0(prev.To.Add(-day)), problem, day0(tc.from), day0(tc.to))
		}
	}
}

// No range the dashboard accepts has more bars than a phone can show.
func TestDashPeriodBarsAreFew(t *testing.T) {
	most := map[pages.Interval]int{}
	for days := 1; days <= store.MaxSeriesPoints; days++ {
		span := dashSpan{Period: "custom", From: date(2025, 3, 1), To: date(2025, 3, 1).AddDate(0, 0, days)}
		iv := span.Interval()
		var points []store.SeriesPoint
		step := day
		if iv == pages.Hour {
			step = time.Hour
		}
		for at := span.From; at.Before(span.To); at = at.Add(step) {
			points = append(points, store.SeriesPoint{At: at})
		}
		n := len(dashBars(points, iv, span.From, span.To))
		most[iv] = max(most[iv], n)
		if n > 62 {
			t.Fatalf("%d days make %d bars of a %s", days, n, iv)
		}
	}
	if len(most) != 4 {
		t.Errorf("the ranges are charted by %v, not by every interval", most)
	}
}

func TestDashBars(t *testing.T) {
	days := func(from time.Time, n int) []store.SeriesPoint {
		var out []store.SeriesPoint
		for i := range n {
			out = append(out, store.SeriesPoint{At: from.AddDate(0, 0, i), Human: int64(i + 1), AI: int64(10 * (i + 1)), Bot: 1000})
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		iv       pages.Interval
		from, to time.Time
		points   []store.SeriesPoint
		want     []pages.Point
	}{
		{"days stay days", pages.Day, date(2026, 8, 1), date(2026, 8, 3), days(date(2026, 8, 1), 2), []pages.Point{
			{At: date(2026, 8, 1), End: date(2026, 8, 2), Human: 1, AI: 10},
			{At: date(2026, 8, 2), End: date(2026, 8, 3), Human: 2, AI: 20},
		}},
		{"hours stay hours", pages.Hour, date(2026, 8, 1), date(2026, 8, 1).Add(2 * time.Hour),
			[]store.SeriesPoint{{At: date(2026, 8, 1), Human: 3}, {At: date(2026, 8, 1).Add(time.Hour), AI: 4}}, []pages.Point{
				{At: date(2026, 8, 1), End: date(2026, 8, 1).Add(time.Hour), Human: 3},
				{At: date(2026, 8, 1).Add(time.Hour), End: date(2026, 8, 1).Add(2 * time.Hour), AI: 4},
			}},
		// 2026-03-04 is a Wednesday: its week is cut to Wednesday to
		// Sunday; the last week, from Monday 16th, to the 17th.
		{"ISO weeks from Monday, cut to the range", pages.Week, date(2026, 3, 4), date(2026, 3, 18), days(date(2026, 3, 4), 14), []pages.Point{
			{At: date(2026, 3, 4), End: date(2026, 3, 9), Human: 1 + 2 + 3 + 4 + 5, AI: 150},
			{At: date(2026, 3, 9), End: date(2026, 3, 16), Human: 6 + 7 + 8 + 9 + 10 + 11 + 12, AI: 630},
			{At: date(2026, 3, 16), End: date(2026, 3, 18), Human: 13 + 14, AI: 270},
		}},
		// A Sunday belongs to the week before it, and the first ISO week
		// of 2026 starts on Monday 2025-12-29.
		{"weeks across new year", pages.Week, date(2025, 12, 28), date(2026, 1, 5), days(date(2025, 12, 28), 8), []pages.Point{
			{At: date(2025, 12, 28), End: date(2025, 12, 29), Human: 1, AI: 10},
			{At: date(2025, 12, 29), End: date(2026, 1, 5), Human: 2 + 3 + 4 + 5 + 6 + 7 + 8, AI: 350},
		}},
		{"calendar months, cut to the range", pages.Month, date(2026, 1, 30), date(2026, 3, 2), days(date(2026, 1, 30), 31), []pages.Point{
			{At: date(2026, 1, 30), End: date(2026, 2, 1), Human: 1 + 2, AI: 30},
			{At: date(2026, 2, 1), End: date(2026, 3, 1), Human: 28 * (3 + 30) / 2, AI: 10 * 28 * (3 + 30) / 2},
			{At: date(2026, 3, 1), End: date(2026, 3, 2), Human: 31, AI: 310},
		}},
		{"nothing", pages.Month, date(2026, 1, 1), date(2026, 1, 1), nil, nil},
	} {
		got := dashBars(tc.points, tc.iv, tc.from, tc.to)
		if len(got) != len(tc.want) {
			t.Errorf("%s: %d bars, want %d: %+v", tc.name, len(got), len(tc.want), got)
			continue
		}
		for i := range got {
			if !got[i].At.Equal(tc.want[i].At) || !got[i].End.Equal(tc.want[i].End) || got[i].Human != tc.want[i].Human || got[i].AI != tc.want[i].AI {
				t.Errorf("%s: bar %d is %+v, want %+v", tc.name, i, got[i], tc.want[i])
			}
		}
	}
}

func TestCSVCell(t *testing.T) {
	for in, want := range map[string]string{
		"/guide": "/guide", "": "", "=HYPERLINK(\"x\")": "'=HYPERLINK(\"x\")", "+1": "'+1", "-2+3": "'-2+3",
		"@SUM(A1)": "'@SUM(A1)", "\tx": "'\tx", "\rx": "'\rx", "/a=b": "/a=b",
	} {
		if got := csvCell(in); got != want {
			t.Errorf("csvCell(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCSVFileName(t *testing.T) {
	for _, tc := range []struct {
		parts []string
		want  string
	}{
		{[]string{"alpha", "views", "2026-08-01", "to", "2026-08-14", ""}, "alpha-views-2026-08-01-to-2026-08-14"},
		{[]string{"alpha", "views", "2026-08-01", "to", "2026-08-14", "/guide/install"}, "alpha-views-2026-08-01-to-2026-08-14-guide-install"},
		{[]string{"a\"b;c", "views", "/../é/\r\n"}, "a-b-c-views"},
		{[]string{"alpha", "views", "2026-08-01", "to", "2026-08-14", "/" + strings.Repeat("x", 500)}, "alpha-views-2026-08-01-to-2026-08-14-" + strings.Repeat("x", maxCSVName-len("alpha-views-2026-08-01-to-2026-08-14-"))},
	} {
		if got := csvFileName(tc.parts); got != tc.want {
			t.Errorf("csvFileName(%q) = %q, want %q", tc.parts, got, tc.want)
		}
	}
}
