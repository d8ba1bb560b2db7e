// Package postgres is the scale-out storage backend of the server: a
// store.Store in a PostgreSQL database, through pgx, that several server
// replicas share. It passes the same conformance suite as server/sqlite and
// keeps the same records the same way; it adds store.JobNotifier, so an
// engine in one replica starts a job created through another at once.
//
// How concurrency is handled, and why:
//
//   - Every statement runs at READ COMMITTED, PostgreSQL's default, and every
//     read-then-write sequence is made safe by a row lock or a unique index
//     rather than by a stricter isolation level: a write locks the job row
//     it changes (SELECT ... FOR UPDATE) before reading what it depends on,
//     and idempotency keys are inserted first, with ON CONFLICT DO NOTHING,
//     so a concurrent retry waits for the first request and then sees its
//     key. Nothing ever fails with a serialization error that would have to
//     be retried.
//   - ClaimJob takes the oldest ready job with FOR UPDATE SKIP LOCKED: a
//     claim never waits for another replica's claim, and two claims can
//     never lease the same job, since each takes a row only once it holds
//     its lock and has re-checked that the job is still ready.
//   - Job leases follow the database's clock, never a replica's: ClaimJob,
//     ExtendLease and JobCounts judge and set expiries by now() in SQL, so
//     replicas whose clocks differ by minutes share the leases safely (the
//     Store is a store.LeaseClock; see leaseclock.go). The times a replica
//     sends still date what people read (UpdatedAt and the rest).
//   - AddViews and AddVisitors first lock the view_days rows of their
//     batch's days and of the first days of their weeks, sorted (they guard
//     the rolls, the days' visitors and the cap's count of the days'
//     paths), so that concurrent flushes lock rows in the same order and
//     never deadlock.
//   - Reads that need several rows to agree (a job and its prompts, a key
//     and its sets, the views totals and their page) are single statements,
//     which see one snapshot.
//
// The schema is created and upgraded by versioned migrations embedded in the
// binary (migrations/NNNN_name.sql), applied on Open in one transaction that
// first takes an advisory lock, so replicas that start together migrate once
// while the others wait. The version is kept in the table
// schema_migrations. A database whose version is newer than this code knows
// is refused without being changed.
//
// The tables are created in the first schema of the connection's
// search_path; to keep them in a schema of their own, add
// search_path=docsapi to the URL's query (pgx passes it to the server).
package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docsapi/docsapi-go/server/internal/sqlstore"
	"github.com/docsapi/docsapi-go/server/store"
)

var (
	_ store.Store       = (*Store)(nil)
	_ store.JobNotifier = (*Store)(nil)
)

// Store is a store.Store in a PostgreSQL database. It is safe for concurrent
// use, and any number of Stores, in one process or many, may share one
// database. After Close, every method returns an error matching
// store.ErrClosed; an argument the store refuses gets one matching
// store.ErrInvalid. Its methods are documented on store.Store.
type Store struct {
	*shared         // every method but the views', Ping and Close (see backend.go)
	*viewMethods    // the views' (see views.go)
	*visitorMethods // the visitors' (see visitors.go)

	pool   *pgxpool.Pool
	listen *pgx.ConnConfig // for the dedicated connections of JobNotifications
	log    *slog.Logger

	// mu orders Close against JobNotifications, so that no listener is
	// registered once Close has started waiting for them.
	mu        sync.Mutex
	closed    atomic.Bool
	life      context.Context // cancelled by Close: ends every listener
	stop      context.CancelFunc
	listeners sync.WaitGroup
}

// Option configures Open.
type Option func(*config) error

type config struct {
	maxConns int32
	logger   *slog.Logger
	pathCap  int // see WithDailyPathCap
}

// WithMaxConns sets the maximum number of connections of the Store's pool.
// The default is pgxpool's (the greater of 4 and the number of CPUs), or the
// URL's pool_max_conns. It must be at least 1. Each JobNotifications call
// holds one more connection, outside the pool.
func WithMaxConns(n int) Option {
	return func(c *config) error {
		if n < 1 || n > 1<<20 {
			return fmt.Errorf("postgres: max connections %d: must be between 1 and %d", n, 1<<20)
		}
		c.maxConns = int32(n)
		return nil
	}
}

// WithLogger sets where the Store reports what it does on its own: applied
// migrations, and lost and re-established notification connections. The
// default discards them.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return errors.New("postgres: nil logger (omit the option to discard logs)")
		}
		c.logger = l
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
		return sqlstore.CheckDailyPathCap("postgres", n)
	}
}

