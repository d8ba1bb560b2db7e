package postgres_test

import (
	cmpstd "cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/pageviews"
	"github.com/docsapi/docsapi-go/server/postgres"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
	"github.com/docsapi/docsapi-go/server/traffic"
)

// classCounts is what the test expects per path: human, AI and bot views.
type classCounts struct{ human, ai, bot int64 }

// Three replicas record views of the same paths and hours from many
// goroutines, each flushing into its own store while the others flush too,
// in small batches that overlap in different orders. Every view must be
// counted exactly once: the totals per path and per class are the sums
// recorded, and no flush fails (a deadlock would fail one).
func TestConcurrentFlushesAddUpExactly(t *testing.T) {
	const (
		replicas  = 3
		recorders = 4   // goroutines recording per replica
		views     = 600 // per goroutine
		rounds    = 20
		hours     = 4
	)
	db := newDatabase(t)
	projects := []string{"p1", "p2"}
	paths := make([]string, 12)
	for i := range paths {
		paths[i] = fmt.Sprintf("/docs/page-%02d", i)
	}
	base := time.Date(2026, 8, 14, 9, 0, 0, 0, time.UTC)
	classes := []traffic.Class{traffic.Human, traffic.AI, traffic.SearchBot, traffic.TrainingBot, traffic.OtherBot}

	stores := make([]*postgres.Store, replicas)
	recs := make([]*pageviews.Recorder, replicas)
	for i := range replicas {
		stores[i] = open(t, db)
		r, err := pageviews.New(pageviews.Config{Sink: stores[i], BatchSize: 7})
		if err != nil {
			t.Fatal(err)
		}
		recs[i] = r
	}

	// The test runs in rounds. In each, every replica's goroutines record
	// a share of the views while all three replicas flush at once, so the
	// flushes overlap each other and the recording. Each goroutine keeps
	// its own expectations, summed at the end, so counting needs no lock.
	type key struct{ project, path string }
	wants := make([]map[key]classCounts, replicas*recorders)
	rngs := make([]*rand.Rand, replicas*recorders)
	for i := range wants {
		wants[i] = map[key]classCounts{}
		rngs[i] = rand.New(rand.NewPCG(uint64(i), 42))
	}
	flushErrs := make([][]error, replicas)
	for range rounds {
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, r := range recs {
			for g := range recorders {
				want, rng := wants[i*recorders+g], rngs[i*recorders+g]
				wg.Go(func() {
					<-start
					for range views / rounds {
						k := key{projects[rng.IntN(len(projects))], paths[rng.IntN(len(paths))]}
						class := classes[rng.IntN(len(classes))]
						n := int64(1 + rng.IntN(3))
						at := base.Add(time.Duration(rng.IntN(hours*60)) * time.Minute)
						r.Record(k.project, k.path, class, at, n)
						c := want[k]
						switch class {
						case traffic.Human:
							c.human += n
						case traffic.AI:
							c.ai += n
						default:
							c.bot += n
						}
						want[k] = c
					}
				})
			}
			wg.Go(func() {
				<-start
				if err := r.Flush(t.Context()); err != nil {
					flushErrs[i] = append(flushErrs[i], err)
				}
			})
		}
		close(start)
		wg.Wait()
	}
	for i, r := range recs {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		if err := r.Close(ctx); err != nil {
			t.Errorf("replica %d: final flush: %v", i, err)
		}
		cancel()
		for _, err := range flushErrs[i] {
			t.Errorf("replica %d: Flush: %v", i, err)
		}
		if st := r.Stats(); st.Pending != 0 || st.FlushErrors != 0 || st.Recorded != st.Flushed {
			t.Errorf("replica %d: stats %+v, want every view flushed without error", i, st)
		}
	}

	want := map[key]classCounts{}
	for _, w := range wants {
		for k, c := range w {
			s := want[k]
			s.human, s.ai, s.bot = s.human+c.human, s.ai+c.ai, s.bot+c.bot
			want[k] = s
		}
	}
	got := map[key]classCounts{}
	for _, p := range projects {
		res, err := stores[0].QueryViews(t.Context(), store.ViewsQuery{ProjectID: p, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		var totals store.Counts
		for _, row := range res.Rows {
			got[key{p, row.Path}] = classCounts{human: row.Human, ai: row.AI}
			totals.Human += row.Human
			totals.AI += row.AI
		}
		if res.Totals != totals || res.HasMore {
			t.Errorf("%s: totals %+v (hasMore %v), but the rows add up to %+v", p, res.Totals, res.HasMore, totals)
		}
	}
	// Bot views are never exported; the hour rolls have them.
	for pp, bot := range storedBots(t, connect(t, db)) {
		k := key{pp[0], pp[1]}
		c := got[k]
		c.bot = bot
		got[k] = c
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(key{}, classCounts{})); d != "" {
		t.Errorf("counts per path and class (-recorded +stored):\n%s", d)
	}
}

// storedBots returns the bot views the hour rolls hold, per project and
// path.
func storedBots(t *testing.T, conn *pgx.Conn) map[[2]string]int64 {
	t.Helper()
	rows, err := conn.Query(t.Context(), `SELECT project_id, counts FROM view_hour_rolls`)
	if err != nil {
		t.Fatal(err)
	}
	bots := map[[2]string]int64{}
	var project string
	var seg []byte
	if _, err := pgx.ForEachRow(rows, []any{&project, &seg}, func() error {
		counts, err := rollup.Decode(seg)
		for _, c := range counts {
			if c.Bot > 0 {
				bots[[2]string{project, c.Path}] += c.Bot
			}
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return bots
}

// A 30-day export reads that month's rolls through the tables' keys and
// answers what the counts add up to. The data is 50 days of 200 paths and
// another project's; the plan is logged (go test -v) and checked.
func TestRollsQueryReadsRollsByKey(t *testing.T) {
	db := newDatabase(t)
	ctx := t.Context()
	s := open(t, db)
	conn := connect(t, db)
	start := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	var counts []store.ViewCount
	for h := range 50 * 24 {
		hour := start.Add(time.Duration(h) * time.Hour)
		for p := 1; p <= 200; p++ {
			counts = append(counts, store.ViewCount{ProjectID: "p1", Path: fmt.Sprintf("/docs/page-%03d", p), Hour: hour,
				Human: int64((p*7 + h) % 50), AI: int64((p + h) % 5), Bot: int64(h % 3)})
		}
		// Another project, so the keys have to tell them apart.
		for p := 1; p <= 50; p += 7 {
			counts = append(counts, store.ViewCount{ProjectID: "p2", Path: fmt.Sprintf("/p2/%d", p), Hour: hour, Human: 1})
		}
	}
	for i := 0; i < len(counts); i += 20_000 {
		if err := s.AddViews(ctx, counts[i:min(i+20_000, len(counts))]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, `VACUUM (ANALYZE) view_hour_rolls, view_day_rolls, view_week_rolls, view_days`); err != nil {
		t.Fatal(err)
	}

	// A ragged 30-day range: hour rolls at both edges, day and week
	// rolls between.
	from, to := start.Add(15*24*time.Hour+5*time.Hour), start.Add(45*24*time.Hour+7*time.Hour)
	for _, q := range []store.ViewsQuery{
		{ProjectID: "p1", From: from, To: to, Limit: 100},
		{ProjectID: "p1", From: from, To: to, Limit: 50, Offset: 120},
		{ProjectID: "p1", Limit: 250},
		{ProjectID: "p2", From: from, Limit: 3, Offset: 2},
	} {
		got, err := s.QueryViews(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if want := sumCounts(counts, q); !reflect.DeepEqual(got, want) {
			t.Errorf("QueryViews(%+v):\n got %+v\nwant %+v", q, got, want)
		}
	}

	// The store's connections prepare their statements, as PREPARE does
	// here, and PostgreSQL may switch a prepared statement to a generic
	// plan, blind to the parameters: both plans must find the hour rolls
	// by key. (The day rolls are few rows here, which PostgreSQL may read
	// whole; at scale the same key serves them.)
	if _, err := conn.Exec(ctx, "PREPARE rolls (text"+strings.Repeat(", bigint", 10)+") AS "+postgres.QueryRollsSQL); err != nil {
		t.Fatal(err)
	}
	// The range, split as rollup.Split splits it.
	args := postgres.QueryRollsArgs("p1", rollup.Split(from, to))
	execute := fmt.Sprintf("EXECUTE rolls ('%s'"+strings.Repeat(", %d", len(args)-1)+")", args...)
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		t.Run(mode, func(t *testing.T) {
			if _, err := conn.Exec(ctx, "SET plan_cache_mode = "+mode); err != nil {
				t.Fatal(err)
			}
			rows, err := conn.Query(ctx, "EXPLAIN (ANALYZE, COSTS OFF, BUFFERS) "+execute)
			if err != nil {
				t.Fatal(err)
			}
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			plan := strings.Join(lines, "\n")
			t.Logf("EXPLAIN of a ragged 30-day range (%s):\n%s", mode, plan)
			if strings.Contains(plan, "Seq Scan on view_hour_rolls") || !strings.Contains(plan, "view_hour_rolls_pkey") {
				t.Error("the plan does not find the hour rolls by key")
			}
		})
	}
}

// sumCounts answers q from counts, hour by hour: the reference the rolls
// are checked against.
func sumCounts(counts []store.ViewCount, q store.ViewsQuery) store.ViewsResult {
	sums := map[string]store.Counts{}
	res := store.ViewsResult{Rows: []store.PathCounts{}}
	for _, c := range counts {
		if c.ProjectID != q.ProjectID || !q.From.IsZero() && c.Hour.Before(q.From) || !q.To.IsZero() && !c.Hour.Before(q.To) {
			continue
		}
		s := sums[c.Path]
		s.Human, s.AI = s.Human+c.Human, s.AI+c.AI
		sums[c.Path] = s
		res.Totals.Human, res.Totals.AI = res.Totals.Human+c.Human, res.Totals.AI+c.AI
	}
	var rows []store.PathCounts
	for p, c := range sums {
		if c.Human+c.AI > 0 {
			rows = append(rows, store.PathCounts{Path: p, Counts: c})
		}
	}
	slices.SortFunc(rows, func(a, b store.PathCounts) int {
		return cmpstd.Or(cmpstd.Compare(b.Human+b.AI, a.Human+a.AI), strings.Compare(a.Path, b.Path))
	})
	rows = rows[min(q.Offset, len(rows)):]
	if len(rows) > q.Limit {
		rows, res.HasMore = rows[:q.Limit], true
	}
	res.Rows = append(res.Rows, rows...)
	return res
}

// A page costs work bounded by the page (see storetest.CheckPageWork).
func TestPageWorkIsBoundedByThePage(t *testing.T) {
	s := open(t, newDatabase(t))
	var stats []rollup.Stats
	postgres.SetQueryHook(s, func(st rollup.Stats) { stats = append(stats, st) })
	storetest.CheckPageWork(t, s, func() rollup.Stats { return stats[len(stats)-1] })
}
