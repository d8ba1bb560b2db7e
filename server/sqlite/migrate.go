package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"

	"github.com/docsapi/docsapi-go/server/store/migration"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// loadMigrations reads the embedded migrations; see migration.Load.
func loadMigrations(fsys fs.FS) ([]migration.Migration, error) {
	return migration.Load(fsys, "migrations")
}

// tooNew is the error for a database written by a newer version of the code.
func tooNew(have, know int) error {
	return fmt.Errorf("sqlite: %w", migration.TooNew(have, know))
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
func migrate(ctx context.Context, db *sql.DB, ms []migration.Migration) error {
	know := ms[len(ms)-1].Version
	for _, m := range ms {
		if err := apply(ctx, db, m, know); err != nil {
			return err
		}
	}
	return nil
}

// apply applies m unless the database has it already.
func apply(ctx context.Context, db *sql.DB, m migration.Migration, know int) error {
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
	case have >= m.Version:
		return nil
	case have != m.Version-1:
		return fmt.Errorf("sqlite: migrate: database at version %d cannot take migration %s", have, m.Name)
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return fmt.Errorf("sqlite: migration %s: %w", m.Name, err)
	}
	// PRAGMA takes no parameters; the version is an int we formatted.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.Version)); err != nil {
		return fmt.Errorf("sqlite: migration %s: set version: %w", m.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: migration %s: commit: %w", m.Name, err)
	}
	return nil
}
