package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one schema step; version is the number its file name starts
// with, and the database's user_version once it is applied.
type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations reads the embedded migrations in version order. Versions
// must run 1, 2, 3, ... without gaps or duplicates: a gap would leave a
// database at a version no file describes.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, name := range names { // Glob returns names sorted
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("sqlite: migration %s: name must be NNNN_description.sql", base)
		}
		if v != len(ms)+1 {
			return nil, fmt.Errorf("sqlite: migration %s: version %d, want %d", base, v, len(ms)+1)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: base, sql: string(b)})
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("sqlite: no migrations")
	}
	return ms, nil
}

// tooNew is the error for a database written by a newer version of the code.
func tooNew(have, know int) error {
	return fmt.Errorf("sqlite: database schema version %d is newer than the newest this program knows (%d): refusing to open it (upgrade the program)", have, know)
}

// checkVersion refuses a database whose schema is newer than this code's,
// reading it through a query-only connection so that nothing is written.
func checkVersion(ctx context.Context, readerDSN string, know int) error {
	db, err := sql.Open("sqlite", readerDSN)
	if err != nil {
		return fmt.Errorf("sqlite: open: %w", err)
	}
	defer db.Close()
	var have int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
		return fmt.Errorf("sqlite: open: read schema version: %w", err)
	}
	if have > know {
		return tooNew(have, know)
	}
	return nil
}

// migrate applies the migrations the database lacks, each in its own
// transaction together with the user_version that records it, so a failure
// leaves the database at the last complete version. The version is re-read
// inside each transaction: another process may be migrating the same file at
// the same moment, and BEGIN IMMEDIATE makes one of them wait for the other.
func migrate(ctx context.Context, db *sql.DB, ms []migration) error {
	know := ms[len(ms)-1].version
	for _, m := range ms {
		if err := apply(ctx, db, m, know); err != nil {
			return err
		}
	}
	return nil
}

// apply applies m unless the database has it already.
func apply(ctx context.Context, db *sql.DB, m migration, know int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: migrate: %w", err)
	}
	defer tx.Rollback()
	var have int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
		return fmt.Errorf("sqlite: migrate: read schema version: %w", err)
	}
	switch {
	case have > know:
		return tooNew(have, know)
	case have >= m.version:
		return nil
	case have != m.version-1:
		return fmt.Errorf("sqlite: migrate: database at version %d cannot take migration %s", have, m.name)
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return fmt.Errorf("sqlite: migration %s: %w", m.name, err)
	}
	// PRAGMA takes no parameters; the version is an int we formatted.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.version)); err != nil {
		return fmt.Errorf("sqlite: migration %s: set version: %w", m.name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: migration %s: commit: %w", m.name, err)
	}
	return nil
}
