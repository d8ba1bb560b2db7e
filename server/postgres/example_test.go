package postgres_test

import (
	"context"
	"log"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/postgres"
	"github.com/docsapi/docsapi-go/server/store"
)

// One replica of a server that shares its database with others: every
// replica runs this same program with its own engine Owner. Jobs created
// through any replica wake the engines of all of them (the store implements
// store.JobNotifier), and a replica that dies leaves leases that the others
// take over when they expire. (Not run: it needs a database.)
func ExampleOpen() {
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	s, err := postgres.Open(ctx, os.Getenv("DATABASE_URL"),
		postgres.WithMaxConns(16), postgres.WithLogger(logger))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	host, _ := os.Hostname()
	jobs, err := engine.New(engine.Config{
		Store: s,
		Owner: host + "/" + os.Getenv("POD_NAME"), // unique per replica
		Parts: func(context.Context, store.Project) (engine.Parts, error) {
			return engine.Parts{ /* repositories, agent, pull requests */ }, nil
		},
		Logger: logger,
	})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := server.New(server.Config{Store: s, Jobs: jobs, Logger: logger})
	if err != nil {
		log.Fatal(err)
	}
	jobs.Start()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		jobs.Shutdown(ctx) // running jobs finish, or give their leases back
	}()
	if err := http.ListenAndServe(":8080", srv); err != nil {
		logger.Error("serving", slog.Any("error", err))
	}
}
