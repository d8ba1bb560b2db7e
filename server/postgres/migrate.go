package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docsapi/docsapi-go/server/store/migration"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the key of the advisory lock that serializes migrations.
// Any fixed number works as long as every replica uses the same one; this
// one spells "docsapi" in ASCII, so it is recognizable in pg_locks.
const migrationLock int64 = 0x646f6373617069

// loadMigrations reads the embedded migrations; see migration.Load.
func loadMigrations(fsys fs.FS) ([]migration.Migration, error) {
	return migration.Load(fsys, "migrations")
}

// migrate brings the database up to the last of ms, all in one transaction:
// PostgreSQL's DDL is transactional, so a failure leaves the database as it
// was, and a database that is too new is left untouched by rolling back.
//
// The transaction first takes a transaction-level advisory lock. Replicas
// that start together all queue on it: the first migrates and commits, which
// releases the lock; each of the others then reads the version the first
// recorded and finds nothing to do. Without the lock, two replicas would both
// see an empty database and both try to create the tables. The lock is held
// until commit or rollback, so a replica that dies mid-migration releases it
// with its connection. (A future migration that cannot run in a transaction,
// such as CREATE INDEX CONCURRENTLY, would need a session-level lock and a
// step of its own.)
func migrate(ctx context.Context, pool *pgxpool.Pool, ms []migration.Migration, log *slog.Logger) error {
	know := ms[len(ms)-1].Version
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: open: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
		return fmt.Errorf("postgres: migrate: take the migration lock: %w", err)
	}
	have, err := schemaVersion(ctx, tx)
	if err != nil {
		return err
	}
	switch {
	case have > know:
		return fmt.Errorf("postgres: %w", migration.TooNew(have, know))
	case have == know:
		return nil // the rollback releases the lock; nothing was changed
	}
	for _, m := range ms[have:] {
		// No arguments: pgx sends the file with the simple protocol, which
		// runs every statement in it.
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return fmt.Errorf("postgres: migration %s: %w", m.Name, err)
		}
		if _, err := tx.Exec(ctx,
			`INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
			return fmt.Errorf("postgres: migration %s: record version: %w", m.Name, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: migrate: commit: %w", err)
	}
	log.Info("postgres: schema migrated", slog.Int("from_version", have), slog.Int("to_version", know))
	return nil
}

// schemaVersion returns the database's schema version, 0 for a database the
// store never touched, in which case it creates schema_migrations (inside the
// migration's transaction, so that a failed first migration leaves no trace).
func schemaVersion(ctx context.Context, tx pgx.Tx) (int, error) {
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, fmt.Errorf("postgres: migrate: read schema version: %w", err)
	}
	if !exists {
		if _, err := tx.Exec(ctx, `CREATE TABLE schema_migrations (
			version    integer     NOT NULL PRIMARY KEY,
			name       text        NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
			return 0, fmt.Errorf("postgres: migrate: create schema_migrations: %w", err)
		}
		return 0, nil
	}
	var have int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
		return 0, fmt.Errorf("postgres: migrate: read schema version: %w", err)
	}
	return have, nil
}
