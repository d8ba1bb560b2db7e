package store

import (
	"fmt"
	"time"
)

// Problem returns what makes c unfit for AddViews, or "" if nothing does.
// Every backend refuses the same counts, in the same words.
func (c ViewCount) Problem() string {
	switch {
	case c.ProjectID == "":
		return "empty project ID"
	case c.Path == "":
		return "empty path"
	case !wholeHour(c.Hour):
		return fmt.Sprintf("hour %v is not a whole hour", c.Hour)
	case c.Human < 0 || c.AI < 0 || c.Bot < 0:
		return fmt.Sprintf("negative count (human %d, ai %d, bot %d)", c.Human, c.AI, c.Bot)
	}
	return ""
}

// Problem returns what makes q unfit for QueryViews, or "" if nothing does.
func (q ViewsQuery) Problem() string {
	switch {
	case q.ProjectID == "":
		return "empty project ID"
	case q.Limit < 1:
		return fmt.Sprintf("limit %d: must be at least 1", q.Limit)
	case q.Offset < 0:
		return fmt.Sprintf("offset %d: must be at least 0", q.Offset)
	case !q.From.IsZero() && !wholeHour(q.From):
		return fmt.Sprintf("from %v is not a whole hour", q.From)
	case !q.To.IsZero() && !wholeHour(q.To):
		return fmt.Sprintf("to %v is not a whole hour", q.To)
	}
	return ""
}

// wholeHour reports whether t is the start of an hour. Truncate works on
// absolute time, whose hours are aligned with UTC's, so a time in a zone with
// a half-hour offset is correctly refused even if its clock reads :00.
func wholeHour(t time.Time) bool {
	return !t.IsZero() && t.Truncate(time.Hour).Equal(t)
}
