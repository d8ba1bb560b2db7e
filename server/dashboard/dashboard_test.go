package dashboard_test

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/store"
)

func TestDashboardIsOffUnlessEnabled(t *testing.T) {
	e := newEnv(t)
	rec := httptest.NewRecorder()
	e.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/dashboard/login", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("GET /dashboard/login without the dashboard: %d, want 404", rec.Code)
	}
}

func TestDashboardSignInExchangesTheKeyForACookie(t *testing.T) {
	d := newDashEnv(t)
	b := d.browser(t)

	resp, _ := b.get("/dashboard/")
	wantRedirect(t, resp, "/dashboard/login")

	_, token := b.page("/dashboard/login")
	resp, body := b.post("/dashboard/login", token, "key", "mint_not-a-key-of-this-server")
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, `id="login-error"`) || !strings.Contains(body, "invalid API key") {
		t.Errorf("a wrong key: %d, want 401 and the error on the form\n%s", resp.StatusCode, body)
	}
	if b.cookie("docsapi_session") != nil {
		t.Fatal("a wrong key opened a session")
	}

	secret := d.Keys["rw"]
	_, token = b.page("/dashboard/login")
	resp, body = b.post("/dashboard/login", token, "key", secret)
	wantRedirect(t, resp, "/dashboard/")
	var set *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "docsapi_session" {
			set = c
		}
	}
	switch {
	case set == nil:
		t.Fatalf("signing in set no session cookie: %v", resp.Header["Set-Cookie"])
	case !set.HttpOnly || set.SameSite != http.SameSiteStrictMode || set.Path != "/dashboard/":
		t.Errorf("the session cookie is %q: want HttpOnly, SameSite=Strict, Path=/dashboard/", set.Raw)
	case set.Secure:
		t.Errorf("the session cookie is Secure over plain HTTP, where the browser would never send it back")
	}
	// Nothing of the key in the browser's storage: neither the key nor
	// the hash the store knows it by, in any spelling.
	hash := sha256.Sum256([]byte(secret))
	for _, leak := range []string{secret, secret[5:15], hex.EncodeToString(hash[:8]), base64.RawURLEncoding.EncodeToString(hash[:8]), base64.StdEncoding.EncodeToString(hash[:8])} {
		if strings.Contains(set.Value, leak) || strings.Contains(body, leak) {
			t.Errorf("the cookie or the answer holds %q, part of the key or its hash", leak)
		}
	}

	resp, _ = b.get("/dashboard/")
	wantRedirect(t, resp, "/dashboard/projects/alpha/")
	doc, _ := b.page("/dashboard/projects/alpha/")
	for _, want := range []string{"<h1>Overview</h1>", `id="views-chart"`, "Key <strong>ci</strong>"} {
		if !strings.Contains(doc, want) {
			t.Errorf("the overview lacks %q", want)
		}
	}
	if strings.Contains(doc, secret) || strings.Contains(doc, secret[:len(server.DefaultKeyPrefix)+4]) {
		t.Error("the page shows the key, or its first characters")
	}
}

