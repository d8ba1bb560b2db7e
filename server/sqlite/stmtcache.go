package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"sync"
	"sync/atomic"
)

// SQLite parses a statement every time one is prepared, and database/sql
// prepares each query it is handed as text: parsing was about two fifths of
// the CPU of reading a job (its two queries, each parsed again). So each
// pool keeps a stmtCache: a transaction runs the statements the cache
// holds from their prepared form (tx.StmtContext reuses what the
// transaction's connection prepared before, and prepares it there once if
// not), and notes the others; once the transaction is over, the cache
// prepares those, so the next transaction finds them. Statements are
// learned rather than listed, so that a new query is cached without
// anyone remembering to list it; the cache holds at most maxCachedStmts,
// which the fixed queries of this package are far from, so that queries
// built with a varying number of parameters cannot grow it without bound.
// (The views' ingestion statements are prepared when the Store opens, see
// statements.go: they are needed by the first transaction.)

// maxCachedStmts bounds the statements a stmtCache prepares.
const maxCachedStmts = 256

// stmtCache holds the prepared statements of one pool, by their SQL.
type stmtCache struct {
	db    *sql.DB
	stmts atomic.Pointer[map[string]*sql.Stmt] // replaced, never changed
	mu    sync.Mutex                           // serializes learn and close
	done  bool                                 // closed: learn prepares nothing
}

// newStmtCache returns an empty cache of db's statements.
func newStmtCache(db *sql.DB) *stmtCache {
	c := &stmtCache{db: db}
	c.stmts.Store(&map[string]*sql.Stmt{})
	return c
}

// wrap returns tx running the cache's statements.
func (c *stmtCache) wrap(tx *sql.Tx) *cachedTx {
	return &cachedTx{tx: tx, stmts: *c.stmts.Load()}
}

// learn prepares the statements tx ran as text, unless the cache holds
// them already or is full. It is called once tx is over, since preparing
// on the pool needs a connection, which a transaction of the single-
// connection writer holds. A statement that fails to prepare is left out:
// it ran as text, and its error was the transaction's.
func (c *stmtCache) learn(ctx context.Context, tx *cachedTx) {
	if len(tx.missed) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := *c.stmts.Load()
	var next map[string]*sql.Stmt
	for _, query := range tx.missed {
		if c.done || len(old)+len(next) >= maxCachedStmts || old[query] != nil || next[query] != nil {
			continue
		}
		st, err := c.db.PrepareContext(ctx, query)
		if err != nil {
			continue
		}
		if next == nil {
			next = make(map[string]*sql.Stmt)
		}
		next[query] = st
	}
	if next == nil {
		return
	}
	maps.Copy(next, old)
	c.stmts.Store(&next)
}

// close closes the cache's statements, before their pool closes.
func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done = true
	var errs []error
	for _, st := range *c.stmts.Load() {
		errs = append(errs, st.Close())
	}
	c.stmts.Store(&map[string]*sql.Stmt{})
	return errors.Join(errs...)
}

// cachedTx is a transaction that runs the statements its cache held when
// it began from their prepared form, and notes the others for learn. It
// has the methods of *sql.Tx that this package's queries use.
type cachedTx struct {
	tx     *sql.Tx
	stmts  map[string]*sql.Stmt
	missed []string
}

// stmt returns the transaction's form of query's prepared statement, or
// nil, noting the query, if the cache has none.
func (t *cachedTx) stmt(ctx context.Context, query string) *sql.Stmt {
	if st := t.stmts[query]; st != nil {
		return t.tx.StmtContext(ctx, st)
	}
	t.missed = append(t.missed, query)
	return nil
}

// QueryContext is sql.Tx's, from the prepared statement when there is one.
func (t *cachedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, query, args...)
}

// QueryRowContext is sql.Tx's, from the prepared statement when there is
// one.
func (t *cachedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, query, args...)
}

// ExecContext is sql.Tx's, from the prepared statement when there is one.
func (t *cachedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := t.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return t.tx.ExecContext(ctx, query, args...)
}

// StmtContext is sql.Tx's: the transaction's form of a statement prepared
// when the Store opened.
func (t *cachedTx) StmtContext(ctx context.Context, st *sql.Stmt) *sql.Stmt {
	return t.tx.StmtContext(ctx, st)
}
