package sqlite

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/internal/sqlstore"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/migration"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// t0 is the tests' clock. Every method is told the time, so any instant
// works; one far in the future shows that nothing reads the wall clock.
var t0 = time.Date(2100, time.January, 2, 3, 0, 0, 0, time.UTC)

// dbPath returns a new database path in a temporary directory.
func dbPath(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "test.db")
}

// open opens path and closes it at the end of the test.
func open(t *testing.T, path string, opts ...Option) *Store {
	t.Helper()
	s, err := Open(t.Context(), path, opts...)
	return storetest.Opened(t, s, err)
}

// rawOpen opens path with no pragmas and no migrations, as another program
// would, and closes it at the end of the test.
func rawOpen(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func mustProject(t *testing.T, s *Store, id string) {
	t.Helper()
	must(t, "CreateProject "+id, s.CreateProject(t.Context(), store.Project{ID: id, Name: id, CreatedAt: t0}))
}

func mustJob(t *testing.T, s *Store, project, id string, created time.Time) store.Job {
	t.Helper()
	j, _, err := s.CreateJob(t.Context(), store.NewJob{ID: id, ProjectID: project, Prompt: "prompt " + id, CreatedAt: created})
	must(t, "CreateJob "+id, err)
	return j
}

func queryInt(t *testing.T, db *sql.DB, query string, args ...any) int64 {
	t.Helper()
	var n int64
	must(t, query, db.QueryRowContext(t.Context(), query, args...).Scan(&n))
	return n
}

func queryString(t *testing.T, db *sql.DB, query string) string {
	t.Helper()
	var s string
	must(t, query, db.QueryRowContext(t.Context(), query).Scan(&s))
	return s
}

func latestVersion(t *testing.T) int {
	t.Helper()
	ms, err := loadMigrations(migrationFiles)
	must(t, "loadMigrations", err)
	return ms[len(ms)-1].Version
}

func TestMigrationsApplyAndReopen(t *testing.T) {
	path := dbPath(t)
	s, err := Open(t.Context(), path)
	must(t, "first Open", err)
	if got, want := queryInt(t, s.r, "PRAGMA user_version"), int64(latestVersion(t)); got != want {
		t.Errorf("user_version = %d, want %d", got, want)
	}
	for _, table := range []string{"projects", "api_keys", "api_key_projects", "api_key_scopes",
		"jobs", "job_prompts", "idempotency_keys", "view_hour_rolls", "view_day_rolls", "view_week_rolls",
		"view_days", "view_day_paths", "visitor_days", "visitor_sketches", "visitor_week_rolls", "visitor_salts",
		"feedback", "search_queries", "site_tokens", "ended_sessions"} {
		if n := queryInt(t, s.r, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?", table); n != 1 {
			t.Errorf("table %s missing after migration", table)
		}
	}
	mustProject(t, s, "p1")
	must(t, "first Close", s.Close())

	// Reopening finds the schema current, changes nothing and keeps the
	// data.
	s2 := open(t, path)
	if got, want := queryInt(t, s2.r, "PRAGMA user_version"), int64(latestVersion(t)); got != want {
		t.Errorf("user_version after reopen = %d, want %d", got, want)
	}
	if _, err := s2.Project(t.Context(), "p1"); err != nil {
		t.Errorf("project lost on reopen: %v", err)
	}
	// And a second Store on the same file at the same time is harmless too.
	s3 := open(t, path)
	if _, err := s3.Project(t.Context(), "p1"); err != nil {
		t.Errorf("second Store: %v", err)
	}
}

func TestConcurrentOpenOfFreshFile(t *testing.T) {
	path := dbPath(t)
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	stores := make([]*Store, n)
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = Open(t.Context(), path, WithBusyTimeout(30*time.Second)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d: %v", i, err)
			continue
		}
		defer stores[i].Close()
	}
	if t.Failed() {
		return
	}
	if got, want := queryInt(t, stores[0].r, "PRAGMA user_version"), int64(latestVersion(t)); got != want {
		t.Errorf("user_version = %d, want %d", got, want)
	}
}

