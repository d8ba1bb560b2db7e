package bench

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
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
var viewsPaths = flag.Int("viewspaths", 5000, "paths of the views-query benchmark's project (90 days of hourly counts each)")

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
	fillViews(b, s, paths)
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	d := time.Since(start)
	if err := os.WriteFile(marker, []byte(d.String()+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return db, d
}

// fillViews adds the dataset of paths to s: one project of paths × 90 days
// of hourly counts, plus a week of another project's.
func fillViews(b *testing.B, s store.Store, paths int) {
	ctx := context.Background()
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
	b.Logf("dataset: %d paths × %d days = %d counts of %q, built in %v; database %.1f MiB",
		paths, viewsDays, paths*viewsDays*24, viewsProject, built.Round(time.Second), float64(size)/(1<<20))

	ctx := context.Background()
	s, err := sqlite.Open(ctx, db)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()

	benchViewsQuery(b, s, paths)
}

// benchViewsQuery runs the first and a deep page of the 30-day range, and
// the first page of all 90 days, against s, reporting the median time of a
// query as p50-ms.
func benchViewsQuery(b *testing.B, s store.Store, paths int) {
	ctx := context.Background()
	from, to := viewsRange()
	for _, c := range []struct {
		name   string
		from   time.Time
		offset int
	}{
		{"page=first", from, 0},
		{"page=deep", from, min(viewsDeep, paths-2*viewsLimit)},
		// The whole dataset: three times the days, for how cost grows
		// with the range.
		{"page=first,days=90", viewsStart, 0},
	} {
		q := store.ViewsQuery{ProjectID: viewsProject, From: c.from, To: to, Limit: viewsLimit, Offset: c.offset}
		b.Run(c.name, func(b *testing.B) {
			// One unmeasured query checks the answer and warms the cache.
			res, err := s.QueryViews(ctx, q)
			if err != nil {
				b.Fatal(err)
			}
			if len(res.Rows) != viewsLimit || res.Totals.Human == 0 || (c.offset+viewsLimit < paths) != res.HasMore {
				b.Fatalf("unexpected result: %d rows, totals %+v, more %v", len(res.Rows), res.Totals, res.HasMore)
			}
			reportP50(b, func() error {
				_, err := s.QueryViews(ctx, q)
				return err
			})
		})
	}
}

// viewsReference answers the benchmark's query from the dataset's
// generator, count by count: the reference the store's answer is checked
// against.
func viewsReference(paths int, from, to time.Time, offset int) store.ViewsResult {
	res := store.ViewsResult{Rows: []store.PathCounts{}}
	first, end := int(from.Sub(viewsStart)/time.Hour), int(to.Sub(viewsStart)/time.Hour)
	all := make([]store.PathCounts, paths)
	for i := range paths {
		all[i].Path = viewsPath(i)
		for h := first; h < end; h++ {
			human, ai, _ := viewsCount(i, h, paths)
			all[i].Human += human
			all[i].AI += ai
		}
		res.Totals.Human += all[i].Human
		res.Totals.AI += all[i].AI
	}
	slices.SortFunc(all, func(a, b store.PathCounts) int {
		return cmp.Or(cmp.Compare(b.Human+b.AI, a.Human+a.AI), strings.Compare(a.Path, b.Path))
	})
	res.Rows = append(res.Rows, all[offset:min(paths, offset+viewsLimit)]...)
	res.HasMore = offset+viewsLimit < paths
	return res
}

// TestViewsQueryAgreesWithTheCounts checks, on the benchmark's database
// (when built), that the store's answers for the benchmarked pages are what
// adding up the generated counts gives.
func TestViewsQueryAgreesWithTheCounts(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a multi-million-count database; skipped with -short")
	}
	paths := *viewsPaths
	db := filepath.Join(os.TempDir(), "docsapi-bench-views", fmt.Sprintf("views-%dpaths-%ddays.db", paths, viewsDays))
	if _, err := os.Stat(db + ".built"); err != nil {
		t.Skipf("no built database for %d paths: run BenchmarkViewsQuery first", paths)
	}
	ctx := context.Background()
	s, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	from, to := viewsRange()
	for _, offset := range []int{0, min(viewsDeep, paths-2*viewsLimit)} {
		got, err := s.QueryViews(ctx, store.ViewsQuery{ProjectID: viewsProject, From: from, To: to, Limit: viewsLimit, Offset: offset})
		if err != nil {
			t.Fatal(err)
		}
		if want := viewsReference(paths, from, to, offset); !reflect.DeepEqual(got, want) {
			t.Fatalf("offset %d: the store answered\n%+v\nthe counts add up to\n%+v", offset, got, want)
		}
	}
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
