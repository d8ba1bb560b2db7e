package bench

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"

	_ "modernc.org/sqlite" // the driver server/sqlite uses, for EXPLAIN QUERY PLAN
)

// The self-hosted server's views query (store.QueryViews) on the SQLite
// backend: one project of -viewspaths paths × 90 days of hourly counts (every
// hour of every path has a row), plus a little of another project; then a
// 30-day range, 50 rows per page, first page and a deep page.
//
// The database is built once per dataset size in a file under os.TempDir()
// (named after the size) and reused by later runs; a marker file written
// after the last batch says it is complete, so an interrupted build starts
// over. Delete the file to rebuild it.
var viewsPaths = flag.Int("viewspaths", 5000, "paths of the views-query benchmark's project (90 days of hourly rows each)")

const (
	viewsDays      = 90
	viewsBatch     = 20_000
	viewsProject   = "docs"
	viewsOther     = "other"
	viewsOtherPath = 200 // paths of the other project, 7 days each
	viewsLimit     = 50
	viewsDeep      = 4900 // or paths-100 for smaller datasets
)

// viewsStart is the first hour of the dataset.
var viewsStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// viewsCount gives skewed counts: path i gets a weight of about
// paths/(i+1) (Zipf-like), varied by hour of day, so totals differ and
// every count is positive (every row is stored).
func viewsCount(i, h int, paths int) (human, ai, bot int64) {
	w := int64(paths/(i+1)) + 1
	day := int64(h%24) + 1
	human = 1 + (w*day)/8
	ai = 1 + (w*int64((h*7+i)%13))/16
	bot = int64((i + h) % 3)
	return human, ai, bot
}

func viewsPath(i int) string {
	return fmt.Sprintf("/docs/section-%03d/page-%05d", i%97, i)
}

// viewsDB returns the path of a built database for paths, building it if
// needed, and the build time as recorded when it was built.
func viewsDB(b *testing.B, paths int) (string, time.Duration) {
	b.Helper()
	dir := filepath.Join(os.TempDir(), "docsapi-bench-views")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	db := filepath.Join(dir, fmt.Sprintf("views-%dpaths-%ddays.db", paths, viewsDays))
	marker := db + ".built"
	if m, err := os.ReadFile(marker); err == nil {
		d, err := time.ParseDuration(strings.TrimSpace(string(m)))
		if err == nil {
			return db, d
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		b.Fatal(err)
	}
	for _, p := range []string{db, db + "-wal", db + "-shm", marker} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			b.Fatal(err)
		}
	}

	ctx := context.Background()
	start := time.Now()
	s, err := sqlite.Open(ctx, db)
	if err != nil {
		b.Fatal(err)
	}
	batch := make([]store.ViewCount, 0, viewsBatch)
	flush := func() {
		if err := s.AddViews(ctx, batch); err != nil {
			b.Fatal(err)
		}
		batch = batch[:0]
	}
	add := func(c store.ViewCount) {
		batch = append(batch, c)
		if len(batch) == viewsBatch {
			flush()
		}
	}
	// Hour by hour, as the recorder flushes: each batch spans every path.
	for h := range viewsDays * 24 {
		hour := viewsStart.Add(time.Duration(h) * time.Hour)
		for i := range paths {
			human, ai, bot := viewsCount(i, h, paths)
			add(store.ViewCount{ProjectID: viewsProject, Path: viewsPath(i), Hour: hour, Human: human, AI: ai, Bot: bot})
		}
	}
	// A little of another project, inside the queried range.
	for h := (viewsDays - 7) * 24; h < viewsDays*24; h++ {
		hour := viewsStart.Add(time.Duration(h) * time.Hour)
		for i := range viewsOtherPath {
			add(store.ViewCount{ProjectID: viewsOther, Path: viewsPath(i), Hour: hour, Human: 3, AI: 1})
		}
	}
	flush()
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	d := time.Since(start)
	if err := os.WriteFile(marker, []byte(d.String()+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return db, d
}

// viewsRange is the queried range: the last 30 whole days of the dataset.
func viewsRange() (from, to time.Time) {
	to = viewsStart.Add(viewsDays * 24 * time.Hour)
	return to.Add(-30 * 24 * time.Hour), to
}

func BenchmarkViewsQuery(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a multi-million-row database; skipped with -short")
	}
	paths := *viewsPaths
	db, built := viewsDB(b, paths)
	size := fileSize(b, db) + fileSize(b, db+"-wal")
	b.Logf("dataset: %d paths × %d days = %d rows of %q, built in %v; database %.1f MiB",
		paths, viewsDays, paths*viewsDays*24, viewsProject, built.Round(time.Second), float64(size)/(1<<20))

	ctx := context.Background()
	s, err := sqlite.Open(ctx, db)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()

	from, to := viewsRange()
	for _, c := range []struct {
		name   string
		offset int
	}{{"first", 0}, {"deep", min(viewsDeep, paths-2*viewsLimit)}} {
		q := store.ViewsQuery{ProjectID: viewsProject, From: from, To: to, Limit: viewsLimit, Offset: c.offset}
		b.Run("page="+c.name, func(b *testing.B) {
			// One unmeasured query checks the answer and warms the cache.
			res, err := s.QueryViews(ctx, q)
			if err != nil {
				b.Fatal(err)
			}
			if len(res.Rows) != viewsLimit || res.Totals.Human == 0 || (c.offset+viewsLimit < paths) != res.HasMore {
				b.Fatalf("unexpected result: %d rows, totals %+v, more %v", len(res.Rows), res.Totals, res.HasMore)
			}
			times := make([]time.Duration, 0, 64)
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				if _, err := s.QueryViews(ctx, q); err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(t0))
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2])/1e6, "p50-ms")
		})
	}
}

