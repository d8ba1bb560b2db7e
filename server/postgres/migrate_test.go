package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi-go/server/postgres"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// migrationCount is the number of migration files: the version Open brings
// a database to.
func migrationCount(t *testing.T) int {
	t.Helper()
	files, err := os.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	return len(files)
}

// appliedVersions returns the versions recorded in schema_migrations.
func appliedVersions(t *testing.T, conn *pgx.Conn) []int {
	t.Helper()
	rows, err := conn.Query(t.Context(), `SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

// catalog describes a database's tables, columns, indexes and recorded
// versions, to tell whether anything changed.
func catalog(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	var out string
	if err := conn.QueryRow(t.Context(), `SELECT
		coalesce((SELECT string_agg(table_name || '.' || column_name || ' ' || data_type, E'\n' ORDER BY table_name, ordinal_position)
		          FROM information_schema.columns WHERE table_schema = 'public'), '') || E'\n--\n' ||
		coalesce((SELECT string_agg(indexdef, E'\n' ORDER BY indexdef) FROM pg_indexes WHERE schemaname = 'public'), '') || E'\n--\n' ||
		coalesce((SELECT string_agg(version || ' ' || name || ' ' || applied_at, E'\n' ORDER BY version) FROM schema_migrations), '')`).Scan(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// Replicas that start together on an empty database all open it, and the
// schema is migrated once: the others wait on the advisory lock and find
// it done. Opening again changes nothing and keeps the data.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	db := newDatabase(t)
	const replicas = 5
	stores := make([]*postgres.Store, replicas)
	errs := make([]error, replicas)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Go(func() {
			<-start
			stores[i], errs[i] = postgres.Open(t.Context(), db)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d: %v", i, err)
		} else {
			t.Cleanup(func() { stores[i].Close() })
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	conn := connect(t, db)
	want := make([]int, migrationCount(t))
	for i := range want {
		want[i] = i + 1
	}
	if d := cmp.Diff(want, appliedVersions(t, conn)); d != "" {
		t.Fatalf("schema_migrations after concurrent opens (-want +got):\n%s", d)
	}

	// Every replica's store works on the one schema.
	ctx := t.Context()
	must(t, stores[0].CreateProject(ctx, storetest.NewProject("p1")))
	for i, s := range stores {
		if _, err := s.Project(ctx, "p1"); err != nil {
			t.Errorf("store %d: Project: %v", i, err)
		}
	}

	before := catalog(t, conn)
	again := open(t, db)
	if after := catalog(t, conn); after != before {
		t.Errorf("re-opening changed the schema:\n%s", cmp.Diff(before, after))
	}
	if _, err := again.Project(ctx, "p1"); err != nil {
		t.Errorf("Project after re-opening: %v", err)
	}
}

// A database migrated by a newer program is refused, with an error naming
// both versions, and left exactly as it was.
func TestOpenRefusesNewerSchema(t *testing.T) {
	adminURL(t)
	t.Run("Migrated", func(t *testing.T) {
		db := newDatabase(t)
		s := open(t, db)
		must(t, s.CreateProject(t.Context(), storetest.NewProject("p1")))
		must(t, s.Close())
		conn := connect(t, db)
		if _, err := conn.Exec(t.Context(), `INSERT INTO schema_migrations (version, name) VALUES (999, '0999_future.sql')`); err != nil {
			t.Fatal(err)
		}
		wantRefused(t, db, conn, 999)
	})
	t.Run("Empty", func(t *testing.T) {
		// Only the version table: had Open migrated before checking, the
		// tables of 0001 would appear.
		db := newDatabase(t)
		conn := connect(t, db)
		if _, err := conn.Exec(t.Context(), `CREATE TABLE schema_migrations (
			version integer NOT NULL PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
			INSERT INTO schema_migrations (version, name) VALUES (1000, '1000_future.sql')`); err != nil {
			t.Fatal(err)
		}
		wantRefused(t, db, conn, 1000)
	})
}

// wantRefused opens the database at dbURL, whose version is have, and checks
// the refusal and that nothing changed.
func wantRefused(t *testing.T, dbURL string, conn *pgx.Conn, have int) {
	t.Helper()
	before := catalog(t, conn)
	s, err := postgres.Open(t.Context(), dbURL)
	if err == nil {
		s.Close()
		t.Fatalf("Open of a database at version %d succeeded", have)
	}
	know := strconv.Itoa(migrationCount(t))
	if msg := err.Error(); !strings.Contains(msg, strconv.Itoa(have)) || !strings.Contains(msg, "("+know+")") {
		t.Errorf("Open: %q; want an error naming version %d and this program's %s", msg, have, know)
	}
	if after := catalog(t, conn); after != before {
		t.Errorf("the refused Open changed the database:\n%s", cmp.Diff(before, after))
	}
}

// Options are checked before anything connects, with errors that say what
// is wrong; a malformed URL's error does not show its password.
func TestOpenValidatesArguments(t *testing.T) {
	ctx := context.Background()
	const url = "postgres://u@127.0.0.1:1/db"
	for name, tc := range map[string]struct {
		url  string
		opts []postgres.Option
		want string
	}{
		"zero max conns":     {url, []postgres.Option{postgres.WithMaxConns(0)}, "max connections 0"},
		"negative max conns": {url, []postgres.Option{postgres.WithMaxConns(-3)}, "max connections -3"},
		"nil logger":         {url, []postgres.Option{postgres.WithLogger(nil)}, "nil logger"},
		"nil option":         {url, []postgres.Option{nil}, "nil option"},
		"empty URL":          {"", nil, "empty database URL"},
		"malformed URL":      {"postgres://u:s3cr3t@127.0.0.1:notaport/db", nil, "postgres:"},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := postgres.Open(ctx, tc.url, tc.opts...)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open: %q, want it to mention %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("Open: %q shows the password", err)
			}
		})
	}
}

// The logger of WithLogger hears of the migration; WithMaxConns bounds the
// pool (a store with one connection still serves a transaction and a
// single-statement call in turn).
func TestOpenWithOptions(t *testing.T) {
	db := newDatabase(t)
	var buf bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &buf, mu: &mu}, nil))
	s := open(t, db, postgres.WithMaxConns(1), postgres.WithLogger(logger))
	mu.Lock()
	logged := buf.String()
	mu.Unlock()
	if !strings.Contains(logged, "schema migrated") || !strings.Contains(logged, "to_version="+strconv.Itoa(migrationCount(t))) {
		t.Errorf("log = %q, want the migration", logged)
	}
	must(t, s.CreateProject(t.Context(), storetest.NewProject("p1")))
	if _, _, err := s.CreateJob(t.Context(), storetest.NewJob("p1", "j1", storetest.At(0))); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// After Close every method answers ErrClosed, and a second Close is
// harmless.
func TestClosedStore(t *testing.T) {
	db := newDatabase(t)
	s, err := postgres.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	must(t, s.Close())
	must(t, s.Close())
	ctx := t.Context()
	_, _, createErr := s.CreateJob(ctx, storetest.NewJob("p1", "j1", storetest.At(0)))
	_, claimErr := s.ClaimJob(ctx, store.Claim{Owner: "w", Now: storetest.At(0), LeaseFor: 1e9, MaxAttempts: 1})
	_, viewsErr := s.QueryViews(ctx, store.ViewsQuery{ProjectID: "p1", Limit: 1})
	_, clockErr := s.LeaseNow(ctx)
	for name, err := range map[string]error{
		"Ping":          s.Ping(ctx),
		"CreateProject": s.CreateProject(ctx, storetest.NewProject("p1")),
		"CreateJob":     createErr,
		"ClaimJob":      claimErr,
		"AddViews":      s.AddViews(ctx, []store.ViewCount{{ProjectID: "p1", Path: "/", Hour: storetest.Hour(0), Human: 1}}),
		"QueryViews":    viewsErr,
		"LeaseNow":      clockErr,
	} {
		if !errors.Is(err, store.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
}
