// Package isodate reads the dates and date-times that the API's date
// parameters (dateFrom, dateTo) take: the one rule that the SDK's
// ParseDateBound and the self-hosted server share, so that what one accepts
// the other does too.
//
// The hosted service's reference says "ISO 8601 or YYYY-MM-DD", and clients
// send what their languages print: JavaScript's toISOString, Python's
// isoformat (no zone when the time is naive), a date and time typed by hand
// without seconds. Parse accepts exactly these forms:
//
//	2026-10-24                        a date: midnight UTC at its start
//	2026-10-24T09:30                  hours and minutes
//	2026-10-24T09:30:15               with seconds
//	2026-10-24T09:30:15.123456789     with a fraction ("." or ","), any length
//
// each date-time followed by Z, an offset (+02:00, +0200 or +02, or with a
// minus sign), or nothing, which means UTC. Every other form is refused:
// week and ordinal dates, the basic format without dashes, a space or a
// lower-case "t" between date and time, zone names.
package isodate

import (
	"fmt"
	"strings"
	"time"
)

// Parse reads s as a date or an ISO 8601 date-time, in the forms the
// package documentation lists, and returns the instant in UTC. date reports
// a calendar date (the instant is its midnight UTC). The error names s and
// shows examples of the accepted forms.
func Parse(s string) (t time.Time, date bool, err error) {
	if shaped(s, "dddd-dd-dd") {
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return time.Time{}, false, refused(s)
		}
		return t, true, nil
	}
	rfc, ok := toRFC3339(s)
	if !ok {
		return time.Time{}, false, refused(s)
	}
	// RFC 3339 leaves the ranges to the parser: month, day of the month,
	// hour, minute and second are checked here.
	t, err = time.Parse(time.RFC3339Nano, rfc)
	if err != nil {
		return time.Time{}, false, refused(s)
	}
	return t.UTC(), false, nil
}

// refused is the error for s: what was sent, and what would have been
// accepted.
func refused(s string) error {
	return fmt.Errorf("%q is neither a date nor an ISO 8601 date-time: send, for example, "+
		"2026-10-24, 2026-10-24T09:30:00Z, 2026-10-24T11:30+02:00 or 2026-10-24T09:30:00.5 (no zone means UTC)", s)
}

// toRFC3339 rewrites a date-time of an accepted form as RFC 3339 (seconds
// added, a comma made a point, the zone written as Z or ±hh:mm), checking
// the shape digit by digit: time.Parse alone would let "T9:30" and the
// offset "+24:00" through.
func toRFC3339(s string) (string, bool) {
	const head = "dddd-dd-ddTdd:dd"
	if len(s) < len(head) || !shaped(s[:len(head)], head) {
		return "", false
	}
	var b strings.Builder
	b.WriteString(s[:len(head)])
	rest := s[len(head):]
	if !strings.HasPrefix(rest, ":") {
		b.WriteString(":00")
	} else {
		if len(rest) < 3 || !shaped(rest[:3], ":dd") {
			return "", false
		}
		b.WriteString(rest[:3])
		rest = rest[3:]
		if rest != "" && (rest[0] == '.' || rest[0] == ',') {
			n := 1
			for n < len(rest) && isDigit(rest[n]) {
				n++
			}
			if n == 1 {
				return "", false
			}
			b.WriteByte('.')
			b.WriteString(rest[1:n])
			rest = rest[n:]
		}
	}
	zone, ok := offset(rest)
	if !ok {
		return "", false
	}
	b.WriteString(zone)
	return b.String(), true
}

// offset returns the zone z as RFC 3339 writes it: Z for none or Z, or
// ±hh:mm from ±hh:mm, ±hhmm or ±hh, with hh below 24 and mm below 60.
func offset(z string) (string, bool) {
	switch {
	case z == "" || z == "Z":
		return "Z", true
	case shaped(z, "+dd:dd") || shaped(z, "-dd:dd"):
	case shaped(z, "+dddd") || shaped(z, "-dddd"):
		z = z[:3] + ":" + z[3:]
	case shaped(z, "+dd") || shaped(z, "-dd"):
		z += ":00"
	default:
		return "", false
	}
	if z[1:3] > "23" || z[4:6] > "59" {
		return "", false
	}
	return z, true
}

// shaped reports whether s matches pattern, in which 'd' stands for an
// ASCII digit and every other byte for itself.
func shaped(s, pattern string) bool {
	if len(s) != len(pattern) {
		return false
	}
	for i := range len(pattern) {
		if pattern[i] == 'd' {
			if !isDigit(s[i]) {
				return false
			}
		} else if s[i] != pattern[i] {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
