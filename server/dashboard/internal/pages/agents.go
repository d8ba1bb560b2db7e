package pages

import "time"

// AgentsPage is which AI agents and crawlers, by name, read a project's
// pages over a period: the agents' tables, a small chart per class over
// the period's bars, and the top pages with their agents.
type AgentsPage struct {
	Frame
	Period
	// Path is the page the numbers are of, "" for every page; AllPages is
	// then the URL of the same period for every page.
	Path, AllPages string
	// AI holds the AI agents by views, Crawlers the crawlers (search,
	// training and other bots); AIViews and CrawlerViews are their sums,
	// which each agent's share is of.
	AI, Crawlers          []AgentViews
	AIViews, CrawlerViews int64
	// Before is the same sums and counts of the period before
	// (Period.Compare), for the cards' changes.
	Before AgentsBefore
	// Interval is the length of the charts' bars: a day, an ISO week or
	// a month (the store counts agents per day, so never an hour).
	Interval Interval
	// Charts has one small chart per class, in the order of Classes.
	Charts []ClassChart
	// Bars is the same numbers as the charts, one row per bar.
	Bars []AgentsBar
	// Pages is the top rows of one agent's views of one page; PagesMore
	// says more rows follow.
	Pages     []AgentPageViews
	PagesMore bool
}

// AgentsBefore is the agents' numbers of the period before the one shown.
type AgentsBefore struct {
	AIViews, CrawlerViews int64
	AI, Crawlers          int // how many agents of each had views
}

// AgentViews is one agent's views, and its class's label.
type AgentViews struct {
	Name, Class, ClassLabel string
	Views                   int64
}

// AgentPageViews is one agent's views of one page, and the URL of the
// page's own agents.
type AgentPageViews struct {
	Path, URL string
	AgentViews
}

// AgentsBar is the views of each class over one bar of the charts:
// [At, End) in UTC, an interval or the part of it inside the period.
type AgentsBar struct {
	At, End time.Time
	Views   [4]int64 // by class, in the order of Classes
}

// Label names the bar's time in full, as the overview's table does: the
// day, or a week's or month's first and last days.
func (b AgentsBar) Label(iv Interval) string {
	return intervalLabel(Point{At: b.At, End: b.End}, iv)
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

// ClassChart is a small bar chart of one class's views per bar. As the
// overview's Chart, its shapes are placed in percent of the SVG's box,
// which has no viewBox, so that its labels keep their CSS size on a phone
// instead of shrinking with the chart.
type ClassChart struct {
	AgentClass
	Total, Most int64
	Bars        []ClassBar
	// First and Last label the first and last bars' times under the
	// chart, with the year when the bars span two; Last is "" when there
	// is one bar.
	First, Last string
}

// ClassBar is one bar of a ClassChart, X and W in percent of the chart's
// width, Y and H of its height.
type ClassBar struct {
	X, Y, W, H float64
	Label      string // the bar's time in full
	Views      int64
}

// The geometry of a ClassChart, in percent of its height: the bars from
// classChartTop down to classChartBottom, the labels' baseline at
// classChartLabelY.
const (
	classChartTop    = 4
	classChartBottom = 76
	classChartLabelY = 96
)

// LabelY is where the labels' baseline is, in percent.
func (ClassChart) LabelY() float64 { return classChartLabelY }

// Baseline is the bars' bottom, in percent.
func (ClassChart) Baseline() float64 { return classChartBottom }

// NewClassCharts makes one chart per class from bars of iv, which cover
// the period in order.
func NewClassCharts(bars []AgentsBar, iv Interval) []ClassChart {
	charts := make([]ClassChart, len(Classes))
	var year bool
	if len(bars) > 0 {
		year = crossesYear([]Point{{At: bars[0].At}, {At: bars[len(bars)-1].At, End: bars[len(bars)-1].End}})
	}
	for ci, class := range Classes {
		c := ClassChart{AgentClass: class}
		for _, b := range bars {
			c.Total += b.Views[ci]
			c.Most = max(c.Most, b.Views[ci])
		}
		if len(bars) > 0 {
			c.First = axisLabel(bars[0].At, iv, year)
			if len(bars) > 1 {
				c.Last = axisLabel(bars[len(bars)-1].At, iv, year)
			}
			slot := 100 / float64(len(bars))
			w := min(slot*chartBarShare, chartMaxBar)
			for i, b := range bars {
				v := b.Views[ci]
				h := 0.0
				if c.Most > 0 {
					h = (classChartBottom - classChartTop) * float64(v) / float64(c.Most)
				}
				c.Bars = append(c.Bars, ClassBar{
					X: round2(float64(i)*slot + (slot-w)/2), W: round2(w),
					Y: round2(classChartBottom - h), H: round2(h), Label: b.Label(iv), Views: v,
				})
			}
		}
		charts[ci] = c
	}
	return charts
}

func (AgentsPage) file() string { return "agents.html" }
