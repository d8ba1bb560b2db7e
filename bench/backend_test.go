package bench

import (
	"context"
	"crypto/rand"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi-go/server/postgres"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

// backend is a storage backend the throughput benchmarks (jobs, recording)
// run on. They see only its store.Store, and check their results through
// it, so that both backends are measured and checked the same way.
type backend struct {
	name string // the value of the backend= level of the benchmark names
	// open returns a new, empty store, closed (and on PostgreSQL its
	// database dropped) when the benchmark's run ends.
	open func(b *testing.B) store.Store
}

// backends lists the backends to measure: SQLite always; PostgreSQL when
// DOCSAPI_BENCH_POSTGRES_URL is set, since it needs a server.
func backends() []backend {
	bs := []backend{{name: "sqlite", open: openSQLite}}
	if admin := os.Getenv(benchPostgresURL); admin != "" {
		bs = append(bs, backend{name: "postgres", open: func(b *testing.B) store.Store { return openPostgres(b, admin) }})
	}
	return bs
}

// openSQLite opens a store in a new file of the run's temporary directory.
func openSQLite(b *testing.B) store.Store {
	b.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "docsapi.db"))
	if err != nil {
		b.Fatal(err)
	}
	closeAtEnd(b, st)
	return st
}

// openPostgres opens a store in a new database on the server of admin,
// created for the run and dropped when it ends. Every run starts empty: a
// job or view left by an earlier run would make the result checks fail, and
// a table grown by earlier runs would make the later ones slower. admin must
// be a role that may create databases; its own database is not touched.
func openPostgres(b *testing.B, admin string) store.Store {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := postgres.Open(ctx, postgresDatabase(b, admin))
	if err != nil {
		b.Fatal(err)
	}
	closeAtEnd(b, st)
	return st
}

// postgresDatabase creates a database on the server of admin for the run,
// dropped when it ends, and returns its connection string.
func postgresDatabase(b *testing.B, admin string) string {
	b.Helper()
	// rand.Text is base32 ([A-Z2-7]); lowered, the name needs no quoting.
	name := "docsapi_benchrun_" + strings.ToLower(rand.Text()[:16])
	exec := func(sql string) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := exec("CREATE DATABASE " + name); err != nil {
		b.Fatalf("%s: create database: %v", benchPostgresURL, err)
	}
	// Registered before the store's Close, so run after it; FORCE ends any
	// connection left open all the same (a store that failed to close).
	b.Cleanup(func() {
		if err := exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			b.Errorf("drop database %s: %v", name, err)
		}
	})
	return withDatabase(b, admin, name)
}

// withDatabase returns the connection string conn with its database replaced
// by name. conn is a URL or a key=value string, as pgx accepts both.
func withDatabase(b *testing.B, conn, name string) string {
	b.Helper()
	if !strings.HasPrefix(conn, "postgres://") && !strings.HasPrefix(conn, "postgresql://") {
		return conn + " dbname=" + name // the last setting of a key wins
	}
	u, err := url.Parse(conn)
	if err != nil {
		b.Fatalf("%s is not a URL: %v", benchPostgresURL, err)
	}
	u.Path = "/" + name
	u.RawPath = ""
	return u.String()
}

// closeAtEnd closes st when the run ends, failing it if Close does.
func closeAtEnd(b *testing.B, st store.Store) {
	b.Cleanup(func() {
		if err := st.Close(); err != nil {
			b.Error(err)
		}
	})
}
