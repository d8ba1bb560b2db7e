package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// RunDailyPathCap runs the tests of the cap on distinct paths per project
// and UTC day (see store.Store's AddViews) against a backend whose open
// returns a new, empty store capped at max paths a day. A backend with a
// cap calls it next to Run:
//
//	func TestConformanceDailyPathCap(t *testing.T) {
//		storetest.RunDailyPathCap(t, func(t *testing.T, max int) store.Store {
//			s, err := mybackend.Open(t.Context(), path, mybackend.WithDailyPathCap(max))
//			...
//		})
//	}
func RunDailyPathCap(t *testing.T, open func(t *testing.T, max int) store.Store) {
	t.Helper()
	// Hours of one UTC day, and of the next: the suite's base time is
	// at 05:06, so Hour(0) is 05:00 and the day ends at Hour(19).
	day := func(h int) time.Time { return Hour(h - 5) } // day(0) is the day's midnight
	next := func(h int) time.Time { return day(24 + h) }
	view := func(project, path string, hour time.Time, human, ai, bot int64) store.ViewCount {
		return store.ViewCount{ProjectID: project, Path: path, Hour: hour, Human: human, AI: ai, Bot: bot}
	}
	add := func(t *testing.T, s store.Store, counts ...store.ViewCount) {
		t.Helper()
		must(t, "AddViews", s.AddViews(t.Context(), counts))
	}
	oneDay := func(project string, from time.Time) store.ViewsQuery {
		return store.ViewsQuery{ProjectID: project, From: from, To: from.Add(24 * time.Hour), Limit: 100}
	}
	other := store.OtherPagesPath
	tests := []struct {
		name string
		run  func(t *testing.T, open func(t *testing.T, max int) store.Store)
	}{
		{"NewPathsPastTheCapFoldIntoOtherPages", func(t *testing.T, open func(t *testing.T, max int) store.Store) {
			s := open(t, 3)
			mustProject(t, s, "p1")
			add(t, s,
				view("p1", "/a", day(1), 1, 0, 0),
				view("p1", "/b", day(2), 0, 1, 0),
				view("p1", "/c", day(3), 1, 1, 0))
			// The fourth new path of the day is folded, with its bot
			// views; paths the day holds keep counting, in any hour.
			add(t, s,
				view("p1", "/d", day(4), 2, 1, 5),
				view("p1", "/a", day(23), 10, 0, 0),
				view("p1", "/b", day(4), 0, 2, 1))
			// And in a later batch, as many as come.
			add(t, s,
				view("p1", "/e", day(4), 0, 4, 0),
				view("p1", "/f", day(6), 1, 0, 0),
				view("p1", "/c", day(6), 1, 0, 0))
			wantResult(t, "the day", store.ViewsResult{
				Totals: store.Counts{Human: 16, AI: 9},
				Rows: []store.PathCounts{
					row("/a", 11, 0), row(other, 3, 5), row("/b", 0, 3), row("/c", 2, 1),
				},
			}, mustQuery(t, s, oneDay("p1", day(0))))
			// Folded counts keep their hour.
			q := store.ViewsQuery{ProjectID: "p1", From: day(6), To: day(7), Limit: 10}
			wantResult(t, "hour 6", store.ViewsResult{
				Totals: store.Counts{Human: 2},
				Rows:   []store.PathCounts{row(other, 1, 0), row("/c", 1, 0)},
			}, mustQuery(t, s, q))
			if f, ok := s.(store.ViewFolder); ok {
				if got, want := f.ViewFolds(), (store.ViewFolds{Counts: 3, Views: 13}); got != want {
					t.Errorf("ViewFolds = %+v, want %+v", got, want)
				}
			}
		}},
		{"AgentViewsFoldWithTheirPath", func(t *testing.T, open func(t *testing.T, max int) store.Store) {
			s := open(t, 2)
			mustProject(t, s, "p1")
			withAgents := func(c store.ViewCount, agents ...store.AgentCount) store.ViewCount {
				c.Agents = agents
				return c
			}
			add(t, s,
				withAgents(view("p1", "/a", day(1), 0, 1, 0), agent("Cursor", ai, 1)),
				withAgents(view("p1", "/b", day(2), 0, 0, 2), agent("GPTBot", training, 2)))
			// The day is full: the agents of new paths are counted under
			// OtherPagesPath with their views, those of /a under /a; the
			// next day starts fresh.
			add(t, s,
				withAgents(view("p1", "/c", day(3), 0, 0, 4), agent("GPTBot", training, 3), agent("curl", otherBot, 1)),
				withAgents(view("p1", "/d", day(3), 0, 2, 0), agent("Cursor", ai, 2)),
				withAgents(view("p1", "/a", day(4), 0, 0, 1), agent("GPTBot", training, 1)),
				withAgents(view("p1", "/c", next(1), 0, 0, 1), agent("GPTBot", training, 1)))
			q := store.AgentsQuery{ProjectID: "p1", Limit: 100}
			diff(t, "QueryAgents", []store.AgentPathCount{
				agentRow(other, "GPTBot", training, 3), agentRow(other, "Cursor", ai, 2), agentRow("/b", "GPTBot", training, 2),
				agentRow(other, "curl", otherBot, 1), agentRow("/a", "Cursor", ai, 1), agentRow("/a", "GPTBot", training, 1),
				agentRow("/c", "GPTBot", training, 1),
			}, mustAgents(t, s, q).Rows)
		}},
		{"NewPathsOfOneBatchAreAdmittedInByteOrder", func(t *testing.T, open func(t *testing.T, max int) store.Store) {
			s := open(t, 2)
			mustProject(t, s, "p1")
			add(t, s,
				view("p1", "/z", day(1), 1, 0, 0),
				view("p1", "/B", day(1), 1, 0, 0),
				view("p1", "/a", day(2), 1, 0, 0),
				view("p1", "/a", day(1), 1, 0, 0))
			wantResult(t, "the day", store.ViewsResult{
				Totals: store.Counts{Human: 4},
				Rows:   []store.PathCounts{row("/a", 2, 0), row(other, 1, 0), row("/B", 1, 0)},
			}, mustQuery(t, s, oneDay("p1", day(0))))
		}},
		{"BotViewsMakeAPathOfTheDay", func(t *testing.T, open func(t *testing.T, max int) store.Store) {
			s := open(t, 1)
			mustProject(t, s, "p1")
			add(t, s, view("p1", "/bots-only", day(1), 0, 0, 3))
			add(t, s, view("p1", "/a", day(2), 1, 0, 0), view("p1", "/bots-only", day(2), 2, 0, 0))
			wantResult(t, "the day", store.ViewsResult{
				Totals: store.Counts{Human: 3},
				Rows:   []store.PathCounts{row("/bots-only", 2, 0), row(other, 1, 0)},
			}, mustQuery(t, s, oneDay("p1", day(0))))
		}},
		{"OtherPagesIsNeverFoldedNorCounted", func(t *testing.T, open func(t *testing.T, max int) store.Store) {
			s := open(t, 1)
			mustProject(t, s, "p1")
			add(t, s, view("p1", other, day(1), 5, 0, 0), view("p1", "/a", day(1), 1, 0, 0))
			add(t, s, view("p1", other, day(2), 1, 0, 0))
			wantResult(t, "the day", store.ViewsResult{
				Totals: store.Counts{Human: 7},
				Rows:   []store.PathCounts{row(other, 6, 0), row("/a", 1, 0)},
			}, mustQuery(t, s, oneDay("p1", day(0))))
		}},
		{"EachDayAndProjectStartsFresh", func(t *testing.T, open func(t *testing.T, max int) store.Store) {
			s := open(t, 2)
			mustProject(t, s, "p1")
			mustProject(t, s, "p2")
			add(t, s,
				view("p1", "/a", day(1), 1, 0, 0),
				view("p1", "/b", day(1), 1, 0, 0),
				view("p1", "/c", day(23), 1, 0, 0), // the third path of the day
				view("p1", "/c", next(0), 1, 0, 0), // the first of the next
				view("p2", "/c", day(1), 1, 0, 0))  // another project's first
			add(t, s, view("p1", "/d", next(1), 1, 0, 0), view("p1", "/e", next(2), 1, 0, 0))
			wantResult(t, "day 1", store.ViewsResult{
				Totals: store.Counts{Human: 3},
				Rows:   []store.PathCounts{row(other, 1, 0), row("/a", 1, 0), row("/b", 1, 0)},
			}, mustQuery(t, s, oneDay("p1", day(0))))
			wantResult(t, "day 2", store.ViewsResult{
				Totals: store.Counts{Human: 3},
				Rows:   []store.PathCounts{row(other, 1, 0), row("/c", 1, 0), row("/d", 1, 0)},
			}, mustQuery(t, s, oneDay("p1", next(0))))
			wantResult(t, "p2", store.ViewsResult{
				Totals: store.Counts{Human: 1},
				Rows:   []store.PathCounts{row("/c", 1, 0)},
			}, mustQuery(t, s, oneDay("p2", day(0))))
		}},
		{"TotalsEqualTheViewsSent", func(t *testing.T, open func(t *testing.T, max int) store.Store) {
			// Many batches of many paths over two days: whatever is
			// folded, the totals are what was sent, the rows add up to
			// them, and no day has more than max paths besides
			// OtherPagesPath.
			const max = 7
			s := open(t, max)
			mustProject(t, s, "p1")
			var sent store.Counts
			for b := range 6 {
				var batch []store.ViewCount
				for i := range 9 {
					c := view("p1", fmt.Sprintf("/p%d", (b*5+i*3)%20), day((b*7+i*5)%48), int64(i%3), int64(b%2), 1)
					batch = append(batch, c)
					sent.Human += c.Human
					sent.AI += c.AI
				}
				add(t, s, batch...)
			}
			res := mustQuery(t, s, store.ViewsQuery{ProjectID: "p1", Limit: 100})
			if res.Totals != sent {
				t.Errorf("totals %+v, want the %+v sent", res.Totals, sent)
			}
			var sum store.Counts
			for _, r := range res.Rows {
				sum.Human += r.Human
				sum.AI += r.AI
			}
			if sum != sent {
				t.Errorf("rows add up to %+v, want the %+v sent", sum, sent)
			}
			for _, from := range []time.Time{day(0), next(0)} {
				res := mustQuery(t, s, oneDay("p1", from))
				paths := 0
				for _, r := range res.Rows {
					if r.Path != other {
						paths++
					}
				}
				if paths > max {
					t.Errorf("the day from %v has %d paths, more than the cap of %d", from, paths, max)
				}
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, open) })
	}
}
