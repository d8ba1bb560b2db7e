package pages

import (
	"math"
	"testing"
	"time"
)

func TestChartStacksAIOnHumanWithinThePlot(t *testing.T) {
	start := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	var points []Point
	for i := range 30 {
		points = append(points, Point{At: start.Add(time.Duration(i) * 24 * time.Hour), Human: int64(i * 7), AI: int64(i * 3 % 11)})
	}
	c := NewChart(points, false)
	if len(c.Bars) != len(points) {
		t.Fatalf("%d bars for %d points", len(c.Bars), len(points))
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 0.25 }
	top := c.Ticks[len(c.Ticks)-1]
	for i, b := range c.Bars {
		if b.Point != points[i] {
			t.Fatalf("bar %d holds %+v, want %+v", i, b.Point, points[i])
		}
		if !near(b.HumanY+b.HumanH, c.Bottom) || !near(b.AIY+b.AIH, b.HumanY) {
			t.Errorf("bar %d is not stacked on the axis: %+v", i, b)
		}
		if b.AIY < c.Top-0.25 || b.X < c.Left || b.X+b.W > c.Right+0.25 {
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
	if c.Bars[0].Label != "2026-08-01" || c.Labels[0].Label != "1 Aug" {
		t.Errorf("the first day is labelled %q and %q", c.Bars[0].Label, c.Labels[0].Label)
	}
}

func TestChartOfNothingHasAScaleAndNoBars(t *testing.T) {
	c := NewChart(nil, true)
	if len(c.Bars) != 0 || len(c.Ticks) != chartTicks+1 || c.Ticks[len(c.Ticks)-1].Value != chartTicks {
		t.Errorf("empty chart: %d bars, ticks %+v", len(c.Bars), c.Ticks)
	}
}

func TestHourlyLabelsNameTheDayAtMidnight(t *testing.T) {
	at := time.Date(2026, 8, 14, 0, 0, 0, 0, time.UTC)
	if got := axisLabel(at, true); got != "14 Aug" {
		t.Errorf("midnight: %q", got)
	}
	if got := axisLabel(at.Add(15*time.Hour), true); got != "15:00" {
		t.Errorf("15:00: %q", got)
	}
	if got := intervalLabel(at.Add(15*time.Hour), true); got != "2026-08-14 15:00" {
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
