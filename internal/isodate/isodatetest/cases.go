// Package isodatetest holds the one list of date parameters that the SDK's
// and the server's tests both check: the forms the API accepts, with what
// each means, and forms it refuses. A form added here is tested on both
// sides at once.
package isodatetest

import (
	"strconv"
	"time"
)

// Case is a value of a date parameter. Want and Date say what an accepted
// value means: the instant, in UTC, and whether it is a calendar date
// (midnight UTC) rather than an instant.
type Case struct {
	Name string
	In   string
	Want time.Time
	Date bool
}

func utc(year int, month time.Month, day, hour, min, sec, nsec int) time.Time {
	return time.Date(year, month, day, hour, min, sec, nsec, time.UTC)
}

// Accepted are values the date parameters accept.
var Accepted = []Case{
	{"date", "2026-10-24", utc(2026, 10, 24, 0, 0, 0, 0), true},
	{"leap day", "2028-02-29", utc(2028, 2, 29, 0, 0, 0, 0), true},
	{"RFC 3339 in UTC", "2026-10-24T09:30:15Z", utc(2026, 10, 24, 9, 30, 15, 0), false},
	{"no zone means UTC", "2026-10-24T00:00:00", utc(2026, 10, 24, 0, 0, 0, 0), false},
	{"no seconds", "2026-10-24T00:00Z", utc(2026, 10, 24, 0, 0, 0, 0), false},
	{"no seconds and no zone", "2026-10-24T09:30", utc(2026, 10, 24, 9, 30, 0, 0), false},
	{"no seconds with an offset", "2026-10-24T11:30+02:00", utc(2026, 10, 24, 9, 30, 0, 0), false},
	{"offset", "2026-10-24T11:30:00+02:00", utc(2026, 10, 24, 9, 30, 0, 0), false},
	{"offset without a colon", "2026-10-24T11:30:00+0200", utc(2026, 10, 24, 9, 30, 0, 0), false},
	{"offset in hours", "2026-10-24T11:30:00+02", utc(2026, 10, 24, 9, 30, 0, 0), false},
	{"negative offset", "2026-10-24T04:30:00-05:00", utc(2026, 10, 24, 9, 30, 0, 0), false},
	{"offset crossing midnight", "2026-10-24T00:30:00+01:00", utc(2026, 10, 23, 23, 30, 0, 0), false},
	{"JavaScript toISOString", "2026-10-24T09:30:00.000Z", utc(2026, 10, 24, 9, 30, 0, 0), false},
	{"Python isoformat, naive", "2026-10-24T09:30:00.123456", utc(2026, 10, 24, 9, 30, 0, 123456000), false},
	{"Python isoformat, aware", "2026-10-24T09:30:00.123456+00:00", utc(2026, 10, 24, 9, 30, 0, 123456000), false},
	{"nanoseconds", "2026-10-24T11:30:00.123456789+02:00", utc(2026, 10, 24, 9, 30, 0, 123456789), false},
	{"decimal comma", "2026-10-24T09:30:00,5Z", utc(2026, 10, 24, 9, 30, 0, 500000000), false},
}

// Refused are values the date parameters refuse with a 400 (the SDK: an
// error), each one a near miss of an accepted form.
var Refused = []Case{
	{Name: "words", In: "last tuesday"},
	{Name: "month out of range", In: "2026-13-01"},
	{Name: "day out of range", In: "2026-02-30"},
	{Name: "year and month only", In: "2026-10"},
	{Name: "basic format", In: "20261024"},
	{Name: "week date", In: "2026-W43-6"},
	{Name: "ordinal date", In: "2026-297"},
	{Name: "day first", In: "24/10/2026"},
	{Name: "surrounding space", In: " 2026-10-24"},
	{Name: "date with a zone", In: "2026-10-24Z"},
	{Name: "T without a time", In: "2026-10-24T"},
	{Name: "hours only", In: "2026-10-24T09Z"},
	{Name: "one-digit hour", In: "2026-10-24T9:30Z"},
	{Name: "hour 24", In: "2026-10-24T24:00:00Z"},
	{Name: "minute 60", In: "2026-10-24T09:60Z"},
	{Name: "leap second", In: "2026-10-24T09:30:60Z"},
	{Name: "fraction of a minute", In: "2026-10-24T09:30.5Z"},
	{Name: "point without digits", In: "2026-10-24T09:30:00.Z"},
	{Name: "space instead of T", In: "2026-10-24 09:30:00Z"},
	{Name: "lower-case t and z", In: "2026-10-24t09:30:00z"},
	{Name: "plus sign decoded as a space", In: "2026-10-24T11:30:00 02:00"},
	{Name: "offset of 24 hours", In: "2026-10-24T09:30:00+24:00"},
	{Name: "offset minutes out of range", In: "2026-10-24T09:30:00+02:60"},
	{Name: "one-digit offset", In: "2026-10-24T09:30:00+2:00"},
	{Name: "zone name", In: "2026-10-24T09:30:00UTC"},
	{Name: "trailing text", In: "2026-10-24T09:30:00Zjunk"},
}

// Refusal is the whole message about a refused value in, as the SDK and the
// server show it after their own prefix. It is written out rather than
// taken from package isodate, so that a change to the message is a change
// to the tests too.
func Refusal(in string) string {
	return strconv.Quote(in) + " is neither a date nor an ISO 8601 date-time: send, for example, " +
		"2026-10-24, 2026-10-24T09:30:00Z, 2026-10-24T11:30+02:00 or 2026-10-24T09:30:00.5 (no zone means UTC)"
}
