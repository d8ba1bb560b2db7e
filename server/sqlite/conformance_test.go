package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/docsapi/docsapi-go/server/internal/sqlitetest"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// TestConformance runs the suite every backend passes, each subtest on a
// fresh database file.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(t.Context(), sqlitetest.FreshFile(t))
		return storetest.Opened(t, s, err)
	})
}

// TestConformanceDailyPathCap runs the suite's tests of the cap on paths
// per project and day, on stores opened with a small cap.
func TestConformanceDailyPathCap(t *testing.T) {
	storetest.RunDailyPathCap(t, func(t *testing.T, max int) store.Store {
		s, err := sqlite.Open(t.Context(), sqlitetest.FreshFile(t), sqlite.WithDailyPathCap(max))
		return storetest.Opened(t, s, err)
	})
}

// TestVisitorAccuracy checks the visitors' estimates against exact counts.
func TestVisitorAccuracy(t *testing.T) {
	storetest.RunVisitorAccuracy(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docsapi.db"))
		return storetest.Opened(t, s, err)
	})
}

// TestConformanceJobCounts runs the suite's tests of store.JobCounter.
func TestConformanceJobCounts(t *testing.T) {
	storetest.RunJobCounts(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(t.Context(), sqlitetest.FreshFile(t))
		return storetest.Opened(t, s, err)
	})
}