func TestDashboardPagesSendSecurityHeaders(t *testing.T) {
	d := newDashEnv(t)
	b := d.browser(t)
	b.signIn("rw")
	for _, path := range []string{"/dashboard/login", "/dashboard/projects/alpha/", "/dashboard/projects/alpha/jobs", "/dashboard/projects/alpha/jobs/job_none", "/dashboard/nowhere"} {
		resp, _ := b.get(path)
		h := resp.Header
		csp := h.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "script-src 'none'", "frame-ancestors 'none'", "form-action 'self'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: Content-Security-Policy %q lacks %q", path, csp, want)
			}
		}
		for name, want := range map[string]string{
			"X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
			"X-Content-Type-Options": "nosniff", "Content-Type": "text/html; charset=utf-8",
		} {
			if got := h.Get(name); got != want {
				t.Errorf("%s: %s is %q, want %q", path, name, got, want)
			}
		}
	}
	resp, css := b.get("/dashboard/style.css")
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") || !strings.Contains(css, "rect.human") {
		t.Errorf("the stylesheet: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

func TestDashboardCookieIsSecureUnderTLS(t *testing.T) {
	d := newDashEnv(t, func(c *server.Config) { c.TrustedProxies = nil })
	login := func(r *http.Request) *http.Cookie {
		rec := httptest.NewRecorder()
		d.Server.ServeHTTP(rec, r)
		for _, c := range rec.Result().Cookies() {
			if c.Name == "docsapi_login" {
				return c
			}
		}
		t.Fatalf("no sign-in cookie: %d", rec.Code)
		return nil
	}
	r := httptest.NewRequest(http.MethodGet, "https://docs.example.com/dashboard/login", nil)
	r.TLS = &tls.ConnectionState{}
	if c := login(r); !c.Secure {
		t.Errorf("over TLS the cookie is %q, not Secure", c.Raw)
	}
	// A proxy's word counts only from a trusted proxy.
	r = httptest.NewRequest(http.MethodGet, "/dashboard/login", nil)
	r.Header.Set("X-Forwarded-Proto", "https")
	if c := login(r); c.Secure {
		t.Errorf("an untrusted X-Forwarded-Proto made the cookie Secure")
	}
}

func TestDashboardCookieIsSecureBehindATrustedTLSProxy(t *testing.T) {
	d := newDashEnv(t, func(c *server.Config) {
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}
	})
	r := httptest.NewRequest(http.MethodGet, "/dashboard/login", nil)
	r.RemoteAddr = "192.0.2.7:4000"
	r.Header.Set("X-Forwarded-Proto", "https")
	rec := httptest.NewRecorder()
	d.Server.ServeHTTP(rec, r)
	if cs := rec.Result().Cookies(); len(cs) != 1 || !cs[0].Secure {
		t.Errorf("behind a trusted proxy that says https, the cookies are %v", rec.Result().Header["Set-Cookie"])
	}
}

func TestDashboardOverviewShowsTheAPIsNumbers(t *testing.T) {
	d := newDashEnv(t)
	ctx := context.Background()
	now := d.Clock.Now() // 2026-08-14 09:00 UTC
	day := func(n int) time.Time { return now.Truncate(24*time.Hour).AddDate(0, 0, n) }
	err := d.Store.AddViews(ctx, []store.ViewCount{
		{ProjectID: "alpha", Path: "/guide", Hour: day(-2).Add(9 * time.Hour), Human: 1200, AI: 300, Bot: 50},
		{ProjectID: "alpha", Path: "/guide", Hour: day(-1).Add(3 * time.Hour), Human: 10, AI: 30},
		{ProjectID: "alpha", Path: "/api", Hour: day(0).Add(8 * time.Hour), Human: 5, AI: 0},
		{ProjectID: "alpha", Path: "/old", Hour: day(-40), Human: 99, AI: 99}, // before the range
		{ProjectID: "beta", Path: "/guide", Hour: day(0), Human: 77, AI: 77},  // another project
	})
	if err != nil {
		t.Fatal(err)
	}
	d.addVisitors(t, "/guide", day(-2).Add(9*time.Hour), 0, 40, 12)
	d.addVisitors(t, "/guide", day(-1).Add(3*time.Hour), 30, 20, 5) // ten of the first day's again
	b := d.browser(t)
	b.signIn("ro")
	doc, _ := b.page("/dashboard/projects/alpha/?from=" + day(-6).Format(time.DateOnly) + "&to=" + day(0).Format(time.DateOnly))

	// The API's answers for the same days.
	q := "dateFrom=" + day(-6).Format(time.DateOnly) + "&dateTo=" + day(1).Format(time.DateOnly)
	resp, body := d.Do("ro", http.MethodGet, "/v1/analytics/alpha/views?"+q, "")
	var views docsapi.ViewsPage
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &views) != nil {
		t.Fatalf("the views export: %d %s", resp.StatusCode, body)
	}
	resp, body = d.Do("ro", http.MethodGet, "/v1/analytics/alpha/views/series?interval=day&"+q, "")
	var series docsapi.ViewsSeries
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &series) != nil {
		t.Fatalf("the views series: %d %s", resp.StatusCode, body)
	}
	resp, body = d.Do("ro", http.MethodGet, "/v1/analytics/alpha/visitors?"+q, "")
	var visitors docsapi.VisitorsPage
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &visitors) != nil {
		t.Fatalf("the visitors export: %d %s", resp.StatusCode, body)
	}
	if visitors.Totals.Total < 50 {
		t.Fatalf("the API counts %d visitors; the test stored 55", visitors.Totals.Total)
	}
	if got, want := textOf(t, doc, `<dd id="total-visitors">`, "</dd>"), count(visitors.Totals.Total); got != want {
		t.Errorf("unique visitors show %s, the API says %s", got, want)
	}
	if got, want := textOf(t, doc, `<dd class="detail">`, "</dd>"), count(visitors.Totals.Human)+" human, "+count(visitors.Totals.AI)+" AI"; got != want {
		t.Errorf("visitors by class show %q, the API says %q", got, want)
	}
	if views.Totals.Total != 1545 {
		t.Fatalf("the API counts %d views; the test expected 1545", views.Totals.Total)
	}
	for id, want := range map[string]int64{"total-human": views.Totals.Human, "total-ai": views.Totals.AI, "total-views": views.Totals.Total} {
		if got := textOf(t, doc, `<dd id="`+id+`">`, "</dd>"); got != count(want) {
			t.Errorf("%s shows %q, the API says %d", id, got, want)
		}
	}
	rows := tableRows(t, doc, `id="series"`)
	if len(rows) != len(series.Points) || len(rows) != 7 {
		t.Fatalf("the chart's table has %d rows, the series %d points", len(rows), len(series.Points))
	}
	for i, p := range series.Points {
		want := []string{p.At.Format(time.DateOnly), count(p.Human), count(p.AI), count(p.Total)}
		if strings.Join(rows[i], "|") != strings.Join(want, "|") {
			t.Errorf("chart row %d is %q, the API says %q", i, rows[i], want)
		}
	}
	top := tableRows(t, doc, `id="top-pages"`)
	if len(top) != 2 || top[0][0] != "/guide" || top[0][3] != "1,540" || top[0][4] != "21.4 %" || top[1][0] != "/api" {
		t.Errorf("top pages: %q", top)
	}
}

