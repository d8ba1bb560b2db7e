package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// serveRefusal runs serve and returns its result, which must come before
// it listens; a serve that starts anyway is stopped after a while, and the
// test fails on its exit code.
func serveRefusal(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	return runCLIContext(ctx, t, env, "", append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
}

// newSecretFile writes a secret file of n random bytes with mode perm.
func newSecretFile(t *testing.T, path string, n int, perm os.FileMode) string {
	t.Helper()
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 1)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
	return path
}

// serve refuses, at start and before it opens the database, a secret file
// that other users may read, of the wrong size, or that is no file, with
// an error naming the file; and a DOCSAPI_SECRET that is not a secret,
// without repeating it.
func TestServeRefusesABadSecret(t *testing.T) {
	for _, tt := range []struct {
		name string
		// setup makes the secret in the data folder data and returns
		// serve's extra arguments and environment.
		setup func(t *testing.T, data string) ([]string, map[string]string)
		want  []string // in the error, with DATA for the data folder
	}{
		{"the default file readable by others", func(t *testing.T, data string) ([]string, map[string]string) {
			newSecretFile(t, filepath.Join(data, "secret.key"), 32, 0o644)
			return nil, nil
		}, []string{"the secret file DATA/secret.key (from default) has mode -rw-r--r--", "chmod 600 DATA/secret.key"}},
		{"a named file readable by its group", func(t *testing.T, data string) ([]string, map[string]string) {
			return []string{"--secret-file", newSecretFile(t, filepath.Join(data, "..", "keys", "s.key"), 32, 0o640)}, nil
		}, []string{"keys/s.key (from --secret-file) has mode -rw-r-----"}},
		{"a file one byte short", func(t *testing.T, data string) ([]string, map[string]string) {
			newSecretFile(t, filepath.Join(data, "secret.key"), 31, 0o600)
			return nil, nil
		}, []string{"DATA/secret.key (from default) must hold exactly 32 random bytes, and holds 31 bytes"}},
		{"a file one byte long", func(t *testing.T, data string) ([]string, map[string]string) {
			return nil, map[string]string{"DOCSAPI_SECRET_FILE": newSecretFile(t, filepath.Join(data, "s.key"), 33, 0o400)}
		}, []string{"DATA/s.key (from DOCSAPI_SECRET_FILE) must hold exactly 32 random bytes, and holds more than that"}},
		{"a folder", func(t *testing.T, data string) ([]string, map[string]string) {
			if err := os.MkdirAll(filepath.Join(data, "secret.key"), 0o700); err != nil {
				t.Fatal(err)
			}
			return nil, nil
		}, []string{"DATA/secret.key (from default) is not a regular file"}},
		{"a link to nothing", func(t *testing.T, data string) ([]string, map[string]string) {
			if err := os.MkdirAll(data, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(data, "gone"), filepath.Join(data, "secret.key")); err != nil {
				t.Fatal(err)
			}
			return nil, nil
		}, []string{"DATA/secret.key (from default) cannot be read"}},
		{"a named file that is missing", func(t *testing.T, data string) ([]string, map[string]string) {
			return []string{"--secret-file", filepath.Join(data, "missing.key")}, nil
		}, []string{"DATA/missing.key (from --secret-file) does not exist"}},
		{"DOCSAPI_SECRET not in base64", func(t *testing.T, data string) ([]string, map[string]string) {
			return nil, map[string]string{"DOCSAPI_SECRET": "not-base64-but-a-password!"}
		}, []string{"DOCSAPI_SECRET must hold 32 random bytes in base64"}},
		{"DOCSAPI_SECRET too short", func(t *testing.T, data string) ([]string, map[string]string) {
			return nil, map[string]string{"DOCSAPI_SECRET": base64.StdEncoding.EncodeToString([]byte("sixteen bytes...")[:16])}
		}, []string{"DOCSAPI_SECRET must hold 32 random bytes in base64"}},
		{"both variables", func(t *testing.T, data string) ([]string, map[string]string) {
			return nil, map[string]string{"DOCSAPI_SECRET": base64.StdEncoding.EncodeToString(make([]byte, 32)), "DOCSAPI_SECRET_FILE": filepath.Join(data, "s.key")}
		}, []string{"DOCSAPI_SECRET_FILE and DOCSAPI_SECRET are both set"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "data")
			args, extra := tt.setup(t, data)
			env := map[string]string{"HOME": dir, "DOCSAPI_DATA": data}
			for k, v := range extra {
				env[k] = v
			}
			r := serveRefusal(t, env, args...)
			var want []string
			for _, w := range tt.want {
				want = append(want, strings.ReplaceAll(w, "DATA", data))
			}
			r.expect(t, exitUsage, want...)
			if v := env["DOCSAPI_SECRET"]; v != "" && strings.Contains(r.stderr, v) {
				t.Errorf("the error repeats DOCSAPI_SECRET's value:\n%s", r.stderr)
			}
			if _, err := os.Stat(filepath.Join(data, dbFileName)); err == nil {
				t.Errorf("serve made the database before refusing its secret")
			}
			// --print-config checks the secret as serve does.
			r = runCLI(t, env, "", append([]string{"serve", "--print-config"}, args...)...)
			r.expect(t, exitUsage, want...)
		})
	}
}

