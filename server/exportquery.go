package server

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/wire"
)

// exportQuery reads the query string of an export, collecting every
// problem rather than stopping at the first, as the views export does.
// Parameters it is not asked about are ignored, as the hosted service
// ignores parameters it does not know.
type exportQuery struct {
	values  url.Values
	details []wire.ErrorDetail
}

// newExportQuery parses raw; a malformed query string is its one problem.
func newExportQuery(raw string) *exportQuery {
	q := &exportQuery{}
	values, err := url.ParseQuery(raw)
	if err != nil {
		q.fail("the query string is malformed: %v", err)
	}
	q.values = values
	return q
}

func (q *exportQuery) fail(format string, args ...any) {
	q.details = append(q.details, wire.ErrorDetail{Message: fmt.Sprintf(format, args...)})
}

// one returns the parameter's value, if it was given once.
func (q *exportQuery) one(name string) (string, bool) {
	v := q.values[name]
	if len(v) > 1 {
		q.fail("%s is given %d times; give it once", name, len(v))
		return "", false
	}
	if len(v) == 0 {
		return "", false
	}
	return v[0], true
}

// dates reads dateFrom and dateTo as instants (zero when omitted).
func (q *exportQuery) dates() (from, to time.Time) {
	var err error
	if v, ok := q.one("dateFrom"); ok {
		if from, err = parseDate(v); err != nil {
			q.fail("dateFrom %s", err)
		}
	}
	if v, ok := q.one("dateTo"); ok {
		if to, err = parseDate(v); err != nil {
			q.fail("dateTo %s", err)
		}
	}
	if !from.IsZero() && !to.IsZero() && from.After(to) {
		q.fail("dateFrom (%s) is after dateTo (%s)", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	return from, to
}

// limit reads limit, from 1 to max, def when omitted.
func (q *exportQuery) limit(def, max int) int {
	v, ok := q.one("limit")
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > max {
		q.fail("limit must be an integer from 1 to %d, got %s", max, strconv.Quote(v))
		return def
	}
	return n
}

// dayRange widens [from, to) to the whole UTC days it touches: a day is
// counted when any part of it lies in the range. An empty range stays
// empty.
func dayRange(from, to time.Time) (time.Time, time.Time) {
	return wholeRange(from, to, 24*time.Hour)
}

// wholeRange widens [from, to) to the whole steps (hours or UTC days) it
// touches: a step is in the range when any part of it is. An empty range
// (to not after from) stays empty; a zero bound stays open.
func wholeRange(from, to time.Time, step time.Duration) (time.Time, time.Time) {
	if !from.IsZero() && !to.IsZero() && !to.After(from) {
		d := from.Truncate(step)
		return d, d
	}
	if !from.IsZero() {
		from = from.Truncate(step)
	}
	if !to.IsZero() {
		if d := to.Truncate(step); !d.Equal(to) {
			to = d.Add(step)
		}
	}
	return from, to
}

// timeParam writes a bound for a cursor's scope: "" when open.
func timeParam(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
