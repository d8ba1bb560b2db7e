// Package migration reads a storage backend's versioned schema migrations:
// SQL files named NNNN_description.sql, embedded in the binary. Every
// backend numbers and checks its migrations the same way; how it applies
// them and where it records the version is its own.
package migration

import (
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// Migration is one schema step. Version is the number its file name starts
// with; Name is the file name; SQL is its contents.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Load reads dir/*.sql of fsys in version order. Versions must run 1, 2,
// 3, ... without gaps or duplicates: a gap would leave a database at a
// version no file describes.
func Load(fsys fs.FS, dir string) ([]Migration, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.sql"))
	if err != nil {
		return nil, err
	}
	var ms []Migration
	for _, name := range names { // Glob returns names sorted
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_description.sql", base)
		}
		if v != len(ms)+1 {
			return nil, fmt.Errorf("migration %s: version %d, want %d", base, v, len(ms)+1)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: base, SQL: string(b)})
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("no migrations in %s", dir)
	}
	return ms, nil
}

// TooNew is the error for a database written by a newer version of the
// code, which a backend must refuse without changing it.
func TooNew(have, know int) error {
	return fmt.Errorf("database schema version %d is newer than the newest this program knows (%d): refusing to open it (upgrade the program)", have, know)
}
