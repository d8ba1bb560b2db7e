package site_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/store"
)

func text(s string) *string { return &s }

// Each kind of submission is stored as the source it is, with the time
// of the request and nothing the request did not send.
func TestSiteFeedbackIsStoredAsItsSource(t *testing.T) {
	e := newSiteEnv(t)
	e.MustPost("feedback", `{"path": "/guide/index.html", "helpful": true}`)
	e.Clock.Advance(time.Second)
	e.MustPost("feedback", `{"path": "/guide", "helpful": false, "comment": "Step 3 fails.\nOn Windows.", "contact": "reader@example.com"}`)
	e.Clock.Advance(time.Second)
	e.MustPost("feedback", `{"path": "/api?tab=curl#auth", "code": "curl -X POST\n\t-d '{}'", "filename": "run.sh", "lang": "bash", "comment": ""}`)
	e.Clock.Advance(time.Second)
	e.MustPost("feedback", `{"path": "/guide/", "helpful": true, "comment": ""}`)
	got := e.Stored()
	t0 := time.Date(2026, 8, 14, 9, 0, 0, 0, time.UTC)
	want := []store.Feedback{
		{Path: "/guide", Source: store.FeedbackSourceContextual, Helpful: true, Comment: text(""), CreatedAt: t0.Add(3 * time.Second)},
		{Path: "/api", Source: store.FeedbackSourceCodeSnippet, Comment: text(""), Code: "curl -X POST\n\t-d '{}'", Filename: "run.sh", Lang: "bash", CreatedAt: t0.Add(2 * time.Second)},
		{Path: "/guide", Source: store.FeedbackSourceContextual, Comment: text("Step 3 fails.\nOn Windows."), Contact: "reader@example.com", CreatedAt: t0.Add(time.Second)},
		{Path: "/guide", Source: store.FeedbackSourceThumbsOnly, Helpful: true, CreatedAt: t0},
	}
	for i := range want {
		want[i].ProjectID, want[i].Status, want[i].UpdatedAt = "alpha", store.FeedbackStatusPending, want[i].CreatedAt
		if i < len(got) {
			if !strings.HasPrefix(got[i].ID, "fb_") {
				t.Errorf("entry %d: ID %q, want fb_...", i, got[i].ID)
			}
			want[i].ID = got[i].ID
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("stored (-want +got):\n%s", diff)
	}
}

// Bad input gets a 400 that names the field, and nothing is stored.
func TestSiteInputIsCheckedFieldByField(t *testing.T) {
	e := newSiteEnv(t)
	long := func(n int) string { return strings.Repeat("é", n) }
	for _, tc := range []struct {
		endpoint, body, want string
	}{
		{"feedback", `{"helpful": true}`, `"path" is required`},
		{"feedback", `{"path": "guide", "helpful": true}`, `"path" must start with /`},
		{"feedback", `{"path": "/a\u202eb", "helpful": true}`, `"path" holds a bidirectional formatting character`},
		{"feedback", `{"path": "/a"}`, `"helpful" (the page) or "code" (a code block) is required`},
		{"feedback", `{"path": "/a", "helpful": true, "code": "x"}`, `"code" and "helpful" exclude each other`},
		{"feedback", `{"path": "/a", "helpful": "yes"}`, `"helpful" must be a boolean`},
		{"feedback", `{"path": "/a", "helpful": true, "rating": 5}`, `unknown field "rating"`},
		{"feedback", `{"path": "/a", "helpful": true, "comment": "` + long(2001) + `"}`, `"comment" is 2001 characters long; the limit is 2000`},
		{"feedback", `{"path": "/a", "helpful": true, "comment": "a\u0007b"}`, `"comment" holds the control character U+0007`},
		{"feedback", `{"path": "/a", "helpful": true, "comment": "price \u202e0001$"}`, `"comment" holds a bidirectional formatting character (U+202E)`},
		{"feedback", `{"path": "/a", "helpful": true, "contact": "not an address"}`, `"contact" must be an e-mail address`},
		{"feedback", `{"path": "/a", "helpful": true, "contact": "Reader <r@example.com>"}`, `"contact" must be an e-mail address`},
		{"feedback", `{"path": "/a", "helpful": true, "lang": "go"}`, `"lang" belongs to feedback on a code block`},
		{"feedback", `{"path": "/a", "code": "  "}`, `"code" must not be empty`},
		{"feedback", `{"path": "/a", "code": "` + strings.Repeat("x", 10001) + `"}`, `"code" is 10001 characters long; the limit is 10000`},
		{"feedback", `{"path": "/a", "code": "if (a \u2066) {}"}`, `"code" holds a bidirectional formatting character (U+2066)`},
		{"feedback", `{"path": "/a", "code": "x", "filename": "a\nb"}`, `"filename" holds the control character U+000A`},
		{"feedback", `{"path": "/a", "code": "x", "contact": "r@example.com"}`, `"contact" belongs to feedback on a page`},
		{"feedback", `{"path": "/a", "helpful": true} {}`, `data after the JSON object`},
		{"feedback", "{\"path\": \"/a\", \"helpful\": true, \"comment\": \"\xff\"}", `not valid UTF-8`},
		{"searches", `{}`, `"query" is required`},
		{"searches", `{"query": " \t "}`, `"query" must not be blank`},
		{"searches", `{"query": "` + strings.Repeat("a ", 101) + `"}`, `"query" is 201 characters long once normalised; the limit is 200`},
		{"searches", `{"query": "` + strings.Repeat("x", 1001) + `"}`, `"query" has 1001 bytes; at most 1000 are allowed`},
		{"searches", `{"query": "a\u0000b"}`, `"query" holds the control character U+0000`},
		{"searches", `{"query": "a", "clickedPath": "relative"}`, `"clickedPath" must start with /`},
		{"searches", `{"query": "a", "page": "/x"}`, `unknown field "page"; the fields are "query", "clickedPath", "website"`},
	} {
		status, body := e.Post(tc.endpoint, tc.body)
		if status != http.StatusBadRequest || !strings.Contains(servertest.ErrorOf(t, body), tc.want) {
			t.Errorf("%s %.80s: %d %s, want 400 saying %q", tc.endpoint, tc.body, status, body, tc.want)
		}
	}
	if got := e.Stored(); len(got) != 0 {
		t.Errorf("refused submissions stored %d entries", len(got))
	}
	if got := e.Searches(); len(got) != 0 {
		t.Errorf("refused searches stored %d queries", len(got))
	}
}

// A body past the bound is refused whether it declares its length or not.
func TestSiteBodyIsBounded(t *testing.T) {
	e := newSiteEnv(t, func(c *server.Config) { c.Site.MaxBodyBytes = 512 })
	body := `{"path": "/a", "helpful": true, "comment": "` + strings.Repeat("x", 600) + `"}`
	status, b := e.Post("feedback", body)
	if status != http.StatusRequestEntityTooLarge {
		t.Fatalf("declared length: %d %s, want 413", status, b)
	}
	resp, b := e.Site(servertest.SiteRequest{Method: "POST", Target: "/v1/site/alpha/feedback?token=" + e.Keys["site"], Body: body, Origin: servertest.SiteOrigin,
		Header: []string{"Transfer-Encoding", "chunked"}})
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked: %d %s, want 413", resp.StatusCode, b)
	}
	if got := e.Stored(); len(got) != 0 {
		t.Errorf("stored %d entries", len(got))
	}
}

