package sqlstore

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/store"
)

// OpenDaysBehind is how long before the latest salt's day a day stays
// open, with its salt (see store.VisitorStore): a salt is asked for before
// its day starts, while the day two before it is still yesterday to the
// servers until their midnight.
const OpenDaysBehind = 2 * rollup.Day

// Visitors has the methods of store.VisitorStore over the visitor days of
// package rollup (see its visitors.go), for a backend that embeds it. Their
// steps are here once: a batch is capped, grouped by day, and merged into
// the sketches of its open days (or added to the numbers of its closed
// ones) in one transaction; a query reads numbers only.
type Visitors struct {
	db   VisitorsBackend
	days rollup.DayCache // paths days are known to hold, for the cap
}

// NewVisitors returns the visitors methods over db.
func NewVisitors(db VisitorsBackend) *Visitors { return &Visitors{db: db} }

// VisitorsBackend is a SQL database as the visitors methods use it.
type VisitorsBackend interface {
	// StorableVisitors returns the counts of a validated batch as the
	// database can store them, leaving out those without a sketch; it
	// may reuse counts' memory.
	StorableVisitors(counts []store.VisitorCount) []store.VisitorCount
	// WriteVisitors runs fn in one transaction that guards the visitors of
	// days (sorted) and of their weeks (PostgreSQL locks their view_days
	// rows, as AddViews does, so that concurrent flushes queue), and
	// commits it if fn returns nil.
	WriteVisitors(ctx context.Context, op string, days []rollup.ProjectDay, fn func(VisitorsTx) error) error
	// ReadVisitors adds to tally, from one snapshot, the segments that
	// hold project's visitors over span (whole days): the week rolls of
	// its weeks, and the day segments of its other days and of the open
	// days of its weeks; and returns the project's numbers summed over
	// the days of [from, to).
	ReadVisitors(ctx context.Context, op, project string, span rollup.Span, from, to int64, tally *rollup.Tally) (store.VisitorTotals, error)
	// ClosableVisitorDays returns the open days, of every project, more
	// than behind seconds before the latest day whose salt was asked for.
	ClosableVisitorDays(ctx context.Context, op string, behind int64) ([]rollup.ProjectDay, error)
	// VisitorSalt, in one transaction, deletes the salts of days before
	// keepFrom, stores fresh as the salt of day unless it has one, and
	// returns the salt of day. Processes that call it at once for the
	// same day all get the one salt stored.
	VisitorSalt(ctx context.Context, op string, day, keepFrom int64, fresh []byte) ([]byte, error)
	// Fail wraps an error of op (see Backend.Fail).
	Fail(op string, err error) error
}

// VisitorsTx is the visitors statements of one write transaction.
type VisitorsTx interface {
	// HeldPaths answers the cap's question about the batch's days.
	rollup.HeldPaths
	// LatestSalt returns the latest day whose salt was asked for, or
	// math.MinInt64 if none was.
	LatestSalt() (int64, error)
	// Day returns what is stored of a day, and false if nothing is.
	Day(d rollup.ProjectDay) (VisitorDay, bool, error)
	// PutDay stores a day, replacing what was.
	PutDay(d rollup.ProjectDay, v VisitorDay) error
	// Sketches returns the sketches an open day holds of keys (paths, or
	// rollup.ProjectKey), by index of keys: human and AI, nil for none.
	Sketches(d rollup.ProjectDay, keys []string) ([][2][]byte, error)
	// PutSketches stores the sketches of keys, replacing theirs.
	PutSketches(d rollup.ProjectDay, keys []string, sketches [][2][]byte) error
	// DeleteSketches deletes every sketch of a day.
	DeleteSketches(d rollup.ProjectDay) error
	// AddToWeek adds numbers to a week roll of the visitors, as AddViews
	// adds counts to the views' (rollup.Append).
	AddToWeek(r rollup.Roll) error
}

// VisitorDay is a project's day of visitors as stored: its paths' numbers
// (a segment of rollup.Count), the project's, and whether it is open.
type VisitorDay struct {
	Open    bool
	Totals  store.VisitorTotals
	Entries int
	Counts  []byte
}

