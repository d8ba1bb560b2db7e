package pages

import (
	"math"
	"time"
)

// AgentsPage is which AI agents and crawlers, by name, read a project's
// pages over a range of days: the agents' tables, a small chart per class
// over the days, and the top pages with their agents.
type AgentsPage struct {
	Frame
	From, To string // the range's first and last days, YYYY-MM-DD
	Path     string // the page the numbers are of; "" for every page
	Problem  string // what was wrong with the range or path asked for
	// AI holds the AI agents by views, Crawlers the crawlers (search,
	// training and other bots); AIViews and CrawlerViews are their sums,
	// which each agent's share is of.
	AI, Crawlers          []AgentViews
	AIViews, CrawlerViews int64
	// Charts has one small chart per class, in the order of Classes.
	Charts []ClassChart
	// Days is the same numbers as the charts, one row per day.
	Days []AgentsDay
	// Pages is the top rows of one agent's views of one page; PagesMore
	// says more rows follow.
	Pages     []AgentPageViews
	PagesMore bool
}

// AgentViews is one agent's views, and its class's label.
type AgentViews struct {
	Name, Class, ClassLabel string
	Views                   int64
}

// AgentPageViews is one agent's views of one page.
type AgentPageViews struct {
	Path string
	AgentViews
}

// AgentsDay is the views of each class on one UTC day.
type AgentsDay struct {
	Day   time.Time
	Label string
	Views [4]int64 // by class, in the order of Classes
}

// AgentClass is a class of agents as the page names it: Label heads its
// chart, Kind names one agent of it in a table.
type AgentClass struct {
	Class, Label, Kind string
}

// Classes are the agent classes, in the order the page shows them.
var Classes = [4]AgentClass{
	{"ai", "AI agents", "AI agent"},
	{"search-bot", "Search crawlers", "search crawler"},
	{"training-bot", "Training crawlers", "training crawler"},
	{"other-bot", "Other bots", "other bot"},
}

// ClassLabel returns the page's name of one agent of a class, or the
// class itself.
func ClassLabel(class string) string {
	for _, c := range Classes {
		if c.Class == class {
			return c.Kind
		}
	}
	return class
}

// ClassChart is a small bar chart of one class's views per day, drawn in
// a viewBox of ClassChartWidth by ClassChartHeight user units: narrow, so
// that its text stays legible when a phone's screen shrinks it.
type ClassChart struct {
	AgentClass
	Total, Most int64
	Bars        []ClassBar
	// First and Last label the first and last day under the bars.
	First, Last string
}

// ClassBar is one day's bar of a ClassChart.
type ClassBar struct {
	X, Y, W, H float64
	Label      string // the day, YYYY-MM-DD
	Views      int64
}

// The geometry of a ClassChart.
const (
	ClassChartWidth  = 320
	ClassChartHeight = 120
	classChartLeft   = 4
	classChartTop    = 18 // room for the most's label
	classChartBottom = 100
)

// Width and Height return the chart's viewBox size, for the template.
func (ClassChart) Width() int  { return ClassChartWidth }
func (ClassChart) Height() int { return ClassChartHeight }

// LabelY is where the day labels' baseline is.
func (ClassChart) LabelY() int { return ClassChartHeight - 4 }

// Baseline is the bars' bottom.
func (ClassChart) Baseline() int { return classChartBottom }

// NewClassCharts makes one chart per class from days, which cover the
// range day by day.
func NewClassCharts(days []AgentsDay) []ClassChart {
	charts := make([]ClassChart, len(Classes))
	for ci, class := range Classes {
		c := ClassChart{AgentClass: class}
		for _, d := range days {
			c.Total += d.Views[ci]
			c.Most = max(c.Most, d.Views[ci])
		}
		if len(days) > 0 {
			c.First, c.Last = days[0].Label, days[len(days)-1].Label
			slot := float64(ClassChartWidth-2*classChartLeft) / float64(len(days))
			w := max(slot*0.8, 0.5)
			for i, d := range days {
				v := d.Views[ci]
				h := 0.0
				if c.Most > 0 {
					h = float64(classChartBottom-classChartTop) * float64(v) / float64(c.Most)
				}
				c.Bars = append(c.Bars, ClassBar{
					X: round1(classChartLeft + float64(i)*slot + (slot-w)/2), W: round1(w),
					Y: round1(classChartBottom - h), H: round1(h), Label: d.Label, Views: v,
				})
			}
		}
		charts[ci] = c
	}
	return charts
}

func (AgentsPage) file() string { return "agents.html" }

// round1 rounds v to a tenth, enough for a coordinate of the chart.
func round1(v float64) float64 { return math.Round(v*10) / 10 }
