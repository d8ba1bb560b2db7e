// Package sessiontest holds the dashboard's scenarios of several servers
// sharing one store, which each backend runs on its own database (the
// server's tests on SQLite, server/postgres's on PostgreSQL): a sign-out
// that every replica honours, after restarts too.
package sessiontest

import (
	"crypto/rand"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/store"
)

// SignOutLasts signs in on one server, signs out there, and replays the
// signed-out cookie on a second server sharing the store (a replica) and
// on a third started afterwards on a store opened anew (a restart): each
// must refuse it as signed out. open returns a new store on the same
// database at every call, closed when the test ends.
func SignOutLasts(t *testing.T, open func(t *testing.T) store.Store) {
	secret := make([]byte, server.SecretBytes)
	rand.Read(secret)
	// One instant for every server: the test is about the store, not
	// the clocks.
	now := time.Now().UTC().Truncate(time.Second)
	start := func(st store.Store) (*server.Server, string) {
		t.Helper()
		srv, err := server.New(server.Config{Store: st, Secret: secret, Now: func() time.Time { return now }, Dashboard: server.DashboardConfig{Enabled: true}})
		if err != nil {
			t.Fatalf("server.New: %v", err)
		}
		ts := httptest.NewServer(srv)
		t.Cleanup(ts.Close)
		return srv, ts.URL
	}

	a, atA := start(open(t))
	ctx := t.Context()
	if _, err := a.CreateProject(ctx, store.Project{ID: "alpha", Name: "Alpha docs", Repository: "https://git.example.com/alpha/docs.git"}); err != nil {
		t.Fatalf("CreateProject: %v", err)
	}
	key, err := a.CreateKey(ctx, server.KeyParams{Name: "dashboards", Projects: []string{"alpha"}, Scopes: []store.Scope{store.ScopeRead}})
	if err != nil {
		t.Fatalf("CreateKey: %v", err)
	}
	_, atB := start(open(t))

	cookie := signIn(t, atA, key.Secret)
	// Replicas share sessions: the cookie opens B's pages too, so that
	// B's refusal below is the sign-out's.
	if status, _ := page(t, atB, cookie); status != http.StatusOK {
		t.Fatalf("a replica answers a live session with %d, want 200", status)
	}
	signOut(t, atA, cookie)
	wantSignedOut(t, "the server that signed it out", atA, cookie)
	wantSignedOut(t, "a replica on the same database", atB, cookie)

	// A restart: a new server on the database opened anew, which has no
	// memory but the store's.
	_, atC := start(open(t))
	wantSignedOut(t, "a server started after the sign-out", atC, cookie)
	// Which still takes a new session.
	if status, _ := page(t, atC, signIn(t, atC, key.Secret)); status != http.StatusOK {
		t.Fatalf("a new session after the restart: %d, want 200", status)
	}
}

const sessionCookie = "docsapi_session"

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// signIn signs in at base with the key, through the form as a browser
// does, and returns the session cookie's value.
func signIn(t *testing.T, base, key string) string {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, body := do(t, c, http.MethodGet, base+"/dashboard/login", "", nil)
	m := csrfField.FindStringSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("the sign-in form: %d\n%s", resp.StatusCode, body)
	}
	resp, body = do(t, c, http.MethodPost, base+"/dashboard/login", "", url.Values{"csrf": {m[1]}, "key": {key}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("signing in: %d\n%s", resp.StatusCode, body)
	}
	for _, ck := range resp.Cookies() {
		if ck.Name == sessionCookie && ck.Value != "" {
			return ck.Value
		}
	}
	t.Fatalf("signing in set no session cookie: %v", resp.Header["Set-Cookie"])
	return ""
}

// page gets alpha's overview at base with the session cookie, and
// returns the status and, for a redirect, where to.
func page(t *testing.T, base, cookie string) (int, string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, _ := do(t, c, http.MethodGet, base+"/dashboard/projects/alpha/", cookie, nil)
	return resp.StatusCode, resp.Header.Get("Location")
}

// signOut signs the session out at base, with the CSRF token of one of
// its pages.
func signOut(t *testing.T, base, cookie string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, body := do(t, c, http.MethodGet, base+"/dashboard/projects/alpha/", cookie, nil)
	m := csrfField.FindStringSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("a page to sign out from: %d\n%s", resp.StatusCode, body)
	}
	resp, body = do(t, c, http.MethodPost, base+"/dashboard/logout", cookie, url.Values{"csrf": {m[1]}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/dashboard/login?ended=signed-out" {
		t.Fatalf("signing out: %d to %q\n%s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
}

// wantSignedOut checks that base sends the cookie to the sign-in page as
// signed out: not as a cookie it cannot open, which would say nothing of
// the sign-out.
func wantSignedOut(t *testing.T, who, base, cookie string) {
	t.Helper()
	status, to := page(t, base, cookie)
	if status != http.StatusSeeOther || to != "/dashboard/login?ended=signed-out" {
		t.Errorf("%s answers the signed-out cookie with %d to %q, want 303 to /dashboard/login?ended=signed-out", who, status, to)
	}
}

// do sends a request with the session cookie (if any) and a form (if
// any), and returns the answer with its body read.
func do(t *testing.T, c *http.Client, method, target, cookie string, form url.Values) (*http.Response, string) {
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
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: cookie})
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}