// viewsTotalsSQLCopy and viewsPageSQLCopy are a COPY of viewsTotalsQuery and viewsPageQuery in
// server/sqlite/views.go with the filter QueryViews builds for a range with
// From and To; keep them in step with that file. They are only used here.
const (
	viewsFilterCopy    = `project_id = ? AND hour >= ? AND hour < ?`
	viewsTotalsSQLCopy = `SELECT coalesce(sum(human), 0), coalesce(sum(ai), 0) FROM page_views WHERE ` + viewsFilterCopy
	viewsPageSQLCopy   = `SELECT path, sum(human) AS h, sum(ai) AS a FROM page_views WHERE ` + viewsFilterCopy + `
		GROUP BY path HAVING h + a > 0
		ORDER BY h + a DESC, path ASC
		LIMIT ? OFFSET ?`
)

// TestViewsQueryPlan prints EXPLAIN QUERY PLAN of the views queries on the
// benchmark's database (built if needed) and the rows they read.
func TestViewsQueryPlan(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a multi-million-row database; skipped with -short")
	}
	paths := *viewsPaths
	db := filepath.Join(os.TempDir(), "docsapi-bench-views", fmt.Sprintf("views-%dpaths-%ddays.db", paths, viewsDays))
	if _, err := os.Stat(db + ".built"); err != nil {
		t.Skipf("no built database for %d paths: run BenchmarkViewsQuery first", paths)
	}
	conn, err := sql.Open("sqlite", "file:"+filepath.ToSlash(db)+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	from, to := viewsRange()
	args := []any{viewsProject, from.Unix(), to.Unix()}
	for _, q := range []struct {
		name string
		sql  string
		args []any
	}{
		{"totals", viewsTotalsSQLCopy, args},
		{"page", viewsPageSQLCopy, append(slices.Clone(args), viewsLimit+1, 0)},
	} {
		rows, err := conn.Query("EXPLAIN QUERY PLAN "+q.sql, q.args...)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, strconv.Itoa(id)+" "+strconv.Itoa(parent)+" "+detail)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		t.Logf("EXPLAIN QUERY PLAN (%s):\n%s", q.name, strings.Join(lines, "\n"))
	}
	// One timed run of each part, for where the time goes (not a benchmark).
	var n, h, a int64
	t0 := time.Now()
	if err := conn.QueryRow(`SELECT count(*) FROM page_views WHERE `+viewsFilterCopy, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	t.Logf("rows in the range: %d (count(*) in %v)", n, time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()
	if err := conn.QueryRow(viewsTotalsSQLCopy, args...).Scan(&h, &a); err != nil {
		t.Fatal(err)
	}
	t.Logf("totals query: %v", time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()
	rows, err := conn.Query(viewsPageSQLCopy, append(slices.Clone(args), viewsLimit+1, 0)...)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	t.Logf("page query (first page): %v", time.Since(t0).Round(time.Millisecond))
}

func fileSize(b *testing.B, path string) int64 {
	b.Helper()
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}
