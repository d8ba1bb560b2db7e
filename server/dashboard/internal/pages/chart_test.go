package pages

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestChartStacksAIOnHumanWithinThePlot(t *testing.T) {
	start := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	var points []Point
	for i := range 30 {
		at := start.Add(time.Duration(i) * 24 * time.Hour)
		points = append(points, Point{At: at, End: at.Add(24 * time.Hour), Human: int64(i * 7), AI: int64(i * 3 % 11)})
	}
	c := NewChart(points, Day)
	if len(c.Bars) != len(points) {
		t.Fatalf("%d bars for %d points", len(c.Bars), len(points))
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 0.02 }
	top := c.Ticks[len(c.Ticks)-1]
	for i, b := range c.Bars {
		if b.Point != points[i] {
			t.Fatalf("bar %d holds %+v, want %+v", i, b.Point, points[i])
		}
		if !near(b.HumanY+b.HumanH, c.Bottom) || !near(b.AIY+b.AIH, b.HumanY) {
			t.Errorf("bar %d is not stacked on the axis: %+v", i, b)
		}
		if b.AIY < c.Top-0.02 || b.X < 0 || b.X+b.W > 100.02 {
			t.Errorf("bar %d leaves the plot: %+v", i, b)
		}
		// Heights are proportional to the counts, on the ticks' scale.
		want := float64(b.Total()) / float64(top.Value) * (c.Bottom - c.Top)
		if !near(b.HumanH+b.AIH, want) {
			t.Errorf("bar %d is %.1f high for %d views, want %.1f", i, b.HumanH+b.AIH, b.Total(), want)
		}
		if i > 0 && b.X <= c.Bars[i-1].X {
			t.Errorf("bar %d is not right of bar %d", i, i-1)
		}
	}
	if top.Value < 29*7+10 || !near(top.Y, c.Top) {
		t.Errorf("the top tick is %+v: below the tallest bar, or not at the top", top)
	}
	if len(c.Labels) == 0 || len(c.Labels) > chartMaxLabels {
		t.Errorf("%d labels under 30 bars", len(c.Labels))
	}
	narrow := 0
	for i, l := range c.Labels {
		if l.Narrow {
			narrow++
		}
		if i > 0 && l.Narrow == c.Labels[i-1].Narrow {
			t.Errorf("labels %d and %d are both shown on phones, or both hidden", i-1, i)
		}
	}
	if narrow == 0 || narrow > chartMaxLabels/2 {
		t.Errorf("%d of %d labels are shown on phones", narrow, len(c.Labels))
	}
	if c.Bars[0].Label != "2026-08-01" || c.Labels[0].Label != "1 Aug" {
		t.Errorf("the first day is labelled %q and %q", c.Bars[0].Label, c.Labels[0].Label)
	}
}

func TestChartOfNothingHasAScaleAndNoBars(t *testing.T) {
	c := NewChart(nil, Hour)
	if len(c.Bars) != 0 || len(c.Ticks) != chartTicks+1 || c.Ticks[len(c.Ticks)-1].Value != chartTicks {
		t.Errorf("empty chart: %d bars, ticks %+v", len(c.Bars), c.Ticks)
	}
}

func TestHourlyLabelsNameTheDayAtMidnight(t *testing.T) {
	at := time.Date(2026, 8, 14, 0, 0, 0, 0, time.UTC)
	if got := axisLabel(at, Hour, false); got != "14 Aug" {
		t.Errorf("midnight: %q", got)
	}
	if got := axisLabel(at.Add(15*time.Hour), Hour, false); got != "15:00" {
		t.Errorf("15:00: %q", got)
	}
	if got := intervalLabel(Point{At: at.Add(15 * time.Hour), End: at.Add(16 * time.Hour)}, Hour); got != "2026-08-14 15:00" {
		t.Errorf("the hour's full label: %q", got)
	}
}

func TestNiceStep(t *testing.T) {
	for _, tc := range []struct{ most, want int64 }{
		{0, 1}, {4, 1}, {5, 2}, {8, 2}, {9, 5}, {20, 5}, {21, 10}, {40, 10}, {41, 20}, {100, 25}, {101, 50}, {201, 100}, {1_000_000, 250_000},
	} {
		if got := niceStep(tc.most, 4); got != tc.want {
			t.Errorf("niceStep(%d) = %d, want %d", tc.most, got, tc.want)
		}
	}
}

// Labels name each interval in its own terms, and carry the year when the
// chart spans two: a chart of December and January must not read as one
// year's.
func TestLabelsOfEachInterval(t *testing.T) {
	d := func(y int, m time.Month, day int) time.Time { return time.Date(y, m, day, 0, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name       string
		iv         Interval
		points     []Point
		axis, full []string
	}{
		{"days in one year", Day, []Point{{At: d(2026, 3, 30), End: d(2026, 3, 31)}, {At: d(2026, 3, 31), End: d(2026, 4, 1)}},
			[]string{"30 Mar", "31 Mar"}, []string{"2026-03-30", "2026-03-31"}},
		{"days across new year", Day, []Point{{At: d(2025, 12, 31), End: d(2026, 1, 1)}, {At: d(2026, 1, 1), End: d(2026, 1, 2)}},
			[]string{"31 Dec 2025", "1 Jan 2026"}, []string{"2025-12-31", "2026-01-01"}},
		{"hours across new year", Hour, []Point{{At: d(2025, 12, 31).Add(23 * time.Hour), End: d(2026, 1, 1)}, {At: d(2026, 1, 1), End: d(2026, 1, 1).Add(time.Hour)}},
			[]string{"23:00", "1 Jan 2026"}, []string{"2025-12-31 23:00", "2026-01-01 00:00"}},
		{"weeks, the first cut to the range", Week, []Point{{At: d(2026, 3, 4), End: d(2026, 3, 9)}, {At: d(2026, 3, 9), End: d(2026, 3, 16)}},
			[]string{"4 Mar", "9 Mar"}, []string{"2026-03-04 to 2026-03-08", "2026-03-09 to 2026-03-15"}},
		{"months in one year", Month, []Point{{At: d(2026, 1, 1), End: d(2026, 2, 1)}, {At: d(2026, 2, 1), End: d(2026, 2, 15)}},
			[]string{"Jan", "Feb"}, []string{"2026-01-01 to 2026-01-31", "2026-02-01 to 2026-02-14"}},
		{"months across new year", Month, []Point{{At: d(2025, 12, 1), End: d(2026, 1, 1)}, {At: d(2026, 1, 1), End: d(2026, 2, 1)}},
			[]string{"Dec 2025", "Jan 2026"}, []string{"2025-12-01 to 2025-12-31", "2026-01-01 to 2026-01-31"}},
		// A range that ends at midnight of the new year is all in the old.
		{"months up to new year", Month, []Point{{At: d(2025, 11, 1), End: d(2025, 12, 1)}, {At: d(2025, 12, 1), End: d(2026, 1, 1)}},
			[]string{"Nov", "Dec"}, []string{"2025-11-01 to 2025-11-30", "2025-12-01 to 2025-12-31"}},
	} {
		c := NewChart(tc.points, tc.iv)
		var axis, full []string
		for _, l := range c.Labels {
			axis = append(axis, l.Label)
		}
		for _, b := range c.Bars {
			full = append(full, b.Label)
		}
		if strings.Join(axis, "|") != strings.Join(tc.axis, "|") || strings.Join(full, "|") != strings.Join(tc.full, "|") {
			t.Errorf("%s: axis %q and rows %q, want %q and %q", tc.name, axis, full, tc.axis, tc.full)
		}
	}
}
