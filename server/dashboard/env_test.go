package dashboard_test

import (
	"context"
	"encoding/json"
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
	"github.com/docsapi/docsapi-go/server/internal/hll"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/store"
)

// env is the tests' server (package servertest), with the helpers of this
// package's tests as its methods.
type env struct{ *servertest.Env }

// newEnv is a server on a new SQLite file: servertest.New.
func newEnv(t testing.TB, mutate ...func(*server.Config)) *env {
	t.Helper()
	return &env{servertest.New(t, mutate...)}
}

// dashEnv is an env with the dashboard on, served over a loopback
// listener, so that a client with a cookie jar signs in as a browser
// does.
type dashEnv struct {
	*env
	url string
}

func newDashEnv(t *testing.T, mutate ...func(*server.Config)) *dashEnv {
	t.Helper()
	on := func(c *server.Config) { c.Dashboard.Enabled = true }
	e := newEnv(t, append([]func(*server.Config){on}, mutate...)...)
	ts := httptest.NewServer(e.Server)
	t.Cleanup(ts.Close)
	return &dashEnv{env: e, url: ts.URL}
}

// browser is a client with cookies of its own that does not follow
// redirects, so that tests see where each answer sends it.
type browser struct {
	t   *testing.T
	d   *dashEnv
	c   *http.Client
	jar *cookiejar.Jar
}

func (d *dashEnv) browser(t *testing.T) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &browser{t: t, d: d, c: c, jar: jar}
}

// do sends a request, with a form body if form is not nil, and headers
// given as name, value pairs; it returns the answer with its body read.
func (b *browser) do(method, path string, form url.Values, header ...string) (*http.Response, string) {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.d.url+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return resp, string(got)
}

func (b *browser) get(path string) (*http.Response, string) {
	b.t.Helper()
	return b.do(http.MethodGet, path, nil)
}

// post sends a form as the dashboard's pages do, with the CSRF token
// given.
func (b *browser) post(path, token string, fields ...string) (*http.Response, string) {
	b.t.Helper()
	form := url.Values{"csrf": {token}}
	for i := 0; i+1 < len(fields); i += 2 {
		form.Set(fields[i], fields[i+1])
	}
	return b.do(http.MethodPost, path, form)
}

// signIn signs in with the named key, through the form, and checks that
// the dashboard lets it in.
func (b *browser) signIn(keyName string) {
	b.t.Helper()
	_, page := b.get("/dashboard/login")
	resp, body := b.post("/dashboard/login", csrfOf(b.t, page), "key", b.d.Keys[keyName])
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/dashboard/" {
		b.t.Fatalf("signing in with %s: %d to %q\n%s", keyName, resp.StatusCode, resp.Header.Get("Location"), body)
	}
}

// page gets a page that must answer 200 and returns it with the CSRF
// token of its forms.
func (b *browser) page(path string) (html, token string) {
	b.t.Helper()
	resp, html := b.get(path)
	if resp.StatusCode != http.StatusOK {
		b.t.Fatalf("GET %s: %d, want 200\n%s", path, resp.StatusCode, html)
	}
	return html, csrfOf(b.t, html)
}

// cookie returns the browser's cookie name for the dashboard's paths.
func (b *browser) cookie(name string) *http.Cookie {
	u, _ := url.Parse(b.d.url + "/dashboard/")
	for _, c := range b.jar.Cookies(u) {
		if c.Name == name {
			return c
		}
	}
	return nil
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrfOf returns the CSRF token of the page's forms.
func csrfOf(t *testing.T, html string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(html)
	if m == nil {
		t.Fatalf("no CSRF token in the page:\n%s", html)
	}
	return m[1]
}

// wantRedirect checks that resp sends the browser to location.
func wantRedirect(t *testing.T, resp *http.Response, location string) {
	t.Helper()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != location {
		t.Fatalf("answer %d to %q, want 303 to %q", resp.StatusCode, resp.Header.Get("Location"), location)
	}
}

// createJob creates a job of alpha through the API and returns its ID.
func (d *dashEnv) createJob(t *testing.T, prompt string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"prompt": prompt})
	resp, got := d.Do("rw", http.MethodPost, "/v2/agent/alpha/job", string(body))
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("creating a job: %d %s", resp.StatusCode, got)
	}
	return servertest.JobOf(t, got)["id"].(string)
}

// failJob runs the oldest ready job to a failure with reason, as an
// engine would.
func (d *dashEnv) failJob(t *testing.T, reason string) string {
	t.Helper()
	ctx := context.Background()
	j, err := d.Store.ClaimJob(ctx, store.Claim{Owner: "test-engine", Now: d.Clock.Now(), LeaseFor: time.Hour, MaxAttempts: 3})
	if err != nil {
		t.Fatalf("ClaimJob: %v", err)
	}
	if _, err := d.Store.FinishJob(ctx, store.Finish{JobID: j.ID, Owner: "test-engine", At: d.Clock.Now(), Outcome: store.Failed, FailureReason: reason}); err != nil {
		t.Fatalf("FinishJob: %v", err)
	}
	return j.ID
}

// addVisitors stores the visitors of one of alpha's paths in one hour, as
// the recorder would: sketches of the hashes of human visitors numbered
// from first (human of them) and of AI ones after them. The path must have
// views that day, or the store counts its visitors under another path.
func (d *dashEnv) addVisitors(t *testing.T, path string, hour time.Time, first, human, ai int) {
	t.Helper()
	sketch := func(from, n int) []byte {
		var s hll.Sketch
		for i := range n {
			s.Insert(hll.Mix64(uint64(from + i)))
		}
		return s.AppendBinary(nil)
	}
	err := d.Store.AddVisitors(context.Background(), []store.VisitorCount{{
		ProjectID: "alpha", Path: path, Hour: hour,
		Human: sketch(first, human), AI: sketch(first+human, ai),
	}})
	if err != nil {
		t.Fatalf("AddVisitors: %v", err)
	}
}

// revoke revokes the key named name (its Name, as KeyParams gave it).
func (d *dashEnv) revoke(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	keys, err := d.Server.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.Name == name {
			if err := d.Server.RevokeKey(ctx, k.ID); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no key named %q", name)
}
