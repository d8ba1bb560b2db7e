package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

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

// A database with views from before rolls existed gets its rolls from the
// rows when this program opens it, bots included, and the rows go; a
// 30-day export then reads that month's rolls through the tables' keys and
// answers what the rows added up to. The data is 90 days of 200 paths
// (432,000 rows) and another project's; the plan is logged (go test -v)
// and checked.
func TestUpgradeFillsRollsAndTheQueryReadsThem(t *testing.T) {
	db := newDatabase(t)
	ctx := t.Context()
	if err := postgres.MigrateTo(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, db)
	start := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	if _, err := conn.Exec(ctx, `INSERT INTO page_views (project_id, path, hour, human, ai, bot)
		SELECT 'p1', '/docs/page-' || lpad(p::text, 3, '0'), $1::timestamptz + h * interval '1 hour',
		       (p * 7 + h) % 50, (p + h) % 5, h % 3
		FROM generate_series(1, 200) p, generate_series(0, 90 * 24 - 1) h`, start); err != nil {
		t.Fatal(err)
	}
	// Another project, so the keys have to tell them apart.
	if _, err := conn.Exec(ctx, `INSERT INTO page_views (project_id, path, hour, human)
		SELECT 'p2', '/p2/' || p, $1::timestamptz + h * interval '1 hour', 1
		FROM generate_series(1, 50) p, generate_series(0, 90 * 24 - 1) h`, start); err != nil {
		t.Fatal(err)
	}
	// The rows as they were, to check the rolls against: the upgrade
	// drops page_views.
	if _, err := conn.Exec(ctx, `CREATE TABLE views_reference AS SELECT * FROM page_views`); err != nil {
		t.Fatal(err)
	}
	s := open(t, db) // migrates to the latest version, filling the rolls
	if _, err := conn.Exec(ctx, `VACUUM (ANALYZE) view_hour_rolls, view_day_rolls, view_days`); err != nil {
		t.Fatal(err)
	}
	var dropped bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('page_views') IS NULL`).Scan(&dropped); err != nil || !dropped {
		t.Errorf("page_views is still there (%v): the hour rolls are the record", err)
	}
	var wantBots int64
	if err := conn.QueryRow(ctx, `SELECT sum(bot)::bigint FROM views_reference`).Scan(&wantBots); err != nil {
		t.Fatal(err)
	}
	var bots int64
	for _, n := range storedBots(t, conn) {
		bots += n
	}
	if bots != wantBots {
		t.Errorf("the hour rolls hold %d bot views, the rows held %d", bots, wantBots)
	}

	// A ragged 30-day range: hour rolls at both edges, day rolls between.
	from, to := start.Add(45*24*time.Hour+5*time.Hour), start.Add(75*24*time.Hour+7*time.Hour)
	for _, q := range []store.ViewsQuery{
		{ProjectID: "p1", From: from, To: to, Limit: 100},
		{ProjectID: "p1", From: from, To: to, Limit: 50, Offset: 120},
		{ProjectID: "p1", Limit: 250},
		{ProjectID: "p2", From: from, Limit: 10, Offset: 5},
	} {
		got, err := s.QueryViews(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if want := sumRows(t, conn, q); !reflect.DeepEqual(got, want) {
			t.Errorf("QueryViews(%+v):\n got %+v\nwant %+v", q, got, want)
		}
	}

	// The store's connections prepare their statements, as PREPARE does
	// here, and PostgreSQL may switch a prepared statement to a generic
	// plan, blind to the parameters: both plans must find the hour rolls
	// by key. (The day rolls are 180 rows here, which PostgreSQL may read
	// whole; at scale the same key serves them.)
	if _, err := conn.Exec(ctx, "PREPARE rolls (text"+strings.Repeat(", bigint", 14)+") AS "+postgres.QueryRollsSQL); err != nil {
		t.Fatal(err)
	}
	// The range, split as rollup.SplitViews splits it.
	args := postgres.QueryRollsArgs("p1", rollup.SplitViews(from, to))
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

// A database at version 4 holds rolls without bot views (format 2), rows
// in page_views and the cap's bookkeeping. Opening it rebuilds the rolls
// from the rows, bots included, keeps what the cap recorded, and drops the
// rows.
func TestUpgradeFromVersion4CountsBotsAndKeepsDays(t *testing.T) {
	db := newDatabase(t)
	ctx := t.Context()
	if err := postgres.MigrateTo(ctx, db, 4); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, db)
	hour := time.Date(2026, 5, 1, 3, 0, 0, 0, time.UTC)
	day := hour.Truncate(24 * time.Hour).Unix()
	for _, q := range []struct {
		sql string
		arg any
	}{
		{`INSERT INTO page_views (project_id, path, hour, human, ai, bot) VALUES
			('p', '/a', $1, 2, 1, 0), ('p', '/crawled', $1, 0, 0, 5)`, hour},
		// What version 4 wrote: a segment of format 2, which this
		// program cannot read, and the cap's counts of the day.
		{`INSERT INTO view_hour_rolls (project_id, hour, seq, entries, counts) VALUES ('p', $1, 1, 1, '\x02010200022f610201')`, hour.Unix()},
		{`INSERT INTO view_days (project_id, day, paths, folded_counts, folded_views) VALUES ('p', $1, 2, 3, 9)`, day},
		{`INSERT INTO view_day_paths (project_id, day, path) VALUES ('p', $1, '/a'), ('p', $1, '/crawled')`, day},
	} {
		if _, err := conn.Exec(ctx, q.sql, q.arg); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	s := open(t, db)
	res, err := s.QueryViews(ctx, store.ViewsQuery{ProjectID: "p", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if want := (store.ViewsResult{Totals: store.Counts{Human: 2, AI: 1}, Rows: []store.PathCounts{{Path: "/a", Counts: store.Counts{Human: 2, AI: 1}}}}); !reflect.DeepEqual(res, want) {
		t.Errorf("after the upgrade: %+v, want %+v", res, want)
	}
	if bots := storedBots(t, conn); !reflect.DeepEqual(bots, map[[2]string]int64{{"p", "/crawled"}: 5}) {
		t.Errorf("the hour rolls hold bot views %v, want 5 of /crawled", bots)
	}
	var paths, foldedCounts, foldedViews int64
	if err := conn.QueryRow(ctx, `SELECT paths, folded_counts, folded_views FROM view_days`).Scan(&paths, &foldedCounts, &foldedViews); err != nil ||
		paths != 2 || foldedCounts != 3 || foldedViews != 9 {
		t.Errorf("view_days holds %d paths, %d counts and %d views folded (%v), want 2, 3 and 9 kept", paths, foldedCounts, foldedViews, err)
	}
}

// A database at version 10 holds hour, day and week rolls, some of several
// segments. Opening it builds the four-week rolls from the week rolls, so
// that ranges of months answer what the counts add up to, and flushes after
// the upgrade add to them.
func TestUpgradeBuildsFourWeekRollsFromWeekRolls(t *testing.T) {
	db := newDatabase(t)
	ctx := t.Context()
	if err := postgres.MigrateTo(ctx, db, 10); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, db)
	u := storetest.NewFourWeekUpgrade()
	var writes pgx.Batch
	if err := u.WriteAsVersion10(func(kind rollup.Kind, r rollup.Roll, seq int, seg []byte) error {
		writes.Queue(`INSERT INTO `+kind.Table()+` (project_id, `+kind.Column()+`, seq, entries, counts) VALUES ($1, $2, $3, $4, $5)`,
			r.ProjectID, r.At, seq, len(r.Counts), seg)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := conn.SendBatch(ctx, &writes).Close(); err != nil {
		t.Fatal(err)
	}
	// The counts, for sumRows to add up.
	if _, err := conn.Exec(ctx, `CREATE TABLE views_reference (project_id text, path text COLLATE "C", hour timestamptz, human bigint, ai bigint, bot bigint)`); err != nil {
		t.Fatal(err)
	}
	reference := func(counts []store.ViewCount) {
		t.Helper()
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{"views_reference"}, []string{"project_id", "path", "hour", "human", "ai", "bot"},
			pgx.CopyFromSlice(len(counts), func(i int) ([]any, error) {
				c := counts[i]
				return []any{c.ProjectID, c.Path, c.Hour, c.Human, c.AI, c.Bot}, nil
			})); err != nil {
			t.Fatal(err)
		}
	}
	reference(u.Counts())

	s := open(t, db)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM view_four_week_rolls WHERE seq = 1`).Scan(&n); err != nil || n != u.FourWeekRolls() {
		t.Errorf("%d four-week rolls (%v), want %d", n, err, u.FourWeekRolls())
	}
	check := func(what string) {
		t.Helper()
		for _, q := range u.Queries {
			got, err := s.QueryViews(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if want := sumRows(t, conn, q); !reflect.DeepEqual(got, want) {
				t.Errorf("QueryViews(%+v) %s:\n got %+v\nwant %+v", q, what, got, want)
			}
		}
	}
	check("after the upgrade")
	if err := s.AddViews(ctx, u.Late); err != nil {
		t.Fatal(err)
	}
	reference(u.Late)
	check("after a flush")
}