func TestNewerSchemaRefusedUntouched(t *testing.T) {
	path := dbPath(t)
	know := latestVersion(t)
	newer := know + 7
	db := rawOpen(t, path)
	for _, q := range []string{
		"CREATE TABLE from_the_future (x TEXT)",
		"INSERT INTO from_the_future VALUES ('keep me')",
		fmt.Sprintf("PRAGMA user_version = %d", newer),
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	must(t, "close raw", db.Close())
	before, err := os.ReadFile(path)
	must(t, "read file", err)

	s, err := Open(t.Context(), path)
	if err == nil {
		s.Close()
		t.Fatal("Open of a newer database succeeded")
	}
	for _, v := range []int{newer, know} {
		if !strings.Contains(err.Error(), strconv.Itoa(v)) {
			t.Errorf("error %q does not name version %d", err, v)
		}
	}

	after, err := os.ReadFile(path)
	must(t, "read file again", err)
	if !bytes.Equal(before, after) {
		t.Error("the refused database file was modified")
	}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Stat(path + suffix); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s%s exists after a refused Open (err %v)", filepath.Base(path), suffix, err)
		}
	}
}

func TestWALAndPragmasOnEveryConnection(t *testing.T) {
	path := dbPath(t)
	s := open(t, path, WithBusyTimeout(1234*time.Millisecond), WithReaders(3))
	ctx := t.Context()

	check := func(what string, c *sql.Conn, queryOnly int64) {
		t.Helper()
		for _, p := range []struct {
			pragma string
			want   string
		}{
			{"journal_mode", "wal"},
			{"busy_timeout", "1234"},
			{"foreign_keys", "1"},
			{"synchronous", "1"}, // NORMAL
			{"query_only", strconv.FormatInt(queryOnly, 10)},
		} {
			var got string
			if err := c.QueryRowContext(ctx, "PRAGMA "+p.pragma).Scan(&got); err != nil {
				t.Fatalf("%s: PRAGMA %s: %v", what, p.pragma, err)
			}
			if got != p.want {
				t.Errorf("%s: PRAGMA %s = %s, want %s", what, p.pragma, got, p.want)
			}
		}
	}
	// Hold three reader connections at once, so they are three distinct
	// connections, each of which must have the pragmas.
	var conns []*sql.Conn
	for i := range 3 {
		c, err := s.r.Conn(ctx)
		must(t, "reader conn", err)
		defer c.Close()
		check(fmt.Sprintf("reader %d", i), c, 1)
		conns = append(conns, c)
	}
	if _, err := conns[0].ExecContext(ctx, "INSERT INTO projects (id, name, repository, ref, model) VALUES ('x', '', '', '', '')"); err == nil {
		t.Error("a reader connection could write")
	}
	w, err := s.w.Conn(ctx)
	must(t, "writer conn", err)
	check("writer", w, 0)
	w.Close()

	// WAL is a property of the file: another program sees it too.
	if got := queryString(t, rawOpen(t, path), "PRAGMA journal_mode"); got != "wal" {
		t.Errorf("journal_mode seen by another connection = %q, want wal", got)
	}
}

func TestOpenRefusesBadArguments(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		path string
		opts []Option
	}{
		{"empty path", "", nil},
		{"memory", ":memory:", nil},
		{"uri", "file:x.db?mode=memory", nil},
		{"zero busy timeout", filepath.Join(dir, "a.db"), []Option{WithBusyTimeout(0)}},
		{"negative busy timeout", filepath.Join(dir, "a.db"), []Option{WithBusyTimeout(-time.Second)}},
		{"no readers", filepath.Join(dir, "a.db"), []Option{WithReaders(0)}},
		{"nil option", filepath.Join(dir, "a.db"), []Option{nil}},
		{"missing directory", filepath.Join(dir, "no", "such", "dir", "a.db"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(t.Context(), tc.path, tc.opts...)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "a.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused Open created the database (err %v)", err)
	}
}

