package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// agent builds an agent's count.
func agent(name string, class store.AgentClass, views int64) store.AgentCount {
	return store.AgentCount{Name: name, Class: class, Views: views}
}

// agentRow builds an agent's count of a path.
func agentRow(path, name string, class store.AgentClass, views int64) store.AgentPathCount {
	return store.AgentPathCount{Path: path, AgentCount: agent(name, class, views)}
}

// agentDay builds an agent's count of a day.
func agentDay(day time.Time, name string, class store.AgentClass, views int64) store.AgentDay {
	return store.AgentDay{Day: day, AgentCount: agent(name, class, views)}
}

// mustAgents runs QueryAgents, which must succeed.
func mustAgents(t *testing.T, s store.Store, q store.AgentsQuery) store.AgentsResult {
	t.Helper()
	res, err := s.QueryAgents(t.Context(), q)
	must(t, "QueryAgents", err)
	return res
}

// mustAgentSeries runs AgentSeries, which must succeed.
func mustAgentSeries(t *testing.T, s store.Store, q store.AgentsQuery) []store.AgentDay {
	t.Helper()
	days, err := s.AgentSeries(t.Context(), q)
	must(t, "AgentSeries", err)
	checkTimes(t, "AgentSeries", func() []time.Time {
		var ts []time.Time
		for _, d := range days {
			ts = append(ts, d.Day)
		}
		return ts
	}()...)
	return days
}

// allAgents is a query of every day of a project, on one large page.
func allAgents(project string) store.AgentsQuery {
	return store.AgentsQuery{ProjectID: project, Limit: 1000}
}

const (
	ai       = store.AgentAI
	searchC  = store.AgentSearchBot
	training = store.AgentTrainingBot
	otherBot = store.AgentOtherBot
)

