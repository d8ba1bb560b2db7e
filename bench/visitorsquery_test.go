package bench

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi-go/server/postgres"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// The unique-visitors query (store.QueryVisitors) at the scale of a busy
// documentation site: one project of visitorsPaths paths, visitorsDays
// days of visitorsPerDay visitors a day (a fifth of them AI), each viewing
// one to a handful of pages (Zipf-popular) within one hour, recorded as a
// flush per hour would: the hour's views, then its visitors' sketches per
// path; each day's salt is asked for as it starts. Then the first page of the last 30 days, 50 rows. It reports the
// median query time (p50-ms) and the bytes of sketches stored per day
// (MiB/day), read from the database's roll tables.
const (
	visitorsPaths  = 5000
	visitorsDays   = 30
	visitorsPerDay = 100_000
	visitorsLimit  = 50
)

// visitorsStart is the dataset's first hour, a Monday.
var visitorsStart = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

// fillVisitors records the dataset into s, hour by hour.
func fillVisitors(b *testing.B, s store.Store) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rand.New(rand.NewPCG(3, 4)), 1.1, 1, visitorsPaths-1)
	type pair struct{ human, ai []uint64 }
	for d := range visitorsDays {
		// The day's salt, asked for as the day starts, as a running
		// server does: the days before yesterday close.
		if _, err := s.VisitorSalt(ctx, visitorsStart.Add(time.Duration(d)*24*time.Hour)); err != nil {
			b.Fatal(err)
		}
		// Each visitor's hour, class and pages, grouped by hour.
		perHour := make([]map[uint64]*pair, 24)
		for h := range perHour {
			perHour[h] = map[uint64]*pair{}
		}
		for v := range visitorsPerDay {
			id := uint64(d)<<32 | uint64(v) // a new salt each day: new visitors
			hour := rng.IntN(24)
			ai := rng.IntN(5) == 0
			pages := 1 + int(rng.ExpFloat64()*2)
			for range pages {
				p := zipf.Uint64()
				sk := perHour[hour][p]
				if sk == nil {
					sk = &pair{}
					perHour[hour][p] = sk
				}
				if ai {
					sk.ai = append(sk.ai, id)
				} else {
					sk.human = append(sk.human, id)
				}
			}
		}
		for h, paths := range perHour {
			hour := visitorsStart.Add(time.Duration(d*24+h) * time.Hour)
			views := make([]store.ViewCount, 0, len(paths))
			counts := make([]store.VisitorCount, 0, len(paths))
			for _, p := range slices.Sorted(mapsKeys(paths)) {
				sk := paths[p]
				path := viewsPath(int(p))
				views = append(views, store.ViewCount{ProjectID: viewsProject, Path: path, Hour: hour, Human: 1})
				counts = append(counts, store.VisitorCount{
					ProjectID: viewsProject, Path: path, Hour: hour,
					Human: storetest.VisitorSketch(sk.human...), AI: storetest.VisitorSketch(sk.ai...),
				})
			}
			if err := s.AddViews(ctx, views); err != nil {
				b.Fatal(err)
			}
			if err := s.AddVisitors(ctx, counts); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func mapsKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// benchVisitorsQuery measures the first page of the last 30 days.
func benchVisitorsQuery(b *testing.B, s store.Store, storedBytes int64) {
	ctx := context.Background()
	q := store.ViewsQuery{
		ProjectID: viewsProject,
		From:      visitorsStart,
		To:        visitorsStart.Add(visitorsDays * 24 * time.Hour),
		Limit:     visitorsLimit,
	}
	res, err := s.QueryVisitors(ctx, q)
	if err != nil {
		b.Fatal(err)
	}
	if len(res.Rows) != visitorsLimit || !res.HasMore || res.Totals.Total < visitorsDays*visitorsPerDay*97/100 {
		b.Fatalf("unexpected result: %d rows, hasMore %v, totals %+v", len(res.Rows), res.HasMore, res.Totals)
	}
	b.Logf("totals %+v; top row %+v", res.Totals, res.Rows[0])
	reportP50(b, func() error {
		_, err := s.QueryVisitors(ctx, q)
		return err
	})
	b.ReportMetric(float64(storedBytes)/visitorsDays/(1<<20), "MiB/day")
}

// visitorTables are the tables whose bytes are the storage measured: the
// open days' sketches, and the days' and weeks' numbers.
var visitorTables = []struct{ name, column string }{
	{"visitor_sketches", "human"},
	{"visitor_sketches", "ai"},
	{"visitor_days", "counts"},
	{"visitor_week_rolls", "counts"},
}

// BenchmarkVisitorsQuery runs on SQLite, and on PostgreSQL when
// DOCSAPI_BENCH_POSTGRES_URL is set; the dataset is recorded for each run
// (a minute or so) into a new database.
func BenchmarkVisitorsQuery(b *testing.B) {
	if testing.Short() {
		b.Skip("-short: the dataset takes a minute to record")
	}
	b.Run("backend=sqlite", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "visitors.db")
		s, err := sqlite.Open(context.Background(), path)
		if err != nil {
			b.Fatal(err)
		}
		closeAtEnd(b, s)
		start := time.Now()
		fillVisitors(b, s)
		b.Logf("recorded in %v", time.Since(start).Round(time.Millisecond))
		db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		var total int64
		for _, t := range visitorTables {
			var n sql.NullInt64
			var segs int
			if err := db.QueryRow(`SELECT sum(length(`+t.column+`)), count(*) FROM `+t.name).Scan(&n, &segs); err != nil {
				b.Fatal(err)
			}
			b.Logf("%s: %.1f MiB in %d rows", t.name, float64(n.Int64)/(1<<20), segs)
			total += n.Int64
		}
		benchVisitorsQuery(b, s, total)
	})
	b.Run("backend=postgres", func(b *testing.B) {
		admin := os.Getenv(benchPostgresURL)
		if admin == "" {
			b.Skip(benchPostgresURL + " is not set")
		}
		url := postgresDatabase(b, admin)
		s, err := postgres.Open(context.Background(), url)
		if err != nil {
			b.Fatal(err)
		}
		closeAtEnd(b, s)
		start := time.Now()
		fillVisitors(b, s)
		b.Logf("recorded in %v", time.Since(start).Round(time.Millisecond))
		total := postgresVisitorBytes(b, url)
		benchVisitorsQuery(b, s, total)
	})
}

// postgresVisitorBytes sums the sketches' bytes of the database at url.
func postgresVisitorBytes(b *testing.B, url string) int64 {
	b.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	var total int64
	for _, t := range visitorTables {
		var n *int64
		if err := conn.QueryRow(context.Background(), `SELECT sum(octet_length(`+t.column+`))::bigint FROM `+t.name).Scan(&n); err != nil {
			b.Fatal(err)
		}
		if n != nil {
			b.Logf("%s: %.1f MiB", t.name, float64(*n)/(1<<20))
			total += *n
		}
	}
	return total
}
