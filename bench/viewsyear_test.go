package bench

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// The views query over a long range: one project of 5,000 paths, each
// viewed once a day (at an hour that varies by path and day) for 400 days,
// totals skewed (Zipf-like) and varied by day; plus a little of another
// project. The query is the 365 days that end at 13:00 on a Saturday near
// the end (the 398th day), 50 rows a page, first page and a deep one: both
// edges ragged, so that it reads hour rolls at both ends, day rolls (7 of
// them, as six weekdays in seven give a year's range), and 51 weeks
// between. The target is 10 ms or less at the median on each backend.
//
// The dataset is a boundDataset (viewsbound_test.go): built once through
// AddViews in batches of 20,000, a SQLite file under os.TempDir() or a
// PostgreSQL database of its own on the server DOCSAPI_BENCH_POSTGRES_URL
// names, and reused. Each case checks its page against the sums of the
// generated counts in the range, then reports the median query time
// (p50-ms) and this process's CPU time per query (cpu-ms/op; PostgreSQL's
// own is not in it).

const (
	yearPaths = 5000
	yearDays  = 400
	yearDeep  = 4900
)

// yearStart is the dataset's first hour, a Monday; yearRange is the range
// queried.
var yearStart = time.Date(2025, 2, 3, 0, 0, 0, 0, time.UTC)

func yearRange() (from, to time.Time) {
	to = yearStart.Add((yearDays-3)*24*time.Hour + 13*time.Hour)
	return to.AddDate(0, 0, -365), to
}

var yearDataset = boundDataset{name: "year", paths: yearPaths, deep: yearDeep, views: func(add func(store.ViewCount)) {
	// Day by day, every path each day, as flushes arrive.
	for d := range yearDays {
		for i := range yearPaths {
			w := int64(yearPaths/(i+1)) + 1
			hour := yearStart.Add(time.Duration(d*24+(i*7+d)%24) * time.Hour)
			add(store.ViewCount{
				ProjectID: boundProject, Path: viewsPath(i), Hour: hour,
				Human: 1 + w*int64(1+(i+d)%5)/3, AI: w * int64((i*3+d)%7) / 8, Bot: int64((i + d) % 2),
			})
		}
		// Another project, whose views must never be counted.
		if d%10 == 0 {
			for i := range 50 {
				add(store.ViewCount{ProjectID: "other", Path: viewsPath(i), Hour: yearStart.Add(time.Duration(d*24+5) * time.Hour), Human: 1000})
			}
		}
	}
}}

// yearReference answers q from the generated counts: the sums of those in
// q's range, ranked as the contract says.
func yearReference(q store.ViewsQuery) store.ViewsResult {
	sums := make(map[string]store.Counts, yearPaths)
	var res store.ViewsResult
	yearDataset.views(func(c store.ViewCount) {
		if c.ProjectID != q.ProjectID || c.Hour.Before(q.From) || !c.Hour.Before(q.To) {
			return
		}
		s := sums[c.Path]
		s.Human += c.Human
		s.AI += c.AI
		sums[c.Path] = s
		res.Totals.Human += c.Human
		res.Totals.AI += c.AI
	})
	rows := make([]store.PathCounts, 0, len(sums))
	for p, c := range sums {
		if c.Human+c.AI > 0 {
			rows = append(rows, store.PathCounts{Path: p, Counts: c})
		}
	}
	slices.SortFunc(rows, func(a, b store.PathCounts) int {
		return cmp.Or(cmp.Compare(b.Human+b.AI, a.Human+a.AI), strings.Compare(a.Path, b.Path))
	})
	res.Rows = slices.Clone(rows[min(q.Offset, len(rows)):min(q.Offset+q.Limit, len(rows))])
	res.HasMore = q.Offset+q.Limit < len(rows)
	return res
}

// BenchmarkViewsYear runs the first and a deep page of the 365 days on
// each backend (PostgreSQL when DOCSAPI_BENCH_POSTGRES_URL is set).
func BenchmarkViewsYear(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a dataset of two million counts; skipped with -short")
	}
	from, to := yearRange()
	for _, be := range boundBackends(b, yearDataset) {
		for _, page := range []struct {
			name   string
			offset int
		}{{"first", 0}, {"deep", yearDeep}} {
			b.Run(fmt.Sprintf("backend=%s/page=%s", be.name, page.name), func(b *testing.B) {
				s := be.open(b)
				ctx := context.Background()
				q := store.ViewsQuery{ProjectID: boundProject, From: from, To: to, Limit: boundLimit, Offset: page.offset}
				// One unmeasured query checks the answer and warms the
				// caches.
				got, err := s.QueryViews(ctx, q)
				if err != nil {
					b.Fatal(err)
				}
				if want := yearReference(q); !slices.Equal(got.Rows, want.Rows) || got.Totals != want.Totals || got.HasMore != want.HasMore {
					b.Fatalf("page at %d: the store answered totals %+v, more %v, rows %v...; the counts add up to totals %+v, more %v, rows %v...",
						q.Offset, got.Totals, got.HasMore, got.Rows[:min(3, len(got.Rows))], want.Totals, want.HasMore, want.Rows[:min(3, len(want.Rows))])
				}
				reportP50(b, func() error {
					_, err := s.QueryViews(ctx, q)
					return err
				})
			})
		}
	}
}
