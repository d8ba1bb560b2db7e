package rollup

import (
	"time"
)

// FourWeeks is the seconds in four weeks: the views keep a roll of every
// four weeks too, starting on the Monday of every fourth week since the
// first Monday after Unix time 0, so that a four-week roll is exactly four
// week rolls and a range's whole four weeks are found among its whole
// weeks. A query costs about the entries of the rolls it merges, and a busy
// site's weeks each hold most of its paths: a year's range reads 12 or 13
// four-week rolls and at most 6 week rolls instead of 52 week rolls.
// (Calendar months would not nest weeks: a range would read days on both
// sides of every month edge.)
const FourWeeks = 4 * Week

// FourWeekOf returns the start of the four weeks holding the hour starting
// at t: the key of the four-week roll an hour's views also go to.
func FourWeekOf(t int64) int64 { return floorTo(t, FourWeeks, weekOffset) }

// ViewSpan is a views range [from, to) split into what the views' rolls
// hold: Split's span, with the whole four weeks inside its weeks read from
// four-week rolls and the weeks left on either side from week rolls. The
// visitors keep no four-week rolls and split ranges with Split alone.
type ViewSpan struct {
	Hours     [][2]int64 // at most two ranges of hour starts: before and after the days
	Days      [][2]int64 // at most two ranges of day starts: before and after the weeks
	Weeks     [][2]int64 // at most two ranges of week starts: before and after FourWeeks
	FourWeeks [2]int64   // four-week starts; empty when FourWeeks[0] >= FourWeeks[1]
}

// SplitViews splits the range from, to of whole hours (a zero time leaves
// that side open) into a ViewSpan. Besides its four weeks, a range reads at
// most 6 week rolls, 12 day rolls and 46 hour rolls.
func SplitViews(from, to time.Time) ViewSpan {
	s := Split(from, to)
	v := ViewSpan{Hours: s.Hours, Days: s.Days}
	if s.Weeks[0] >= s.Weeks[1] {
		return v
	}
	// The whole four weeks inside the weeks, as Split finds the weeks
	// inside the days.
	fours, weeks, ok := splitUnits(s.Weeks[0], s.Weeks[1], FourWeeks, weekOffset)
	if !ok {
		v.Weeks = [][2]int64{s.Weeks}
		return v
	}
	v.FourWeeks, v.Weeks = fours, weeks
	return v
}

// Ranges calls f with each range of the span and the kind of roll it
// reads (the four weeks, if any, then the weeks, the days and the hours),
// and stops at f's first error, which it returns.
func (s ViewSpan) Ranges(f func(kind Kind, at [2]int64) error) error {
	if s.FourWeeks[0] < s.FourWeeks[1] {
		if err := f(FourWeekly, s.FourWeeks); err != nil {
			return err
		}
	}
	for _, kr := range []struct {
		kind   Kind
		ranges [][2]int64
	}{{Weekly, s.Weeks}, {Daily, s.Days}, {Hourly, s.Hours}} {
		for _, at := range kr.ranges {
			if err := f(kr.kind, at); err != nil {
				return err
			}
		}
	}
	return nil
}
