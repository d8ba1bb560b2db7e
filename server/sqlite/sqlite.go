// Package sqlite is the embedded storage backend of the server: a
// store.Store kept in one SQLite database file, through the pure-Go driver
// modernc.org/sqlite, so the server needs no cgo and no database process.
//
// Several Stores, in one process or in several, may open the same file at
// once; SQLite's file locks serialize their writes. They are all on one
// machine, on one clock, so job leases follow the times the Store is told
// (Claim.Now, ExtendLease's now), as store.Store's conventions say: the
// Store is not a store.LeaseClock.
//
// How the connections are arranged, and why:
//
//   - Every write runs on one writer connection (a pool of one) in a
//     transaction that starts with BEGIN IMMEDIATE. IMMEDIATE takes the
//     database's write lock when the transaction begins rather than at its
//     first write, so a read-then-write sequence (an idempotency check, a
//     claim of the oldest ready job) cannot be interleaved with another
//     writer's, and never meets the SQLITE_BUSY that a deferred transaction
//     gets when it tries to upgrade a read lock that another writer has made
//     stale. Other processes' writers wait for the lock up to the busy
//     timeout. One connection in this process means its own writers queue in
//     database/sql instead of spinning on the lock.
//   - Reads run on a separate pool of query-only connections. In WAL mode
//     readers never block the writer nor each other, and each read
//     transaction sees one consistent snapshot.
//   - The pragmas are in the DSN, so database/sql applies them to every
//     connection it opens, including ones it replaces later: busy_timeout,
//     foreign_keys and synchronous are per connection and would be lost on a
//     new connection if set once by hand.
//
// The schema is created and upgraded by versioned migrations embedded in the
// binary (migrations/NNNN_name.sql), each applied in its own transaction when
// Open runs, the version being kept in PRAGMA user_version. A database whose
// version is newer than this code knows is refused without being changed.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/sqlstore"
	"github.com/docsapi/docsapi-go/server/store"

	// The pure-Go SQLite driver, registered as "sqlite".
	_ "modernc.org/sqlite"
)

var _ store.Store = (*Store)(nil)

// Store is a store.Store in a SQLite database. It is safe for concurrent use.
// After Close, every method returns an error matching store.ErrClosed; an
// argument the store refuses gets one matching store.ErrInvalid. Its
// methods are documented on store.Store.
type Store struct {
	*shared         // every method but the views', Ping and Close (see backend.go)
	*viewMethods    // the views' (see views.go)
	*visitorMethods // the visitors' (see visitors.go)

	w      *sql.DB // the single writer connection, BEGIN IMMEDIATE
	r      *sql.DB // query-only readers
	closed atomic.Bool

	// AddViews' statements, prepared once (see statements.go), and
	// AddVisitors' (see visitors.go).
	viewStmts    *viewStatements
	visitorStmts *visitorStatements
}

// Option configures Open.
type Option func(*config) error

type config struct {
	busyTimeout time.Duration
	readers     int
	pathCap     int // see WithDailyPathCap
}

// WithBusyTimeout sets how long a write waits for another process holding
// the database's write lock before it fails with "database is locked". The
// default is 5 seconds. It must be at least one millisecond: SQLite counts in
// milliseconds, and zero would make concurrent processes fail at once.
func WithBusyTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d < time.Millisecond {
			return fmt.Errorf("sqlite: busy timeout %v: must be at least 1ms", d)
		}
		c.busyTimeout = d
		return nil
	}
}

// WithReaders sets the maximum number of read connections. The default is
// the larger of 4 and GOMAXPROCS. It must be at least 1.
func WithReaders(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("sqlite: readers %d: must be at least 1", n)
		}
		c.readers = n
		return nil
	}
}

// WithDailyPathCap sets the cap on distinct paths per project and UTC day:
// past it, views of a path new to the day are counted under
// store.OtherPagesPath for their hour (see store.Store's AddViews). The
// default is store.DefaultDailyPathCap. It must be at least 1.
func WithDailyPathCap(n int) Option {
	return func(c *config) error {
		c.pathCap = n
		return sqlstore.CheckDailyPathCap("sqlite", n)
	}
}

