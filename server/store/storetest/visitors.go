package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docsapi/docsapi-go/server/internal/hll"
	"github.com/docsapi/docsapi-go/server/internal/thorough"
	"github.com/docsapi/docsapi-go/server/internal/visitorhash"
	"github.com/docsapi/docsapi-go/server/store"
)

// VisitorSketch returns the encoded sketch of visitors ids (each passed
// through hll.Mix64, as a recorder's hashes are well mixed), or nil for
// none.
func VisitorSketch(ids ...uint64) []byte {
	if len(ids) == 0 {
		return nil
	}
	var s hll.Sketch
	for _, id := range ids {
		s.Insert(hll.Mix64(id))
	}
	return s.AppendBinary(nil)
}

// visitorIDs returns the visitors from lo up to hi.
func visitorIDs(lo, hi uint64) []uint64 {
	var v []uint64
	for i := lo; i < hi; i++ {
		v = append(v, i)
	}
	return v
}

// visitors is a VisitorCount of the given visitors.
func visitors(project, path string, hour time.Time, human, ai []uint64) store.VisitorCount {
	return store.VisitorCount{ProjectID: project, Path: path, Hour: hour, Human: VisitorSketch(human...), AI: VisitorSketch(ai...)}
}

func addVisitors(t *testing.T, s store.Store, counts ...store.VisitorCount) {
	t.Helper()
	must(t, "AddVisitors", s.AddVisitors(t.Context(), counts))
}

// viewed adds a view of each path in hour, so that its day holds them
// (see AddVisitors).
func viewed(t *testing.T, s store.Store, project string, hour time.Time, paths ...string) {
	t.Helper()
	var counts []store.ViewCount
	for _, p := range paths {
		counts = append(counts, store.ViewCount{ProjectID: project, Path: p, Hour: hour, Human: 1})
	}
	must(t, "AddViews", s.AddViews(t.Context(), counts))
}

func mustQueryVisitors(t *testing.T, s store.Store, q store.ViewsQuery) store.VisitorsResult {
	t.Helper()
	res, err := s.QueryVisitors(t.Context(), q)
	must(t, "QueryVisitors", err)
	return res
}

