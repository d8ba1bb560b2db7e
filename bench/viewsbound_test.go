package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi-go/server/postgres"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

// The views query and the flush at the sizes an attacker reaches: anyone
// can make a docs site count made-up paths, and a read key can ask for any
// page. Three datasets, each one project over the same 30 whole days:
//
//   - varied: 5,000 paths viewed every day, totals skewed (Zipf-like) and
//     varied by day, so that few totals tie;
//   - tied: 200,000 paths of one view each, spread over the 30 days, so that
//     every path ties with every other;
//   - day1m: 1,000,000 paths of one view each, all in one day (the 16th).
//
// The query is the 30 days, 50 rows a page: the first page and one deep in
// the ranking (the middle of the tied datasets, offset 4,900 of varied).
// Paths are named so that the order they were added in is not their order
// by name. Each dataset is built once, through AddViews in batches of
// 20,000, and reused: on SQLite a file under os.TempDir() (delete it to
// rebuild); on PostgreSQL a database of its own on the server that
// DOCSAPI_BENCH_POSTGRES_URL names (its role must be allowed to create
// databases), named after the dataset and boundLayout.
//
// BenchmarkViewsFlush adds a batch of 5,000 paths to the current hour of
// the day of day1m (a copy of it: a file copy on SQLite, CREATE DATABASE
// ... TEMPLATE on PostgreSQL): paths the day holds already, and new ones.

const (
	boundProject = "docs"
	boundDays    = 30
	boundBatch   = 20_000
	boundLimit   = 50
	boundFlush   = 5_000
)

// boundStart is the first hour of every dataset: the 30 days queried are
// [boundStart, boundStart+30 days).
var boundStart = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// boundDataset is one of the datasets: its views, as added, and the pages
// benchmarked.
type boundDataset struct {
	name  string
	paths int
	deep  int // offset of the deep page
	// views calls add with every count of the dataset, in the order added.
	views func(add func(store.ViewCount))
}

// madeUpPath names path i so that name order differs from i's: a
// multiplication by an odd constant permutes 32-bit numbers.
func madeUpPath(i int) string {
	return fmt.Sprintf("/made-up/%08x", uint32(i)*2654435761)
}

var boundDatasets = []boundDataset{
	{name: "varied", paths: 5000, deep: 4900, views: func(add func(store.ViewCount)) {
		for d := range boundDays {
			for i := range 5000 {
				human, ai, _ := viewsCount(i, d*24+(i*7+d)%24, 5000)
				hour := boundStart.Add(time.Duration(d*24+(i+d)%24) * time.Hour)
				add(store.ViewCount{ProjectID: boundProject, Path: viewsPath(i), Hour: hour, Human: human * 24, AI: ai * 24, Bot: 1})
			}
		}
	}},
	{name: "tied", paths: 200_000, deep: 100_000, views: func(add func(store.ViewCount)) {
		for i := range 200_000 {
			d, h := i%boundDays, (i/boundDays)%24
			add(store.ViewCount{ProjectID: boundProject, Path: madeUpPath(i), Hour: boundStart.Add(time.Duration(d*24+h) * time.Hour), Human: 1})
		}
	}},
	{name: "day1m", paths: 1_000_000, deep: 500_000, views: func(add func(store.ViewCount)) {
		for i := range 1_000_000 {
			hour := boundStart.Add(time.Duration(15*24+i%24) * time.Hour)
			add(store.ViewCount{ProjectID: boundProject, Path: madeUpPath(i), Hour: hour, Human: 1})
		}
	}},
}

// fill adds the dataset to s in batches of boundBatch.
func (ds boundDataset) fill(tb testing.TB, s store.Store) {
	tb.Helper()
	batch := make([]store.ViewCount, 0, boundBatch)
	flush := func() {
		if err := s.AddViews(context.Background(), batch); err != nil {
			tb.Fatal(err)
		}
		batch = batch[:0]
	}
	ds.views(func(c store.ViewCount) {
		batch = append(batch, c)
		if len(batch) == boundBatch {
			flush()
		}
	})
	if len(batch) > 0 {
		flush()
	}
}

// ranking returns the rows of the dataset over the 30 days in the views
// query's order: what the pages must hold.
func (ds boundDataset) ranking() []store.PathCounts {
	sums := make(map[string]store.Counts, ds.paths)
	ds.views(func(c store.ViewCount) {
		s := sums[c.Path]
		s.Human += c.Human
		s.AI += c.AI
		sums[c.Path] = s
	})
	rows := make([]store.PathCounts, 0, len(sums))
	for p, c := range sums {
		rows = append(rows, store.PathCounts{Path: p, Counts: c})
	}
	slices.SortFunc(rows, func(a, b store.PathCounts) int {
		return cmp.Or(cmp.Compare(b.Human+b.AI, a.Human+a.AI), strings.Compare(a.Path, b.Path))
	})
	return rows
}