func TestDashboardOverviewRangeProblems(t *testing.T) {
	d := newDashEnv(t)
	b := d.browser(t)
	b.signIn("ro")
	for q, want := range map[string]string{
		"from=yesterday":                 "from must be a day",
		"from=2026-08-10&to=2026-08-01":  "is after to",
		"from=2020-01-01&to=2026-08-01":  "at most 1000",
		"from=2026-08-01&to=2026-13-01x": "to must be a day",
	} {
		resp, doc := b.get("/dashboard/projects/alpha/?" + q)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(doc, want) || !strings.Contains(doc, `id="views-chart"`) {
			t.Errorf("?%s: %d, want 400 saying %q above the default range", q, resp.StatusCode, want)
		}
	}
	// A short range is charted per hour.
	doc, _ := b.page("/dashboard/projects/alpha/?from=2026-08-13&to=2026-08-14")
	if rows := tableRows(t, doc, `id="series"`); len(rows) != 48 || rows[0][0] != "2026-08-13 00:00" {
		t.Errorf("two days: %d rows from %q, want 48 hours", len(rows), rows[0])
	}
}

func TestDashboardJobsAndArchive(t *testing.T) {
	d := newDashEnv(t)
	first := d.createJob(t, "Document the --verbose flag")
	d.Clock.Advance(time.Hour)
	failed := d.failJob(t, "push refused: protected branch")
	if failed != first {
		t.Fatalf("the engine ran %s, not %s", failed, first)
	}
	d.Clock.Advance(time.Hour)
	second := d.createJob(t, "Fix the typo on the home page")

	b := d.browser(t)
	b.signIn("rw")
	list, _ := b.page("/dashboard/projects/alpha/jobs")
	rows := tableRows(t, list, `id="jobs"`)
	if len(rows) != 2 || rows[0][0] != second || rows[0][1] != "active" || rows[1][0] != first || rows[1][1] != "failed" || rows[1][3] != "2 h" {
		t.Errorf("the jobs list: %q", rows)
	}
	filtered, _ := b.page("/dashboard/projects/alpha/jobs?status=failed")
	if rows := tableRows(t, filtered, `id="jobs"`); len(rows) != 1 || rows[0][0] != first {
		t.Errorf("failed jobs: %q", rows)
	}
	if resp, doc := b.get("/dashboard/projects/alpha/jobs?status=lost"); resp.StatusCode != http.StatusBadRequest || !strings.Contains(doc, "status must be") {
		t.Errorf("an unknown status: %d", resp.StatusCode)
	}

	page, token := b.page("/dashboard/projects/alpha/jobs/" + first)
	for _, want := range []string{"Document the --verbose flag", "push refused: protected branch", `id="archive"`} {
		if !strings.Contains(page, want) {
			t.Errorf("a writer's job page lacks %q", want)
		}
	}
	resp, _ := b.post("/dashboard/projects/alpha/jobs/"+first+"/archive", token)
	wantRedirect(t, resp, "/dashboard/projects/alpha/jobs/"+first)
	job, err := d.Server.Job(context.Background(), "alpha", first)
	if err != nil || job.Status != store.JobStatusArchived {
		t.Fatalf("after archiving: %v, %v", job.Status, err)
	}
	page, _ = b.page("/dashboard/projects/alpha/jobs/" + first)
	if !strings.Contains(page, `id="job-archived"`) || strings.Contains(page, `id="archive"`) {
		t.Error("an archived job's page offers to archive it, or does not say it is archived")
	}
	if resp, body := b.get("/dashboard/projects/alpha/jobs/job_none"); resp.StatusCode != http.StatusNotFound || textOf(t, body, `id="error-message">`, "</p>") != `job "job_none" not found` {
		t.Errorf("an unknown job: %d", resp.StatusCode)
	}
}

