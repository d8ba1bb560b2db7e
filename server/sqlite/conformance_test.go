package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// TestConformance runs the suite every backend passes, each subtest on a
// fresh database file, empty but for the schema.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(t.Context(), migratedFile(t))
		return storetest.Opened(t, s, err)
	})
}

// TestConformanceDailyPathCap runs the suite's tests of the cap on paths
// per project and day, on stores opened with a small cap.
func TestConformanceDailyPathCap(t *testing.T) {
	storetest.RunDailyPathCap(t, func(t *testing.T, max int) store.Store {
		s, err := sqlite.Open(t.Context(), migratedFile(t), sqlite.WithDailyPathCap(max))
		return storetest.Opened(t, s, err)
	})
}

// TestVisitorAccuracy checks the visitors' estimates against exact counts.
func TestVisitorAccuracy(t *testing.T) {
	storetest.RunVisitorAccuracy(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(t.Context(), migratedFile(t))
		return storetest.Opened(t, s, err)
	})
}

// TestConformanceJobCounts runs the suite's tests of store.JobCounter.
func TestConformanceJobCounts(t *testing.T) {
	storetest.RunJobCounts(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(t.Context(), migratedFile(t))
		return storetest.Opened(t, s, err)
	})
}

// migratedFile returns the path of a new database file in the test's
// folder, a copy of one the migrations made once for all the suites' tests
// (a copy opens in half the time a new file takes to migrate). The
// migrations are still run on new files by the package's other tests.
func migratedFile(t *testing.T) string {
	t.Helper()
	b, err := migrated()
	if err != nil {
		t.Fatalf("making the migrated database: %v", err)
	}
	path := filepath.Join(t.TempDir(), "docsapi.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

var migrated = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "sqlite-test-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "docsapi.db")
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		return nil, err
	}
	if err := s.Close(); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
})
