package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/postgres"
	"github.com/docsapi/docsapi-go/server/store"
)

// benchPostgresURL names the variable that points the PostgreSQL benchmarks
// at a server. BenchmarkViewsQueryPostgres uses the database it names as
// its own: it fills it with the dataset once (several minutes) and reuses it
// on later runs, a project named after the dataset marking it complete. The
// job and recording benchmarks leave that database alone: they create a
// database of their own on the same server for every run and drop it after
// (see openPostgres), so the role must be allowed to create databases.
// Without the variable all of them skip PostgreSQL.
const benchPostgresURL = "DOCSAPI_BENCH_POSTGRES_URL"

// BenchmarkViewsQueryPostgres is BenchmarkViewsQuery on the PostgreSQL
// backend, over the same dataset.
func BenchmarkViewsQueryPostgres(b *testing.B) {
	s := viewsPostgres(b)
	benchViewsQuery(b, s, *viewsPaths)
}

// viewsPostgres opens the database benchPostgresURL names, filled with the
// views dataset (filling it the first time), or skips the benchmark without
// the variable. The store is closed when the benchmark ends.
func viewsPostgres(b *testing.B) store.Store {
	b.Helper()
	url := os.Getenv(benchPostgresURL)
	if url == "" || testing.Short() {
		b.Skip(benchPostgresURL + " is not set (or -short): no PostgreSQL database to fill")
	}
	paths := *viewsPaths
	ctx := context.Background()
	s, err := postgres.Open(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })

	marker := fmt.Sprintf("bench-views-%dpaths-%ddays", paths, viewsDays)
	built, err := s.Project(ctx, marker)
	switch {
	case errors.Is(err, store.ErrNotFound):
		// A database with part of a dataset from an interrupted build
		// would count twice: refuse it rather than measure it.
		if res, err := s.QueryViews(ctx, store.ViewsQuery{ProjectID: viewsProject, Limit: 1}); err != nil || res.Totals.Human > 0 {
			b.Fatalf("%s holds views but no %q marker (an interrupted build?): give the benchmark an empty database", benchPostgresURL, marker)
		}
		start := time.Now()
		fillViews(b, s, paths)
		d := time.Since(start).Round(time.Second)
		if err := s.CreateProject(ctx, store.Project{ID: marker, Name: "built in " + d.String(), CreatedAt: time.Now()}); err != nil {
			b.Fatal(err)
		}
		b.Logf("dataset built in %v", d)
	case err != nil:
		b.Fatal(err)
	default:
		b.Logf("dataset %s, %s", marker, built.Name)
	}
	return s
}
