package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var keyPattern = regexp.MustCompile(`^mint_[A-Za-z0-9]{43}\n$`)

func TestProjectAndKeyCommands(t *testing.T) {
	data := filepath.Join(t.TempDir(), "state")
	env := map[string]string{"DOCSAPI_DATA": data}

	r := runCLI(t, env, "", "project", "create", "--id", "handbook", "--repository", "https://github.com/acme/handbook.git",
		"--ref", "main", "--model", "m1", "--name", "The handbook")
	r.expect(t, exitOK, "created project handbook", filepath.Join(data, dbFileName))
	if fi, err := os.Stat(data); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the data folder: %v, %v; want mode 0700", fi.Mode(), err)
	}
	runCLI(t, env, "", "project", "create", "--id", "wiki", "--repository", "relative/wiki.git").expect(t, exitOK)
	runCLI(t, env, "", "project", "create", "--id", "wiki", "--repository", "x").expect(t, exitFailure, `project "wiki" already exists`)
	runCLI(t, env, "", "project", "create", "--id", "bad id", "--repository", "x").expect(t, exitFailure, `project ID "bad id" must be`)

	r = runCLI(t, env, "", "project", "list")
	r.expect(t, exitOK)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID ") || !strings.Contains(lines[1], "The handbook") || !strings.HasPrefix(lines[2], "wiki ") {
		t.Fatalf("project list:\n%s", r.stdout)
	}
	r = runCLI(t, env, "", "project", "list", "--format", "json")
	r.expect(t, exitOK)
	var wiki projectJSON
	if err := json.Unmarshal([]byte(strings.Split(r.stdout, "\n")[1]), &wiki); err != nil {
		t.Fatal(err)
	}
	// A local path is stored absolute: the server does not run where this
	// command ran.
	if !filepath.IsAbs(wiki.Repository) || !strings.HasSuffix(wiki.Repository, filepath.Join("relative", "wiki.git")) {
		t.Errorf("wiki's repository: %q", wiki.Repository)
	}

	// key create prints the key alone on stdout, and the details on stderr.
	r = runCLI(t, env, "", "key", "create", "--project", "handbook", "--project", "wiki", "--scope", "read,write", "--name", "bot", "--expires", "30d")
	r.expect(t, exitOK, "created key key_", `("bot")`, "handbook, wiki", "read,write", "shown only this once")
	if !keyPattern.MatchString(r.stdout) {
		t.Fatalf("key create's stdout is %q, want the key and a newline only", r.stdout)
	}
	secret := strings.TrimSpace(r.stdout)
	if strings.Contains(r.stderr, secret) {
		t.Fatal("the key was printed on stderr too")
	}
	runCLI(t, env, "", "key", "create", "--project", "nope", "--scope", "read").expect(t, exitFailure, `no project "nope"`)

	r = runCLI(t, env, "", "key", "list")
	r.expect(t, exitOK)
	if !strings.Contains(r.stdout, "HINT") || !strings.Contains(r.stdout, secret[:9]+"…") || strings.Contains(r.stdout, secret) {
		t.Fatalf("key list:\n%s", r.stdout)
	}
	r = runCLI(t, env, "", "key", "list", "--format", "json")
	r.expect(t, exitOK)
	if strings.Contains(r.stdout, secret) || strings.Contains(strings.ToLower(r.stdout), "hash") {
		t.Fatalf("key list --format json shows a secret or hash:\n%s", r.stdout)
	}
	var key keyJSON
	if err := json.Unmarshal([]byte(r.stdout), &key); err != nil {
		t.Fatal(err)
	}
	if key.Name != "bot" || len(key.Projects) != 2 || len(key.Scopes) != 2 || key.ExpiresAt == nil || key.RevokedAt != nil {
		t.Fatalf("key: %+v", key)
	}

	runCLI(t, env, "", "key", "revoke", key.ID).expect(t, exitOK, "revoked key "+key.ID)
	r = runCLI(t, env, "", "key", "list", "--format", "json")
	if err := json.Unmarshal([]byte(r.stdout), &key); err != nil || key.RevokedAt == nil {
		t.Fatalf("after revoke: %+v, %v", key, err)
	}
	runCLI(t, env, "", "key", "revoke", "key_nope").expect(t, exitFailure, `no key "key_nope"`, "docsapi key list")
	runCLI(t, env, "", "key", "revoke").expect(t, exitUsage, "missing argument ID")
}

func TestAdminCommandsNeedAnExistingDatabase(t *testing.T) {
	data := filepath.Join(t.TempDir(), "typo")
	for _, args := range [][]string{{"project", "list"}, {"key", "list"}, {"key", "revoke", "k"}, {"key", "create", "--project", "p", "--scope", "read"}} {
		r := runCLI(t, nil, "", append(args, "--data", data)...)
		r.expect(t, exitFailure, "no database at "+filepath.Join(data, dbFileName), "--data")
	}
	if _, err := os.Stat(data); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the commands created %s: %v", data, err)
	}
}

func TestAdminStorageFromTheConfigFile(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, filepath.Join(dir, "docsapi.json"), `{"data": "state"}`)
	runCLI(t, nil, "", "project", "create", "--config", cfg, "--id", "p", "--repository", "r").expect(t, exitOK)
	if _, err := os.Stat(filepath.Join(dir, "state", dbFileName)); err != nil {
		t.Fatalf("the database is not where the file says: %v", err)
	}
	r := runCLI(t, map[string]string{"DOCSAPI_CONFIG": cfg}, "", "project", "list", "--format", "json")
	r.expect(t, exitOK)
	if !strings.Contains(r.stdout, `"id":"p"`) {
		t.Fatalf("project list through DOCSAPI_CONFIG: %s", r.stdout)
	}
	// A flag wins over the file.
	other := filepath.Join(dir, "other")
	runCLI(t, nil, "", "project", "create", "--config", cfg, "--data", other, "--id", "q", "--repository", "r").expect(t, exitOK)
	if _, err := os.Stat(filepath.Join(other, dbFileName)); err != nil {
		t.Fatalf("--data did not win over the file: %v", err)
	}
}
