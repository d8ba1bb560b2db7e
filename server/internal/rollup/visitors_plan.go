package rollup

import (
	"math"
	"slices"
)

// VisitorDay is what a visitors query learns first of one day of its
// range that has a day roll: the roll's last Seq, and the Seq its summary
// names (0: it has none).
type VisitorDay struct {
	Day        int64 // Unix time of the UTC day's start
	LastSeq    int64
	SummarySeq int64
}

// Summarized reports whether the day's summary describes its roll as it
// is (see SummarizeVisitorDay).
func (d VisitorDay) Summarized() bool { return d.SummarySeq != 0 && d.SummarySeq == d.LastSeq }

// VisitorPlan is what a visitors query reads, all in one snapshot: the
// summaries of Summaries' days, the week rolls of Weeks, the day rolls of
// Days and the hour rolls of the ranges Hours. The days and weeks are in
// increasing order.
type VisitorPlan struct {
	Summaries []int64
	Weeks     []int64
	Days      []int64
	Hours     [][2]int64
}

// DayRange returns the range of day starts [from, to) that span's weeks
// and days cover, whose VisitorDays PlanVisitors needs; ok is false when
// the span holds no whole day.
func (s Span) DayRange() (from, to int64, ok bool) {
	from, to = math.MaxInt64, math.MinInt64
	add := func(r [2]int64) {
		if r[0] < r[1] {
			from, to = min(from, r[0]), max(to, r[1])
		}
	}
	add(s.Weeks)
	for _, d := range s.Days {
		add(d)
	}
	return from, to, from < to
}

// PlanVisitors decides how a visitors query reads span, given the
// VisitorDays of span.DayRange (the days that have a day roll, in any
// order). A whole day outside span's weeks is read from its summary if it
// has one that describes it, else from its day roll. A week is read from
// the summaries of its days if every day of it that has a roll has such a
// summary, else from its week roll alone: a week roll and a day's summary
// would count that day twice. The hours are span's. Days of span.Weeks
// without a roll have no visitors, so a week none of whose days has a
// roll is not read at all.
func PlanVisitors(span Span, days []VisitorDay) VisitorPlan {
	p := VisitorPlan{Hours: span.Hours}
	inWeeks := func(day int64) bool { return day >= span.Weeks[0] && day < span.Weeks[1] }
	open := map[int64]bool{} // weeks read from their rolls
	for _, d := range days {
		if inWeeks(d.Day) && !d.Summarized() {
			open[WeekOf(d.Day)] = true
		}
	}
	weeks := map[int64]bool{}
	for _, d := range days {
		switch {
		case inWeeks(d.Day) && open[WeekOf(d.Day)]:
			weeks[WeekOf(d.Day)] = true
		case inWeeks(d.Day) || d.Summarized():
			p.Summaries = append(p.Summaries, d.Day)
		default:
			p.Days = append(p.Days, d.Day)
		}
	}
	for w := range weeks {
		p.Weeks = append(p.Weeks, w)
	}
	slices.Sort(p.Summaries)
	slices.Sort(p.Weeks)
	slices.Sort(p.Days)
	return p
}