func TestDashboardPagingFollowsTheAPIsCursor(t *testing.T) {
	d := newDashEnv(t)
	var ids []string
	for i := range 53 {
		ids = append(ids, d.createJob(t, "job "+string(rune('a'+i%26))))
		d.Clock.Advance(time.Second)
	}
	b := d.browser(t)
	b.signIn("ro")
	doc, _ := b.page("/dashboard/projects/alpha/jobs")
	var seen []string
	for page := 0; ; page++ {
		for _, row := range tableRows(t, doc, `id="jobs"`) {
			seen = append(seen, row[0])
		}
		i := strings.Index(doc, `rel="next"`)
		if i < 0 {
			break
		}
		start := strings.LastIndex(doc[:i], `href="`) + len(`href="`)
		next := strings.ReplaceAll(doc[start:strings.IndexByte(doc[start:], '"')+start], "&amp;", "&")
		if page > 3 {
			t.Fatal("the pages do not end")
		}
		doc, _ = b.page(next)
	}
	if len(seen) != len(ids) || seen[0] != ids[len(ids)-1] || seen[len(seen)-1] != ids[0] {
		t.Errorf("pages listed %d jobs, from %v to %v; want %d newest first", len(seen), seen[0], seen[len(seen)-1], len(ids))
	}
}

func TestDashboardReadKeyCannotArchive(t *testing.T) {
	d := newDashEnv(t)
	id := d.createJob(t, "Document the --verbose flag")
	d.failJob(t, "push refused: protected branch")
	b := d.browser(t)
	b.signIn("ro")
	page, token := b.page("/dashboard/projects/alpha/jobs/" + id)
	if strings.Contains(page, "push refused") || strings.Contains(page, `id="archive"`) {
		t.Error("a read key sees the failure reason or the archive button")
	}
	if !strings.Contains(page, "Document the --verbose flag") {
		t.Error("a read key does not see the prompt history")
	}
	// The form is not shown, and a post made by hand, token and all, is
	// refused as the API refuses it.
	resp, doc := b.post("/dashboard/projects/alpha/jobs/"+id+"/archive", token)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(doc, "lacks the write scope") {
		t.Errorf("a read key's archive: %d, want 403\n%s", resp.StatusCode, doc)
	}
	if job, _ := d.Server.Job(context.Background(), "alpha", id); job.Status == store.JobStatusArchived {
		t.Error("a read key archived a job")
	}
}

// postForms lists the actions of a page's forms that post: what the page
// lets its reader change.
var postForm = regexp.MustCompile(`<form\b[^>]*\bmethod="post"[^>]*\baction="([^"]*)"`)

func postForms(page string) []string {
	var actions []string
	for _, m := range postForm.FindAllStringSubmatch(page, -1) {
		actions = append(actions, html.UnescapeString(m[1]))
	}
	return actions
}