// sumRows answers q from views_reference, a copy of page_views made
// before the upgrade, with the plain SQL query the rolls replace: the
// reference they are checked against.
func sumRows(t *testing.T, conn *pgx.Conn, q store.ViewsQuery) store.ViewsResult {
	t.Helper()
	from := pgtype.Timestamptz{InfinityModifier: pgtype.NegativeInfinity, Valid: true}
	if !q.From.IsZero() {
		from = pgtype.Timestamptz{Time: q.From, Valid: true}
	}
	to := pgtype.Timestamptz{InfinityModifier: pgtype.Infinity, Valid: true}
	if !q.To.IsZero() {
		to = pgtype.Timestamptz{Time: q.To, Valid: true}
	}
	const filter = `project_id = $1 AND hour >= $2 AND hour < $3`
	res := store.ViewsResult{Rows: []store.PathCounts{}}
	if err := conn.QueryRow(t.Context(), `SELECT coalesce(sum(human), 0)::bigint, coalesce(sum(ai), 0)::bigint
		FROM views_reference WHERE `+filter, q.ProjectID, from, to).Scan(&res.Totals.Human, &res.Totals.AI); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(t.Context(), `SELECT path, sum(human)::bigint, sum(ai)::bigint
		FROM views_reference WHERE `+filter+` GROUP BY path HAVING sum(human) + sum(ai) > 0
		ORDER BY sum(human) + sum(ai) DESC, path LIMIT $4 OFFSET $5`, q.ProjectID, from, to, q.Limit+1, q.Offset)
	if err != nil {
		t.Fatal(err)
	}
	var r store.PathCounts
	if _, err := pgx.ForEachRow(rows, []any{&r.Path, &r.Human, &r.AI}, func() error {
		res.Rows = append(res.Rows, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) > q.Limit {
		res.Rows, res.HasMore = res.Rows[:q.Limit], true
	}
	return res
}

// A page costs work bounded by the page (see storetest.CheckPageWork).
func TestPageWorkIsBoundedByThePage(t *testing.T) {
	s := open(t, newDatabase(t))
	var stats []rollup.Stats
	postgres.SetQueryHook(s, func(st rollup.Stats) { stats = append(stats, st) })
	storetest.CheckPageWork(t, s, func() rollup.Stats { return stats[len(stats)-1] })
}