func wantVisitors(t *testing.T, what string, want, got store.VisitorsResult) {
	t.Helper()
	if got.Rows == nil {
		t.Errorf("%s: Rows is nil, want a non-nil slice", what)
	}
	if want.Rows == nil {
		want.Rows = []store.PathVisitors{}
	}
	if got.Rows == nil {
		got.Rows = []store.PathVisitors{}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

func pv(path string, human, ai, total int64) store.PathVisitors {
	return store.PathVisitors{Path: path, Human: human, AI: ai, Total: total}
}

// exactVisitors is the visitors of days, kept as sets: what a query must
// estimate. At the suite's sizes (under a few thousand visitors per
// sketch), a sketch is exact. A day's sets hold its own visitors only: a
// range adds its days up, as a store does (every hash being salted with
// its day's salt, no visitor is in two days).
type exactVisitors map[time.Time]map[string][2]map[uint64]bool

// add adds visitors of path at hour to its day.
func (e exactVisitors) add(hour time.Time, path string, human, ai []uint64) {
	day := hour.UTC().Truncate(24 * time.Hour)
	if e[day] == nil {
		e[day] = map[string][2]map[uint64]bool{}
	}
	sets, ok := e[day][path]
	if !ok {
		sets = [2]map[uint64]bool{{}, {}}
		e[day][path] = sets
	}
	for _, id := range human {
		sets[0][id] = true
	}
	for _, id := range ai {
		sets[1][id] = true
	}
}

// result is what QueryVisitors must answer for q (every row, q's limit
// aside): over the whole days the range touches, each day's distinct
// visitors, per path and for the project, added up.
func (e exactVisitors) result(q store.ViewsQuery) store.VisitorsResult {
	from, to := store.VisitorDays(q)
	type sums struct{ h, a, u int64 }
	var all sums
	per := map[string]*sums{}
	for day, paths := range e {
		if !from.IsZero() && day.Before(from) || !to.IsZero() && !day.Before(to) {
			continue
		}
		dayAll := [3]map[uint64]bool{{}, {}, {}}
		for path, hs := range paths {
			u := map[uint64]bool{}
			maps.Copy(u, hs[0])
			maps.Copy(u, hs[1])
			if per[path] == nil {
				per[path] = &sums{}
			}
			per[path].h += int64(len(hs[0]))
			per[path].a += int64(len(hs[1]))
			per[path].u += int64(len(u))
			maps.Copy(dayAll[0], hs[0])
			maps.Copy(dayAll[1], hs[1])
			maps.Copy(dayAll[2], u)
		}
		all.h += int64(len(dayAll[0]))
		all.a += int64(len(dayAll[1]))
		all.u += int64(len(dayAll[2]))
	}
	res := store.VisitorsResult{
		Totals: store.VisitorTotals{Human: all.h, AI: all.a, Total: all.u},
		Rows:   []store.PathVisitors{},
	}
	for path, s := range per {
		if s.u > 0 {
			res.Rows = append(res.Rows, pv(path, s.h, s.a, s.u))
		}
	}
	slices.SortFunc(res.Rows, func(a, b store.PathVisitors) int {
		if a.Total != b.Total {
			return int(b.Total - a.Total)
		}
		return bytes.Compare([]byte(a.Path), []byte(b.Path))
	})
	return res
}

// page is res's rows from offset, at most limit, and whether more follow.
func page(res store.VisitorsResult, offset, limit int) store.VisitorsResult {
	res.HasMore = len(res.Rows) > offset+limit
	res.Rows = res.Rows[min(offset, len(res.Rows)):min(offset+limit, len(res.Rows))]
	return res
}

// salt asks s for the salt of at's day, as a server does as the day
// starts or minutes before: the days three or more before it close.
func salt(t *testing.T, s store.Store, at time.Time) []byte {
	t.Helper()
	b, err := s.VisitorSalt(t.Context(), at)
	must(t, "VisitorSalt", err)
	return b
}

// readers returns the visitor values of project's readers named by keys
// on at's day, hashed with the day's salt as s gives it now, as ingestion
// hashes a view's visitor key.
func readers(t *testing.T, s store.Store, project string, at time.Time, keys ...string) []uint64 {
	t.Helper()
	day := visitorhash.New(at, salt(t, s, at))
	var ids []uint64
	for _, k := range keys {
		ids = append(ids, day.Key(project, k))
	}
	return ids
}

func testVisitors(t *testing.T, open opener) {
	day0 := Hour(-5) // the midnight that starts the suite's first day
	at := func(days, hours int) time.Time { return day0.Add(time.Duration(days*24+hours) * time.Hour) }
	other := store.OtherPagesPath
	runAll(t, open, []subtest{
		{"MergesCountEachVisitorOnce", func(t *testing.T, s store.Store) {
			h := Hour(0)
			viewed(t, s, "p1", h, "/a", "/b")
			viewed(t, s, "p2", h, "/a")
			addVisitors(t, s,
				visitors("p1", "/a", h, []uint64{1, 2, 3}, []uint64{10}),
				visitors("p1", "/b", h, []uint64{1}, []uint64{20}))
			// Visitors seen before count once, in another hour of the
			// day too; visitor 20 is seen as both human and AI on /b:
			// once in its total.
			addVisitors(t, s,
				visitors("p1", "/a", h.Add(time.Hour), []uint64{3, 4}, []uint64{10, 11}),
				visitors("p1", "/b", h, []uint64{20}, nil),
				visitors("p2", "/a", h, visitorIDs(100, 110), nil))
			wantVisitors(t, "p1", store.VisitorsResult{
				// The project's: 1-4 and 20 human, 10, 11 and 20 AI.
				Totals: store.VisitorTotals{Human: 5, AI: 3, Total: 7},
				Rows:   []store.PathVisitors{pv("/a", 4, 2, 6), pv("/b", 2, 1, 2)},
			}, mustQueryVisitors(t, s, all("p1")))
			wantVisitors(t, "unknown project", store.VisitorsResult{}, mustQueryVisitors(t, s, all("nobody")))
		}},
		{"RangesCountTheWholeDaysTheyTouch", func(t *testing.T, s store.Store) {
			exact := exactVisitors{}
			for d := range 22 {
				for _, hr := range []int{0, 7, 23} {
					hour := at(d, hr)
					path := fmt.Sprintf("/p%d", (d+hr)%3)
					// A hash is keyed by its day's salt: a reader is
					// another hash each day, and one hash in each hour
					// of its day, which counts once in the day.
					back := uint64(1_000_000 + d)
					human := []uint64{uint64(d*100 + hr), back}
					ai := []uint64{uint64(5000 + d)}
					if hr == 7 {
						ai = append(ai, back) // also human in the day's other hours
					}
					viewed(t, s, "p", hour, path)
					addVisitors(t, s, visitors("p", path, hour, human, ai))
					exact.add(hour, path, human, ai)
				}
			}
			for _, r := range [][2]time.Time{
				{at(0, 1), at(5, 3)},   // ragged edges: their whole days
				{at(0, 0), at(14, 0)},  // whole days, whole weeks among them
				{at(2, 0), at(19, 5)},  // days, weeks and a ragged end
				{at(1, 6), at(1, 8)},   // hours inside a day: the day
				{at(3, 7), at(3, 8)},   // one hour: its day
				{at(3, 7), at(3, 7)},   // empty
				{at(3, 0), at(4, 0)},   // one day, not the next
				{{}, at(10, 0)},        // open start
				{at(3, 23), {}},        // open end
				{at(0, 23), at(21, 1)}, // most of it
				{{}, {}},               // everything
			} {
				q := store.ViewsQuery{ProjectID: "p", From: r[0], To: r[1], Limit: 10}
				wantVisitors(t, fmt.Sprintf("[%v, %v)", r[0], r[1]), page(exact.result(q), 0, 10), mustQueryVisitors(t, s, q))
			}
		}},
		{"ClosedDaysAddUpAndLateVisitorsAreAdded", func(t *testing.T, s store.Store) {
			// Days recorded one after the other, as a server does: the
			// day's salt asked for as it starts, which closes the days
			// three or more before it.
			exact := exactVisitors{}
			record := func(d, hr int, path string, human, ai []uint64) {
				t.Helper()
				hour := at(d, hr)
				viewed(t, s, "p", hour, path)
				addVisitors(t, s, visitors("p", path, hour, human, ai))
				exact.add(hour, path, human, ai)
			}
			for d := range 17 {
				salt(t, s, at(d, 0))
				for _, hr := range []int{2, 13} {
					id := uint64(d * 1000)
					record(d, hr, "/a", visitorIDs(id, id+uint64(5+d)), []uint64{id + 500})
					record(d, hr, "/b", visitorIDs(id+3, id+10), nil)
					if d%3 == 0 {
						record(d, hr, fmt.Sprintf("/only%d", d), nil, []uint64{id + 600 + uint64(hr)})
					}
				}
			}
			ranges := [][2]time.Time{
				{at(0, 0), at(17, 0)},  // every day, whole weeks among them
				{at(1, 0), at(15, 0)},  // days around whole weeks
				{at(2, 5), at(12, 20)}, // ragged edges, days and a week
				{at(3, 0), at(4, 0)},   // one closed day
				{at(16, 0), at(17, 0)}, // today, open
				{at(15, 0), at(17, 0)}, // yesterday and today, open
				{{}, {}},               // everything
			}
			check := func(when string) {
				t.Helper()
				for _, r := range ranges {
					for _, pg := range []struct{ offset, limit int }{{0, 50}, {1, 2}} {
						q := store.ViewsQuery{ProjectID: "p", From: r[0], To: r[1], Offset: pg.offset, Limit: pg.limit}
						want := page(exact.result(q), pg.offset, pg.limit)
						wantVisitors(t, fmt.Sprintf("%s: [%v, %v) offset %d", when, r[0], r[1], pg.offset), want, mustQueryVisitors(t, s, q))
					}
				}
			}
			check("recorded day by day")
			// Yesterday is open: a visitor it has counts once more.
			record(15, 20, "/a", []uint64{15_000, 15_999}, nil)
			// So is the day before: today's salt may have been asked
			// for minutes ahead of midnight, while that day was still
			// yesterday to every server.
			record(14, 23, "/b", []uint64{14_003, 14_009, 14_998}, nil)
			// A flush retried late adds to days long closed, whose
			// visitors are final numbers: new visitors count, and so do
			// those the day had already, again; a path new to the day
			// too.
			late := func(d, hr int, path string, human []uint64) {
				t.Helper()
				viewed(t, s, "p", at(d, hr), path)
				addVisitors(t, s, visitors("p", path, at(d, hr), human, nil))
				exact.add(at(d, hr), path, nil, nil) // the path's day, if new
				again := exactVisitors{}
				again.add(at(d, hr), path, human, nil)
				for p, sets := range again[at(d, 0)] {
					have := exact[at(d, 0)][p]
					for id := range sets[0] {
						// Counted again: under an ID of its own.
						have[0][id|1<<62] = true
					}
				}
			}
			late(3, 20, "/late", []uint64{3001, 99_999})
			late(4, 1, "/a", []uint64{4000, 4001, 77_777})
			check("after late writes")
			// The next days' salts close the day before yesterday,
			// yesterday and today.
			salt(t, s, at(17, 0))
			salt(t, s, at(18, 0))
			salt(t, s, at(19, 0))
			check("after the next days")
		}},
		{"EachDayCountsItsVisitors", func(t *testing.T, s store.Store) {
			// The same hashes on two days (which salted hashes never
			// are): a range of both adds the days, whether open or
			// closed.
			for d := range 3 {
				viewed(t, s, "p", at(d, 1), "/a")
				addVisitors(t, s, visitors("p", "/a", at(d, 1), []uint64{1, 2}, []uint64{2}))
			}
			want := store.VisitorsResult{Totals: store.VisitorTotals{Human: 6, AI: 3, Total: 6}, Rows: []store.PathVisitors{pv("/a", 6, 3, 6)}}
			wantVisitors(t, "open days", want, mustQueryVisitors(t, s, all("p")))
			salt(t, s, at(5, 0))
			wantVisitors(t, "closed days", want, mustQueryVisitors(t, s, all("p")))
		}},
		{"YesterdayStaysOpenUntilTheNextDayEnds", func(t *testing.T, s store.Store) {
			q := store.ViewsQuery{ProjectID: "p", From: at(0, 0), To: at(1, 0), Limit: 5}
			add := func(ids ...uint64) {
				t.Helper()
				viewed(t, s, "p", at(0, 9), "/a")
				addVisitors(t, s, visitors("p", "/a", at(0, 9), ids, nil))
			}
			add(1, 2)
			salt(t, s, at(1, 3)) // the next day: the day is yesterday
			add(2, 3)
			wantVisitors(t, "yesterday", store.VisitorsResult{Totals: store.VisitorTotals{Human: 3, Total: 3},
				Rows: []store.PathVisitors{pv("/a", 3, 0, 3)}}, mustQueryVisitors(t, s, q))
			// The salt of the day after, asked for ahead of its
			// midnight, while the day is still yesterday by the clock.
			salt(t, s, at(2, 0))
			add(3, 4)
			wantVisitors(t, "yesterday, tomorrow's salt asked for", store.VisitorsResult{Totals: store.VisitorTotals{Human: 4, Total: 4},
				Rows: []store.PathVisitors{pv("/a", 4, 0, 4)}}, mustQueryVisitors(t, s, q))
			salt(t, s, at(3, 0)) // closed: its four visitors are final
			add(4, 5)
			wantVisitors(t, "closed", store.VisitorsResult{Totals: store.VisitorTotals{Human: 6, Total: 6},
				Rows: []store.PathVisitors{pv("/a", 6, 0, 6)}}, mustQueryVisitors(t, s, q))
		}},
		{"YesterdayCountsOnceWhileTomorrowsSaltIsAskedFor", func(t *testing.T, s store.Store) {
			// Day 1 is yesterday all through day 2, whose last minutes
			// ask for the salt of day 3 (a recorder ahead of midnight,
			// ingestion of a view up to an hour ahead, a replica whose
			// clock runs ahead). Readers of day 1 seen again then are
			// hashed with day 1's salt asked for again: the same
			// hashes, which the day must merge, each counted once.
			first := salt(t, s, at(1, 0))
			viewed(t, s, "p", at(1, 10), "/a")
			addVisitors(t, s, visitors("p", "/a", at(1, 10), readers(t, s, "p", at(1, 10), "r1", "r2", "r3"), nil))
			salt(t, s, at(2, 0))
			salt(t, s, at(3, 0)) // day 2, ten minutes to midnight
			if again := salt(t, s, at(1, 23)); !bytes.Equal(again, first) {
				t.Error("yesterday's salt was not kept while tomorrow's was asked for")
			}
			viewed(t, s, "p", at(1, 23), "/a")
			addVisitors(t, s, visitors("p", "/a", at(1, 23), readers(t, s, "p", at(1, 23), "r1", "r2", "r3"), nil))
			// A project with no visitor of day 1 until then: two
			// flushes of one reader count it once.
			viewed(t, s, "q", at(1, 23), "/a")
			for range 2 {
				addVisitors(t, s, visitors("q", "/a", at(1, 23), readers(t, s, "q", at(1, 23), "r4"), nil))
			}
			day1 := func(project string) store.ViewsQuery {
				return store.ViewsQuery{ProjectID: project, From: at(1, 0), To: at(2, 0), Limit: 5}
			}
			check := func(when string) {
				t.Helper()
				wantVisitors(t, when+": p", store.VisitorsResult{Totals: store.VisitorTotals{Human: 3, Total: 3},
					Rows: []store.PathVisitors{pv("/a", 3, 0, 3)}}, mustQueryVisitors(t, s, day1("p")))
				wantVisitors(t, when+": q", store.VisitorsResult{Totals: store.VisitorTotals{Human: 1, Total: 1},
					Rows: []store.PathVisitors{pv("/a", 1, 0, 1)}}, mustQueryVisitors(t, s, day1("q")))
			}
			check("tomorrow's salt asked for")
			// Once day 2 is over, day 1 is yesterday to no server:
			// the salt of day 4, asked for ahead of its midnight,
			// closes it with the same numbers and deletes its salt.
			salt(t, s, at(4, 0))
			check("closed")
			if again := salt(t, s, at(1, 0)); bytes.Equal(again, first) {
				t.Fatal("a closed day's salt was kept")
			}
		}},
		{"RowsAreOrderedByTotalThenPathAndPagedExactly", func(t *testing.T, s store.Store) {
			h := Hour(2)
			viewed(t, s, "p", h, "/a", "/b", "/c", "/d", "/e")
			addVisitors(t, s,
				visitors("p", "/e", h, []uint64{1, 2}, nil),
				visitors("p", "/d", h, nil, []uint64{3}),
				visitors("p", "/c", h, nil, []uint64{4, 5, 6}),
				visitors("p", "/b", h, []uint64{7}, []uint64{8}),
				visitors("p", "/a", h, []uint64{9}, []uint64{9, 10}))
			rows := []store.PathVisitors{pv("/c", 0, 3, 3), pv("/a", 1, 2, 2), pv("/b", 1, 1, 2), pv("/e", 2, 0, 2), pv("/d", 0, 1, 1)}
			totals := store.VisitorTotals{Human: 4, AI: 7, Total: 10}
			for _, pg := range []struct {
				offset, limit int
				more          bool
			}{{0, 2, true}, {2, 2, true}, {4, 2, false}, {4, 1, false}, {3, 1, true}, {5, 2, false}, {9, 3, false}, {0, 5, false}} {
				q := store.ViewsQuery{ProjectID: "p", Limit: pg.limit, Offset: pg.offset}
				want := store.VisitorsResult{Totals: totals, HasMore: pg.more}
				want.Rows = rows[min(pg.offset, len(rows)):min(pg.offset+pg.limit, len(rows))]
				wantVisitors(t, fmt.Sprintf("offset %d limit %d", pg.offset, pg.limit), want, mustQueryVisitors(t, s, q))
			}
		}},
		{"PathsTheDayDoesNotHoldCountUnderOtherPages", func(t *testing.T, s store.Store) {
			h, next := day0.Add(3*time.Hour), day0.Add(27*time.Hour)
			viewed(t, s, "p", h, "/a")
			must(t, "AddViews", s.AddViews(t.Context(), []store.ViewCount{{ProjectID: "p", Path: "/bots", Hour: h, Bot: 1}}))
			viewed(t, s, "p", next, "/new")
			// /new has no views on the first day, in any hour: its
			// visitors count under other pages there, but keep its name
			// the next day. Paths seen by bots only are held.
			addVisitors(t, s,
				visitors("p", "/a", h.Add(5*time.Hour), []uint64{1}, nil),
				visitors("p", "/new", h, []uint64{2, 3}, nil),
				visitors("p", "/bots", h, nil, []uint64{4}),
				visitors("p", other, h, []uint64{5}, nil),
				visitors("p", "/new", next, []uint64{6}, nil))
			first := store.ViewsQuery{ProjectID: "p", From: day0, To: day0.Add(24 * time.Hour), Limit: 10}
			wantVisitors(t, "first day", store.VisitorsResult{
				Totals: store.VisitorTotals{Human: 4, AI: 1, Total: 5},
				Rows:   []store.PathVisitors{pv(other, 3, 0, 3), pv("/a", 1, 0, 1), pv("/bots", 0, 1, 1)},
			}, mustQueryVisitors(t, s, first))
			second := store.ViewsQuery{ProjectID: "p", From: day0.Add(24 * time.Hour), Limit: 10}
			wantVisitors(t, "next day", store.VisitorsResult{
				Totals: store.VisitorTotals{Human: 1, Total: 1},
				Rows:   []store.PathVisitors{pv("/new", 1, 0, 1)},
			}, mustQueryVisitors(t, s, second))
		}},
		{"RefusedBatchStoresNothing", func(t *testing.T, s store.Store) {
			h := Hour(0)
			viewed(t, s, "p", h, "/a")
			good := visitors("p", "/a", h, []uint64{1}, nil)
			sketch := VisitorSketch(2, 3)
			damaged := slices.Clone(sketch)
			damaged[len(damaged)/2] ^= 0x40
			for name, bad := range map[string]store.VisitorCount{
				"damaged sketch":   {ProjectID: "p", Path: "/a", Hour: h, AI: damaged},
				"truncated sketch": {ProjectID: "p", Path: "/a", Hour: h, Human: sketch[:len(sketch)-1]},
				"not a sketch":     {ProjectID: "p", Path: "/a", Hour: h, Human: []byte("visitor")},
				"partial hour":     {ProjectID: "p", Path: "/a", Hour: h.Add(time.Minute), Human: sketch},
				"empty path":       {ProjectID: "p", Hour: h, Human: sketch},
				"empty project":    {Path: "/a", Hour: h, Human: sketch},
			} {
				err := s.AddVisitors(t.Context(), []store.VisitorCount{good, bad})
				if !errors.Is(err, store.ErrInvalid) {
					t.Errorf("%s: AddVisitors = %v, want ErrInvalid", name, err)
				}
			}
			wantVisitors(t, "after refusals", store.VisitorsResult{}, mustQueryVisitors(t, s, all("p")))
			for _, q := range []store.ViewsQuery{{ProjectID: "p"}, {ProjectID: "p", Limit: 1, Offset: -1}, {Limit: 1}, {ProjectID: "p", Limit: 1, From: h.Add(time.Second)}} {
				if _, err := s.QueryVisitors(t.Context(), q); !errors.Is(err, store.ErrInvalid) {
					t.Errorf("QueryVisitors(%+v) = %v, want ErrInvalid", q, err)
				}
			}
			if _, err := s.VisitorSalt(t.Context(), time.Time{}); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("VisitorSalt(zero) = %v, want ErrInvalid", err)
			}
		}},
		{"SaltIsOnePerDayAndPastDaysAreDeleted", func(t *testing.T, s store.Store) {
			salt := func(at time.Time) []byte {
				t.Helper()
				b, err := s.VisitorSalt(t.Context(), at)
				must(t, "VisitorSalt", err)
				if len(b) != store.VisitorSaltBytes {
					t.Fatalf("salt of %v has %d bytes, want %d", at, len(b), store.VisitorSaltBytes)
				}
				return b
			}
			first := salt(day0.Add(10 * time.Hour))
			if again := salt(day0.Add(23*time.Hour + 59*time.Minute)); !bytes.Equal(again, first) {
				t.Fatal("two salts for one day")
			}
			second := salt(day0.Add(24 * time.Hour))
			if bytes.Equal(second, first) {
				t.Fatal("the next day has the same salt")
			}
			// The day before is kept: a flush may carry its last hour.
			if again := salt(day0.Add(3 * time.Hour)); !bytes.Equal(again, first) {
				t.Fatal("the day before lost its salt")
			}
			// So is the day before that when the next day's salt is
			// asked for: it may be asked for ahead of midnight, while
			// that day is still yesterday.
			third := salt(day0.Add(48 * time.Hour))
			if again := salt(day0.Add(30 * time.Hour)); !bytes.Equal(again, second) {
				t.Fatal("the day before lost its salt")
			}
			if again := salt(day0.Add(5 * time.Hour)); !bytes.Equal(again, first) {
				t.Fatal("the day before the day before lost its salt while it may still be yesterday")
			}
			salt(day0.Add(72 * time.Hour))
			if again := salt(day0.Add(26 * time.Hour)); !bytes.Equal(again, second) {
				t.Fatal("the day before the day before lost its salt while it may still be yesterday")
			}
			// The first day is three days past: its salt was deleted,
			// and asking again makes a new one.
			if again := salt(day0.Add(5 * time.Hour)); bytes.Equal(again, first) || bytes.Equal(again, third) {
				t.Fatal("a salt three days old was kept")
			}
		}},
		{"ConcurrentSaltRequestsAgree", func(t *testing.T, s store.Store) {
			const n = 16
			salts := make([][]byte, n)
			errs := make([]error, n)
			var start, wg sync.WaitGroup
			start.Add(1)
			for i := range n {
				wg.Go(func() {
					start.Wait()
					salts[i], errs[i] = s.VisitorSalt(t.Context(), day0.Add(time.Duration(i)*time.Hour))
				})
			}
			start.Done()
			wg.Wait()
			for i := range n {
				must(t, "VisitorSalt", errs[i])
				if !bytes.Equal(salts[i], salts[0]) {
					t.Fatalf("request %d got another salt than request 0", i)
				}
			}
		}},
		{"ConcurrentBatchesMergeEveryVisitor", func(t *testing.T, s store.Store) {
			h := Hour(1)
			viewed(t, s, "p", h, "/a")
			const n = 8
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() {
					c := visitors("p", "/a", h, visitorIDs(uint64(i*10), uint64(i*10+10)), nil)
					errs[i] = s.AddVisitors(t.Context(), []store.VisitorCount{c})
				})
			}
			wg.Wait()
			for _, err := range errs {
				must(t, "AddVisitors", err)
			}
			wantVisitors(t, "after concurrent batches", store.VisitorsResult{
				Totals: store.VisitorTotals{Human: 10 * n, Total: 10 * n},
				Rows:   []store.PathVisitors{pv("/a", 10*n, 0, 10*n)},
			}, mustQueryVisitors(t, s, all("p")))
		}},
		{"ClosingWhileFlushesAddLosesNothing", func(t *testing.T, s store.Store) {
			// Batches of disjoint visitors of a day while the day
			// closes: each is merged into the day's sketches or, once
			// the day is closed, added to its numbers; none is lost,
			// and none counted twice. A round closes one day; a few
			// rounds, so that in one at least batches land during the
			// closing whatever the scheduler does.
			const n, rounds = 12, 4
			salt(t, s, at(0, 0))
			for r := range rounds {
				h := at(r, 3)
				viewed(t, s, "p", h, "/a")
				var wg sync.WaitGroup
				errs := make([]error, n+1)
				for i := range n {
					wg.Go(func() {
						c := visitors("p", "/a", h, visitorIDs(uint64(i*10), uint64(i*10+10)), nil)
						errs[i] = s.AddVisitors(t.Context(), []store.VisitorCount{c})
					})
					if i == n/2 {
						wg.Go(func() { _, errs[n] = s.VisitorSalt(t.Context(), at(r+3, 0)) })
					}
				}
				wg.Wait()
				for _, err := range errs {
					must(t, "AddVisitors or VisitorSalt", err)
				}
			}
			// Each day's visitors are its own: a range's are the sum.
			want := int64(10 * n * rounds)
			wantVisitors(t, "after the batches and the closings", store.VisitorsResult{
				Totals: store.VisitorTotals{Human: want, Total: want},
				Rows:   []store.PathVisitors{pv("/a", want, 0, want)},
			}, mustQueryVisitors(t, s, all("p")))
		}},
	})
}