// AddVisitors merges each count's sketches into its project's day, in one
// transaction, after the views' cap renamed the paths its day does not
// hold. The batch is validated first: one bad count refuses the whole
// batch and nothing is stored.
func (v *Visitors) AddVisitors(ctx context.Context, counts []store.VisitorCount) error {
	const op = "add visitors"
	if err := store.ValidateVisitorCounts(counts); err != nil {
		return v.db.Fail(op, err)
	}
	batch := v.db.StorableVisitors(counts)
	if len(batch) == 0 {
		return nil
	}
	set := map[rollup.ProjectDay]struct{}{}
	for _, c := range batch {
		set[rollup.ProjectDay{ProjectID: c.ProjectID, At: rollup.DayOf(c.Hour.Unix())}] = struct{}{}
	}
	var capped rollup.CappedVisitors
	err := v.db.WriteVisitors(ctx, op, sortedDays(set), func(tx VisitorsTx) error {
		var err error
		if capped, err = rollup.CapVisitors(batch, &v.days, tx); err != nil {
			return v.db.Fail(op, err)
		}
		days, err := rollup.GroupVisitors(capped.Counts)
		if err != nil {
			return v.db.Fail(op, err)
		}
		latest, err := tx.LatestSalt()
		if err != nil {
			return v.db.Fail(op, err)
		}
		for i := range days {
			if err := addDay(tx, &days[i], latest); err != nil {
				return v.db.Fail(op, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	v.days.Add(capped.Learned)
	return nil
}

// addDay adds what a batch brings to one day: merged into its sketches
// while it is open, its numbers made anew; added to its numbers, and to
// its week's, once it is closed. A day with nothing stored is open unless
// it is more than OpenDaysBehind before the latest salt's.
func addDay(tx VisitorsTx, d *rollup.DayVisitors, latest int64) error {
	pd := rollup.ProjectDay{ProjectID: d.ProjectID, At: d.Day}
	day, found, err := tx.Day(pd)
	if err != nil {
		return err
	}
	if found && !day.Open || !found && latest != math.MinInt64 && d.Day < latest-OpenDaysBehind {
		paths, project := d.Numbers()
		var old [][]byte
		if found {
			old = [][]byte{day.Counts}
		}
		seg, n, err := rollup.MergeSegments(old, paths)
		if err != nil {
			return err
		}
		if err := addToWeek(tx, pd, paths); err != nil {
			return err
		}
		t := day.Totals
		return tx.PutDay(pd, VisitorDay{Entries: n, Counts: seg,
			Totals: store.VisitorTotals{Human: t.Human + project.Human, AI: t.AI + project.AI, Total: t.Total + project.Total}})
	}
	keys := append([]string{rollup.ProjectKey}, d.Paths...)
	stored, err := tx.Sketches(pd, keys)
	if err != nil {
		return err
	}
	if err := d.MergeDay(stored[1:], stored[0]); err != nil {
		return err
	}
	// Only the sketches the batch changed are written: a visitor seen
	// earlier that day leaves its page's sketch as it was.
	var putKeys []string
	var put [][2][]byte
	for i, key := range keys {
		s := &d.Project
		if i > 0 {
			s = &d.Sketches[i-1]
		}
		if enc := rollup.Encoded(s); !bytes.Equal(enc[0], stored[i][0]) || !bytes.Equal(enc[1], stored[i][1]) {
			putKeys, put = append(putKeys, key), append(put, enc)
		}
	}
	if err := tx.PutSketches(pd, putKeys, put); err != nil {
		return err
	}
	paths, project := d.Numbers()
	seg, n, err := rollup.ReplaceCounts(day.Counts, paths)
	if err != nil {
		return err
	}
	return tx.PutDay(pd, VisitorDay{Open: true, Totals: project, Entries: n, Counts: seg})
}

// QueryVisitors returns the totals and one page of per-path unique
// visitors of a project over the whole days of a range, as
// store.VisitorStore documents: numbers summed from the week rolls of its
// whole weeks and the segments of its other days, ranked by total. Open
// days are read from their numbers too, which every flush makes anew from
// their sketches, so q.Path picks a path's entries from the same
// segments, whether of open or closed days.
func (v *Visitors) QueryVisitors(ctx context.Context, q store.ViewsQuery) (store.VisitorsResult, error) {
	const op = "query visitors"
	if err := q.Validate(); err != nil {
		return store.VisitorsResult{}, v.db.Fail(op, err)
	}
	from, to := store.VisitorDays(q)
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if !from.IsZero() {
		lo = from.Unix()
	}
	if !to.IsZero() {
		hi = to.Unix()
	}
	tally := rollup.Tally{Visitors: true, Path: q.Path}
	defer tally.Release()
	totals, err := v.db.ReadVisitors(ctx, op, q.ProjectID, rollup.Split(from, to), lo, hi, &tally)
	if err != nil {
		return store.VisitorsResult{}, err
	}
	if q.Path != "" {
		totals = tally.PathVisitors()
	}
	rows, more, err := tally.VisitorsPage(q.Offset, q.Limit)
	if err != nil {
		return store.VisitorsResult{}, v.db.Fail(op, err)
	}
	return store.VisitorsResult{Totals: totals, Rows: rows, HasMore: more}, nil
}

// VisitorSalt returns the salt of the UTC day holding day, made of fresh
// random bytes on the first request, deletes every salt of a day more
// than OpenDaysBehind before it, and closes the days that the latest salt
// leaves behind (see closeDays).
func (v *Visitors) VisitorSalt(ctx context.Context, day time.Time) ([]byte, error) {
	const op = "visitor salt"
	if err := store.ValidateVisitorSalt(day); err != nil {
		return nil, v.db.Fail(op, err)
	}
	at := rollup.DayOf(day.Unix())
	fresh := make([]byte, store.VisitorSaltBytes)
	rand.Read(fresh)
	salt, err := v.db.VisitorSalt(ctx, op, at, at-OpenDaysBehind, fresh)
	if err != nil {
		return nil, err
	}
	if err := v.closeDays(ctx); err != nil {
		return nil, err
	}
	return salt, nil
}

// closeDays closes every open day more than OpenDaysBehind before the
// latest salt's, each in a transaction of its own: its numbers are added to its
// week's roll and its sketches deleted, so that the day is read from its
// numbers alone, once. A day closed meanwhile by another process is left
// as it is.
func (v *Visitors) closeDays(ctx context.Context) error {
	const op = "close visitor days"
	days, err := v.db.ClosableVisitorDays(ctx, op, OpenDaysBehind)
	if err != nil {
		return err
	}
	for _, pd := range days {
		err := v.db.WriteVisitors(ctx, op, []rollup.ProjectDay{pd}, func(tx VisitorsTx) error {
			day, found, err := tx.Day(pd)
			if err != nil || !found || !day.Open {
				return err
			}
			counts, err := rollup.Decode(day.Counts)
			if err != nil {
				return v.db.Fail(op, err)
			}
			if err := addToWeek(tx, pd, counts); err != nil {
				return v.db.Fail(op, err)
			}
			day.Open = false
			if err := tx.PutDay(pd, day); err != nil {
				return v.db.Fail(op, err)
			}
			if err := tx.DeleteSketches(pd); err != nil {
				return v.db.Fail(op, err)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// addToWeek adds the numbers of a closed day to its week's roll.
func addToWeek(tx VisitorsTx, pd rollup.ProjectDay, counts []rollup.Count) error {
	if len(counts) == 0 {
		return nil
	}
	return tx.AddToWeek(rollup.Roll{ProjectID: pd.ProjectID, At: rollup.WeekOf(pd.At), Counts: counts})
}

// sortedDays returns the days of set in the order every flush takes them.
func sortedDays(set map[rollup.ProjectDay]struct{}) []rollup.ProjectDay {
	return slices.SortedFunc(maps.Keys(set), func(a, b rollup.ProjectDay) int {
		return cmp.Or(strings.Compare(a.ProjectID, b.ProjectID), cmp.Compare(a.At, b.At))
	})
}