func TestPathWithURICharacters(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "we?ird#na%20me")
	must(t, "mkdir", os.Mkdir(dir, 0o755))
	path := filepath.Join(dir, "db?x=1")
	s := open(t, path)
	mustProject(t, s, "p1")
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database not at its path: %v", err)
	}
}

func TestLoadMigrations(t *testing.T) {
	sql := &fstest.MapFile{Data: []byte("CREATE TABLE t (x);")}
	for _, tc := range []struct {
		name  string
		files fstest.MapFS
		ok    bool
	}{
		{"in order", fstest.MapFS{"migrations/0001_a.sql": sql, "migrations/0002_b.sql": sql}, true},
		{"gap", fstest.MapFS{"migrations/0001_a.sql": sql, "migrations/0003_c.sql": sql}, false},
		{"duplicate", fstest.MapFS{"migrations/0001_a.sql": sql, "migrations/0001_b.sql": sql}, false},
		{"not starting at 1", fstest.MapFS{"migrations/0002_a.sql": sql}, false},
		{"bad name", fstest.MapFS{"migrations/init.sql": sql}, false},
		{"none", fstest.MapFS{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadMigrations(tc.files)
			if (err == nil) != tc.ok {
				t.Errorf("loadMigrations: error %v, want ok = %v", err, tc.ok)
			}
		})
	}
	if _, err := loadMigrations(migrationFiles); err != nil {
		t.Errorf("the embedded migrations: %v", err)
	}
}

func TestFailedMigrationRollsBack(t *testing.T) {
	path := dbPath(t)
	db := rawOpen(t, path)
	db.SetMaxOpenConns(1)
	ms := []migration.Migration{
		{Version: 1, Name: "0001_one.sql", SQL: "CREATE TABLE one (x);"},
		{Version: 2, Name: "0002_two.sql", SQL: "CREATE TABLE two (x); INSERT INTO nowhere VALUES (1);"},
	}
	if err := migrate(t.Context(), db, ms); err == nil || !strings.Contains(err.Error(), "0002_two.sql") {
		t.Fatalf("migrate = %v, want an error naming 0002_two.sql", err)
	}
	if v := queryInt(t, db, "PRAGMA user_version"); v != 1 {
		t.Errorf("user_version = %d, want 1 (the last complete migration)", v)
	}
	if n := queryInt(t, db, "SELECT count(*) FROM sqlite_schema WHERE name = 'two'"); n != 0 {
		t.Error("the failed migration's table exists")
	}

	// Fixed, the migration applies on the next run, and only it.
	ms[1].SQL = "CREATE TABLE two (x);"
	must(t, "migrate again", migrate(t.Context(), db, ms))
	if v := queryInt(t, db, "PRAGMA user_version"); v != 2 {
		t.Errorf("user_version = %d, want 2", v)
	}
	must(t, "migrate when current", migrate(t.Context(), db, ms))
}

