package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// The rules of ViewsQuery.Path: QueryViews and QueryVisitors of one path
// answer that path's totals and its row alone, as the unfiltered query
// has it, and nothing of the paths it is a prefix of or of other
// projects.

func testQueryByPath(t *testing.T, open opener) {
	day0 := Hour(-5) // the midnight that starts the suite's first day
	at := func(days, hours int) time.Time { return day0.Add(time.Duration(days*24+hours) * time.Hour) }
	// Paths that share prefixes, one seen by bots only, one never seen,
	// and "/", a prefix of every path.
	paths := []string{"/a", "/a/b", "/ab", "/b", "/bots", "/none", "/"}
	pages := []struct{ offset, limit int }{{0, 1}, {0, 10}, {1, 10}}
	runAll(t, open, []subtest{
		{"ViewsOfOnePathAreItsRowAlone", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustProject(t, s, "p2")
			var counts []store.ViewCount
			for d := range 17 {
				for _, hr := range []int{1, 12, 23} {
					n := int64(d*3 + hr)
					counts = append(counts,
						store.ViewCount{ProjectID: "p1", Path: "/a", Hour: at(d, hr), Human: n, AI: 1},
						store.ViewCount{ProjectID: "p1", Path: "/a/b", Hour: at(d, hr), Human: 2, AI: n % 5},
						store.ViewCount{ProjectID: "p1", Path: "/bots", Hour: at(d, hr), Bot: 7},
						store.ViewCount{ProjectID: "p2", Path: "/a", Hour: at(d, hr), Human: 1000},
					)
					if d%2 == 0 {
						counts = append(counts, store.ViewCount{ProjectID: "p1", Path: "/ab", Hour: at(d, hr), AI: 3, Bot: 1})
					}
					if hr == 12 {
						counts = append(counts, store.ViewCount{ProjectID: "p1", Path: "/b", Hour: at(d, hr), Human: 1})
					}
				}
			}
			must(t, "AddViews", s.AddViews(t.Context(), counts))
			for _, r := range [][2]time.Time{
				{{}, {}},               // everything
				{at(0, 0), at(14, 0)},  // whole days, whole weeks among them
				{at(1, 5), at(15, 13)}, // ragged hours, days and weeks
				{at(3, 12), at(3, 13)}, // one hour
				{at(3, 2), at(3, 2)},   // empty
				{at(9, 0), {}},         // open end
			} {
				for _, path := range paths {
					for _, pg := range pages {
						q := store.ViewsQuery{ProjectID: "p1", From: r[0], To: r[1], Offset: pg.offset, Limit: pg.limit, Path: path}
						wantResult(t, fmt.Sprintf("QueryViews %q [%v, %v) offset %d limit %d", path, r[0], r[1], pg.offset, pg.limit),
							viewsOfPath(counts, q), mustQuery(t, s, q))
					}
				}
			}
			// Spelled out, against a slip of the expectation's own.
			q := store.ViewsQuery{ProjectID: "p1", From: at(2, 0), To: at(3, 0), Limit: 5, Path: "/a"}
			wantResult(t, "/a on day 2", store.ViewsResult{Totals: store.Counts{Human: 54, AI: 3}, Rows: []store.PathCounts{row("/a", 54, 3)}},
				mustQuery(t, s, q))
			q.ProjectID = "nobody"
			wantResult(t, "unknown project", store.ViewsResult{Rows: []store.PathCounts{}}, mustQuery(t, s, q))
		}},
		{"VisitorsOfOnePathCountItsOpenAndClosedDays", func(t *testing.T, s store.Store) {
			// Days recorded one after the other, as a server does: each
			// day's salt asked for as it starts closes the days three
			// or more before it, whose visitors become numbers and,
			// over whole weeks, week rolls; the last days stay open,
			// with sketches.
			exact := exactVisitors{}
			record := func(project string, d, hr int, path string, human, ai []uint64) {
				t.Helper()
				viewed(t, s, project, at(d, hr), path)
				addVisitors(t, s, visitors(project, path, at(d, hr), human, ai))
				if project == "p1" {
					exact.add(at(d, hr), path, human, ai)
				}
			}
			for d := range 17 {
				salt(t, s, at(d, 0))
				for _, hr := range []int{2, 13} {
					id := uint64(d * 1000)
					// Visitors of /a are on /a/b too, and one on /ab:
					// the project counts each once, each path all its
					// own.
					record("p1", d, hr, "/a", visitorIDs(id, id+uint64(3+d)), []uint64{id + 500})
					record("p1", d, hr, "/a/b", visitorIDs(id+1, id+uint64(5+d%4)), nil)
					if d%3 == 0 {
						record("p1", d, hr, "/ab", nil, []uint64{id + 500, id + 600 + uint64(hr)})
					}
					record("p1", d, hr, "/b", []uint64{id + 2}, nil)
					record("p2", d, hr, "/a", visitorIDs(id, id+50), nil)
				}
			}
			must(t, "AddViews", s.AddViews(t.Context(), []store.ViewCount{{ProjectID: "p1", Path: "/bots", Hour: at(5, 1), Bot: 3}}))
			ranges := [][2]time.Time{
				{{}, {}},               // everything
				{at(0, 0), at(17, 0)},  // every day, whole weeks among them
				{at(1, 0), at(15, 0)},  // days around whole weeks, all closed
				{at(2, 5), at(16, 20)}, // ragged edges, closed and open days
				{at(3, 0), at(4, 0)},   // one closed day
				{at(15, 0), at(17, 0)}, // yesterday and today, open
			}
			for _, r := range ranges {
				for _, path := range paths {
					for _, pg := range pages {
						q := store.ViewsQuery{ProjectID: "p1", From: r[0], To: r[1], Offset: pg.offset, Limit: pg.limit, Path: path}
						wantVisitors(t, fmt.Sprintf("QueryVisitors %q [%v, %v) offset %d limit %d", path, r[0], r[1], pg.offset, pg.limit),
							visitorsOfPath(exact, q), mustQueryVisitors(t, s, q))
					}
				}
			}
			// Spelled out: /b has one visitor a day, day 3 is closed
			// and day 16 open.
			for _, d := range []int{3, 16} {
				q := store.ViewsQuery{ProjectID: "p1", From: at(d, 0), To: at(d+1, 0), Limit: 5, Path: "/b"}
				wantVisitors(t, fmt.Sprintf("/b on day %d", d), store.VisitorsResult{Totals: store.VisitorTotals{Human: 1, Total: 1},
					Rows: []store.PathVisitors{pv("/b", 1, 0, 1)}}, mustQueryVisitors(t, s, q))
			}
		}},
	})
}

