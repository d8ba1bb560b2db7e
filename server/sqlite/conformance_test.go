package sqlite_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// schemaFile is a database file Open made and closed, holding the schema
// and nothing else: its bytes, and those of its write-ahead log if one
// was left.
var schemaFile struct {
	once    sync.Once
	db, wal []byte
	hasWAL  bool
	openErr error
}

// freshFile returns the path of a new database file that holds the schema
// and nothing else: a copy of schemaFile, since migrating a new file takes
// most of a conformance subtest's time. Open then finds the file up to
// date.
func freshFile(t *testing.T) string {
	t.Helper()
	schemaFile.once.Do(func() {
		dir, err := os.MkdirTemp("", "docsapi-sqlite-schema")
		if err != nil {
			schemaFile.openErr = err
			return
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "docsapi.db")
		s, err := sqlite.Open(context.Background(), path)
		if err == nil {
			err = s.Close()
		}
		if err == nil {
			schemaFile.db, err = os.ReadFile(path)
		}
		if err == nil {
			schemaFile.wal, err = os.ReadFile(path + "-wal")
			schemaFile.hasWAL = err == nil
			if errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
		}
		schemaFile.openErr = err
	})
	if schemaFile.openErr != nil {
		t.Fatalf("making the schema's file: %v", schemaFile.openErr)
	}
	path := filepath.Join(t.TempDir(), "docsapi.db")
	if err := os.WriteFile(path, schemaFile.db, 0o600); err != nil {
		t.Fatal(err)
	}
	if schemaFile.hasWAL {
		if err := os.WriteFile(path+"-wal", schemaFile.wal, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestConformance runs the suite every backend passes, each subtest on a
// fresh database file.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(t.Context(), freshFile(t))
		return storetest.Opened(t, s, err)
	})
}

// TestConformanceDailyPathCap runs the suite's tests of the cap on paths
// per project and day, on stores opened with a small cap.
func TestConformanceDailyPathCap(t *testing.T) {
	storetest.RunDailyPathCap(t, func(t *testing.T, max int) store.Store {
		s, err := sqlite.Open(t.Context(), freshFile(t), sqlite.WithDailyPathCap(max))
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
		s, err := sqlite.Open(t.Context(), freshFile(t))
		return storetest.Opened(t, s, err)
	})
}
