package docsapi

import (
	"fmt"
	"time"

	"github.com/docsapi/docsapi-go/internal/isodate"
)

// DateBound is one end of a date range: either a calendar date, sent as
// YYYY-MM-DD and meaning midnight UTC, or an instant, sent as RFC 3339 in UTC.
// The zero value means "not set": the bound is left out of the request.
type DateBound struct {
	t    time.Time // UTC
	date bool
}

// Day returns the calendar date year-month-day. Out-of-range values are
// normalised as time.Date does, so Day(t.Date()) is the date of t.
func Day(year int, month time.Month, day int) DateBound {
	return DateBound{t: time.Date(year, month, day, 0, 0, 0, 0, time.UTC), date: true}
}

// Instant returns the instant t, sent in UTC. A zero t gives the zero bound.
func Instant(t time.Time) DateBound {
	if t.IsZero() {
		return DateBound{}
	}
	return DateBound{t: t.UTC()}
}

// ParseDateBound reads a date as the API's date parameters accept it: a
// date (YYYY-MM-DD), or an ISO 8601 date-time with or without seconds and
// their fraction, with Z, an offset or no zone (which means UTC), such as
// 2026-10-24T09:30:00Z, 2026-10-24T11:30+02:00 or 2026-10-24T09:30. It
// reads exactly what the self-hosted server accepts. The empty string gives
// the zero bound.
func ParseDateBound(s string) (DateBound, error) {
	if s == "" {
		return DateBound{}, nil
	}
	t, date, err := isodate.Parse(s)
	switch {
	case err != nil:
		return DateBound{}, fmt.Errorf("docsapi: %w", err)
	case date:
		return Day(t.Date()), nil
	}
	return Instant(t), nil
}

// IsZero reports whether the bound is unset. (A date is never zero, not even
// January 1 of year 1, whose instant is time.Time's zero.)
func (b DateBound) IsZero() bool { return b.t.IsZero() && !b.date }

// IsDate reports whether the bound is a calendar date rather than an instant.
func (b DateBound) IsDate() bool { return b.date }

// Time returns the bound as an instant in UTC: midnight for a date.
func (b DateBound) Time() time.Time { return b.t }

// String returns the form sent to the API, or "" for the zero bound.
func (b DateBound) String() string {
	switch {
	case b.IsZero():
		return ""
	case b.date:
		return b.t.Format(time.DateOnly)
	}
	return b.t.Format(time.RFC3339Nano)
}

// MarshalText returns the form sent to the API.
func (b DateBound) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// UnmarshalText reads what ParseDateBound reads.
func (b *DateBound) UnmarshalText(text []byte) error {
	parsed, err := ParseDateBound(string(text))
	if err != nil {
		return err
	}
	*b = parsed
	return nil
}
