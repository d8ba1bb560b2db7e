package metrics_test

import (
	"context"
	"errors"
	"fmt"
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
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/internal/sqlitetest"
	"github.com/docsapi/docsapi-go/server/metrics"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

// observed is a server with a site token of alpha for
// servertest.SiteOrigin and the dashboard on, whose public requests and
// sign-ins are counted by m.
type observed struct {
	t *testing.T
	e *servertest.Env
	m *metrics.Metrics
}

func newObserved(t *testing.T, st store.Store, mutate ...func(*server.Config)) *observed {
	t.Helper()
	m := newMetrics(t, metrics.Config{})
	hook := func(c *server.Config) {
		c.OnPublicRequest, c.OnSignIn, c.OnSiteLimit = m.ObservePublicRequest, m.ObserveSignIn, m.ObserveSiteLimit
		c.Dashboard.Enabled = true
	}
	if st == nil {
		var err error
		if st, err = sqlite.Open(t.Context(), sqlitetest.FreshFile(t)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
	}
	e := servertest.NewOn(t, st, append([]func(*server.Config){hook}, mutate...)...)
	tok, err := e.Server.CreateSiteToken(context.Background(), server.SiteTokenParams{Project: "alpha", Name: "docs", Origins: []string{servertest.SiteOrigin}})
	if err != nil {
		t.Fatal(err)
	}
	e.Keys["site"] = tok.Token
	return &observed{t: t, e: e, m: m}
}

// send serves a request from addr (host:port) straight to the server,
// with headers given as name, value pairs, and returns its status.
func (o *observed) send(addr, method, target, body string, header ...string) int {
	o.t.Helper()
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.RemoteAddr = addr
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	o.e.Server.ServeHTTP(w, r)
	return w.Code
}

// site sends a submission to a site endpoint of alpha from
// servertest.SiteOrigin with alpha's site token, from addr.
func (o *observed) site(addr, endpoint, body string) int {
	o.t.Helper()
	return o.send(addr, "POST", "/v1/site/alpha/"+endpoint+"?token="+o.e.Keys["site"], body, "Origin", servertest.SiteOrigin)
}

// ingest sends views to alpha's ingestion endpoint with the named key.
func (o *observed) ingest(key, body string) int {
	o.t.Helper()
	return o.send("192.0.2.200:1", "POST", "/v1/analytics/alpha/views", body, "Authorization", "Bearer "+o.e.Keys[key])
}

// addr returns a client address of its own /24 network, so that shares
// and budgets of one case do not meet another's.
func addr(i int) string { return fmt.Sprintf("198.18.%d.1:1", i) }

// nonZero returns the samples of the series named name that are not
// zero.
func nonZero(samples map[string]float64, name string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range series(samples, name) {
		if samples[s] != 0 {
			out[s] = samples[s]
		}
	}
	return out
}

// outcome is the series of endpoint and outcome.
func outcome(endpoint, outcome string) string {
	return `docsapi_public_requests_total{endpoint="` + endpoint + `",outcome="` + outcome + `"}`
}

// Every outcome of the public endpoints moves its own series, driven by
// real requests; no other series moves.
func TestPublicRequestsAreCountedByOutcome(t *testing.T) {
	o := newObserved(t, nil, func(c *server.Config) {
		c.Site.PerAddress = server.Limit{Requests: 2, Per: time.Hour}
		c.Site.MaxFeedbackPerDay, c.Site.MaxFeedbackPerAddress, c.Site.MaxFeedbackPerNetwork = 3, 1, 1
		c.Site.MaxBodyBytes = 4096
		c.MaxBodyBytes = 4096
		c.RateLimits.Ingest = server.Limit{Requests: 3, Per: time.Hour}
	})
	o.e.AddKey("flood", server.KeyParams{Name: "flood", Projects: []string{"alpha"}, Scopes: []store.Scope{store.ScopeWrite}})
	before := scrape(t, o.m.Handler())
	if got := series(before, "docsapi_public_requests_total"); len(got) != len(server.PublicRequestOutcomes()) {
		t.Errorf("%d series before any request, want every outcome's (%d)", len(got), len(server.PublicRequestOutcomes()))
	}
	if s := nonZero(before, "docsapi_public_requests_total"); len(s) != 0 {
		t.Errorf("series moved before any request: %v", s)
	}

	const vote = `{"path": "/a", "helpful": true}`
	large := `{"path": "/a", "helpful": true, "comment": "` + strings.Repeat("x", 5000) + `"}`
	n := 0
	next := func() string { n++; return addr(n) }
	moved := map[string]float64{} // the series each request should move
	check := func(status, wantStatus int, endpoint, out string) {
		t.Helper()
		if status != wantStatus {
			t.Fatalf("%s expecting %s: status %d, want %d", endpoint, out, status, wantStatus)
		}
		moved[outcome(endpoint, out)]++
	}
	first := next()
	check(o.site(first, "feedback", vote), 202, "feedback", "accepted")
	check(o.site(first, "feedback", vote), 429, "feedback", "share") // its address's share
	check(o.send(next(), "POST", "/v1/site/alpha/feedback", vote, "Origin", servertest.SiteOrigin), 401, "feedback", "bad_token")
	check(o.send(next(), "POST", "/v1/site/alpha/feedback?token=site_unknown", vote, "Origin", servertest.SiteOrigin), 401, "feedback", "bad_token")
	check(o.send(next(), "POST", "/v1/site/beta/feedback?token="+o.e.Keys["site"], vote, "Origin", servertest.SiteOrigin), 403, "feedback", "bad_token")
	check(o.send(next(), "POST", "/v1/site/alpha/feedback?token="+o.e.Keys["site"], vote, "Origin", "https://elsewhere.example"), 403, "feedback", "origin")
	check(o.send(next(), "POST", "/v1/site/alpha/feedback?token="+o.e.Keys["site"], vote), 403, "feedback", "origin")
	check(o.site(next(), "feedback", large), 413, "feedback", "too_large")
	check(o.site(next(), "feedback", `{"path": "/a"}`), 400, "feedback", "bad_body")
	check(o.site(next(), "feedback", `not json`), 400, "feedback", "bad_body")
	check(o.site(next(), "feedback", `{"path": "/a", "helpful": true, "website": "spam.example"}`), 202, "feedback", "honeypot")
	check(o.site(next(), "feedback", vote), 202, "feedback", "accepted")
	check(o.site(next(), "feedback", vote), 202, "feedback", "accepted") // the day's third
	check(o.site(next(), "feedback", vote), 429, "feedback", "cap")
	limited := next()
	check(o.site(limited, "feedback", `{}`), 400, "feedback", "bad_body")
	check(o.site(limited, "feedback", `{}`), 400, "feedback", "bad_body")
	check(o.site(limited, "feedback", vote), 429, "feedback", "rate_limited") // its address's budget: 2

	check(o.site(next(), "searches", `{"query": "install"}`), 202, "searches", "accepted")
	check(o.site(next(), "searches", `{"query": "  "}`), 400, "searches", "bad_body")
	check(o.site(next(), "searches", `{"query": "install", "website": "x"}`), 202, "searches", "honeypot")
	check(o.send(next(), "POST", "/v1/site/alpha/searches?token=site_unknown", `{"query": "a"}`, "Origin", servertest.SiteOrigin), 401, "searches", "bad_token")

	preflight := func(addr, origin, method string) int {
		return o.send(addr, "OPTIONS", "/v1/site/alpha/feedback", "", "Origin", origin, "Access-Control-Request-Method", method)
	}
	check(preflight(next(), servertest.SiteOrigin, "POST"), 204, "preflight", "accepted")
	check(preflight(next(), "https://elsewhere.example", "POST"), 403, "preflight", "origin")
	check(preflight(next(), servertest.SiteOrigin, "DELETE"), 403, "preflight", "bad_request")

	check(o.ingest("rw", `{"views": [{"path": "/a"}]}`), 202, "ingest", "accepted")
	check(o.ingest("rw", `{"views": []}`), 400, "ingest", "bad_body")
	check(o.ingest("rw", `{"views": [{"path": "/`+strings.Repeat("a", 5000)+`"}]}`), 413, "ingest", "too_large")
	check(o.send("192.0.2.200:1", "POST", "/v1/analytics/alpha/views", `{"views": [{"path": "/a"}]}`), 401, "ingest", "bad_key")
	check(o.ingest("ro", `{"views": [{"path": "/a"}]}`), 403, "ingest", "bad_key")   // no write scope
	check(o.ingest("beta", `{"views": [{"path": "/a"}]}`), 403, "ingest", "bad_key") // another project's
	for range 3 {
		check(o.ingest("flood", `{"views": [{"path": "/a"}]}`), 202, "ingest", "accepted")
	}
	check(o.ingest("flood", `{"views": [{"path": "/a"}]}`), 429, "ingest", "rate_limited")

	got := nonZero(scrape(t, o.m.Handler()), "docsapi_public_requests_total")
	for s, v := range moved {
		if got[s] != v {
			t.Errorf("%s = %v, want %v", s, got[s], v)
		}
	}
	for s, v := range got {
		if _, ok := moved[s]; !ok {
			t.Errorf("%s = %v, want 0", s, v)
		}
	}
}

// failingStore fails every write of the public endpoints, as a store
// that lost its disk would.
type failingStore struct{ store.Store }

var errDown = errors.New("the disk is gone")

func (failingStore) AddFeedback(context.Context, store.NewFeedback) (store.Feedback, error) {
	return store.Feedback{}, errDown
}

func (failingStore) AddSearches(context.Context, store.SearchBatch) (store.SearchFolds, error) {
	return store.SearchFolds{}, errDown
}

func (failingStore) AddViews(context.Context, []store.ViewCount) error { return errDown }

// A store that fails counts as error, apart from the clients' mistakes.
func TestPublicStoreFailuresCountAsErrors(t *testing.T) {
	st, err := sqlite.Open(t.Context(), sqlitetest.FreshFile(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	o := newObserved(t, failingStore{st})
	for _, status := range []int{
		o.site(addr(1), "feedback", `{"path": "/a", "helpful": false}`),
		o.site(addr(2), "searches", `{"query": "install"}`),
		o.ingest("rw", `{"views": [{"path": "/a"}]}`),
	} {
		if status != http.StatusInternalServerError {
			t.Fatalf("status %d, want 500", status)
		}
	}
	got := nonZero(scrape(t, o.m.Handler()), "docsapi_public_requests_total")
	want := map[string]float64{outcome("feedback", "error"): 1, outcome("searches", "error"): 1, outcome("ingest", "error"): 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("counted %v, want %v", got, want)
	}
}

// A flood of distinct bad requests (invented tokens, origins, projects,
// bodies, keys, methods and headers) adds no series: every label value is
// one of a fixed set, none taken from a request.
func TestPublicLabelsStayBounded(t *testing.T) {
	o := newObserved(t, nil, func(c *server.Config) {
		c.Site.PerAddress = server.Limit{Requests: 1 << 20, Per: time.Second}
		c.Dashboard.LoginPerAddress = server.Limit{Requests: 1 << 20, Per: time.Second}
	})
	d := o.dashboard()
	flood := func(from, to int) {
		for i := from; i < to; i++ {
			x := fmt.Sprintf("invented%d", i)
			a := addr(i % 200)
			o.send(a, "POST", "/v1/site/alpha/feedback?token=site_"+x, `{"path": "/a", "helpful": true}`, "Origin", servertest.SiteOrigin)
			o.send(a, "POST", "/v1/site/"+x+"/searches?token="+o.e.Keys["site"], `{"query": "q"}`, "Origin", servertest.SiteOrigin)
			o.send(a, "POST", "/v1/site/alpha/feedback?token="+o.e.Keys["site"], `{"path": "/a", "helpful": true}`, "Origin", "https://"+x+".example")
			o.send(a, "POST", "/v1/site/alpha/feedback?token="+o.e.Keys["site"], `{"`+x+`": 1}`, "Origin", servertest.SiteOrigin)
			o.send(a, "POST", "/v1/site/alpha/searches", `{"query": "q"}`, "Origin", servertest.SiteOrigin, "X-Docsapi-Site-Token", "site_"+x)
			o.send(a, "OPTIONS", "/v1/site/alpha/searches", "", "Origin", servertest.SiteOrigin, "Access-Control-Request-Method", strings.ToUpper(x))
			o.send(a, "OPTIONS", "/v1/site/alpha/feedback", "", "Origin", servertest.SiteOrigin, "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "x-"+x)
			o.send(a, "POST", "/v1/analytics/alpha/views", `{"views": [{"path": "/a"}]}`, "Authorization", "Bearer mint_"+x)
			o.send(a, "POST", "/v1/analytics/"+x+"/views", `{"views": [{"path": "/a"}]}`, "Authorization", "Bearer "+o.e.Keys["rw"])
			o.send(a, "POST", "/v1/analytics/alpha/views", `{"`+x+`": []}`, "Authorization", "Bearer "+o.e.Keys["rw"])
			d.signIn("mint_" + x)
		}
	}
	h := o.m.Handler()
	flood(0, 20)
	few := scrape(t, h)
	flood(20, 200)
	many := scrape(t, h)
	for _, name := range []string{"docsapi_public_requests_total", "docsapi_dashboard_signins_total"} {
		if a, b := len(series(few, name)), len(series(many, name)); a != b || a == 0 {
			t.Errorf("%s: %d series after 20 rounds of invented requests, %d after 200", name, a, b)
		}
		for _, s := range series(many, name) {
			if strings.Contains(s, "invented") || strings.Contains(s, "INVENTED") {
				t.Errorf("a label holds what the client sent: %s", s)
			}
		}
	}
	if got := len(series(many, "docsapi_public_requests_total")); got != len(server.PublicRequestOutcomes()) {
		t.Errorf("%d series of docsapi_public_requests_total, want the %d outcomes known", got, len(server.PublicRequestOutcomes()))
	}
	// The flood was counted, under the fixed outcomes.
	want(t, many, outcome("feedback", "bad_token"), 200)
	want(t, many, outcome("searches", "bad_token"), 2*200)
	want(t, many, outcome("feedback", "origin"), 200)
	want(t, many, outcome("feedback", "bad_body"), 200)
	want(t, many, outcome("preflight", "bad_request"), 2*200)
	want(t, many, outcome("ingest", "bad_key"), 2*200)
	want(t, many, outcome("ingest", "bad_body"), 200)
	want(t, many, `docsapi_dashboard_signins_total{result="refused"}`, 200)
}

// dashboardClient signs in to the dashboard as a browser does: the form
// with its CSRF token, then the key.
type dashboardClient struct {
	t   *testing.T
	url string
}

func (o *observed) dashboard() *dashboardClient {
	ts := httptest.NewServer(o.e.Server)
	o.t.Cleanup(ts.Close)
	return &dashboardClient{t: o.t, url: ts.URL}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// signIn loads the sign-in form with a fresh cookie jar and sends key
// through it (without the form's CSRF token if noToken), returning the
// status.
func (d *dashboardClient) signIn(key string, noToken ...bool) int {
	d.t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		d.t.Fatal(err)
	}
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(d.url + "/dashboard/login")
	if err != nil {
		d.t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfField.FindSubmatch(page)
	if m == nil {
		d.t.Fatalf("no CSRF token in the sign-in form:\n%s", page)
	}
	form := url.Values{"key": {key}, "csrf": {string(m[1])}}
	if len(noToken) > 0 && noToken[0] {
		form.Del("csrf")
	}
	resp, err = c.PostForm(d.url+"/dashboard/login", form)
	if err != nil {
		d.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Sign-ins are counted by result: ok, refused (the key), invalid (the
// form), limited (the address's budget).
func TestSignInsAreCounted(t *testing.T) {
	o := newObserved(t, nil, func(c *server.Config) {
		c.Dashboard.LoginPerAddress = server.Limit{Requests: 5, Per: time.Hour}
	})
	d := o.dashboard()
	before := scrape(t, o.m.Handler())
	for _, r := range server.SignInResults() {
		want(t, before, `docsapi_dashboard_signins_total{result="`+r+`"}`, 0)
	}
	for _, c := range []struct {
		status int
		want   int
	}{
		{d.signIn(o.e.Keys["ro"]), http.StatusSeeOther},
		{d.signIn("mint_not_a_key"), http.StatusUnauthorized},
		{d.signIn(o.e.Keys["rw"], true), http.StatusForbidden},
		{d.signIn(o.e.Keys["rw"]), http.StatusSeeOther},
		{d.signIn("mint_not_a_key"), http.StatusUnauthorized},
		{d.signIn(o.e.Keys["rw"]), http.StatusTooManyRequests}, // the sixth from one address
	} {
		if c.status != c.want {
			t.Fatalf("sign-in: %d, want %d", c.status, c.want)
		}
	}
	got := scrape(t, o.m.Handler())
	want(t, got, `docsapi_dashboard_signins_total{result="ok"}`, 2)
	want(t, got, `docsapi_dashboard_signins_total{result="refused"}`, 2)
	want(t, got, `docsapi_dashboard_signins_total{result="invalid"}`, 1)
	want(t, got, `docsapi_dashboard_signins_total{result="limited"}`, 1)
	want(t, got, `docsapi_dashboard_signins_total{result="error"}`, 0)
}