// A read key's job page offers no control that changes anything, whatever
// the job's state: its one form that posts is the sign-out. A write key's
// page of the same jobs offers the archive form where it applies.
func TestDashboardReadKeyJobPageHasNoWriteControl(t *testing.T) {
	d := newDashEnv(t)
	failed := d.createJob(t, "Document the --verbose flag")
	d.failJob(t, "push refused: protected branch")
	active := d.createJob(t, "Document the --quiet flag")
	archived := d.createJob(t, "Document the --debug flag")
	if _, err := d.Server.ArchiveJob(context.Background(), "alpha", archived); err != nil {
		t.Fatal(err)
	}
	reader, writer := d.browser(t), d.browser(t)
	reader.signIn("ro")
	writer.signIn("rw")
	for _, tc := range []struct {
		name, id   string
		archivable bool
	}{
		{"an active job", active, true},
		{"a failed job", failed, true},
		{"an archived job", archived, false},
	} {
		path := "/dashboard/projects/alpha/jobs/" + tc.id
		page, _ := reader.page(path)
		if got := postForms(page); len(got) != 1 || got[0] != "/dashboard/logout" {
			t.Errorf("%s: a read key's page posts to %q, want only the sign-out", tc.name, got)
		}
		if strings.Contains(page, `id="archive"`) || strings.Contains(page, "Archive this job") {
			t.Errorf("%s: a read key's page shows the archive button", tc.name)
		}
		page, _ = writer.page(path)
		want := []string{"/dashboard/logout"}
		if tc.archivable {
			want = append(want, path+"/archive")
		}
		if got := postForms(page); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: a write key's page posts to %q, want %q", tc.name, got, want)
		}
	}
}

func TestDashboardRefusesFormsWithoutTheirToken(t *testing.T) {
	d := newDashEnv(t)
	id := d.createJob(t, "Document the --verbose flag")
	b := d.browser(t)
	b.signIn("rw")
	_, token := b.page("/dashboard/projects/alpha/jobs/" + id)
	other := d.browser(t)
	other.signIn("rw")
	_, otherToken := other.page("/dashboard/projects/alpha/jobs/" + id)

	archive := "/dashboard/projects/alpha/jobs/" + id + "/archive"
	for name, send := range map[string]func() (*http.Response, string){
		"no token":                func() (*http.Response, string) { return b.do(http.MethodPost, archive, url.Values{}) },
		"an empty token":          func() (*http.Response, string) { return b.post(archive, "") },
		"another session's token": func() (*http.Response, string) { return b.post(archive, otherToken) },
		"a token in the URL alone": func() (*http.Response, string) {
			return b.do(http.MethodPost, archive+"?csrf="+url.QueryEscape(token), url.Values{})
		},
		"another site's page": func() (*http.Response, string) {
			return b.do(http.MethodPost, archive, url.Values{"csrf": {token}}, "Origin", "https://evil.example")
		},
		"a cross-site fetch": func() (*http.Response, string) {
			return b.do(http.MethodPost, archive, url.Values{"csrf": {token}}, "Sec-Fetch-Site", "cross-site")
		},
	} {
		if resp, _ := send(); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, resp.StatusCode)
		}
	}
	if job, _ := d.Server.Job(context.Background(), "alpha", id); job.Status == store.JobStatusArchived {
		t.Fatal("a forged form archived the job")
	}
	// Signing out and in need their tokens too.
	if resp, _ := b.post("/dashboard/logout", otherToken); resp.StatusCode != http.StatusForbidden {
		t.Errorf("signing out with another session's token: %d, want 403", resp.StatusCode)
	}
	fresh := d.browser(t)
	fresh.get("/dashboard/login")
	if resp, _ := fresh.post("/dashboard/login", token, "key", d.Keys["rw"]); resp.StatusCode != http.StatusForbidden || fresh.cookie("docsapi_session") != nil {
		t.Errorf("signing in with a token not of the form: %d, want 403 and no session", resp.StatusCode)
	}
	// With its token, from its own page, the form works.
	resp, _ := b.post(archive, token)
	wantRedirect(t, resp, "/dashboard/projects/alpha/jobs/"+id)
}

func TestDashboardSessionsExpire(t *testing.T) {
	d := newDashEnv(t, func(c *server.Config) {
		c.Dashboard.MaxAge, c.Dashboard.IdleTimeout = 3*time.Hour, time.Hour
	})
	b := d.browser(t)
	b.signIn("ro")
	// Used every 50 minutes, the session outlives its idle timeout...
	for range 3 {
		d.Clock.Advance(50 * time.Minute)
		b.page("/dashboard/projects/alpha/")
	}
	// ...but not its age: 3 h after signing in, it ends.
	d.Clock.Advance(30 * time.Minute)
	resp, _ := b.get("/dashboard/projects/alpha/")
	wantRedirect(t, resp, "/dashboard/login?ended=expired")
	if b.cookie("docsapi_session") != nil {
		t.Error("the expired session's cookie was kept")
	}
	_, doc := b.get("/dashboard/login?ended=expired")
	if !strings.Contains(doc, "Your session expired") {
		t.Error("the sign-in page does not say why")
	}

	idle := d.browser(t)
	idle.signIn("ro")
	d.Clock.Advance(time.Hour)
	resp, _ = idle.get("/dashboard/projects/alpha/jobs")
	wantRedirect(t, resp, "/dashboard/login?ended=idle")
}