// Open connects to the database at url (a postgres:// URL or a key=value
// connection string, as pgx accepts), brings its schema up to date, and
// returns a Store that must be closed with Close.
func Open(ctx context.Context, url string, opts ...Option) (*Store, error) {
	cfg := config{pathCap: store.DefaultDailyPathCap}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("postgres: nil option")
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if url == "" {
		return nil, errors.New("postgres: empty database URL")
	}
	// pgx's parse errors show the connection string with the password
	// redacted, so the error can be logged.
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if cfg.maxConns > 0 {
		pc.MaxConns = cfg.maxConns
		pc.MinConns = min(pc.MinConns, pc.MaxConns)
	}
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.DiscardHandler)
	}
	// Copied before the pool uses the config: a listener dials like the
	// pool's connections, with the same host, credentials and TLS.
	listen := pc.ConnConfig.Copy()

	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	if err := migrate(ctx, pool, ms, cfg.logger); err != nil {
		pool.Close()
		return nil, err
	}
	life, stop := context.WithCancel(context.Background())
	s := &Store{pool: pool, listen: listen, log: cfg.logger, life: life, stop: stop}
	s.shared = sqlstore.New(backend{s})
	s.viewMethods = sqlstore.NewViews(backend{s}, cfg.pathCap)
	s.visitorMethods = sqlstore.NewVisitors(backend{s})
	return s, nil
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if s.closed.Load() {
		return opErr("ping", store.ErrClosed)
	}
	if err := s.pool.Ping(ctx); err != nil {
		return s.dbErr("ping", err)
	}
	return nil
}

// Close ends every JobNotifications listener (closing their channels) and
// closes the pool, waiting for the calls in flight. Calls after the first
// do nothing and return nil.
func (s *Store) Close() error {
	s.mu.Lock()
	already := s.closed.Swap(true)
	s.mu.Unlock()
	if already {
		return nil
	}
	s.stop()
	s.listeners.Wait()
	s.pool.Close()
	return nil
}

// querier is what the pool and a transaction share.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// db returns the pool for a single-statement call, or store.ErrClosed.
func (s *Store) db() (querier, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("postgres: %w", store.ErrClosed)
	}
	return s.pool, nil
}

// tx runs fn in a READ COMMITTED transaction and commits it if fn returns
// nil; op names the operation in errors. fn's error is returned as it is, so
// fn wraps its own.
func (s *Store) tx(ctx context.Context, op string, fn func(tx pgx.Tx) error) error {
	if s.closed.Load() {
		return opErr(op, store.ErrClosed)
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return s.dbErr(op, err)
	}
	if err := fn(tx); err != nil {
		// A rollback that fails (ctx ended, say) makes pgx close the
		// connection, which ends the transaction as surely.
		_ = tx.Rollback(ctx)
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return s.dbErr(op+": commit", err)
	}
	return nil
}

// dbErr wraps an error of op, the database's or a method's own, with the
// backend and the operation. A Close that raced with the call shows as
// store.ErrClosed, not as pgxpool's "closed pool".
func (s *Store) dbErr(op string, err error) error {
	if s.closed.Load() {
		return opErr(op, store.ErrClosed)
	}
	return opErr(op, err)
}

// opErr wraps an error of op (a refusal of package store, or one of its
// errors) with the backend and the operation.
func opErr(op string, err error) error {
	return fmt.Errorf("postgres: %s: %w", op, err)
}

// uniqueViolation reports whether err is a unique violation of constraint.
func uniqueViolation(err error, constraint string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == constraint
}

// foreignKeyViolation reports whether err is a foreign key violation.
func foreignKeyViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23503"
}

// storable reports whether PostgreSQL can keep s in a text column: valid
// UTF-8 without NUL characters (a UTF8 database refuses both). Go strings,
// and SQLite's TEXT, hold any bytes.
func storable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// makeStorable returns s with every byte sequence PostgreSQL's text cannot
// hold (invalid UTF-8, NUL) replaced by U+FFFD. It is for text that must be
// stored whatever it holds, where an error would do harm: a failure reason
// quoting a tool's output, which would otherwise make FinishJob fail, so
// that the job is run again and again; a page path from a request line,
// which would otherwise fail every flush of the batch it is in, forever,
// since a failed flush keeps its counts for the next.
func makeStorable(s string) string {
	if storable(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// ts is how a time is stored: timestamptz truncated to the microsecond (as
// SQLite's backend truncates; PostgreSQL itself would round), NULL for the
// zero time.
func ts(t time.Time) pgtype.Timestamptz {
	if t.IsZero() {
		return pgtype.Timestamptz{}
	}
	return pgtype.Timestamptz{Time: time.UnixMicro(t.UnixMicro()).UTC(), Valid: true}
}

// fromTS is the inverse of ts, in UTC: pgx returns times in the local zone.
func fromTS(t pgtype.Timestamptz) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.UTC()
}
