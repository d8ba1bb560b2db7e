package rollup

import (
	"math"
	"time"
)

// Seconds in an hour and in a UTC day: rolls are keyed by the Unix time of
// the hour or day they start, as the rows are keyed by their hour's.
const (
	Hour = int64(time.Hour / time.Second)
	Day  = 24 * Hour
)

// Span is a views range [from, to) split into what the rolls hold: the
// whole UTC days inside it, read from day rolls, and the hours at its edges
// that do not fill a day, read from hour rolls. All bounds are Unix seconds
// and half-open; math.MinInt64 and math.MaxInt64 stand for an open side.
type Span struct {
	Hours [][2]int64 // at most two ranges of hour starts: before and after Days
	Days  [2]int64   // day starts; empty when Days[0] >= Days[1]
}

// Split splits the range from, to of whole hours (a zero time leaves that
// side open) into a Span. A range that holds no whole UTC day is read from
// hour rolls alone: at most 46 of them (23 on each side of a midnight).
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
	// The whole days inside: from the first midnight at or after lo to the
	// last at or before hi. An open side stays open.
	dayLo, dayHi := lo, hi
	if lo != math.MinInt64 {
		dayLo = ceilTo(lo, Day)
	}
	if hi != math.MaxInt64 {
		dayHi = floorTo(hi, Day)
	}
	if dayLo >= dayHi {
		return Span{Hours: [][2]int64{{lo, hi}}}
	}
	s := Span{Days: [2]int64{dayLo, dayHi}}
	if lo < dayLo {
		s.Hours = append(s.Hours, [2]int64{lo, dayLo})
	}
	if dayHi < hi {
		s.Hours = append(s.Hours, [2]int64{dayHi, hi})
	}
	return s
}

// floorTo rounds t down to a multiple of unit, also before 1970.
func floorTo(t, unit int64) int64 {
	r := t % unit
	if r < 0 {
		r += unit
	}
	return t - r
}

// ceilTo rounds t up to a multiple of unit, or to math.MaxInt64 past the
// last multiple.
func ceilTo(t, unit int64) int64 {
	f := floorTo(t, unit)
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
func DayOf(t int64) int64 { return floorTo(t, Day) }