// boundSQLite returns the path of the dataset's SQLite file, building it if
// needed.
func boundSQLite(b *testing.B, ds boundDataset) string {
	b.Helper()
	dir := filepath.Join(os.TempDir(), "docsapi-bench-views")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	db := filepath.Join(dir, fmt.Sprintf("bound-%s-%s.db", ds.name, boundLayout))
	marker := db + ".built"
	if m, err := os.ReadFile(marker); err == nil {
		b.Logf("dataset %s: %s, built in %s", ds.name, db, strings.TrimSpace(string(m)))
		return db
	} else if !errors.Is(err, os.ErrNotExist) {
		b.Fatal(err)
	}
	for _, p := range []string{db, db + "-wal", db + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			b.Fatal(err)
		}
	}
	start := time.Now()
	s, err := sqlite.Open(context.Background(), db, boundSQLiteOptions()...)
	if err != nil {
		b.Fatal(err)
	}
	ds.fill(b, s)
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	d := time.Since(start).Round(time.Second)
	if err := os.WriteFile(marker, []byte(d.String()+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("dataset %s: built %s in %v", ds.name, db, d)
	return db
}

// boundPostgres returns the connection string of the dataset's database on
// the server of admin, building it if needed. The database is complete when
// it holds the project named boundMarker.
func boundPostgres(b *testing.B, admin string, ds boundDataset) string {
	b.Helper()
	ctx := context.Background()
	name := fmt.Sprintf("docsapi_bench_bound_%s_%s", ds.name, boundLayout)
	url := withDatabase(b, admin, name)
	if s, err := postgres.Open(ctx, url, boundPostgresOptions()...); err == nil {
		p, err := s.Project(ctx, boundMarker)
		s.Close()
		if err == nil {
			b.Logf("dataset %s: database %s, %s", ds.name, name, p.Name)
			return url
		}
	}
	adminExec(b, admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	adminExec(b, admin, "CREATE DATABASE "+name)
	start := time.Now()
	s, err := postgres.Open(ctx, url, boundPostgresOptions()...)
	if err != nil {
		b.Fatal(err)
	}
	ds.fill(b, s)
	d := time.Since(start).Round(time.Second)
	if err := s.CreateProject(ctx, store.Project{ID: boundMarker, Name: "built in " + d.String(), CreatedAt: time.Now()}); err != nil {
		b.Fatal(err)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	adminExec(b, url, "VACUUM ANALYZE")
	b.Logf("dataset %s: built database %s in %v", ds.name, name, d)
	return url
}

// boundMarker is the project that marks a PostgreSQL dataset complete.
const boundMarker = "bench-dataset-complete"

// adminExec runs one statement on a connection of its own.
func adminExec(b *testing.B, url, sql string) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		b.Fatalf("%s: %v", sql, err)
	}
}

// boundBackends opens the dataset on each backend: SQLite always,
// PostgreSQL when DOCSAPI_BENCH_POSTGRES_URL is set.
func boundBackends(b *testing.B, ds boundDataset) []struct {
	name string
	open func(b *testing.B) store.Store
} {
	type be = struct {
		name string
		open func(b *testing.B) store.Store
	}
	bs := []be{{"sqlite", func(b *testing.B) store.Store {
		s, err := sqlite.Open(context.Background(), boundSQLite(b, ds), boundSQLiteOptions()...)
		if err != nil {
			b.Fatal(err)
		}
		closeAtEnd(b, s)
		return s
	}}}
	if admin := os.Getenv(benchPostgresURL); admin != "" {
		bs = append(bs, be{"postgres", func(b *testing.B) store.Store {
			s, err := postgres.Open(context.Background(), boundPostgres(b, admin, ds), boundPostgresOptions()...)
			if err != nil {
				b.Fatal(err)
			}
			closeAtEnd(b, s)
			return s
		}})
	}
	return bs
}

// BenchmarkViewsBound runs the first and a deep page of the 30 days of each
// dataset, on each backend, reporting the median time of a query as p50-ms.
func BenchmarkViewsBound(b *testing.B) {
	if testing.Short() {
		b.Skip("builds datasets of up to a million paths; skipped with -short")
	}
	from, to := boundStart, boundStart.Add(boundDays*24*time.Hour)
	for _, ds := range boundDatasets {
		// The two pages, kept apart from the whole ranking, which would
		// leave the garbage collector a million strings to scan while
		// the queries run.
		pages := map[int][]store.PathCounts{}
		all := ds.ranking()
		for _, offset := range []int{0, ds.deep} {
			pages[offset] = slices.Clone(all[offset : offset+boundLimit])
		}
		all = nil
		runtime.GC()
		for _, be := range boundBackends(b, ds) {
			for _, page := range []struct {
				name   string
				offset int
			}{{"first", 0}, {"deep", ds.deep}} {
				b.Run(fmt.Sprintf("data=%s/backend=%s/page=%s", ds.name, be.name, page.name), func(b *testing.B) {
					s := be.open(b)
					q := store.ViewsQuery{ProjectID: boundProject, From: from, To: to, Limit: boundLimit, Offset: page.offset}
					// One unmeasured query checks the answer and warms
					// the caches.
					res, err := s.QueryViews(context.Background(), q)
					if err != nil {
						b.Fatal(err)
					}
					wantRows := pages[page.offset]
					if !slices.Equal(res.Rows, wantRows) || !res.HasMore {
						b.Fatalf("page at %d: got %v (more %v), want %v", page.offset, res.Rows[:min(3, len(res.Rows))], res.HasMore, wantRows[:3])
					}
					reportP50(b, func() error {
						_, err := s.QueryViews(context.Background(), q)
						return err
					})
				})
			}
		}
	}
}

// BenchmarkViewsFlush adds batches of 5,000 counts to the 16th hour of the
// day of day1m, which holds 1,000,000 paths: batches of paths the day holds
// already (paths=known), and of paths new to it (paths=new; every batch new
// ones, so the day grows). For comparison, day=empty adds the known batch
// to a store that holds nothing else. It reports the median and the
// slowest batch.
func BenchmarkViewsFlush(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a dataset of a million paths; skipped with -short")
	}
	ds := boundDatasets[2]
	hour := boundStart.Add((15*24 + 15) * time.Hour)
	type opener = func(b *testing.B) store.Store
	backends := []struct {
		name         string
		empty, day1m opener
	}{{"sqlite",
		func(b *testing.B) store.Store {
			s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "empty.db"), boundSQLiteOptions()...)
			if err != nil {
				b.Fatal(err)
			}
			closeAtEnd(b, s)
			return s
		},
		func(b *testing.B) store.Store {
			dst := filepath.Join(b.TempDir(), "day1m.db")
			copyFile(b, boundSQLite(b, ds), dst)
			s, err := sqlite.Open(context.Background(), dst, boundSQLiteOptions()...)
			if err != nil {
				b.Fatal(err)
			}
			closeAtEnd(b, s)
			return s
		},
	}}
	if admin := os.Getenv(benchPostgresURL); admin != "" {
		openCopy := func(b *testing.B, template string) store.Store {
			name := fmt.Sprintf("docsapi_bench_bound_flush_%s", boundLayout)
			adminExec(b, admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			create := "CREATE DATABASE " + name
			if template != "" {
				create += " TEMPLATE " + template
			}
			adminExec(b, admin, create)
			b.Cleanup(func() { adminExec(b, admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
			s, err := postgres.Open(context.Background(), withDatabase(b, admin, name), boundPostgresOptions()...)
			if err != nil {
				b.Fatal(err)
			}
			closeAtEnd(b, s)
			return s
		}
		backends = append(backends, struct {
			name         string
			empty, day1m opener
		}{"postgres",
			func(b *testing.B) store.Store { return openCopy(b, "") },
			func(b *testing.B) store.Store {
				boundPostgres(b, admin, ds)
				return openCopy(b, fmt.Sprintf("docsapi_bench_bound_%s_%s", ds.name, boundLayout))
			},
		})
	}
	for _, be := range backends {
		for _, c := range []struct {
			day, paths string
			open       opener
		}{{"empty", "known", be.empty}, {"1m", "known", be.day1m}, {"1m", "new", be.day1m}} {
			b.Run(fmt.Sprintf("backend=%s/day=%s/paths=%s", be.name, c.day, c.paths), func(b *testing.B) {
				s := c.open(b)
				batch := make([]store.ViewCount, boundFlush)
				round := 0
				fillBatch := func() {
					for i := range batch {
						p := madeUpPath(i * (ds.paths / boundFlush))
						if c.paths == "new" {
							p = fmt.Sprintf("/new/%d/%d", round, i)
						}
						batch[i] = store.ViewCount{ProjectID: boundProject, Path: p, Hour: hour, Human: 1, AI: int64(i % 2), Bot: int64(i % 3)}
					}
					round++
				}
				// One unmeasured batch: the store learns the paths, as
				// after the first flush of a running server.
				fillBatch()
				if err := s.AddViews(context.Background(), batch); err != nil {
					b.Fatal(err)
				}
				times := make([]time.Duration, 0, 256)
				b.ResetTimer()
				for b.Loop() {
					b.StopTimer()
					fillBatch()
					b.StartTimer()
					t0 := time.Now()
					if err := s.AddViews(context.Background(), batch); err != nil {
						b.Fatal(err)
					}
					times = append(times, time.Since(t0))
				}
				slices.Sort(times)
				b.ReportMetric(float64(times[len(times)/2])/1e6, "p50-ms")
				b.ReportMetric(float64(times[len(times)-1])/1e6, "max-ms")
			})
		}
	}
}

// copyFile copies the SQLite database file src to dst.
func copyFile(b *testing.B, src, dst string) {
	b.Helper()
	in, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
}