func testAgents(t *testing.T, open opener) {
	withProjects := func(t *testing.T, s store.Store) {
		t.Helper()
		mustProject(t, s, "p1")
		mustProject(t, s, "p2")
	}
	add := func(t *testing.T, s store.Store, counts ...store.ViewCount) {
		t.Helper()
		must(t, "AddViews", s.AddViews(t.Context(), counts))
	}
	// at is hour h of day d.
	at := func(d, h int) time.Time { return Day(d).Add(time.Duration(h) * time.Hour) }
	count := func(project, path string, hour time.Time, aiViews, bot int64, agents ...store.AgentCount) store.ViewCount {
		return store.ViewCount{ProjectID: project, Path: path, Hour: hour, AI: aiViews, Bot: bot, Agents: agents}
	}
	runAll(t, open, []subtest{
		{"ViewsAddUpPerDayPathAndAgent", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			add(t, s, count("p1", "/a", at(0, 1), 5, 7,
				agent("ChatGPT-User", ai, 3), agent("GPTBot", training, 4), agent("Googlebot", searchC, 2)))
			// Another hour of the same day, and the same key twice in
			// one batch: added, never overwritten.
			add(t, s,
				count("p1", "/a", at(0, 20), 1, 0, agent("ChatGPT-User", ai, 1)),
				count("p1", "/a", at(0, 20), 1, 1, agent("ChatGPT-User", ai, 1), agent("GPTBot", training, 1)))
			add(t, s, count("p1", "/b", at(1, 3), 0, 1, agent("GPTBot", training, 1)))
			diff(t, "QueryAgents", store.AgentsResult{
				Totals: []store.AgentCount{agent("GPTBot", training, 6), agent("ChatGPT-User", ai, 5), agent("Googlebot", searchC, 2)},
				Rows: []store.AgentPathCount{
					agentRow("/a", "ChatGPT-User", ai, 5), agentRow("/a", "GPTBot", training, 5),
					agentRow("/a", "Googlebot", searchC, 2), agentRow("/b", "GPTBot", training, 1),
				},
			}, mustAgents(t, s, allAgents("p1")))
			diff(t, "AgentSeries", []store.AgentDay{
				agentDay(Day(0), "ChatGPT-User", ai, 5), agentDay(Day(0), "Googlebot", searchC, 2), agentDay(Day(0), "GPTBot", training, 5),
				agentDay(Day(1), "GPTBot", training, 1),
			}, mustAgentSeries(t, s, allAgents("p1")))
			// The views themselves are stored as ever.
			wantResult(t, "QueryViews", store.ViewsResult{
				Totals: store.Counts{AI: 7},
				Rows:   []store.PathCounts{row("/a", 0, 7)},
			}, mustQuery(t, s, all("p1")))
		}},
		{"RangeIsHalfOpenOnWholeDays", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			for d, n := range []int64{1, 10, 100} {
				add(t, s, count("p1", "/a", at(d, 23), n, 0, agent("Claude-User", ai, n)))
			}
			for _, tc := range []struct {
				name     string
				from, to time.Time
				want     int64
			}{
				{"[1,2)", Day(1), Day(2), 10},
				{"[0,2)", Day(0), Day(2), 11},
				{"[open,1)", time.Time{}, Day(1), 1},
				{"[1,open)", Day(1), time.Time{}, 110},
				{"[2,2)", Day(2), Day(2), 0},
			} {
				q := allAgents("p1")
				q.From, q.To = tc.from, tc.to
				want := store.AgentsResult{}
				if tc.want > 0 {
					want.Totals = []store.AgentCount{agent("Claude-User", ai, tc.want)}
					want.Rows = []store.AgentPathCount{agentRow("/a", "Claude-User", ai, tc.want)}
				}
				diff(t, "QueryAgents "+tc.name, want, mustAgents(t, s, q))
				var days int64
				for _, d := range mustAgentSeries(t, s, q) {
					days += d.Views
				}
				if days != tc.want {
					t.Errorf("AgentSeries %s: %d views, want %d", tc.name, days, tc.want)
				}
			}
		}},
		{"InvalidAgentsRefuseTheWholeBatch", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			good := count("p1", "/good", at(0, 0), 1, 1, agent("GPTBot", training, 1))
			for _, tc := range []struct {
				name string
				bad  store.ViewCount
			}{
				{"empty name", count("p1", "/a", at(0, 0), 1, 0, agent("", ai, 1))},
				{"long name", count("p1", "/a", at(0, 0), 1, 0, agent(strings.Repeat("x", store.MaxAgentNameBytes+1), ai, 1))},
				{"control byte", count("p1", "/a", at(0, 0), 1, 0, agent("Bad\nName", ai, 1))},
				{"non-ASCII", count("p1", "/a", at(0, 0), 1, 0, agent("Agént", ai, 1))},
				{"human class", count("p1", "/a", at(0, 0), 1, 0, agent("Chrome", "human", 1))},
				{"unknown class", count("p1", "/a", at(0, 0), 0, 1, agent("X", "bot", 1))},
				{"negative views", count("p1", "/a", at(0, 0), 1, 0, agent("X", ai, -1))},
				{"more AI than the count's", count("p1", "/a", at(0, 0), 2, 5, agent("X", ai, 2), agent("Y", ai, 1))},
				{"more bots than the count's", count("p1", "/a", at(0, 0), 5, 2, agent("X", searchC, 2), agent("Y", otherBot, 1))},
				{"more than int64", count("p1", "/a", at(0, 0), 1<<62, 0, agent("X", ai, 1<<62), agent("Y", ai, 1<<62), agent("Z", ai, 1<<62))},
			} {
				wantErr(t, tc.name, s.AddViews(t.Context(), []store.ViewCount{good, tc.bad}), store.ErrInvalid)
			}
			// Nothing of the batches was stored: neither the views nor the
			// agents of the good count.
			diff(t, "QueryAgents", store.AgentsResult{}, mustAgents(t, s, allAgents("p1")))
			wantResult(t, "QueryViews", store.ViewsResult{Rows: []store.PathCounts{}}, mustQuery(t, s, all("p1")))
		}},
		{"OtherProjectsNeverLeak", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			add(t, s,
				count("p1", "/a", at(0, 0), 1, 0, agent("Cursor", ai, 1)),
				count("p2", "/a", at(0, 0), 9, 0, agent("Cursor", ai, 9)))
			diff(t, "p1", store.AgentsResult{
				Totals: []store.AgentCount{agent("Cursor", ai, 1)},
				Rows:   []store.AgentPathCount{agentRow("/a", "Cursor", ai, 1)},
			}, mustAgents(t, s, allAgents("p1")))
			diff(t, "p1's series", []store.AgentDay{agentDay(Day(0), "Cursor", ai, 1)}, mustAgentSeries(t, s, allAgents("p1")))
		}},
		{"PathAndClassSelect", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			add(t, s,
				count("p1", "/a", at(0, 0), 3, 4, agent("Cursor", ai, 3), agent("GPTBot", training, 4)),
				count("p1", "/b", at(0, 0), 2, 1, agent("Cursor", ai, 2), agent("Googlebot", searchC, 1)))
			q := allAgents("p1")
			q.Path = "/b"
			diff(t, "path /b", store.AgentsResult{
				Totals: []store.AgentCount{agent("Cursor", ai, 2), agent("Googlebot", searchC, 1)},
				Rows:   []store.AgentPathCount{agentRow("/b", "Cursor", ai, 2), agentRow("/b", "Googlebot", searchC, 1)},
			}, mustAgents(t, s, q))
			q = allAgents("p1")
			q.Class = training
			diff(t, "class training-bot", store.AgentsResult{
				Totals: []store.AgentCount{agent("GPTBot", training, 4)},
				Rows:   []store.AgentPathCount{agentRow("/a", "GPTBot", training, 4)},
			}, mustAgents(t, s, q))
			diff(t, "series of class training-bot", []store.AgentDay{agentDay(Day(0), "GPTBot", training, 4)}, mustAgentSeries(t, s, q))
			q.Path = "/b"
			diff(t, "path /b and class training-bot", store.AgentsResult{}, mustAgents(t, s, q))
			q = allAgents("p1")
			q.Path = "/nowhere"
			diff(t, "path /nowhere", store.AgentsResult{}, mustAgents(t, s, q))
		}},
		{"OrdersAreByViewsThenNames", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			// Ties on views are broken by path, then class, then name, in
			// byte order ("Zed" before "alpha").
			add(t, s,
				count("p1", "/z", at(0, 0), 9, 0, agent("Cursor", ai, 9)),
				count("p1", "/a", at(0, 0), 2, 6, agent("alpha", ai, 2), agent("Zed", ai, 0), agent("Beta", otherBot, 2), agent("Alpha", searchC, 2), agent("Zed", searchC, 2)),
				count("p1", "/b", at(0, 0), 2, 0, agent("Zed", ai, 2)))
			diff(t, "QueryAgents", store.AgentsResult{
				Totals: []store.AgentCount{
					agent("Cursor", ai, 9), agent("Zed", ai, 2), agent("alpha", ai, 2),
					agent("Beta", otherBot, 2), agent("Alpha", searchC, 2), agent("Zed", searchC, 2),
				},
				Rows: []store.AgentPathCount{
					agentRow("/z", "Cursor", ai, 9), agentRow("/a", "alpha", ai, 2), agentRow("/a", "Beta", otherBot, 2),
					agentRow("/a", "Alpha", searchC, 2), agentRow("/a", "Zed", searchC, 2), agentRow("/b", "Zed", ai, 2),
				},
			}, mustAgents(t, s, allAgents("p1")))
		}},
		{"PagesReportHasMoreExactly", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			add(t, s, count("p1", "/a", at(0, 0), 6, 0, agent("A", ai, 3), agent("B", ai, 2), agent("C", ai, 1)))
			for _, tc := range []struct {
				limit, offset int
				want          []string
				more          bool
			}{
				{2, 0, []string{"A", "B"}, true},
				{3, 0, []string{"A", "B", "C"}, false},
				{2, 1, []string{"B", "C"}, false},
				{2, 3, nil, false},
			} {
				q := allAgents("p1")
				q.Limit, q.Offset = tc.limit, tc.offset
				res := mustAgents(t, s, q)
				var got []string
				for _, r := range res.Rows {
					got = append(got, r.Name)
				}
				diff(t, "page", tc.want, got)
				if res.HasMore != tc.more {
					t.Errorf("limit %d offset %d: HasMore %v, want %v", tc.limit, tc.offset, res.HasMore, tc.more)
				}
				if len(res.Totals) != 3 {
					t.Errorf("limit %d offset %d: %d totals, want all 3 whatever the page", tc.limit, tc.offset, len(res.Totals))
				}
			}
		}},
		{"UnknownProjectGivesEmptyLists", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			res := mustAgents(t, s, allAgents("nobody"))
			if res.Totals == nil || res.Rows == nil || len(res.Totals)+len(res.Rows) > 0 || res.HasMore {
				t.Errorf("QueryAgents of an unknown project = %#v, want empty, non-nil lists", res)
			}
			if days := mustAgentSeries(t, s, allAgents("nobody")); days == nil || len(days) > 0 {
				t.Errorf("AgentSeries of an unknown project = %#v, want an empty, non-nil list", days)
			}
		}},
		{"SeriesIsPerDayInOrder", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			add(t, s,
				count("p1", "/a", at(1, 2), 1, 1, agent("Perplexity-User", ai, 1), agent("ClaudeBot", training, 1)),
				count("p1", "/b", at(1, 22), 2, 0, agent("Perplexity-User", ai, 2)),
				count("p1", "/a", at(0, 5), 0, 3, agent("bingbot", searchC, 3)))
			diff(t, "AgentSeries", []store.AgentDay{
				agentDay(Day(0), "bingbot", searchC, 3),
				agentDay(Day(1), "Perplexity-User", ai, 3), agentDay(Day(1), "ClaudeBot", training, 1),
			}, mustAgentSeries(t, s, allAgents("p1")))
		}},
		{"InvalidQueryIsAnError", func(t *testing.T, s store.Store) {
			withProjects(t, s)
			for _, tc := range []struct {
				name string
				q    store.AgentsQuery
			}{
				{"no project", store.AgentsQuery{Limit: 1}},
				{"limit 0", store.AgentsQuery{ProjectID: "p1"}},
				{"negative offset", store.AgentsQuery{ProjectID: "p1", Limit: 1, Offset: -1}},
				{"from not a midnight", store.AgentsQuery{ProjectID: "p1", Limit: 1, From: at(0, 1)}},
				{"to not a midnight", store.AgentsQuery{ProjectID: "p1", Limit: 1, To: at(0, 1)}},
				{"unknown class", store.AgentsQuery{ProjectID: "p1", Limit: 1, Class: "human"}},
			} {
				_, err := s.QueryAgents(t.Context(), tc.q)
				wantErr(t, "QueryAgents "+tc.name, err, store.ErrInvalid)
				if tc.q.Limit > 0 && tc.q.Offset >= 0 {
					_, err = s.AgentSeries(t.Context(), tc.q)
					wantErr(t, "AgentSeries "+tc.name, err, store.ErrInvalid)
				}
			}
		}},
	})
}
