package pages

import (
	"fmt"
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