// Where the secret comes from: --secret-file, then the environment, then
// the file's secretFile (relative to the file), then secret.key in the
// data folder, which serve makes 0600 at its first start and reads at the
// next; with PostgreSQL, the default data folder's.
func TestServeSecretSetting(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	env := map[string]string{"HOME": dir, "DOCSAPI_DATA": data}
	named := newSecretFile(t, filepath.Join(dir, "named.key"), 32, 0o600)
	fromEnv := newSecretFile(t, filepath.Join(dir, "env.key"), 32, 0o600)
	inFile := newSecretFile(t, filepath.Join(dir, "conf", "file.key"), 32, 0o400)
	conf := writeFile(t, filepath.Join(dir, "conf", "docsapi.json"), `{"secretFile": "file.key"}`)
	for _, tt := range []struct {
		name string
		env  map[string]string
		args []string
		want string // secretFile printed, "" for none
		from string
	}{
		{"default", env, nil, filepath.Join(data, "secret.key"), "default"},
		{"file", env, []string{"--config", conf}, inFile, "configuration file"},
		{"environment over file", withEnv(env, "DOCSAPI_SECRET_FILE", fromEnv), []string{"--config", conf}, fromEnv, "DOCSAPI_SECRET_FILE"},
		{"the secret in the environment", withEnv(env, "DOCSAPI_SECRET", base64.StdEncoding.EncodeToString(make([]byte, 32))), []string{"--config", conf}, "", "DOCSAPI_SECRET"},
		{"flag over environment", withEnv(env, "DOCSAPI_SECRET_FILE", fromEnv), []string{"--config", conf, "--secret-file", named}, named, "--secret-file"},
		{"PostgreSQL", map[string]string{"HOME": dir, "DOCSAPI_DATABASE_URL": "postgres://docsapi@db.example.com/docsapi"}, nil, filepath.Join(dir, ".local", "share", "docsapi", "secret.key"), "default"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, tt.env, "", append([]string{"serve", "--print-config"}, tt.args...)...)
			r.expect(t, exitOK, "secretFile: from "+tt.from)
			got, _ := printedConfigOf(t, r)["secretFile"].(string)
			if got != tt.want {
				t.Errorf("secretFile printed %q, want %q", got, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(data, "secret.key")); err == nil {
		t.Error("--print-config made the secret file")
	}

	// The first start makes it, the next reads it.
	_, logs, stop := serveInProcess(t, env)
	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d:\n%s", code, logs)
	}
	path := filepath.Join(data, "secret.key")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("serve made no secret file: %v\n%s", err, logs)
	}
	if fi.Mode().Perm() != 0o600 || fi.Size() != 32 {
		t.Errorf("the secret file made has mode %s and %d bytes, want 0600 and 32", fi.Mode().Perm(), fi.Size())
	}
	if !strings.Contains(logs.String(), "made the secret file") || !strings.Contains(logs.String(), `"secret":"`+path+`"`) {
		t.Errorf("the logs do not say the secret file was made and used:\n%s", logs)
	}
	made, _ := os.ReadFile(path)
	_, logs, stop = serveInProcess(t, env)
	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d:\n%s", code, logs)
	}
	if again, _ := os.ReadFile(path); !bytes.Equal(again, made) || strings.Contains(logs.String(), "made the secret file") {
		t.Errorf("the second start made another secret:\n%s", logs)
	}
	if entries, _ := os.ReadDir(data); len(entries) == 0 {
		t.Error("the data folder is empty")
	} else {
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".secret-") {
				t.Errorf("serve left %s behind", e.Name())
			}
		}
	}
}

// printedConfigOf decodes what --print-config printed.
func printedConfigOf(t *testing.T, r result) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatalf("--print-config did not print JSON: %v\n%s", err, r.stdout)
	}
	return m
}

var dashCSRF = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// dashboardSession signs in to the dashboard at base with key, as a
// browser does, and returns the session cookie's value.
func dashboardSession(t *testing.T, base, key string) string {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, body := dashDo(t, c, http.MethodGet, base+"/dashboard/login", "", nil)
	m := dashCSRF.FindStringSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("the sign-in form: %d\n%s", resp.StatusCode, body)
	}
	resp, body = dashDo(t, c, http.MethodPost, base+"/dashboard/login", "", url.Values{"csrf": {m[1]}, "key": {key}})
	for _, ck := range resp.Cookies() {
		if ck.Name == "docsapi_session" && ck.Value != "" {
			return ck.Value
		}
	}
	t.Fatalf("signing in: %d, no session cookie\n%s", resp.StatusCode, body)
	return ""
}