// The site token is public, so what it allows is checked on every
// request: an attacker's token-less request, a guessed token, a revoked
// one and another project's are all refused, and store nothing.
func TestSiteTokenIsRequiredAndChecked(t *testing.T) {
	e := newSiteEnv(t)
	ctx := context.Background()
	beta, err := e.Server.CreateSiteToken(ctx, server.SiteTokenParams{Project: "beta", Origins: []string{servertest.SiteOrigin}})
	if err != nil {
		t.Fatal(err)
	}
	revoked, err := e.Server.CreateSiteToken(ctx, server.SiteTokenParams{Project: "alpha", Origins: []string{servertest.SiteOrigin}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Server.RevokeSiteToken(ctx, revoked.Token); err != nil {
		t.Fatal(err)
	}
	const vote = `{"path": "/a", "helpful": true}`
	for _, tc := range []struct {
		name   string
		target string
		header []string
		status int
		want   string
	}{
		{"no token", "/v1/site/alpha/feedback", nil, 401, "missing site token"},
		{"a guessed token", "/v1/site/alpha/feedback?token=site_guess", nil, 401, "unknown site token"},
		{"a revoked token", "/v1/site/alpha/feedback?token=" + revoked.Token, nil, 401, "revoked"},
		{"another project's token", "/v1/site/alpha/feedback?token=" + beta.Token, nil, 403, "another project"},
		{"an admin key as token", "/v1/site/alpha/feedback", []string{server.SiteTokenHeader, e.Keys["rw"]}, 401, "unknown site token"},
		{"two tokens that disagree", "/v1/site/alpha/feedback?token=" + e.Keys["site"], []string{server.SiteTokenHeader, beta.Token}, 400, "disagree"},
		{"the token twice", "/v1/site/alpha/feedback?token=" + e.Keys["site"] + "&token=" + e.Keys["site"], nil, 400, "more than once"},
	} {
		resp, body := e.Site(servertest.SiteRequest{Method: "POST", Target: tc.target, Body: vote, Origin: servertest.SiteOrigin, Header: tc.header})
		if resp.StatusCode != tc.status || !strings.Contains(servertest.ErrorOf(t, body), tc.want) {
			t.Errorf("%s: %d %s, want %d saying %q", tc.name, resp.StatusCode, body, tc.status, tc.want)
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s: Access-Control-Allow-Origin is set on a refusal", tc.name)
		}
	}
	if got := e.Stored(); len(got) != 0 {
		t.Fatalf("refused requests stored %d entries", len(got))
	}
	// The header works as well as the query.
	resp, body := e.Site(servertest.SiteRequest{Method: "POST", Target: "/v1/site/alpha/feedback", Body: vote, Origin: servertest.SiteOrigin,
		Header: []string{server.SiteTokenHeader, e.Keys["site"]}})
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("token in the header: %d %s", resp.StatusCode, body)
	}
}

// A page of another site cannot use the token: its browser sends its own
// Origin, which is refused (and gets no CORS header, so its script cannot
// read the answer either); a request without Origin is refused too.
func TestSiteOriginMustBeAllowed(t *testing.T) {
	e := newSiteEnv(t)
	const vote = `{"path": "/a", "helpful": true}`
	target := "/v1/site/alpha/feedback?token=" + e.Keys["site"]
	for _, origin := range []string{"https://evil.example", "https://docs.alpha.example.evil.example", "http://docs.alpha.example", "null", ""} {
		resp, body := e.Site(servertest.SiteRequest{Method: "POST", Target: target, Body: vote, Origin: origin})
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("origin %q: %d %s, want 403", origin, resp.StatusCode, body)
		}
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "" {
			t.Errorf("origin %q: Access-Control-Allow-Origin %q on a refusal", origin, got)
		}
	}
	if got := e.Stored(); len(got) != 0 {
		t.Fatalf("refused origins stored %d entries", len(got))
	}
	// The allowed origin, spelled as a browser may spell it, is answered
	// with its CORS header.
	for _, origin := range []string{servertest.SiteOrigin, "https://DOCS.alpha.example:443"} {
		resp, body := e.Site(servertest.SiteRequest{Method: "POST", Target: target, Body: vote, Origin: origin})
		if resp.StatusCode != http.StatusAccepted || resp.Header.Get("Access-Control-Allow-Origin") != servertest.SiteOrigin {
			t.Errorf("origin %q: %d %s, Access-Control-Allow-Origin %q; want 202 and %s", origin, resp.StatusCode, body,
				resp.Header.Get("Access-Control-Allow-Origin"), servertest.SiteOrigin)
		}
		if !strings.Contains(resp.Header.Get("Vary"), "Origin") {
			t.Errorf("origin %q: Vary %q does not name Origin", origin, resp.Header.Get("Vary"))
		}
	}
}

