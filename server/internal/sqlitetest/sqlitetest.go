// Package sqlitetest gives tests new SQLite database files that already
// hold the schema: copies of one file that sqlite.Open made once per test
// binary. Migrating a new file is most of what opening a store costs a
// test, and tests open hundreds.
package sqlitetest

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/docsapi/docsapi-go/server/sqlite"
)

// schema is the file sqlite.Open made and closed, holding the schema and
// nothing else: its bytes, and those of its write-ahead log if one was
// left.
var schema struct {
	once    sync.Once
	db, wal []byte
	hasWAL  bool
	err     error
}

// FreshFile returns the path of a new database file, in a folder of t's
// own, that holds the schema and nothing else; sqlite.Open finds it up to
// date.
func FreshFile(t testing.TB) string {
	t.Helper()
	schema.once.Do(func() { schema.err = makeSchema() })
	if schema.err != nil {
		t.Fatalf("sqlitetest: making the schema's file: %v", schema.err)
	}
	path := filepath.Join(t.TempDir(), "docsapi.db")
	if err := os.WriteFile(path, schema.db, 0o600); err != nil {
		t.Fatal(err)
	}
	if schema.hasWAL {
		if err := os.WriteFile(path+"-wal", schema.wal, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func makeSchema() error {
	dir, err := os.MkdirTemp("", "docsapi-sqlitetest")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "docsapi.db")
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		return err
	}
	if err := s.Close(); err != nil {
		return err
	}
	if schema.db, err = os.ReadFile(path); err != nil {
		return err
	}
	schema.wal, err = os.ReadFile(path + "-wal")
	schema.hasWAL = err == nil
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	return err
}
