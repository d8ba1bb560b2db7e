package bench

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

// The views series (store.ViewSeries) over the views-query dataset
// (-viewspaths paths × 90 days of hourly counts, see viewsquery_test.go):
// 90 daily points of the whole project, the same of one path, and a week
// of hourly points. The target is 90 daily points of a 5,000-path project
// in 10 ms or less. Each case checks its answer against the generator's
// counts once, then reports the median query time as p50-ms, and the CPU
// time of a query (cpu-ms/op).

func BenchmarkViewsSeries(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a multi-million-count database; skipped with -short")
	}
	db, _ := viewsDB(b, *viewsPaths)
	s, err := sqlite.Open(context.Background(), db)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	benchViewsSeries(b, s, *viewsPaths)
}

// BenchmarkViewsSeriesPostgres is BenchmarkViewsSeries on the PostgreSQL
// backend, over the same dataset.
func BenchmarkViewsSeriesPostgres(b *testing.B) {
	benchViewsSeries(b, viewsPostgres(b), *viewsPaths)
}

func benchViewsSeries(b *testing.B, s store.Store, paths int) {
	ctx := context.Background()
	const day = 24 * time.Hour
	end := viewsStart.Add(viewsDays * day)
	for _, c := range []struct {
		name string
		q    store.SeriesQuery
		path int // the path's index in the dataset, or -1 for every path
	}{
		{"days=90", store.SeriesQuery{ProjectID: viewsProject, From: viewsStart, To: end, Interval: day}, -1},
		{"days=90,path=one", store.SeriesQuery{ProjectID: viewsProject, From: viewsStart, To: end, Interval: day, Path: viewsPath(7)}, 7},
		{"hours=168", store.SeriesQuery{ProjectID: viewsProject, From: end.Add(-7 * day), To: end, Interval: time.Hour}, -1},
	} {
		b.Run(c.name, func(b *testing.B) {
			got, err := s.ViewSeries(ctx, c.q)
			if err != nil {
				b.Fatal(err)
			}
			if want := seriesReference(paths, c.q, c.path); !slices.Equal(got, want) {
				b.Fatalf("the store answered\n%v\nthe counts add up to\n%v", got, want)
			}
			reportP50(b, func() error {
				_, err := s.ViewSeries(ctx, c.q)
				return err
			})
		})
	}
}

// seriesReference answers q from the dataset's generator, count by count,
// for path (its index) or every path (-1).
func seriesReference(paths int, q store.SeriesQuery, path int) []store.SeriesPoint {
	points := make([]store.SeriesPoint, q.Points())
	per := int(q.Interval / time.Hour)
	first := int(q.From.Sub(viewsStart) / time.Hour)
	for i := range points {
		points[i].At = q.From.Add(time.Duration(i) * q.Interval)
		for h := first + i*per; h < first+(i+1)*per; h++ {
			for p := range paths {
				if path >= 0 && p != path {
					continue
				}
				human, ai, bot := viewsCount(p, h, paths)
				points[i].Human += human
				points[i].AI += ai
				points[i].Bot += bot
			}
		}
	}
	return points
}
