package rollup

import (
	"cmp"
	"encoding/binary"
	"errors"
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

// VisitorWeek is what a visitors query learns of a week summary of its
// range: the days it adds up, each with the last Seq of its roll then.
// It describes its week while those are the week's day rolls and their
// last Seqs, as a day summary does its day.
type VisitorWeek struct {
	Week int64
	Days []VisitorDay // Day and LastSeq
}

// VisitorPlan is what a visitors query reads, all in one snapshot: the
// summaries of WeekSummaries' weeks and of Summaries' days, the week rolls
// of Weeks, the day rolls of Days and the hour rolls of the ranges Hours.
// The weeks and days are in increasing order.
type VisitorPlan struct {
	WeekSummaries []int64
	Summaries     []int64
	Weeks         []int64
	Days          []int64
	Hours         [][2]int64
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
// order) and the VisitorWeeks of the summaries of span's weeks. A week is
// read from its summary if one describes it; else from the summaries of
// its days if every day of it that has a roll has one that describes it;
// else from its week roll alone, since a week roll and a day's summary
// would count that day twice. A whole day outside span's weeks is read
// from its summary if one describes it, else from its day roll. The hours
// are span's. Days of span.Weeks without a roll have no visitors, so a
// week none of whose days has a roll is not read at all.
func PlanVisitors(span Span, days []VisitorDay, weeks []VisitorWeek) VisitorPlan {
	p := VisitorPlan{Hours: span.Hours}
	inWeeks := func(day int64) bool { return day >= span.Weeks[0] && day < span.Weeks[1] }
	byWeek := map[int64][]VisitorDay{}
	for _, d := range days {
		if inWeeks(d.Day) {
			w := WeekOf(d.Day)
			byWeek[w] = append(byWeek[w], d)
		} else if d.Summarized() {
			p.Summaries = append(p.Summaries, d.Day)
		} else {
			p.Days = append(p.Days, d.Day)
		}
	}
	summed := map[int64]VisitorWeek{}
	for _, w := range weeks {
		summed[w.Week] = w
	}
	for w, ds := range byWeek {
		if s, ok := summed[w]; ok && s.describes(ds) {
			p.WeekSummaries = append(p.WeekSummaries, w)
			continue
		}
		if !allSummarized(ds) {
			p.Weeks = append(p.Weeks, w)
			continue
		}
		for _, d := range ds {
			p.Summaries = append(p.Summaries, d.Day)
		}
	}
	for _, s := range [...][]int64{p.WeekSummaries, p.Summaries, p.Weeks, p.Days} {
		slices.Sort(s)
	}
	return p
}

// allSummarized reports whether a summary describes each of days.
func allSummarized(days []VisitorDay) bool {
	for _, d := range days {
		if !d.Summarized() {
			return false
		}
	}
	return true
}

// describes reports whether w adds up exactly days, the day rolls its week
// has now (in any order): the same days, each at the same last Seq.
func (w VisitorWeek) describes(days []VisitorDay) bool {
	if len(w.Days) != len(days) {
		return false
	}
	for _, d := range days {
		i := slices.IndexFunc(w.Days, func(e VisitorDay) bool { return e.Day == d.Day })
		if i < 0 || w.Days[i].LastSeq != d.LastSeq {
			return false
		}
	}
	return true
}

// WeeksToSum returns, latest first, the weeks within [from, before) whose
// days (days: the VisitorDays of that range, in any order) are all
// described by their summaries while no week summary of weeks describes
// them: those whose summary SumVisitorWeek can make now. A week that
// starts before from is left out, since days may lack some of its days.
func WeeksToSum(days []VisitorDay, weeks []VisitorWeek, from, before int64) []int64 {
	byWeek := map[int64][]VisitorDay{}
	for _, d := range days {
		if w := WeekOf(d.Day); w >= from && w+Week <= before {
			byWeek[w] = append(byWeek[w], d)
		}
	}
	summed := map[int64]VisitorWeek{}
	for _, w := range weeks {
		summed[w.Week] = w
	}
	var todo []int64
	for w, ds := range byWeek {
		if s, ok := summed[w]; (!ok || !s.describes(ds)) && allSummarized(ds) {
			todo = append(todo, w)
		}
	}
	slices.SortFunc(todo, func(a, b int64) int { return cmp.Compare(b, a) })
	return todo
}

// SumVisitorWeek returns the summary of a week and the encoding of the
// days it adds up (AppendVisitorDays), given its day rolls' VisitorDays
// and, in the same order, their summaries; ok is false, with nothing
// made, unless a summary describes every day.
func SumVisitorWeek(days []VisitorDay, sums [][]byte) (summary, daySeqs []byte, ok bool, err error) {
	if len(days) == 0 || len(sums) != len(days) || !allSummarized(days) {
		return nil, nil, false, nil
	}
	if summary, err = SumVisitorSummaries(sums); err != nil {
		return nil, nil, false, err
	}
	return summary, AppendVisitorDays(nil, days), true, nil
}

// AppendVisitorDays appends the days and last Seqs a week summary adds up,
// in increasing order of day: their number, then each day's start and
// last Seq, as uvarints (days as offsets from the first, in seconds, so
// that they stay short).
func AppendVisitorDays(dst []byte, days []VisitorDay) []byte {
	sorted := slices.SortedFunc(slices.Values(days), func(a, b VisitorDay) int { return cmp.Compare(a.Day, b.Day) })
	dst = binary.AppendUvarint(dst, uint64(len(sorted)))
	for i, d := range sorted {
		if i == 0 {
			dst = binary.AppendVarint(dst, d.Day)
		} else {
			dst = binary.AppendUvarint(dst, uint64(d.Day-sorted[i-1].Day))
		}
		dst = binary.AppendUvarint(dst, uint64(d.LastSeq))
	}
	return dst
}

// ParseVisitorDays reads what AppendVisitorDays wrote.
func ParseVisitorDays(b []byte) ([]VisitorDay, error) {
	bad := errors.New("rollup: damaged list of a week summary's days")
	n, k := binary.Uvarint(b)
	if k <= 0 || n > 7 {
		return nil, bad
	}
	b = b[k:]
	days := make([]VisitorDay, 0, n)
	for i := range int(n) {
		var day int64
		if i == 0 {
			v, k := binary.Varint(b)
			if k <= 0 {
				return nil, bad
			}
			day, b = v, b[k:]
		} else {
			v, k := binary.Uvarint(b)
			if k <= 0 || v == 0 || v > uint64(Week) {
				return nil, bad
			}
			day, b = days[i-1].Day+int64(v), b[k:]
		}
		seq, k := binary.Uvarint(b)
		if k <= 0 || seq == 0 || seq > math.MaxInt64 {
			return nil, bad
		}
		b = b[k:]
		days = append(days, VisitorDay{Day: day, LastSeq: int64(seq)})
	}
	if len(b) != 0 {
		return nil, bad
	}
	return days, nil
}