// dashDo sends a request with the session cookie (if any) and a form (if
// any) through c (nil: a client that follows no redirect), and returns
// the answer with its body read.
func dashDo(t *testing.T, c *http.Client, method, target, cookie string, form url.Values) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(t.Context(), method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: "docsapi_session", Value: cookie})
	}
	if c == nil {
		c = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// The end to end of the secret outside the database, through docsapi
// serve on SQLite: a session survives a restart, since its secret is in
// the data folder; the database copied to another folder (a backup, which
// holds no secret file) refuses it; a sign-out is refused after a restart;
// and replacing the secret ends sessions and nothing else.
func TestServeSessionsAndTheSecret(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	env := map[string]string{"HOME": dir, "DOCSAPI_DATA": data}
	runCLI(t, env, "", "project", "create", "--id", "handbook", "--repository", "https://git.example.com/h.git").expect(t, exitOK)
	r := runCLI(t, env, "", "key", "create", "--project", "handbook", "--scope", "write")
	r.expect(t, exitOK)
	key := strings.TrimSpace(r.stdout)

	page := func(addr, cookie string) (int, string) {
		t.Helper()
		resp, _ := dashDo(t, nil, http.MethodGet, "http://"+addr+"/dashboard/projects/handbook/", cookie, nil)
		return resp.StatusCode, resp.Header.Get("Location")
	}
	start := func(env map[string]string) (string, func()) {
		t.Helper()
		addr, logs, stop := serveInProcess(t, env)
		return addr, func() {
			t.Helper()
			if code := stop(); code != exitOK {
				t.Fatalf("serve exited %d:\n%s", code, logs)
			}
		}
	}

	addr, stop := start(env)
	cookie := dashboardSession(t, "http://"+addr, key)
	if status, _ := page(addr, cookie); status != http.StatusOK {
		t.Fatalf("a new session: %d, want 200", status)
	}
	signedOut := dashboardSession(t, "http://"+addr, key)
	resp, body := dashDo(t, nil, http.MethodGet, "http://"+addr+"/dashboard/projects/handbook/", signedOut, nil)
	m := dashCSRF.FindStringSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("a page to sign out from: %d", resp.StatusCode)
	}
	if resp, _ := dashDo(t, nil, http.MethodPost, "http://"+addr+"/dashboard/logout", signedOut, url.Values{"csrf": {m[1]}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("signing out: %d", resp.StatusCode)
	}
	stop()

	// The database alone, in a folder of its own: what a backup holds.
	copied := filepath.Join(dir, "copy")
	if err := os.MkdirAll(copied, 0o700); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(data, dbFileName+"*")) // with its WAL, if any
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(copied, filepath.Base(f)), string(b))
	}
	addr, stop = start(withEnv(env, "DOCSAPI_DATA", copied))
	if status, to := page(addr, cookie); status != http.StatusSeeOther || to != "/dashboard/login" {
		t.Errorf("a copy of the database answers the session with %d to %q, want 303 to /dashboard/login", status, to)
	}
	stop()

	addr, stop = start(env)
	if status, _ := page(addr, cookie); status != http.StatusOK {
		t.Errorf("the session after a restart: %d, want 200", status)
	}
	if status, to := page(addr, signedOut); status != http.StatusSeeOther || to != "/dashboard/login?ended=signed-out" {
		t.Errorf("a signed-out session after a restart: %d to %q, want 303 to /dashboard/login?ended=signed-out", status, to)
	}
	stop()

	// Rotation: the secret file replaced (here removed, so that serve
	// makes another) ends the session; the key and the data stay.
	if err := os.Remove(filepath.Join(data, "secret.key")); err != nil {
		t.Fatal(err)
	}
	addr, stop = start(env)
	defer stop()
	if status, to := page(addr, cookie); status != http.StatusSeeOther || to != "/dashboard/login" {
		t.Errorf("the session after the secret was replaced: %d to %q, want 303 to /dashboard/login", status, to)
	}
	if status, body := apiCall(t.Context(), t, http.MethodGet, "http://"+addr+"/v2/agent/handbook/jobs", key, ""); status != http.StatusOK {
		t.Errorf("the key after the secret was replaced: %d %s", status, body)
	}
	if status, _ := page(addr, dashboardSession(t, "http://"+addr, key)); status != http.StatusOK {
		t.Errorf("a new session after the secret was replaced: %d, want 200", status)
	}
}
