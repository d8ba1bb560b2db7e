package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi-go/server/postgres"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// envURL names the variable that points the tests at a PostgreSQL server,
// as a URL of a superuser connection (CI starts one with .ci/postgres.sh).
const envURL = "DOCSAPI_TEST_POSTGRES_URL"

// adminURL returns the server's URL, or skips the test when none is set: the
// tests of this package need a real server, and without one there is
// nothing to test.
func adminURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(envURL)
	if u == "" {
		t.Skip(envURL + " is not set; the PostgreSQL tests need a server (see .ci/postgres.sh)")
	}
	return u
}

// connect opens a plain connection to url, closed when the test ends.
func connect(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// newDatabase creates an empty database with a unique name and returns its
// URL; the database is dropped when the test ends, even if connections to it
// remain, so tests can run in parallel and leave nothing behind.
func newDatabase(t testing.TB) string {
	t.Helper()
	admin := adminURL(t)
	b := make([]byte, 8)
	rand.Read(b)
	name := "docsapi_test_" + hex.EncodeToString(b)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("connect to %s: %v", envURL, err)
	}
	defer conn.Close(ctx)
	// The name is ours and made of [a-z0-9_]: no quoting needed.
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Errorf("drop database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})

	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", envURL, err)
	}
	u.Path = "/" + name
	return u.String()
}

// schemas makes a database for a suite whose every subtest opens a store
// on a fresh, empty place of its own, and returns what gives each subtest
// one: a new schema of that database, as the URL of a connection whose
// search_path is the schema (the way postgres.Open is told to keep its
// tables in a schema). A schema costs a statement where a database costs
// a copy of the template database, most of a subtest's time. The database
// is dropped when t ends.
func schemas(t *testing.T) func(t *testing.T) string {
	t.Helper()
	db := newDatabase(t)
	conn := connect(t, db)
	var mu sync.Mutex // a pgx.Conn serves one statement at a time
	n := 0
	return func(st *testing.T) string {
		st.Helper()
		mu.Lock()
		defer mu.Unlock()
		n++
		// The name is ours and made of [a-z0-9]: no quoting needed.
		name := fmt.Sprintf("suite%d", n)
		if _, err := conn.Exec(context.Background(), "CREATE SCHEMA "+name); err != nil {
			st.Fatalf("create schema: %v", err)
		}
		u, err := url.Parse(db)
		if err != nil {
			st.Fatal(err)
		}
		q := u.Query()
		q.Set("search_path", name)
		u.RawQuery = q.Encode()
		return u.String()
	}
}

// open opens a Store on the database at dbURL, closed when the test ends.
func open(t testing.TB, dbURL string, opts ...postgres.Option) *postgres.Store {
	t.Helper()
	// A bound against a hang, not a speed check: Open runs the
	// migrations, which take seconds on a busy machine.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := postgres.Open(ctx, dbURL, opts...)
	return storetest.Opened(t, s, err)
}

// eventually polls cond every few milliseconds until it holds or timeout
// passes, and fails the test with what in the latter case. The tests talk to
// a real database on the wall clock, so they wait for conditions rather than
// for fixed times.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