// TestConcurrentClaims claims from many goroutines through two Stores on one
// file, as two server processes would: every job must be leased exactly once.
func TestConcurrentClaims(t *testing.T) {
	path := dbPath(t)
	stores := []*Store{
		open(t, path, WithBusyTimeout(time.Minute)),
		open(t, path, WithBusyTimeout(time.Minute)),
	}
	mustProject(t, stores[0], "p")
	const jobs = 60
	for i := range jobs {
		mustJob(t, stores[i%2], "p", fmt.Sprintf("job-%03d", i), t0.Add(time.Duration(i)*time.Second))
	}

	const workers = 8
	var (
		mu    sync.Mutex
		owner = map[string]string{}
		wg    sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			s := stores[w%2]
			me := fmt.Sprintf("worker-%d", w)
			for {
				j, err := s.ClaimJob(t.Context(), store.Claim{Owner: me, Now: t0.Add(time.Hour), LeaseFor: time.Hour, MaxAttempts: 3})
				if errors.Is(err, store.ErrNoJob) {
					return
				}
				if err != nil {
					t.Errorf("%s: ClaimJob: %v", me, err)
					return
				}
				if j.LeaseOwner != me || j.Attempts != 1 {
					t.Errorf("%s: claimed %s with owner %q, attempts %d", me, j.ID, j.LeaseOwner, j.Attempts)
				}
				mu.Lock()
				if prev, dup := owner[j.ID]; dup {
					t.Errorf("job %s leased twice: to %s and %s", j.ID, prev, me)
				}
				owner[j.ID] = me
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(owner) != jobs {
		t.Errorf("%d jobs claimed, want %d", len(owner), jobs)
	}
	for id, me := range owner {
		j, err := stores[0].Job(t.Context(), "p", id)
		must(t, "Job", err)
		if j.LeaseOwner != me || j.Attempts != 1 {
			t.Errorf("job %s stored with owner %q, attempts %d; want %q, 1", id, j.LeaseOwner, j.Attempts, me)
		}
	}
}

// TestConcurrentAddViews adds from many goroutines through two Stores: the
// sums must be exact, no increment lost to a read-modify-write race.
func TestConcurrentAddViews(t *testing.T) {
	path := dbPath(t)
	stores := []*Store{
		open(t, path, WithBusyTimeout(time.Minute)),
		open(t, path, WithBusyTimeout(time.Minute)),
	}
	const workers, batches = 8, 25
	hours := []time.Time{t0, t0.Add(time.Hour)}
	paths := []string{"/a", "/b", "/c"}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range batches {
				var batch []store.ViewCount
				for _, h := range hours {
					for _, p := range paths {
						batch = append(batch, store.ViewCount{ProjectID: "p", Path: p, Hour: h, Human: 1, AI: 2, Bot: 3})
					}
				}
				if err := stores[w%2].AddViews(t.Context(), batch); err != nil {
					t.Errorf("AddViews: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()

	n := int64(workers * batches)
	res, err := stores[0].QueryViews(t.Context(), store.ViewsQuery{ProjectID: "p", Limit: 10})
	must(t, "QueryViews", err)
	perPath := n * int64(len(hours))
	if want := (store.Counts{Human: perPath * 3, AI: 2 * perPath * 3}); res.Totals != want {
		t.Errorf("totals = %+v, want %+v", res.Totals, want)
	}
	for _, r := range res.Rows {
		if r.Human != perPath || r.AI != 2*perPath {
			t.Errorf("row %+v, want human %d ai %d", r, perPath, 2*perPath)
		}
	}
	if len(res.Rows) != len(paths) {
		t.Errorf("%d rows, want %d", len(res.Rows), len(paths))
	}
	if bot := storedBots(t, stores[0]); bot != 3*n*int64(len(hours)*len(paths)) {
		t.Errorf("bot sum = %d, want %d", bot, 3*n*int64(len(hours)*len(paths)))
	}
}

func TestAddViewsBatchIsAtomic(t *testing.T) {
	s := open(t, dbPath(t))
	ctx := t.Context()
	must(t, "AddViews", s.AddViews(ctx, []store.ViewCount{{ProjectID: "p", Path: "/full", Hour: t0, Human: math.MaxInt64}}))
	// The first count is fine, the second overflows: neither may stay.
	err := s.AddViews(ctx, []store.ViewCount{
		{ProjectID: "p", Path: "/new", Hour: t0, Human: 5},
		{ProjectID: "p", Path: "/full", Hour: t0, Human: 1},
	})
	if err == nil {
		t.Fatal("AddViews accepted a count that overflows")
	}
	res, err := s.QueryViews(ctx, store.ViewsQuery{ProjectID: "p", Limit: 10})
	must(t, "QueryViews", err)
	if len(res.Rows) != 1 || res.Rows[0].Path != "/full" || res.Rows[0].Human != math.MaxInt64 {
		t.Errorf("rows after a failed batch = %+v, want only /full unchanged", res.Rows)
	}
}

func TestExtendLeaseJudgesExpiryByTheTimeGiven(t *testing.T) {
	s := open(t, dbPath(t))
	ctx := t.Context()
	mustProject(t, s, "p")
	mustJob(t, s, "p", "j", t0)
	_, err := s.ClaimJob(ctx, store.Claim{Owner: "a", Now: t0, LeaseFor: time.Minute, MaxAttempts: 3})
	must(t, "ClaimJob", err)

	// The last instant of the lease still holds it.
	must(t, "ExtendLease at expiry", s.ExtendLease(ctx, "j", "a", t0.Add(time.Minute), time.Minute))
	// Just after the new expiry it is lost, though nobody claimed the job.
	if err := s.ExtendLease(ctx, "j", "a", t0.Add(2*time.Minute+time.Microsecond), 3*time.Minute); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("ExtendLease of an expired lease = %v, want %v", err, store.ErrLeaseLost)
	}
	j, err := s.Job(ctx, "p", "j")
	must(t, "Job", err)
	if want := t0.Add(2 * time.Minute); !j.LeaseExpiresAt.Equal(want) {
		t.Errorf("LeaseExpiresAt = %v, want %v (the refused extension must not move it)", j.LeaseExpiresAt, want)
	}
}

func TestClosedStore(t *testing.T) {
	s, err := Open(t.Context(), dbPath(t))
	must(t, "Open", err)
	must(t, "Close", s.Close())
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	ctx := t.Context()
	ignore2 := func(_ any, err error) error { return err }
	ignore3 := func(_ any, _ bool, err error) error { return err }
	for name, err := range map[string]error{
		"Ping":          s.Ping(ctx),
		"CreateProject": s.CreateProject(ctx, store.Project{ID: "p"}),
		"UpdateProject": s.UpdateProject(ctx, store.Project{ID: "p"}),
		"Project":       ignore2(s.Project(ctx, "p")),
		"Projects":      ignore2(s.Projects(ctx)),
		"CreateKey":     s.CreateKey(ctx, store.APIKey{ID: "k", Hash: []byte{1}}),
		"KeyByHash":     ignore2(s.KeyByHash(ctx, []byte{1})),
		"Keys":          ignore2(s.Keys(ctx)),
		"RevokeKey":     s.RevokeKey(ctx, "k", t0),
		"CreateJob":     ignore3(s.CreateJob(ctx, store.NewJob{ID: "j", ProjectID: "p", Prompt: "x"})),
		"Job":           ignore2(s.Job(ctx, "p", "j")),
		"AddPrompt":     ignore3(s.AddPrompt(ctx, store.NewPrompt{ProjectID: "p", JobID: "j", Prompt: "x"})),
		"ArchiveJob":    ignore2(s.ArchiveJob(ctx, "p", "j", t0)),
		"ClaimJob":      ignore2(s.ClaimJob(ctx, store.Claim{Owner: "o", Now: t0, LeaseFor: time.Minute, MaxAttempts: 1})),
		"ExtendLease":   s.ExtendLease(ctx, "j", "o", t0, time.Minute),
		"FinishJob":     ignore2(s.FinishJob(ctx, store.Finish{JobID: "j", Owner: "o", Outcome: store.Failed})),
		"ReleaseJob":    s.ReleaseJob(ctx, "j", "o"),
		"AddViews":      s.AddViews(ctx, []store.ViewCount{{ProjectID: "p", Path: "/", Hour: t0, Human: 1}}),
		"QueryViews":    ignore2(s.QueryViews(ctx, store.ViewsQuery{ProjectID: "p", Limit: 1})),
	} {
		if !errors.Is(err, store.ErrClosed) {
			t.Errorf("%s after Close = %v, want %v", name, err, store.ErrClosed)
		}
	}
}

// TestQueryPlansUseIndexes pins the indexes the schema comments promise to
// the queries they were made for.
func TestQueryPlansUseIndexes(t *testing.T) {
	s := open(t, dbPath(t))
	plan := func(query string, args ...any) string {
		t.Helper()
		rows, err := s.r.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, args...)
		must(t, "EXPLAIN", err)
		defer rows.Close()
		var lines []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			must(t, "scan plan", rows.Scan(&id, &parent, &notused, &detail))
			lines = append(lines, detail)
		}
		must(t, "plan rows", rows.Err())
		return strings.Join(lines, "; ")
	}
	for _, tc := range []struct {
		name, query string
		args        []any
		index       string
	}{
		{"claim", readyJobQuery, []any{int64(0)}, "jobs_ready"},
		{"day rolls", rollRangeQuery(rollup.Daily), []any{"p", 0, 1}, "sqlite_autoindex_view_day_rolls_1"},
		{"hour rolls", rollRangeQuery(rollup.Hourly), []any{"p", 0, 1}, "sqlite_autoindex_view_hour_rolls_1"},
		{"week rolls", rollRangeQuery(rollup.Weekly), []any{"p", 0, 1}, "sqlite_autoindex_view_week_rolls_1"},
		{"closable visitor days", closableDaysQuery, []any{sqlstore.OpenDaysBehind}, "visitor_days_open"},
		{"key by hash", `SELECT ` + keyColumns + ` FROM api_keys WHERE hash = ?`, []any{[]byte{1}}, "sqlite_autoindex_api_keys_2"},
		{"keys in order", `SELECT ` + keyColumns + ` FROM api_keys ORDER BY created_at, id`, nil, "api_keys_by_created"},
		{"day series", rollSeriesQuery(rollup.Daily), []any{"p", 0, 1}, "sqlite_autoindex_view_day_rolls_1"},
		{"hour series", rollSeriesQuery(rollup.Hourly), []any{"p", 0, 1}, "sqlite_autoindex_view_hour_rolls_1"},
	} {
		if p := plan(tc.query, tc.args...); !strings.Contains(p, tc.index) || strings.Contains(p, "TEMP B-TREE FOR ORDER BY") {
			t.Errorf("%s: plan %q does not use %s without sorting", tc.name, p, tc.index)
		}
	}
	// The conversations by ID from a cursor, oldest first (the export)
	// and newest first (the dashboard): one index, read either way.
	for name, q := range map[string]store.ConversationsQuery{
		"conversations":                 {ProjectID: "p", Limit: 10},
		"conversations after":           {ProjectID: "p", After: "01JZA000000000000000000001", Limit: 10, Resolution: store.Unanswered},
		"conversations newest":          {ProjectID: "p", Limit: 10, Newest: true},
		"conversations newest, earlier": {ProjectID: "p", After: "01JZA000000000000000000001", Limit: 10, Resolution: store.Unanswered, Newest: true},
	} {
		query, args := conversationsQuery(q)
		if p := plan(query, args...); !strings.Contains(p, "assistant_exchanges_by_id") || strings.Contains(p, "TEMP B-TREE FOR ORDER BY") {
			t.Errorf("%s: plan %q does not use assistant_exchanges_by_id without sorting", name, p)
		}
	}
	// The job list, with every filter and a cursor, and with none.
	for name, q := range map[string]store.JobsQuery{
		"jobs list":          {JobFilter: store.JobFilter{ProjectID: "p"}, Limit: 10},
		"jobs list filtered": {JobFilter: store.JobFilter{ProjectID: "p", From: time.Unix(1, 0), To: time.Unix(2, 0), Statuses: []store.JobStatus{store.JobStatusActive, store.JobStatusFailed}}, Limit: 10, After: &store.JobKey{CreatedAt: time.Unix(2, 0), ID: "j"}},
	} {
		query, args := listJobsQuery(q)
		if p := plan(query, args...); !strings.Contains(p, "jobs_by_time") || strings.Contains(p, "TEMP B-TREE FOR ORDER BY") {
			t.Errorf("%s: plan %q does not use jobs_by_time without sorting", name, p)
		}
		// Each job's first prompt is one seek of the prompts' primary key.
		if p := plan(query, args...); !strings.Contains(p, "SEARCH p USING PRIMARY KEY (job_id=? AND position=?)") {
			t.Errorf("%s: plan %q does not find the first prompt by its primary key", name, p)
		}
	}
}
