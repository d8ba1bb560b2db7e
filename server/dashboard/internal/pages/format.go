package pages

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Count writes n with a comma between thousands: 1,234,567.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3+1)
	if neg {
		out = append(out, '-')
	}
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// Share writes part of whole as a percentage with one decimal, and "–"
// when whole is 0, whose share is not a number.
func Share(part, whole int64) string {
	if whole == 0 {
		return "–"
	}
	return strconv.FormatFloat(float64(part)*100/float64(whole), 'f', 1, 64) + " %"
}

// Age writes how long ago something happened, roughly: "just now",
// "5 min", "3 h", "2 d". A time in the future (clocks of replicas differ)
// is "just now".
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h", int(d/time.Hour))
	}
	return fmt.Sprintf("%d d", int(d/(24*time.Hour)))
}

// Since writes Age as a phrase: "just now", "5 min ago".
func Since(d time.Duration) string {
	if a := Age(d); a != Age(0) {
		return a + " ago"
	}
	return Age(d)
}

// Time writes an instant as the dashboard shows it, in UTC to the minute.
func Time(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// Compact writes n briefly, for the chart's scale: as Count below 10,000,
// then in thousands (250k) or millions (1.5M).
func Compact(n int64) string {
	switch {
	case n < 10_000:
		return Count(n)
	case n < 1_000_000:
		return strconv.FormatFloat(float64(n)/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(math.Round(float64(n)/1e5)/10, 'f', -1, 64) + "M"
}

// minus is the sign of a fall: the minus sign, which screen readers read
// as "minus" where they may skip a hyphen.
const minus = "\u2212"

// Change compares a card's number with the previous period's, before the
// words naming that period ("previous 30 days"): "+12% vs previous 30
// days", "−3.5% vs ...", "no change vs ...", or "new (none in the previous
// 30 days)" when the previous period had none. Changes under 10% keep one
// decimal, so that a small one does not read as none.
func Change(cur, prev int64, period string) string {
	switch {
	case cur == prev:
		return "no change vs " + period
	case prev == 0:
		return "new (none in the " + period + ")"
	}
	return signed(float64(cur-prev)*100/float64(prev), "%") + " vs " + period
}

// Difference compares a count of things (agents) with the previous
// period's by how many more or fewer there are, not in percent, which
// reads oddly of a few: "+2 vs previous 30 days", "−1 vs ...", "no change
// vs ...".
func Difference(cur, prev int, period string) string {
	if cur == prev {
		return "no change vs " + period
	}
	return signedFixed(float64(cur-prev), 0) + " vs " + period
}

// ShareChange compares a share (part of whole) with the previous period's,
// in percentage points: "+3.1 pts vs previous 30 days". A share of no
// views is no number, so a period without views is "new" (the previous
// had none) or "was 12.5 % in the previous 30 days" (this one has none).
func ShareChange(part, whole, prevPart, prevWhole int64, period string) string {
	switch {
	case whole == 0 && prevWhole == 0:
		return "no change vs " + period
	case prevWhole == 0:
		return "new (none in the " + period + ")"
	case whole == 0:
		return "was " + Share(prevPart, prevWhole) + " in the " + period
	}
	// Rounded as Share rounds, so that the change is the difference of
	// the two shares shown.
	d := math.Round(float64(part)*1000/float64(whole))/10 - math.Round(float64(prevPart)*1000/float64(prevWhole))/10
	if math.Abs(d) < 0.05 {
		return "no change vs " + period
	}
	return signedFixed(d, 1) + " pts vs " + period
}

// signed writes a change with its sign, one decimal under 10 and none
// from 10 up.
func signed(v float64, unit string) string {
	if math.Abs(v) < 9.95 {
		return signedFixed(v, 1) + unit
	}
	return signedFixed(v, 0) + unit
}

func signedFixed(v float64, decimals int) string {
	s := strconv.FormatFloat(math.Abs(v), 'f', decimals, 64)
	if v < 0 {
		return minus + s
	}
	return "+" + s
}
