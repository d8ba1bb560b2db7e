package main

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPostgresStorage runs the admin commands and serve on PostgreSQL, when
// DOCSAPI_TEST_POSTGRES_URL points at a server (CI starts one with
// .ci/postgres.sh). The database is made and dropped with psql, which keeps
// this package free of a driver of its own.
func TestPostgresStorage(t *testing.T) {
	dbURL := postgresDatabase(t)
	env := map[string]string{"DOCSAPI_DATABASE_URL": dbURL, "HOME": t.TempDir()}

	r := runCLI(t, env, "", "project", "create", "--id", "handbook", "--repository", "https://git.example.com/h.git")
	r.expect(t, exitOK, "created project handbook", "in PostgreSQL postgres://", ":xxxxx@")
	if strings.Contains(r.stderr, testDBPassword) {
		t.Errorf("project create showed the database password: %s", r.stderr)
	}
	r = runCLI(t, env, "", "key", "create", "--project", "handbook", "--scope", "write")
	r.expect(t, exitOK)
	if !keyPattern.MatchString(r.stdout) {
		t.Fatalf("key create: %q", r.stdout)
	}
	key := strings.TrimSpace(r.stdout)
	r = runCLI(t, env, "", "key", "list")
	r.expect(t, exitOK)
	if !strings.Contains(r.stdout, key[:9]) {
		t.Fatalf("key list:\n%s", r.stdout)
	}

	addr, logs, stop := serveInProcess(t, env, "--flush-interval", "50ms")
	base := "http://" + addr
	status, body := apiCall(t.Context(), t, http.MethodPost, base+"/v1/analytics/handbook/views", key,
		`{"views": [{"path": "/guide", "userAgent": "Mozilla/5.0", "count": 3}]}`)
	if status != http.StatusAccepted {
		t.Fatalf("ingestion: %d %s", status, body)
	}
	client := map[string]string{"DOCSAPI_KEY": key, "DOCSAPI_BASE_URL": base, "DOCSAPI_PROJECT": "handbook", "HOME": t.TempDir()}
	deadline := time.Now().Add(20 * time.Second)
	for {
		r = runCLI(t, client, "", "views", "export", "--format", "csv")
		if r.code == exitOK && r.stdout == "path,human,ai,total\n/guide,3,0,3\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the views never appeared in the export; last:\n%s\n%s", r.stdout, r.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d:\n%s", code, logs)
	}
	if strings.Contains(logs.String(), testDBPassword) || !strings.Contains(logs.String(), ":xxxxx@") {
		t.Errorf("the log does not hide the database password:\n%s", logs)
	}
}

// testDBPassword is put in the test's database URL to check that no output
// shows it. The test clusters trust local connections, so it is ignored
// there; a server that checks passwords gets the one of
// DOCSAPI_TEST_POSTGRES_URL.
const testDBPassword = "pw-SENTINEL"

// postgresDatabase creates a database of its own for the test on the server
// DOCSAPI_TEST_POSTGRES_URL names, dropped at the end, and returns its URL.
func postgresDatabase(t *testing.T) string {
	t.Helper()
	admin := os.Getenv("DOCSAPI_TEST_POSTGRES_URL")
	if admin == "" {
		t.Skip("DOCSAPI_TEST_POSTGRES_URL is not set; see .ci/postgres.sh")
	}
	psql := "psql"
	if dir := os.Getenv("DOCSAPI_TEST_POSTGRES_BIN"); dir != "" {
		psql = filepath.Join(dir, "psql")
	}
	if _, err := exec.LookPath(psql); err != nil {
		t.Skip("psql is not available to create the test's database")
	}
	b := make([]byte, 8)
	rand.Read(b)
	name := "docsapi_cli_" + hex.EncodeToString(b)
	sql := func(stmt string) {
		t.Helper()
		// psql reads only the URL's connection settings; query options such
		// as sslmode are understood too.
		if out, err := exec.Command(psql, admin, "-v", "ON_ERROR_STOP=1", "-q", "-c", stmt).CombinedOutput(); err != nil {
			t.Fatalf("psql %s: %v\n%s", stmt, err, out)
		}
	}
	sql("CREATE DATABASE " + name)
	t.Cleanup(func() { sql("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)") })
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	if _, has := u.User.Password(); !has {
		u.User = url.UserPassword(u.User.Username(), testDBPassword)
	}
	return u.String()
}