// RunVisitorAccuracy checks, against exact counts, the estimates of the
// store that open returns (new and empty) for 100 to 10 million distinct
// visitors, each size a subtest named by it. Past 200,000, which already
// stores dense sketches beside sparse ones, the sizes are in the thorough
// tier (package thorough). It is apart from Run, whose every mutant would
// otherwise insert those visitors again:
//
//	func TestVisitorAccuracy(t *testing.T) {
//		storetest.RunVisitorAccuracy(t, open)
//	}
func RunVisitorAccuracy(t *testing.T, open func(t *testing.T) store.Store) {
	t.Helper()
	testVisitorAccuracy(t, open(t), Hour(-5))
}

// sketchError is the relative error an estimate must stay within: the
// product's promise of 2%, about five standard errors of package hll's
// sketches (1.04/√65536), which one estimate in about a million exceeds.
const sketchError = 0.02

// accuracySizes are the numbers of visitors RunVisitorAccuracy counts;
// those past accuracyQuick are in the thorough tier. At 200,000 the
// sketches of the busier path are dense (the library's sparse list ends
// at about 31,000 items) and those of the other still sparse.
var accuracySizes = []int{100, 1_000, 10_000, 100_000, 200_000, 1_000_000, 10_000_000}

const accuracyQuick = 200_000

