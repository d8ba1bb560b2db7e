package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
	return createDatabase(t, "")
}

// newSchemaDatabase is newDatabase with the schema in place: a copy of a
// database the migrations made once for all the tests of the process
// (schemaTemplate), as fresh as one migrated anew.
func newSchemaDatabase(t testing.TB) string {
	t.Helper()
	admin := adminURL(t)
	schemaTemplate.once.Do(func() { schemaTemplate.name, schemaTemplate.err = makeSchemaTemplate(admin) })
	if schemaTemplate.err != nil {
		t.Fatalf("making the migrated template database: %v", schemaTemplate.err)
	}
	return createDatabase(t, schemaTemplate.name)
}

// schemaTemplate is the database newSchemaDatabase copies; TestMain drops it.
var schemaTemplate struct {
	once sync.Once
	name string
	err  error
}

func makeSchemaTemplate(admin string) (string, error) {
	name := uniqueName()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", err
	}
	s, err := postgres.Open(ctx, databaseURL(admin, name))
	if err == nil {
		// A database is copied only while nobody is connected to it.
		s.Close()
	}
	return name, err
}

func TestMain(m *testing.M) {
	code := m.Run()
	if schemaTemplate.name != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if conn, err := pgx.Connect(ctx, os.Getenv(envURL)); err == nil {
			_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+schemaTemplate.name+" WITH (FORCE)")
			conn.Close(ctx)
		}
	}
	os.Exit(code)
}

// uniqueName is a database name no other test uses, made of [a-z0-9_]:
// no quoting needed.
func uniqueName() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "docsapi_test_" + hex.EncodeToString(b)
}

// databaseURL is admin's URL with the database name instead.
func databaseURL(admin, name string) string {
	u, err := url.Parse(admin)
	if err != nil {
		return admin
	}
	u.Path = "/" + name
	return u.String()
}

// createDatabase creates a database with a unique name, a copy of template
// ("" for the server's default, empty), and returns its URL; it is dropped
// when the test ends.
func createDatabase(t testing.TB, template string) string {
	t.Helper()
	admin := adminURL(t)
	name := uniqueName()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("connect to %s: %v", envURL, err)
	}
	defer conn.Close(ctx)
	create := "CREATE DATABASE " + name
	if template != "" {
		create += " TEMPLATE " + template
	}
	if _, err := conn.Exec(ctx, create); err != nil {
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

	if _, err := url.Parse(admin); err != nil {
		t.Fatalf("%s is not a URL: %v", envURL, err)
	}
	return databaseURL(admin, name)
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