// Open opens the database file at path, creating it if it does not exist,
// and brings its schema up to date. path is a file path; in-memory databases
// are refused, because every connection would see a database of its own (use
// a file in a temporary directory instead). The Store must be closed with
// Close.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	cfg := config{
		busyTimeout: 5 * time.Second,
		readers:     max(4, runtime.GOMAXPROCS(0)),
		pathCap:     store.DefaultDailyPathCap,
	}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("sqlite: nil option")
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if err := checkPath(path); err != nil {
		return nil, err
	}

	// Refuse a newer database before anything touches it: the writer's DSN
	// switches the file to WAL, which would already be a change.
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	if err := checkVersion(ctx, dsn(path, cfg, false), ms[len(ms)-1].Version); err != nil {
		return nil, err
	}

	w, err := sql.Open("sqlite", dsn(path, cfg, true))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	// Keep the one connection for the Store's lifetime: reopening it would
	// redo the pragmas on every write burst for nothing.
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if err := migrate(ctx, w, ms); err != nil {
		w.Close()
		return nil, err
	}

	r, err := sql.Open("sqlite", dsn(path, cfg, false))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	r.SetMaxOpenConns(cfg.readers)
	r.SetMaxIdleConns(cfg.readers)
	if err := r.PingContext(ctx); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	viewStmts, err := prepareViewStatements(ctx, w)
	if err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: prepare: %w", path, err)
	}
	visitorStmts, err := prepareVisitorStatements(ctx, w)
	if err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: prepare: %w", path, err)
	}
	s := &Store{w: w, r: r, viewStmts: viewStmts, visitorStmts: visitorStmts}
	s.shared = sqlstore.New(backend{s})
	s.viewMethods = sqlstore.NewViews(backend{s}, cfg.pathCap)
	s.visitorMethods = sqlstore.NewVisitors(backend{s})
	return s, nil
}

func checkPath(path string) error {
	switch {
	case path == "":
		return errors.New("sqlite: empty database path")
	case path == ":memory:" || strings.HasPrefix(path, "file:"):
		return fmt.Errorf("sqlite: database path %q: need a file path (in-memory databases are not shared between connections; use a file in a temporary directory)", path)
	}
	return nil
}

// dsn builds the connection string for path. The "file:" URI form is used so
// that any path works, whatever characters it holds, once the three that end
// or escape a URI path are escaped.
func dsn(path string, cfg config, writer bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", cfg.busyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	if writer {
		// journal_mode is persistent in the file: the writer, which opens
		// first and runs the migrations, sets it, and every later
		// connection, of this process or another, finds the file in WAL.
		// Readers do not ask for it: changing the journal mode needs a
		// write, which a query-only connection may not do.
		q.Add("_pragma", "journal_mode(WAL)")
		q.Set("_txlock", "immediate")
	} else {
		q.Add("_pragma", "query_only(1)")
		// Readers map the file: a query over a busy range reads many
		// pages of rolls and sketches, which a mapping serves without a
		// system call and a copy a page. SQLite keeps the mapping
		// coherent with writers of this or another process; the size
		// bounds address space, not memory.
		q.Add("_pragma", "mmap_size(1073741824)")
	}
	p := filepath.ToSlash(filepath.Clean(path))
	p = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(p)
	return "file:" + p + "?" + q.Encode()
}

// Ping checks that the database answers to both the reader and the writer
// pools.
func (s *Store) Ping(ctx context.Context) error {
	if s.closed.Load() {
		return closedErr("ping")
	}
	if err := s.r.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: ping: %w", err)
	}
	if err := s.w.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: ping: %w", err)
	}
	return nil
}

// Close closes the database. Calls after the first do nothing and return nil.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	return errors.Join(s.r.Close(), s.w.Close())
}

// write runs fn in a write transaction (BEGIN IMMEDIATE) and commits it if fn
// returns nil; op names the operation in errors.
func (s *Store) write(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	if s.closed.Load() {
		return closedErr(op)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return s.beginErr(op, err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: %s: commit: %w", op, err)
	}
	return nil
}

// read runs fn in a read transaction, so that the queries fn makes see one
// snapshot (a job and its prompts, a key and its scopes).
func (s *Store) read(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	if s.closed.Load() {
		return closedErr(op)
	}
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return s.beginErr(op, err)
	}
	defer tx.Rollback()
	return fn(tx)
}

// beginErr wraps the error of a transaction that could not begin. A Close
// that raced with the call shows as store.ErrClosed, not as database/sql's
// unexported "database is closed".
func (s *Store) beginErr(op string, err error) error {
	if s.closed.Load() {
		return closedErr(op)
	}
	return dbErr(op, err)
}

// dbErr wraps an error of op (the database's, or a refusal of package
// store) with the backend and the operation.
func dbErr(op string, err error) error {
	return fmt.Errorf("sqlite: %s: %w", op, err)
}

// closedErr is the error of op called after Close.
func closedErr(op string) error {
	return dbErr(op, store.ErrClosed)
}

// micros is how a time is stored: unix microseconds, NULL for the zero time.
func micros(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMicro(), Valid: true}
}

// fromMicros is the inverse of micros, in UTC.
func fromMicros(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.UnixMicro(n.Int64).UTC()
}
