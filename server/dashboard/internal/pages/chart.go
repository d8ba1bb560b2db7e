package pages

import (
	"math"
	"time"
)

// The chart is drawn on the server, as SVG in the page: it needs no
// script and no library, and the numbers under it (a table, its text
// alternative) are the same values it is drawn from.

// Point is the views of one interval of the chart.
type Point struct {
	At        time.Time // the interval's start, UTC
	Human, AI int64
}

// Chart is a stacked bar chart of human and AI views, laid out in the
// SVG's own units (its viewBox), which CSS scales to the page's width.
type Chart struct {
	Width, Height int
	// Left, Right, Top and Bottom are the plot area's edges.
	Left, Right, Top, Bottom float64
	TickX, LabelY            float64 // where the axes' labels are written
	Bars                     []Bar
	Ticks                    []Tick   // horizontal grid lines with their values
	Labels                   []XLabel // the times under some bars
	Hourly                   bool
}

// Bar is one interval: human views at the bottom, AI views on top.
type Bar struct {
	X, W           float64
	HumanY, HumanH float64
	AIY, AIH       float64
	Point
	Label string // the interval, for the table and the tooltip
}

// Total returns the bar's human and AI views.
func (b Bar) Total() int64 { return b.Human + b.AI }

// Tick is a grid line at Y, worth Value views.
type Tick struct {
	Y     float64
	Value int64
}

// XLabel is a time written under the bar centred at X.
type XLabel struct {
	X     float64
	Label string
}

// The chart's frame, in SVG units, and the most labels under its bars.
const (
	chartWidth     = 800
	chartHeight    = 300
	chartLeft      = 64
	chartRight     = chartWidth - 8
	chartTop       = 12
	chartBottom    = chartHeight - 32
	chartTicks     = 4
	chartMaxLabels = 8
	chartMaxBar    = 48 // a few days' bars stay bars, not blocks
)

// NewChart lays out points, one bar each, in order. hourly says the
// points are hours (labelled by time) rather than days.
func NewChart(points []Point, hourly bool) Chart {
	c := Chart{Width: chartWidth, Height: chartHeight, Left: chartLeft, Right: chartRight, Top: chartTop, Bottom: chartBottom, Hourly: hourly,
		TickX: chartLeft - 6, LabelY: chartBottom + 20}
	var most int64
	for _, p := range points {
		most = max(most, p.Human+p.AI)
	}
	step := niceStep(most, chartTicks)
	top := step * chartTicks
	plotH := c.Bottom - c.Top
	y := func(v int64) float64 { return round1(float64(v) / float64(top) * plotH) }
	for i := 0; i <= chartTicks; i++ {
		v := step * int64(i)
		c.Ticks = append(c.Ticks, Tick{Y: round1(c.Bottom - float64(v)/float64(top)*plotH), Value: v})
	}
	if len(points) == 0 {
		return c
	}
	slot := (c.Right - c.Left) / float64(len(points))
	w := min(max(slot*0.7, 1), chartMaxBar)
	every := (len(points) + chartMaxLabels - 1) / chartMaxLabels
	for i, p := range points {
		b := Bar{Point: p, X: round1(c.Left + float64(i)*slot + (slot-w)/2), W: round1(w), Label: intervalLabel(p.At, hourly)}
		b.HumanH, b.AIH = y(p.Human), y(p.AI)
		b.HumanY = round1(c.Bottom - b.HumanH)
		b.AIY = round1(b.HumanY - b.AIH)
		c.Bars = append(c.Bars, b)
		if i%every == 0 {
			c.Labels = append(c.Labels, XLabel{X: round1(c.Left + (float64(i)+0.5)*slot), Label: axisLabel(p.At, hourly)})
		}
	}
	return c
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

func round1(v float64) float64 { return math.Round(v*10) / 10 }

// intervalLabel names the interval that starts at t, in full.
func intervalLabel(t time.Time, hourly bool) string {
	if hourly {
		return t.UTC().Format("2006-01-02 15:00")
	}
	return t.UTC().Format(time.DateOnly)
}

// axisLabel names it briefly, under its bar: the day, or the hour (with
// the day at midnight).
func axisLabel(t time.Time, hourly bool) string {
	t = t.UTC()
	if hourly && t.Hour() != 0 {
		return t.Format("15:04")
	}
	return t.Format("2 Jan")
}