func TestDashboardSessionEndsWithItsKey(t *testing.T) {
	d := newDashEnv(t)
	b := d.browser(t)
	b.signIn("ro")
	b.page("/dashboard/projects/alpha/")
	d.revoke(t, "dashboards")
	resp, _ := b.get("/dashboard/projects/alpha/")
	wantRedirect(t, resp, "/dashboard/login?ended=revoked")
	if _, doc := b.get("/dashboard/login?ended=revoked"); !strings.Contains(doc, "its API key was revoked") {
		t.Error("the sign-in page does not say the key was revoked")
	}

	// A key that expires ends its sessions at its expiry.
	d.AddKey("short", server.KeyParams{Name: "short", Projects: []string{"alpha"}, Scopes: []store.Scope{store.ScopeRead}, ExpiresAt: d.Clock.Now().Add(30 * time.Minute)})
	short := d.browser(t)
	short.signIn("short")
	d.Clock.Advance(30 * time.Minute)
	resp, _ = short.get("/dashboard/projects/alpha/")
	wantRedirect(t, resp, "/dashboard/login?ended=key-expired")
}

func TestDashboardSignOut(t *testing.T) {
	d := newDashEnv(t)
	b := d.browser(t)
	b.signIn("ro")
	_, token := b.page("/dashboard/projects/alpha/")
	copied := *b.cookie("docsapi_session")
	resp, _ := b.post("/dashboard/logout", token)
	wantRedirect(t, resp, "/dashboard/login?ended=signed-out")
	if b.cookie("docsapi_session") != nil {
		t.Error("signing out kept the cookie")
	}
	// A copy of the cookie made before signing out no longer works.
	thief := d.browser(t)
	u, _ := url.Parse(d.url + "/dashboard/")
	thief.jar.SetCookies(u, []*http.Cookie{{Name: copied.Name, Value: copied.Value, Path: "/dashboard/"}})
	resp, _ = thief.get("/dashboard/projects/alpha/")
	wantRedirect(t, resp, "/dashboard/login?ended=signed-out")
}

func TestDashboardKeepsToTheKeysProjects(t *testing.T) {
	d := newDashEnv(t)
	d.AddKey("both", server.KeyParams{Name: "both", Projects: []string{"alpha", "beta"}, Scopes: []store.Scope{store.ScopeRead}})
	b := d.browser(t)
	b.signIn("ro")
	for _, path := range []string{"/dashboard/projects/beta/", "/dashboard/projects/nope/jobs", "/dashboard/projects/beta/jobs/x"} {
		if resp, doc := b.get(path); resp.StatusCode != http.StatusForbidden || !strings.Contains(doc, "not allowed to use project") {
			t.Errorf("GET %s with an alpha key: %d, want 403", path, resp.StatusCode)
		}
	}
	both := d.browser(t)
	both.signIn("both")
	doc, _ := both.page("/dashboard/projects/alpha/")
	if !strings.Contains(doc, `<option value="beta">beta</option>`) {
		t.Error("no picker for a key of two projects")
	}
	resp, _ := both.get("/dashboard/?project=beta")
	wantRedirect(t, resp, "/dashboard/projects/beta/")
	both.page("/dashboard/projects/beta/")
}

