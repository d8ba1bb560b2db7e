package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/docsapi/docsapi-go/server/postgres"
	"github.com/docsapi/docsapi-go/server/store"
)

// openPostgres opens the PostgreSQL backend. Its errors never hold the
// URL's password: pgx redacts it when it quotes the connection string.
func openPostgres(ctx context.Context, url string, pathCap int, log *slog.Logger) (store.Store, error) {
	var opts []postgres.Option
	if pathCap > 0 {
		opts = append(opts, postgres.WithDailyPathCap(pathCap))
	}
	if log != nil {
		opts = append(opts, postgres.WithLogger(log))
	}
	st, err := postgres.Open(ctx, url, opts...)
	if err != nil {
		return nil, fmt.Errorf("opening PostgreSQL: %w", err)
	}
	return st, nil
}
