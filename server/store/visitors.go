package store

import (
	"context"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/hll"
)

// VisitorStore keeps unique visitors per project, UTC day and path, human
// and AI apart. No visitor's hash, address or user agent is ever stored.
//
// Every hash is keyed with the salt of its own UTC day (VisitorSalt), so
// no visitor is in two days: a reader who comes back another day is
// another hash, and a range's visitors are the sum of its days'. A day is
// open while its visitors may still be hashed: the store keeps HyperLogLog
// sketches of them, so that a visitor added twice counts once. A day
// closes once the salt of a day three days later has been asked for (its
// own salt is then deleted): its visitors become plain numbers, final.
//
// Why three: servers add to yesterday until their own midnight, and ask
// for a day's salt before it starts (a recorder ahead of midnight,
// ingestion of a view dated up to an hour ahead). When day d's salt is asked for,
// day d-2 may still be yesterday to a server, so it stays open, with its
// salt; day d-3 is yesterday to none while the servers' clocks are less
// than 23 hours apart. Servers count no visitor of a day before their
// yesterday, so none adds to a closed day but a flush retried late.
type VisitorStore interface {
	// AddVisitors merges each count's sketches into the visitors of its
	// project and path on the UTC day holding its Hour; it never
	// overwrites, and a visitor added twice to an open day counts once.
	// The visitors of a count of a closed day (a flush retried late) are
	// added to the day's numbers: none is lost, though one already
	// counted that day counts again. The whole batch is applied or none
	// of it.
	//
	// Paths follow the cap of AddViews, which runs first in every flush: a
	// path that the count's day does not hold (has no views of in any of
	// its hours) is stored under OtherPagesPath instead, so that a day
	// holds no more paths of visitors than of views.
	AddVisitors(ctx context.Context, counts []VisitorCount) error
	// QueryVisitors returns the unique visitors of a project over the whole
	// UTC days its range touches (a day counts when any of its hours is in
	// [From, To)): the totals, the project's visitors day by day added up
	// (not the sum of the rows), and one page of per-path rows with a
	// visitor, ordered by Total descending, then Path ascending. HasMore
	// reports whether a row follows the page. Unknown projects give empty
	// results. Every number is an estimate (see package hll for its error).
	// With q.Path, the totals are that path's visitors (its row's numbers,
	// open and closed days alike) and the rows its row, if it has a
	// visitor.
	QueryVisitors(ctx context.Context, q ViewsQuery) (VisitorsResult, error)
	// VisitorSalt returns the secret salt (VisitorSaltBytes random bytes)
	// of the UTC day holding day, creating it on the first request: every
	// process sharing the store gets the same salt for a day. In the same
	// call, the salts of the days three or more before day's are
	// deleted, so that once no server can call a day yesterday its
	// visitors' hashes can never be computed again, and every day three
	// or more before the latest day asked for is closed. A salt is so
	// never deleted before its day closes: an open day is hashed with one
	// salt, however many times it is asked for.
	VisitorSalt(ctx context.Context, day time.Time) ([]byte, error)
}

// VisitorSaltBytes is the length of a day's salt.
const VisitorSaltBytes = 32

// VisitorCount is the distinct visitors of one path in one hour, as
// encoded hll sketches of their hashes (hll.Sketch.AppendBinary): the
// recorder counts per hour, and the store adds them to the hour's day. A
// nil or empty sketch holds no visitor.
type VisitorCount struct {
	ProjectID string
	Path      string
	Hour      time.Time // whole hour, UTC
	Human, AI []byte
}

// Validate returns what makes c unfit for AddVisitors, or nil.
func (c VisitorCount) Validate() error {
	switch {
	case c.ProjectID == "":
		return Invalid("empty project ID")
	case c.Path == "":
		return Invalid("empty path")
	case !wholeHour(c.Hour):
		return Invalid("hour %v is not a whole hour", c.Hour)
	}
	for _, s := range [...]struct {
		class  string
		sketch []byte
	}{{"human", c.Human}, {"ai", c.AI}} {
		if len(s.sketch) == 0 {
			continue
		}
		var sk hll.Sketch
		if err := sk.UnmarshalBinary(s.sketch); err != nil {
			return Invalid("%s sketch: %v", s.class, err)
		}
	}
	return nil
}

// ValidateVisitorCounts returns what makes a batch unfit for AddVisitors,
// naming the first bad count by its index, or nil: one bad count refuses
// the whole batch.
func ValidateVisitorCounts(counts []VisitorCount) error {
	for i, c := range counts {
		if err := c.Validate(); err != nil {
			return Invalid("count %d: %s", i, problemOf(err))
		}
	}
	return nil
}

// ValidateVisitorSalt returns what makes day unfit for VisitorSalt, or nil.
func ValidateVisitorSalt(day time.Time) error {
	if day.IsZero() {
		return Invalid("zero day")
	}
	return nil
}

// VisitorTotals is unique visitors, human and AI. Total is the visitors of
// either class, each counted once a day: it may be less than Human+AI.
type VisitorTotals struct {
	Human, AI, Total int64
}

// PathVisitors is the unique visitors of one path.
type PathVisitors struct {
	Path             string
	Human, AI, Total int64
}

// VisitorsResult is one page of QueryVisitors.
type VisitorsResult struct {
	Totals  VisitorTotals
	Rows    []PathVisitors
	HasMore bool
}

// VisitorDays returns the range of whole UTC days that q's range touches,
// [from, to), as QueryVisitors counts it: a zero bound stays open, and an
// empty range stays empty.
func VisitorDays(q ViewsQuery) (from, to time.Time) {
	const day = 24 * time.Hour
	from, to = q.From, q.To
	if !from.IsZero() && !to.IsZero() && !to.After(from) {
		d := from.UTC().Truncate(day)
		return d, d
	}
	if !from.IsZero() {
		from = from.UTC().Truncate(day)
	}
	if !to.IsZero() {
		if d := to.UTC().Truncate(day); !d.Equal(to) {
			to = d.Add(day)
		}
	}
	return from, to
}