func TestDashboardLimitsSignInsPerAddress(t *testing.T) {
	d := newDashEnv(t, func(c *server.Config) {
		c.Dashboard.LoginPerAddress = server.Limit{Requests: 3, Per: time.Minute}
	})
	b := d.browser(t)
	for i := range 4 {
		_, token := b.page("/dashboard/login")
		resp, page := b.post("/dashboard/login", token, "key", "mint_wrong")
		switch {
		case i < 3 && resp.StatusCode != http.StatusUnauthorized:
			t.Fatalf("attempt %d: %d, want 401", i+1, resp.StatusCode)
		case i == 3 && (resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(page, "Too many sign-in attempts")):
			t.Fatalf("attempt 4: %d (Retry-After %q), want 429", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
	// Even the right key waits: the budget is spent before the key is read.
	_, token := b.page("/dashboard/login")
	if resp, _ := b.post("/dashboard/login", token, "key", d.Keys["rw"]); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a right key past the budget: %d, want 429", resp.StatusCode)
	}
	d.Clock.Advance(time.Minute)
	b.signIn("rw")
}

func TestDashboardUnderAPrefix(t *testing.T) {
	d := newDashEnv(t)
	mux := http.NewServeMux()
	mux.Handle("/api/", http.StripPrefix("/api", d.Server))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	d.url = ts.URL
	b := d.browser(t)
	resp, _ := b.get("/api/dashboard/")
	wantRedirect(t, resp, "/api/dashboard/login")
	form, token := b.page("/api/dashboard/login")
	if !strings.Contains(form, `action="/api/dashboard/login"`) {
		t.Error("the form posts outside the prefix")
	}
	resp, _ = b.post("/api/dashboard/login", token, "key", d.Keys["ro"])
	wantRedirect(t, resp, "/api/dashboard/")
	if c := resp.Cookies(); len(c) == 0 || c[len(c)-1].Path != "/api/dashboard/" {
		t.Errorf("cookies under a prefix: %v", resp.Header["Set-Cookie"])
	}
	doc, _ := b.page("/api/dashboard/projects/alpha/")
	if !strings.Contains(doc, `href="/api/dashboard/projects/alpha/jobs"`) || !strings.Contains(doc, `href="/api/dashboard/style.css?v=`) {
		t.Error("links under a prefix leave it")
	}
}

func TestDashboardConfigIsChecked(t *testing.T) {
	for _, c := range []server.DashboardConfig{
		{Enabled: true, MaxAge: -time.Second},
		{Enabled: true, IdleTimeout: -time.Second},
		{Enabled: true, LoginPerAddress: server.Limit{Requests: 1}},
	} {
		if _, err := c.WithDefaults(); err == nil {
			t.Errorf("%+v is accepted", c)
		}
	}
	c, err := server.DashboardConfig{Enabled: true}.WithDefaults()
	if err != nil || c.MaxAge != server.DefaultDashboardMaxAge || c.IdleTimeout != server.DefaultDashboardIdleTimeout || c.LoginPerAddress != server.DefaultDashboardLoginPerAddress() {
		t.Errorf("defaults: %+v, %v", c, err)
	}
}

// count writes n as the dashboard does: 1,234.
func count(n int64) string {
	digits := strconv.FormatInt(n, 10)
	var out []byte
	for i := range len(digits) {
		if i > 0 && (len(digits)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, digits[i])
	}
	return string(out)
}

var (
	rowPattern  = regexp.MustCompile(`(?s)<tr>(.*?)</tr>`)
	cellPattern = regexp.MustCompile(`(?s)<t[hd][^>]*>(.*?)</t[hd]>`)
	tagPattern  = regexp.MustCompile(`<[^>]*>`)
)

// tableRows returns the text of the cells of the body of the table whose
// opening tag holds marker, row by row.
func tableRows(t *testing.T, page, marker string) [][]string {
	t.Helper()
	body := between(t, page[strings.Index(page, marker)+1:], "<tbody>", "</tbody>")
	var rows [][]string
	for _, row := range rowPattern.FindAllStringSubmatch(body, -1) {
		var cells []string
		for _, c := range cellPattern.FindAllStringSubmatch(row[1], -1) {
			cells = append(cells, strings.TrimSpace(html.UnescapeString(tagPattern.ReplaceAllString(c[1], ""))))
		}
		if len(cells) > 1 { // not the row that says the table is empty
			rows = append(rows, cells)
		}
	}
	return rows
}

// textOf returns the text page has between the first start and the end
// after it: tags removed, entities decoded.
func textOf(t *testing.T, page, start, end string) string {
	t.Helper()
	return strings.TrimSpace(html.UnescapeString(tagPattern.ReplaceAllString(between(t, page, start, end), "")))
}

// between returns what page has between the first start and the end
// after it.
func between(t *testing.T, page, start, end string) string {
	t.Helper()
	i := strings.Index(page, start)
	if i < 0 {
		t.Fatalf("the page has no %q", start)
	}
	rest := page[i+len(start):]
	j := strings.Index(rest, end)
	if j < 0 {
		t.Fatalf("the page has no %q after %q", end, start)
	}
	return rest[:j]
}