// The preflight allows exactly the origins of the project's active tokens,
// the POST method and the two headers the endpoints read.
func TestSitePreflight(t *testing.T) {
	e := newSiteEnv(t)
	ctx := context.Background()
	other, err := e.Server.CreateSiteToken(ctx, server.SiteTokenParams{Project: "alpha", Origins: []string{"http://localhost:3000"}})
	if err != nil {
		t.Fatal(err)
	}
	old, err := e.Server.CreateSiteToken(ctx, server.SiteTokenParams{Project: "alpha", Origins: []string{"https://old.alpha.example"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Server.RevokeSiteToken(ctx, old.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Server.CreateSiteToken(ctx, server.SiteTokenParams{Project: "beta", Origins: []string{"https://beta.example"}}); err != nil {
		t.Fatal(err)
	}
	preflight := func(target, origin, method, headers string) *http.Response {
		t.Helper()
		resp, _ := e.Site(servertest.SiteRequest{Method: "OPTIONS", Target: target, Origin: origin,
			Header: []string{"Access-Control-Request-Method", method, "Access-Control-Request-Headers", headers}})
		return resp
	}
	for _, tc := range []struct {
		name, target, origin, method, headers string
		allowed                               bool
	}{
		{"the site", "/v1/site/alpha/feedback", servertest.SiteOrigin, "POST", "content-type, x-docsapi-site-token", true},
		{"another token's origin", "/v1/site/alpha/searches", "http://localhost:3000", "POST", "Content-Type", true},
		{"a revoked token's origin", "/v1/site/alpha/feedback", "https://old.alpha.example", "POST", "", false},
		{"another project's origin", "/v1/site/alpha/feedback", "https://beta.example", "POST", "", false},
		{"an unknown origin", "/v1/site/alpha/feedback", "https://evil.example", "POST", "", false},
		{"another method", "/v1/site/alpha/feedback", servertest.SiteOrigin, "DELETE", "", false},
		{"another header", "/v1/site/alpha/feedback", servertest.SiteOrigin, "POST", "authorization", false},
		{"the named token's origin", "/v1/site/alpha/feedback?token=" + other.Token, "http://localhost:3000", "POST", "", true},
		{"another token's origin than the named one", "/v1/site/alpha/feedback?token=" + other.Token, servertest.SiteOrigin, "POST", "", false},
		{"a revoked named token", "/v1/site/alpha/feedback?token=" + old.Token, "https://old.alpha.example", "POST", "", false},
	} {
		resp := preflight(tc.target, tc.origin, tc.method, tc.headers)
		acao := resp.Header.Get("Access-Control-Allow-Origin")
		switch {
		case tc.allowed && (resp.StatusCode != http.StatusNoContent || acao != tc.origin ||
			resp.Header.Get("Access-Control-Allow-Methods") != "POST" || resp.Header.Get("Access-Control-Allow-Headers") != "Content-Type, X-Docsapi-Site-Token"):
			t.Errorf("%s: %d, headers %v; want 204 allowing %s", tc.name, resp.StatusCode, resp.Header, tc.origin)
		case !tc.allowed && (resp.StatusCode != http.StatusForbidden || acao != ""):
			t.Errorf("%s: %d, Access-Control-Allow-Origin %q; want 403 without it", tc.name, resp.StatusCode, acao)
		}
	}
	// An OPTIONS request that is no preflight says what the resource takes.
	resp, _ := e.Site(servertest.SiteRequest{Method: "OPTIONS", Target: "/v1/site/alpha/feedback"})
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Allow") != "OPTIONS, POST" {
		t.Errorf("plain OPTIONS: %d Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

// One address cannot flood the endpoints: past its budget it gets 429 with
// Retry-After and nothing is stored, while other addresses go on; an IPv6
// client cannot escape by changing the low bits of its address.
func TestSitePerAddressBudget(t *testing.T) {
	e := newSiteEnv(t, func(c *server.Config) { c.Site.PerAddress = server.Limit{Requests: 3, Per: time.Minute} })
	send := func(addr string) *http.Response {
		t.Helper()
		resp, _ := e.Site(servertest.SiteRequest{Method: "POST", Target: "/v1/site/alpha/searches?token=" + e.Keys["site"],
			Body: `{"query": "install"}`, Origin: servertest.SiteOrigin, Addr: addr})
		return resp
	}
	for i := range 3 {
		if resp := send("203.0.113.7:1000"); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("request %d: %d", i, resp.StatusCode)
		}
	}
	resp := send("203.0.113.7:2000")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "20" {
		t.Fatalf("fourth request: %d Retry-After %q, want 429 and 20", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	// Preflights draw on the same budget.
	r, _ := e.Site(servertest.SiteRequest{Method: "OPTIONS", Target: "/v1/site/alpha/searches", Origin: servertest.SiteOrigin, Addr: "203.0.113.7:3000",
		Header: []string{"Access-Control-Request-Method", "POST"}})
	if r.StatusCode != http.StatusTooManyRequests {
		t.Errorf("preflight past the budget: %d, want 429", r.StatusCode)
	}
	if resp := send("203.0.113.8:1000"); resp.StatusCode != http.StatusAccepted {
		t.Errorf("another address: %d, want 202", resp.StatusCode)
	}
	for i := range 3 {
		send(fmt.Sprintf("[2001:db8:1:2::%x]:443", i+1))
	}
	if resp := send("[2001:db8:1:2:ffff::1]:443"); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("another address of the same /64: %d, want 429", resp.StatusCode)
	}
	if resp := send("[2001:db8:1:3::1]:443"); resp.StatusCode != http.StatusAccepted {
		t.Errorf("another /64: %d, want 202", resp.StatusCode)
	}
	if rows := e.Searches(); len(rows) != 1 || rows[0].Hits != 8 {
		t.Errorf("stored %+v, want the 8 searches accepted", rows)
	}
	if got := e.Server.SiteStats().RateLimited; got != 3 {
		t.Errorf("SiteStats().RateLimited = %d, want 3", got)
	}
	e.Clock.Advance(20 * time.Second)
	if resp := send("203.0.113.7:1000"); resp.StatusCode != http.StatusAccepted {
		t.Errorf("after Retry-After: %d, want 202", resp.StatusCode)
	}
}

// A flood from many addresses (a botnet, or forged IPv6 addresses behind a
// trusted proxy) does not grow the memory of the budgets: at most
// MaxAddresses are remembered.
func TestSiteBudgetsOfAFloodOfAddressesStayBounded(t *testing.T) {
	e := newSiteEnv(t, func(c *server.Config) {
		c.Site.MaxAddresses = 100
		c.Site.PerAddress = server.Limit{Requests: 1, Per: time.Hour}
	})
	for i := range 2000 {
		resp, _ := e.Site(servertest.SiteRequest{Method: "OPTIONS", Target: "/v1/site/alpha/feedback",
			Addr: fmt.Sprintf("10.%d.%d.%d:1", i>>16&255, i>>8&255, i&255)})
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("address %d: %d", i, resp.StatusCode)
		}
		if n := e.Server.SiteStats().Addresses; n > 100 {
			t.Fatalf("after %d addresses, %d are remembered; the bound is 100", i+1, n)
		}
	}
	// A recent address is still remembered, and still limited.
	resp, _ := e.Site(servertest.SiteRequest{Method: "OPTIONS", Target: "/v1/site/alpha/feedback", Addr: "10.0.7.207:1"})
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("the last address again: %d, want 429", resp.StatusCode)
	}
}

// A bot that fills the hidden field gets the same answer as a reader, and
// nothing of it is stored; it is counted.
func TestSiteHoneypot(t *testing.T) {
	e := newSiteEnv(t)
	for _, tc := range []struct{ endpoint, body string }{
		{"feedback", `{"path": "/a", "helpful": true, "comment": "Buy now", "website": "https://spam.example"}`},
		{"searches", `{"query": "casino", "website": "x"}`},
	} {
		status, body := e.Post(tc.endpoint, tc.body)
		if status != http.StatusAccepted || string(body) != "{\"accepted\":true}\n" {
			t.Errorf("%s with the honeypot filled: %d %s, want 202 as for a reader", tc.endpoint, status, body)
		}
	}
	if got := e.Stored(); len(got) != 0 {
		t.Errorf("the honeypot's feedback was stored: %+v", got)
	}
	if got := e.Searches(); len(got) != 0 {
		t.Errorf("the honeypot's search was stored: %+v", got)
	}
	if got := e.Server.SiteStats().Honeypot; got != 2 {
		t.Errorf("SiteStats().Honeypot = %d, want 2", got)
	}
	// An empty honeypot is a reader's.
	e.MustPost("feedback", `{"path": "/a", "helpful": true, "website": ""}`)
	if got := e.Stored(); len(got) != 1 {
		t.Errorf("with an empty honeypot, %d entries stored, want 1", len(got))
	}
}

// A script posting made-up feedback from many addresses fills at most a
// day's cap; past it, 429 until the next UTC day, and nothing stored.
func TestSiteFeedbackDailyCap(t *testing.T) {
	e := newSiteEnv(t, func(c *server.Config) {
		c.Site.MaxFeedbackPerDay, c.Site.MaxFeedbackPerAddress, c.Site.MaxFeedbackPerNetwork = 2, 2, 2
	})
	e.MustPost("feedback", `{"path": "/a", "helpful": true}`)
	e.MustPost("feedback", `{"path": "/b", "helpful": false}`)
	resp, body := e.Site(servertest.SiteRequest{Method: "POST", Target: "/v1/site/alpha/feedback?token=" + e.Keys["site"],
		Body: `{"path": "/c", "helpful": true}`, Origin: servertest.SiteOrigin, Addr: "198.51.100.9:1"})
	// The test clock stands at 09:00 UTC: 15 hours to the next day.
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "54000" {
		t.Fatalf("past the cap: %d Retry-After %q %s, want 429 and 54000", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if got := len(e.Stored()); got != 2 {
		t.Fatalf("%d entries stored, want the cap, 2", got)
	}
	if got := e.Server.SiteStats().FeedbackFull; got != 1 {
		t.Errorf("SiteStats().FeedbackFull = %d, want 1", got)
	}
	e.Clock.Advance(15 * time.Hour)
	e.MustPost("feedback", `{"path": "/c", "helpful": true}`)
}

// Queries are counted normalised; past the day's cap, made-up queries
// fold into "(other searches)", so they cannot grow the storage, and the
// total stays exact.
func TestSiteSearchesAreNormalisedAndCapped(t *testing.T) {
	e := newSiteEnv(t, func(c *server.Config) {
		c.Site.MaxQueriesPerDay, c.Site.MaxQueriesPerAddress, c.Site.MaxQueriesPerNetwork = 2, 2, 2
	})
	e.MustPost("searches", `{"query": "  Install\tGUIDE  ", "clickedPath": "/guides/install/"}`)
	e.MustPost("searches", `{"query": "install guide"}`)
	e.MustPost("searches", `{"query": "API keys", "clickedPath": "/keys.html"}`)
	for i := range 20 {
		e.MustPost("searches", fmt.Sprintf(`{"query": "made-up %d", "clickedPath": "/x%d"}`, i, i))
	}
	got := e.Searches()
	t0 := time.Date(2026, 8, 14, 9, 0, 0, 0, time.UTC)
	want := []store.SearchRow{
		{Query: store.OtherSearchesQuery, Hits: 20, Clicks: 20, LastSearchedAt: t0},
		{Query: "install guide", Hits: 2, Clicks: 1, TopClickedPage: "/guides/install", LastSearchedAt: t0},
		{Query: "api keys", Hits: 1, Clicks: 1, TopClickedPage: "/keys", LastSearchedAt: t0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("searches (-want +got):\n%s", diff)
	}
	if st := e.Server.SiteStats(); st.FoldedSearches != 20 || st.UnattributedClicks != 20 {
		t.Errorf("SiteStats = %+v, want 20 folded searches and 20 unattributed clicks", st)
	}
}

// The script a page embeds is served to anyone, as JavaScript, and talks
// to the endpoints it must.
func TestSiteScriptIsServed(t *testing.T) {
	e := newSiteEnv(t)
	resp, body := e.Site(servertest.SiteRequest{Method: "GET", Target: "/v1/site/alpha/docsapi.js"})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/javascript; charset=utf-8" ||
		resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("GET docsapi.js: %d %v", resp.StatusCode, resp.Header)
	}
	js := string(body)
	for _, want := range []string{`"feedback"`, `"searches"`, "sendBeacon", "data-token", "?token=", "Was this page helpful?",
		`name: "website"`, "text/plain", "helpful", "clickedPath", "textContent"} {
		if !strings.Contains(js, want) {
			t.Errorf("the script does not mention %s", want)
		}
	}
	// The reader's text reaches the page only as text, never as markup.
	if strings.Contains(js, "innerHTML") || strings.Contains(js, "eval(") {
		t.Error("the script writes markup or evaluates code")
	}
}
