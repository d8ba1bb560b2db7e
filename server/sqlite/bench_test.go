package sqlite

import (
	"fmt"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// BenchmarkAddViews measures one flush as the recorder sends it: one count
// per path of a project for the current hour, on paths already stored (the
// steady state), at several project sizes.
func BenchmarkAddViews(b *testing.B) {
	for _, paths := range []int{100, 1000, 5000} {
		b.Run(fmt.Sprintf("paths=%d", paths), func(b *testing.B) {
			s, err := Open(b.Context(), b.TempDir()+"/views.db")
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			hour := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
			batch := make([]store.ViewCount, paths)
			for i := range batch {
				batch[i] = store.ViewCount{ProjectID: "docs", Path: fmt.Sprintf("/docs/section-%03d/page-%05d", i%97, i),
					Hour: hour, Human: int64(1 + i%7), AI: int64(i % 3), Bot: int64(i % 2)}
			}
			if err := s.AddViews(b.Context(), batch); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if err := s.AddViews(b.Context(), batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*paths), "ns/count")
		})
	}
}

// BenchmarkDocs measures the documentation index's first index and search
// on 5,000 pages (storetest.BenchmarkDocs).
func BenchmarkDocs(b *testing.B) {
	storetest.BenchmarkDocs(b, func(b *testing.B) store.Store {
		s, err := Open(b.Context(), b.TempDir()+"/docs.db")
		return storetest.Opened(b, s, err)
	})
}
