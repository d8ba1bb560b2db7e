package rollup

import (
	"math"
	"time"
)

// Seconds in an hour, a UTC day and a week: rolls are keyed by the Unix
// time of the hour, day or week they start, as the rows are keyed by their
// hour's. Weeks start on Mondays at midnight UTC; Unix time 0 was a
// Thursday, weekOffset before the first Monday.
const (
	Hour       = int64(time.Hour / time.Second)
	Day        = 24 * Hour
	Week       = 7 * Day
	weekOffset = 4 * Day
)

// Span is a views range [from, to) split into what the rolls hold: the
// whole weeks inside it, read from week rolls; the whole UTC days before
// and after them, read from day rolls; and the hours at its edges that do
// not fill a day, read from hour rolls. All bounds are Unix seconds and
// half-open; math.MinInt64 and math.MaxInt64 stand for an open side.
type Span struct {
	Hours [][2]int64 // at most two ranges of hour starts: before and after the days
	Days  [][2]int64 // at most two ranges of day starts: before and after Weeks
	Weeks [2]int64   // week starts; empty when Weeks[0] >= Weeks[1]
}

// Ranges calls f with each range of the span and the kind of roll it
// reads (the weeks, if any, then the days, then the hours), and stops at
// f's first error, which it returns.
func (s Span) Ranges(f func(kind Kind, at [2]int64) error) error {
	if s.Weeks[0] < s.Weeks[1] {
		if err := f(Weekly, s.Weeks); err != nil {
			return err
		}
	}
	for _, days := range s.Days {
		if err := f(Daily, days); err != nil {
			return err
		}
	}
	for _, hours := range s.Hours {
		if err := f(Hourly, hours); err != nil {
			return err
		}
	}
	return nil
}

// Split splits the range from, to of whole hours (a zero time leaves that
// side open) into a Span. A range that holds no whole UTC day is read from
// hour rolls alone: at most 46 of them (23 on each side of a midnight); a
// range of any length reads at most 12 day rolls and 46 hour rolls besides
// its weeks.
func Split(from, to time.Time) Span {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if !from.IsZero() {
		lo = from.Unix()
	}
	if !to.IsZero() {
		hi = to.Unix()
	}
	if lo >= hi {
		return Span{}
	}
	// The whole days inside, then the whole weeks inside those.
	days, hours, ok := splitUnits(lo, hi, Day, 0)
	if !ok {
		return Span{Hours: [][2]int64{{lo, hi}}}
	}
	s := Span{Hours: hours}
	weeks, around, ok := splitUnits(days[0], days[1], Week, weekOffset)
	if !ok {
		s.Days = [][2]int64{days}
		return s
	}
	s.Weeks, s.Days = weeks, around
	return s
}

// splitUnits splits [lo, hi) into the whole units inside it (those that
// start at a multiple of unit plus offset), [in[0], in[1]), and the ranges
// before and after them that are not empty (edges); ok is false when no
// whole unit fits. An open side (math.MinInt64, math.MaxInt64) stays open.
func splitUnits(lo, hi, unit, offset int64) (in [2]int64, edges [][2]int64, ok bool) {
	in = [2]int64{lo, hi}
	if lo != math.MinInt64 {
		in[0] = ceilTo(lo, unit, offset)
	}
	if hi != math.MaxInt64 {
		in[1] = floorTo(hi, unit, offset)
	}
	if in[0] >= in[1] {
		return in, nil, false
	}
	if lo < in[0] {
		edges = append(edges, [2]int64{lo, in[0]})
	}
	if in[1] < hi {
		edges = append(edges, [2]int64{in[1], hi})
	}
	return in, edges, true
}

// floorTo rounds t down to the last multiple of unit plus offset (0 <=
// offset < unit), also before 1970.
func floorTo(t, unit, offset int64) int64 {
	r := (t%unit - offset) % unit
	if r < 0 {
		r += unit
	}
	return t - r
}

// ceilTo rounds t up to the next multiple of unit plus offset, or to
// math.MaxInt64 past the last one.
func ceilTo(t, unit, offset int64) int64 {
	f := floorTo(t, unit, offset)
	switch {
	case f == t:
		return t
	case f > math.MaxInt64-unit:
		return math.MaxInt64
	}
	return f + unit
}

// DayOf returns the start of the UTC day holding the hour starting at t
// (Unix seconds): the key of the day roll an hour's counts also go to.
func DayOf(t int64) int64 { return floorTo(t, Day, 0) }

// WeekOf returns the start of the week holding the hour starting at t: the
// key of the week roll an hour's counts also go to.
func WeekOf(t int64) int64 { return floorTo(t, Week, weekOffset) }
