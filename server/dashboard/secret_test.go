package dashboard_test

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/dashboard"
	"github.com/docsapi/docsapi-go/server/dashboard/internal/session"
)

// databaseValues returns every value of every row of every table of the
// SQLite database at path, as bytes: what a copy of the database (a
// backup, a dump) gives whoever holds it. Text is also taken decoded from
// hex and base64, in case a secret is kept spelled so.
func databaseValues(t *testing.T, path string) [][]byte {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables []string
	rows, err := db.Query(`SELECT name FROM sqlite_schema WHERE type = 'table'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	var values [][]byte
	for _, table := range tables {
		rows, err := db.Query(`SELECT * FROM "` + table + `"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			cells := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range cells {
				ptrs[i] = &cells[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, c := range cells {
				switch v := c.(type) {
				case []byte:
					values = append(values, v)
				case string:
					values = append(values, []byte(v))
					for _, dec := range []func(string) ([]byte, error){
						hex.DecodeString, base64.StdEncoding.DecodeString, base64.RawStdEncoding.DecodeString,
						base64.URLEncoding.DecodeString, base64.RawURLEncoding.DecodeString,
					} {
						if b, err := dec(v); err == nil && len(b) > 0 {
							values = append(values, b)
						}
					}
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return values
}

// An attacker with a copy of the database alone seals a session cookie
// with the dashboard's own code, taking every value the database holds as
// the secret (as it is, and through the server's own derivation) and every
// 32-byte value as the key's hash (the store's reference to the key, which
// the cookie names). No such cookie opens a page: the secret that seals
// sessions is not in the database.
func TestDashboardRefusesASessionForgedFromTheDatabase(t *testing.T) {
	d := newDashEnv(t)
	// Everything that could have put a key in the database has run: a
	// session, a sign-out, a cursor of the job list.
	b := d.browser(t)
	b.signIn("rw")
	d.createJob(t, "Document the --verbose flag")
	d.createJob(t, "Document the --quiet flag")
	if resp, body := d.Do("rw", http.MethodGet, "/v2/agent/alpha/jobs?limit=1", ""); resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"nextCursor":"`) {
		t.Fatalf("a page of jobs with a cursor: %d %s", resp.StatusCode, body)
	}
	other := d.browser(t)
	other.signIn("ro")
	page, token := other.page("/dashboard/projects/alpha/")
	if resp, _ := other.post("/dashboard/logout", token); resp.StatusCode != http.StatusSeeOther || !strings.Contains(page, "sign-out") {
		t.Fatalf("signing out: %d", resp.StatusCode)
	}

	values := databaseValues(t, d.DBPath)
	var secrets, hashes [][]byte
	for _, v := range values {
		if len(v) >= 16 {
			secrets = append(secrets, v)
		}
		if len(v) == sha256.Size {
			hashes = append(hashes, v)
		}
	}
	rwHash := sha256.Sum256([]byte(d.Keys["rw"]))
	if !containsBytes(hashes, rwHash[:]) {
		t.Fatalf("the database's values lack the write key's hash: the test reads the wrong database")
	}

	now := d.Clock.Now().UTC().Truncate(time.Second)
	opens := func(sealer *session.Sealer, hash []byte) bool {
		t.Helper()
		sess := session.Session{ID: session.NewID(), Opened: now, Seen: now, Expires: now.Add(time.Hour)}
		copy(sess.KeyHash[:], hash)
		req, _ := http.NewRequest(http.MethodGet, d.url+"/dashboard/projects/alpha/", nil)
		req.AddCookie(&http.Cookie{Name: "docsapi_session", Value: sealer.Seal(sess)})
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	// The forger's code is right: sealed with the server's own secret,
	// its cookie opens the page.
	real, err := dashboard.SessionSealer(d.Secret)
	if err != nil {
		t.Fatal(err)
	}
	if !opens(real, rwHash[:]) {
		t.Fatal("a cookie sealed with the server's secret does not open the page: the forging code is wrong")
	}

	tried := 0
	for _, secret := range secrets {
		var sealers []*session.Sealer
		if s, err := session.NewSealer(secret); err == nil {
			sealers = append(sealers, s)
		}
		if s, err := dashboard.SessionSealer(secret); err == nil {
			sealers = append(sealers, s)
		}
		for _, sealer := range sealers {
			for _, hash := range hashes {
				tried++
				if opens(sealer, hash) {
					t.Fatalf("a session sealed with a value of the database (%d bytes) as the secret opens the dashboard", len(secret))
				}
			}
		}
	}
	t.Logf("%d cookies forged from %d values of the database, none opened a page", tried, len(values))
}

func containsBytes(list [][]byte, b []byte) bool {
	for _, v := range list {
		if bytes.Equal(v, b) {
			return true
		}
	}
	return false
}

// Rotating the secret (a Server on the same store with another one) ends
// every session and invalidates every cursor, and does nothing else: the
// keys, the jobs and the sign-in work as before.
func TestRotatingTheSecretEndsSessionsAndCursorsOnly(t *testing.T) {
	d := newDashEnv(t)
	for _, prompt := range []string{"one", "two", "three"} {
		d.createJob(t, "Document flag "+prompt)
	}
	b := d.browser(t)
	b.signIn("rw")
	old := b.cookie("docsapi_session")
	resp, body := d.Do("rw", http.MethodGet, "/v2/agent/alpha/jobs?limit=1", "")
	var page struct {
		NextCursor string `json:"nextCursor"`
	}
	if err := json.Unmarshal(body, &page); err != nil || resp.StatusCode != http.StatusOK || page.NextCursor == "" {
		t.Fatalf("a page of jobs with a cursor: %d %s", resp.StatusCode, body)
	}

	rotated := make([]byte, server.SecretBytes)
	copy(rotated, d.Secret)
	rotated[0] ^= 0xff
	srv, err := server.New(server.Config{Store: d.Store, Now: d.Clock.Now, Secret: rotated, Dashboard: server.DashboardConfig{Enabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	get := func(path, key string, cookie *http.Cookie) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, ts.URL+path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+d.Keys[key])
		}
		if cookie != nil {
			req.AddCookie(cookie)
		}
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		buf.ReadFrom(resp.Body)
		return resp, buf.String()
	}

	// The session ends: its cookie cannot be opened.
	if resp, _ := get("/dashboard/projects/alpha/", "", old); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/dashboard/login" {
		t.Errorf("the old session after rotation: %d to %q, want 303 to /dashboard/login", resp.StatusCode, resp.Header.Get("Location"))
	}
	// The cursor is refused, naming itself.
	if resp, body := get("/v2/agent/alpha/jobs?limit=1&cursor="+url.QueryEscape(page.NextCursor), "rw", nil); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "cursor") {
		t.Errorf("the old cursor after rotation: %d %s, want 400 naming the cursor", resp.StatusCode, body)
	}
	// Nothing else changed: the key, every job, and a page's own cursor.
	resp, text := get("/v2/agent/alpha/jobs?limit=2", "rw", nil)
	var fresh struct {
		Jobs []struct {
			ID string `json:"id"`
		} `json:"jobs"`
		NextCursor string `json:"nextCursor"`
	}
	if err := json.Unmarshal([]byte(text), &fresh); err != nil || resp.StatusCode != http.StatusOK || len(fresh.Jobs) != 2 || fresh.NextCursor == "" {
		t.Fatalf("the jobs after rotation: %d %s", resp.StatusCode, text)
	}
	if resp, body := get("/v2/agent/alpha/jobs?limit=2&cursor="+url.QueryEscape(fresh.NextCursor), "rw", nil); resp.StatusCode != http.StatusOK || strings.Count(body, `"id":"job_`) != 1 {
		t.Errorf("the second page, by a cursor of the new secret: %d %s, want the third job", resp.StatusCode, body)
	}
	// A new sign-in opens a session sealed with the new secret.
	rb := (&dashEnv{env: d.env, url: ts.URL}).browser(t)
	rb.signIn("rw")
	if resp, _ := rb.get("/dashboard/projects/alpha/"); resp.StatusCode != http.StatusOK {
		t.Errorf("a new session after rotation: %d, want 200", resp.StatusCode)
	}
}
