package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi-go/server/pageviews"
	"github.com/docsapi/docsapi-go/server/postgres"
	"github.com/docsapi/docsapi-go/server/store"
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
	// Bot views are never exported; the table has them.
	conn := connect(t, db)
	rows, err := conn.Query(t.Context(), `SELECT project_id, path, sum(bot)::bigint FROM page_views GROUP BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	var k key
	var bot int64
	if _, err := pgx.ForEachRow(rows, []any{&k.project, &k.path, &bot}, func() error {
		c := got[k]
		c.bot = bot
		got[k] = c
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(key{}, classCounts{})); d != "" {
		t.Errorf("counts per path and class (-recorded +stored):\n%s", d)
	}
}

// The views query of a 30-day export reads only that month, from the
// covering index, without touching the table, on a table that holds 90 days
// of 200 paths (432,000 rows). The plan is logged (go test -v) and checked.
func TestViewsQueryPlan(t *testing.T) {
	db := newDatabase(t)
	s := open(t, db)
	conn := connect(t, db)
	ctx := t.Context()
	start := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	if _, err := conn.Exec(ctx, `INSERT INTO page_views (project_id, path, hour, human, ai, bot)
		SELECT 'p1', '/docs/page-' || lpad(p::text, 3, '0'), $1::timestamptz + h * interval '1 hour',
		       (p * 7 + h) % 50, (p + h) % 5, h % 3
		FROM generate_series(1, 200) p, generate_series(0, 90 * 24 - 1) h`, start); err != nil {
		t.Fatal(err)
	}
	// Another project, so the index has to tell them apart.
	if _, err := conn.Exec(ctx, `INSERT INTO page_views (project_id, path, hour, human)
		SELECT 'p2', '/p2/' || p, $1::timestamptz + h * interval '1 hour', 1
		FROM generate_series(1, 50) p, generate_series(0, 90 * 24 - 1) h`, start); err != nil {
		t.Fatal(err)
	}
	// What autovacuum does in production: statistics, and the visibility
	// map that lets an index-only scan skip the table.
	if _, err := conn.Exec(ctx, `VACUUM (ANALYZE) page_views`); err != nil {
		t.Fatal(err)
	}

	from, to := start.Add(45*24*time.Hour), start.Add(75*24*time.Hour)
	// The store's connections prepare their statements, as PREPARE does
	// here, and PostgreSQL may switch a prepared statement to a generic
	// plan, blind to the parameters: both the plan for these values and
	// the generic one must seek the range in the index.
	if _, err := conn.Exec(ctx, "PREPARE views (text, timestamptz, timestamptz, bigint, bigint) AS "+postgres.QueryViewsSQL); err != nil {
		t.Fatal(err)
	}
	execute := fmt.Sprintf("EXECUTE views ('p1', '%s', '%s', 101, 0)", from.Format(time.RFC3339), to.Format(time.RFC3339))
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
			t.Logf("EXPLAIN of a 30-day export (%s):\n%s", mode, plan)
			for _, want := range []string{"Index Only Scan using page_views_by_hour", "Heap Fetches: 0"} {
				if !strings.Contains(plan, want) {
					t.Errorf("the plan lacks %q", want)
				}
			}
			// The range bounds the index scan rather than filtering it.
			var cond string
			for _, l := range lines {
				if strings.Contains(l, "Index Cond:") {
					cond = l
				}
			}
			if !strings.Contains(cond, "project_id =") || !strings.Contains(cond, "hour >=") || !strings.Contains(cond, "hour <") {
				t.Errorf("index condition %q, want the project and both ends of the range", cond)
			}
			if strings.Contains(plan, "Seq Scan") {
				t.Error("the plan scans the table")
			}
		})
	}

	res, err := s.QueryViews(ctx, store.ViewsQuery{ProjectID: "p1", From: from, To: to, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var want store.Counts
	if err := conn.QueryRow(ctx, `SELECT sum(human)::bigint, sum(ai)::bigint FROM page_views
		WHERE project_id = 'p1' AND hour >= $1 AND hour < $2`, from, to).Scan(&want.Human, &want.AI); err != nil {
		t.Fatal(err)
	}
	if res.Totals != want || len(res.Rows) != 100 || !res.HasMore {
		t.Errorf("QueryViews: totals %+v, %d rows, hasMore %v; want %+v, 100, true", res.Totals, len(res.Rows), res.HasMore, want)
	}
}
