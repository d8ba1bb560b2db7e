package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi-go/server/internal/sqlstore"
	"github.com/docsapi/docsapi-go/server/store"
)

// txn is the statements of a transaction, or of the pool in Read; its
// methods are the sqlstore.Tx the shared methods use, in jobs.go, keys.go
// and projects.go.
type txn struct {
	q querier
	// announce, in a write transaction, is set by AnnounceJobs: the
	// wake-up rides on the next statement that can carry it (InsertJob),
	// or is sent by Write before it commits, a round trip fewer a create.
	// A notification is delivered at commit wherever it was sent from.
	announce *bool
}

// queryOne runs a query that selects at most one row and reads it with
// scan; found is false if the query selects none.
func queryOne[T any](ctx context.Context, q querier, scan pgx.RowToFunc[T], sql string, args ...any) (v T, found bool, err error) {
	rows, _ := q.Query(ctx, sql, args...) // CollectOneRow reports its error
	v, err = pgx.CollectOneRow(rows, scan)
	if errors.Is(err, pgx.ErrNoRows) {
		return v, false, nil
	}
	return v, err == nil, err
}

// shared is the methods of store.Store that every SQL backend shares,
// embedded in Store under a name of its own.
type shared = sqlstore.Store

// viewMethods is AddViews, QueryViews and ViewFolds as every SQL backend
// runs them (see views.go), embedded in Store under a name of its own.
type viewMethods = sqlstore.Views

// backend is the Store as the shared methods use it: every write in one
// READ COMMITTED transaction whose reads lock the rows they depend on (see
// the package comment); every read as single statements on the pool, each
// of which sees one snapshot.
type backend struct{ s *Store }

// Write runs fn in a transaction.
func (b backend) Write(ctx context.Context, op string, fn func(sqlstore.Tx) error) error {
	return b.s.tx(ctx, op, func(tx pgx.Tx) error {
		var announce bool
		if err := fn(txn{q: tx, announce: &announce}); err != nil {
			return err
		}
		if announce {
			if _, err := tx.Exec(ctx, notifyJobs); err != nil {
				return b.s.dbErr(op, err)
			}
		}
		return nil
	})
}

// Read runs fn on the pool.
func (b backend) Read(_ context.Context, _ string, fn func(sqlstore.Tx) error) error {
	db, err := b.s.db()
	if err != nil {
		return err
	}
	return fn(txn{q: db})
}

// Fail wraps an error of op.
func (b backend) Fail(op string, err error) error { return b.s.dbErr(op, err) }

// CheckPrompt refuses a prompt PostgreSQL's text cannot hold (see
// storable). It is refused rather than stored changed: the agent would
// follow other words than its client sent.
func (backend) CheckPrompt(jobID, prompt string) error {
	if !storable(prompt) {
		return store.Invalid("job %q: the prompt is not valid UTF-8 or contains NUL, which PostgreSQL cannot store", jobID)
	}
	return nil
}
