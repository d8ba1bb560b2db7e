package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/sqlstore"
)

// shared is the methods of store.Store that every SQL backend shares,
// embedded in Store under a name of its own.
type shared = sqlstore.Store

// viewMethods is AddViews, QueryViews and ViewFolds as every SQL backend
// runs them (see views.go), embedded in Store under a name of its own.
type viewMethods = sqlstore.Views

// backend is the Store as the shared methods use it: every write in one
// BEGIN IMMEDIATE transaction, which holds the database's write lock from
// its first statement, so the rows a write reads stay as read until it
// commits; every read in one read transaction, which sees one snapshot.
type backend struct{ s *Store }

// Write runs fn in a write transaction.
func (b backend) Write(ctx context.Context, op string, fn func(sqlstore.Tx) error) error {
	return b.s.write(ctx, op, func(tx *sql.Tx) error { return fn(txn{tx}) })
}

// Read runs fn in a read transaction.
func (b backend) Read(ctx context.Context, op string, fn func(sqlstore.Tx) error) error {
	return b.s.read(ctx, op, func(tx *sql.Tx) error { return fn(txn{tx}) })
}

// Fail wraps an error of op.
func (backend) Fail(op string, err error) error { return dbErr(op, err) }

// CheckPrompt accepts every prompt: SQLite's TEXT holds any bytes.
func (backend) CheckPrompt(string, string) error { return nil }

// txn is the statements of one transaction; its methods are the
// sqlstore.Tx the shared methods use, in jobs.go, keys.go and projects.go.
type txn struct{ tx *sql.Tx }

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// exists reports whether query returns a row.
func exists(ctx context.Context, q querier, query string, args ...any) (bool, error) {
	var one int
	err := q.QueryRowContext(ctx, query, args...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// timeCol scans a time stored as micros stores it into *t: in UTC, the zero
// time for NULL (see fromMicros).
type timeCol struct{ t *time.Time }

// Scan implements sql.Scanner.
func (c timeCol) Scan(v any) error {
	var n sql.NullInt64
	if err := n.Scan(v); err != nil {
		return err
	}
	*c.t = fromMicros(n)
	return nil
}

// scanner is what *sql.Row and *sql.Rows share.
type scanner interface{ Scan(dest ...any) error }

// collect reads every row of a query with scan; err is the query's.
func collect[T any](rows *sql.Rows, err error, scan func(scanner) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var vs []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	return vs, rows.Err()
}