// viewsOfPath is what QueryViews must answer for q, of one path, from
// counts: the path's own totals, and its row if it has human or AI views
// and q starts at the first row.
func viewsOfPath(counts []store.ViewCount, q store.ViewsQuery) store.ViewsResult {
	res := store.ViewsResult{Rows: []store.PathCounts{}}
	for _, c := range counts {
		if c.ProjectID == q.ProjectID && c.Path == q.Path && (q.From.IsZero() || !c.Hour.Before(q.From)) && (q.To.IsZero() || c.Hour.Before(q.To)) {
			res.Totals.Human += c.Human
			res.Totals.AI += c.AI
		}
	}
	if res.Totals.Human+res.Totals.AI > 0 && q.Offset == 0 {
		res.Rows = append(res.Rows, store.PathCounts{Path: q.Path, Counts: res.Totals})
	}
	return res
}

// visitorsOfPath is what QueryVisitors must answer for q, of one path:
// the path's row over every path, as its totals and, if q starts at the
// first row, its one row.
func visitorsOfPath(e exactVisitors, q store.ViewsQuery) store.VisitorsResult {
	every := e.result(store.ViewsQuery{ProjectID: q.ProjectID, From: q.From, To: q.To})
	res := store.VisitorsResult{Rows: []store.PathVisitors{}}
	for _, r := range every.Rows {
		if r.Path != q.Path {
			continue
		}
		res.Totals = store.VisitorTotals{Human: r.Human, AI: r.AI, Total: r.Total}
		if q.Offset == 0 {
			res.Rows = append(res.Rows, r)
		}
	}
	return res
}