// testVisitorAccuracy stores, for each size of accuracySizes, that many
// distinct visitors of a project of its own over four hours and two
// paths, as a flush would (a visitor may be in two hours), half of them
// human, and checks every estimate against the exact count.
func testVisitorAccuracy(t *testing.T, s store.Store, day0 time.Time) {
	for _, n := range accuracySizes {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			if n > accuracyQuick {
				thorough.Require(t, "counts millions of visitors")
			}
			testAccuracyOf(t, s, day0, n)
		})
	}
}

// testAccuracyOf is testVisitorAccuracy for n visitors.
func testAccuracyOf(t *testing.T, s store.Store, day0 time.Time, n int) {
	project := fmt.Sprintf("p%d", n)
	paths := []string{"/a", "/b"}
	var sketches [4][2][2]hll.Sketch // hour, path, class
	var exact [2][2]int              // path, class
	for i := range n {
		hash := hll.Mix64(uint64(n)<<32 | uint64(i))
		path, class := 0, i%2
		if i%5 == 0 {
			path = 1
		}
		exact[path][class]++
		sketches[i%4][path][class].Insert(hash)
		if i%3 == 0 {
			sketches[(i+1)%4][path][class].Insert(hash)
		}
	}
	var counts []store.VisitorCount
	for h := range sketches {
		hour := day0.Add(time.Duration(h) * time.Hour)
		viewed(t, s, project, hour, paths...)
		for p, path := range paths {
			counts = append(counts, store.VisitorCount{
				ProjectID: project, Path: path, Hour: hour,
				Human: sketches[h][p][0].AppendBinary(nil), AI: sketches[h][p][1].AppendBinary(nil),
			})
		}
	}
	addVisitors(t, s, counts...)
	res := mustQueryVisitors(t, s, all(project))
	within := func(what string, got int64, want int) {
		t.Helper()
		if d := math.Abs(float64(got) - float64(want)); d > max(2, sketchError*float64(want)) {
			t.Errorf("%d visitors: %s = %d, want %d within %.2f%%", n, what, got, want, 100*sketchError)
		}
	}
	within("total", res.Totals.Total, n)
	within("human", res.Totals.Human, exact[0][0]+exact[1][0])
	within("AI", res.Totals.AI, exact[0][1]+exact[1][1])
	if len(res.Rows) != 2 {
		t.Fatalf("%d visitors: %d rows, want 2", n, len(res.Rows))
	}
	for _, r := range res.Rows {
		p := slices.Index(paths, r.Path)
		if p < 0 {
			t.Fatalf("%d visitors: row of %q", n, r.Path)
		}
		within(r.Path+" human", r.Human, exact[p][0])
		within(r.Path+" AI", r.AI, exact[p][1])
		within(r.Path+" total", r.Total, exact[p][0]+exact[p][1])
	}
}
