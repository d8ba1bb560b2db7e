package pages

import (
	"math"
	"strings"
	"time"
)

// The chart is drawn on the server, as SVG in the page: it needs no
// script and no library, and the numbers under it (a table, its text
// alternative) are the same values it is drawn from.
//
// Its geometry is in percent of the SVG's box, which has no viewBox: the
// bars stretch with the page while the labels keep their CSS size, so
// that they stay legible on a phone instead of shrinking with the chart.

// Interval is the length of the chart's bars.
type Interval int

// The intervals, shortest first. Weeks are ISO weeks (from Monday) and
// months calendar months, both in UTC.
const (
	Hour Interval = iota
	Day
	Week
	Month
)

// String names the interval: hour, day, week or month.
func (i Interval) String() string {
	switch i {
	case Hour:
		return "hour"
	case Day:
		return "day"
	case Week:
		return "week"
	}
	return "month"
}

// Title is String with a capital, for a column's heading.
func (i Interval) Title() string {
	s := i.String()
	return strings.ToUpper(s[:1]) + s[1:]
}

// Point is the views of one bar of the chart.
type Point struct {
	// At and End bound the time the bar covers, [At, End) in UTC: one
	// interval, or the part of it inside the range shown.
	At, End   time.Time
	Human, AI int64
}

// Chart is a stacked bar chart of human and AI views. X and widths are in
// percent of the plot's width, Y and heights in percent of its height.
type Chart struct {
	Interval Interval
	// Top and Bottom are the plot's edges; LabelY is the baseline of the
	// labels under it.
	Top, Bottom, LabelY float64
	Bars                []Bar
	Ticks               []Tick   // horizontal grid lines with their values
	Labels              []XLabel // the times under some bars
}

// Bar is one interval: human views at the bottom, AI views on top.
type Bar struct {
	X, W           float64
	HumanY, HumanH float64
	AIY, AIH       float64
	Point
	Label string // the interval in full, for the table and the tooltip
}

// Total returns the bar's human and AI views.
func (b Bar) Total() int64 { return b.Human + b.AI }

// Tick is a grid line at Y, worth Value views.
type Tick struct {
	Y     float64
	Value int64
}

// XLabel is a time written under the bar centred at X. Narrow labels are
// shown at every width; the others only where the chart is wide enough
// for them (style.css hides them on phones), so that labels never
// overlap.
type XLabel struct {
	X      float64
	Label  string
	Narrow bool
}

// The chart's frame in percent of its height, and the most labels under
// its bars: chartMaxLabels on a wide screen, half as many on a phone.
const (
	chartTop       = 4
	chartBottom    = 86
	chartLabelY    = 96
	chartTicks     = 4
	chartMaxLabels = 8
	chartBarShare  = 0.7 // of a bar's slot; the rest is the gap
	chartMaxBar    = 6   // percent: a few bars stay bars, not blocks
)

// NewChart lays out points, one bar each, in order, as bars of interval
// iv. When the points span more than one calendar year, their labels
// carry the year.
func NewChart(points []Point, iv Interval) Chart {
	c := Chart{Interval: iv, Top: chartTop, Bottom: chartBottom, LabelY: chartLabelY}
	var most int64
	for _, p := range points {
		most = max(most, p.Human+p.AI)
	}
	step := niceStep(most, chartTicks)
	top := step * chartTicks
	plotH := c.Bottom - c.Top
	y := func(v int64) float64 { return round2(float64(v) / float64(top) * plotH) }
	for i := 0; i <= chartTicks; i++ {
		v := step * int64(i)
		c.Ticks = append(c.Ticks, Tick{Y: round2(c.Bottom - float64(v)/float64(top)*plotH), Value: v})
	}
	if len(points) == 0 {
		return c
	}
	year := crossesYear(points)
	slot := 100 / float64(len(points))
	w := min(slot*chartBarShare, chartMaxBar)
	every := (len(points) + chartMaxLabels - 1) / chartMaxLabels
	for i, p := range points {
		b := Bar{Point: p, X: round2(float64(i)*slot + (slot-w)/2), W: round2(w), Label: intervalLabel(p, iv)}
		b.HumanH, b.AIH = y(p.Human), y(p.AI)
		b.HumanY = round2(c.Bottom - b.HumanH)
		b.AIY = round2(b.HumanY - b.AIH)
		c.Bars = append(c.Bars, b)
		if i%every == 0 {
			n := len(c.Labels)
			c.Labels = append(c.Labels, XLabel{X: round2((float64(i) + 0.5) * slot), Label: axisLabel(p.At, iv, year), Narrow: n%2 == 0})
		}
	}
	return c
}

// crossesYear reports whether points start in one calendar year and end
// in another.
func crossesYear(points []Point) bool {
	first, last := points[0], points[len(points)-1]
	end := last.End
	if end.IsZero() || !end.After(last.At) {
		end = last.At.Add(time.Nanosecond)
	}
	return first.At.UTC().Year() != end.Add(-time.Nanosecond).UTC().Year()
}

// niceStep returns the value between grid lines: 1, 2, 2.5 (from 25 up)
// or 5 times a power of ten, the least such that ticks of them reach most.
func niceStep(most int64, ticks int) int64 {
	if most <= int64(ticks) {
		return 1
	}
	raw := float64(most) / float64(ticks)
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m == 2.5 && pow < 10 {
			continue // not a whole number of views
		}
		if step := int64(m * pow); float64(step) >= raw {
			return step
		}
	}
	return int64(10 * pow)
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// intervalLabel names the time a bar covers, in full: the hour, the day,
// or for weeks and months their first and last days (a partial one's, at
// the ends of the range).
func intervalLabel(p Point, iv Interval) string {
	at := p.At.UTC()
	switch iv {
	case Hour:
		return at.Format("2006-01-02 15:00")
	case Day:
		return at.Format(time.DateOnly)
	}
	last := at
	if p.End.After(at) {
		last = p.End.UTC().Add(-time.Nanosecond)
	}
	return at.Format(time.DateOnly) + " to " + last.Format(time.DateOnly)
}

// axisLabel names the interval that starts at t briefly, under its bar:
// the hour (the day at midnight), the day, a week's first day, or the
// month; with the year when the chart spans two.
func axisLabel(t time.Time, iv Interval, year bool) string {
	t = t.UTC()
	layout := "2 Jan"
	switch {
	case iv == Hour && t.Hour() != 0:
		return t.Format("15:04")
	case iv == Month:
		layout = "Jan"
	}
	if year {
		layout += " 2006"
	}
	return t.Format(layout)
}
