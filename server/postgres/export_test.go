package postgres

import (
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/internal/sqlstore"
)

// QueryRollsSQL is the statement that reads rolls, for the test that checks
// its plan.
const QueryRollsSQL = queryRolls

// QueryRollsArgs returns QueryRollsSQL's arguments for span, for the same
// test.
func QueryRollsArgs(project string, span rollup.ViewSpan) []any { return queryRollsArgs(project, span) }

// MigrateTo brings the database at url to version, as an older program
// would have left it, for the tests of later migrations.
func MigrateTo(ctx context.Context, url string, version int) error {
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	return migrate(ctx, pool, ms[:version], slog.New(slog.DiscardHandler))
}

// SetQueryHook makes every QueryViews of s report its work to f, for the
// test that checks it stays bounded. Set it before s is used.
func SetQueryHook(s *Store, f func(rollup.Stats)) { sqlstore.SetQueryHook(s.viewMethods, f) }
