package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/wire"
	"github.com/docsapi/docsapi-go/server/pageviews"
	"github.com/docsapi/docsapi-go/server/traffic"
)

// User agents as the agents send them.
const (
	gptBotUA      = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
	chatGPTUserUA = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot"
	googlebotUA   = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	claudeUserUA  = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)"
	claudeBotUA   = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)"
	chromeUA      = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
)

// agentsEnv is a server with a Recorder, as serve runs it, and a site
// behind the Recorder's middleware for alpha.
func agentsEnv(t *testing.T) (*env, *pageviews.Recorder, http.Handler) {
	t.Helper()
	var rec *pageviews.Recorder
	e := newEnv(t, func(c *server.Config) {
		var err error
		if rec, err = pageviews.New(pageviews.Config{Sink: c.Store, Now: c.Now}); err != nil {
			t.Fatal(err)
		}
		c.PageViews = rec
	})
	mw, err := rec.Middleware(pageviews.MiddlewareConfig{Project: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	site := mw(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("<h1>docs</h1>")) }))
	return e, rec, site
}

// read sends GETs of path with the user agent to the site, n times.
func read(site http.Handler, path, ua string, n int) {
	for range n {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("User-Agent", ua)
		site.ServeHTTP(httptest.NewRecorder(), req)
	}
}

// agents gets alpha's agents as the read-only key sees them.
func (e *env) agents(query string) wire.AgentsPage {
	e.T.Helper()
	var page wire.AgentsPage
	e.GetJSON("ro", "/v1/analytics/alpha/agents"+query, &page)
	return page
}

// Views of GPTBot, ChatGPT-User and Googlebot through the middleware, and
// of Claude-User and ClaudeBot through the ingestion endpoint, appear in
// the agents export by name, with their pages; humans do not.
func TestAgentsExportNamesTheAgentsOfBothSources(t *testing.T) {
	e, rec, site := agentsEnv(t)
	read(site, "/guide/", gptBotUA, 3)
	read(site, "/quickstart", gptBotUA, 1)
	read(site, "/guide", chatGPTUserUA, 2)
	read(site, "/guide.md", googlebotUA, 1)
	read(site, "/guide", chromeUA, 5)
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"views":[{"path":"/guide","userAgent":%q,"count":4},{"path":"/quickstart","userAgent":%q},{"path":"/guide","userAgent":%q}]}`,
		claudeUserUA, claudeBotUA, chromeUA)
	if resp, b := e.Do("rw", "POST", "/v1/analytics/alpha/views", body); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("ingest: %d %s", resp.StatusCode, b)
	}
	day, next := "2026-08-14T00:00:00Z", "2026-08-15T00:00:00Z"
	want := wire.AgentsPage{
		DateFrom: &day, DateTo: &next,
		Agents: []wire.AgentViews{
			{Name: "Claude-User", Class: "ai", Views: 4},
			{Name: "GPTBot", Class: "training-bot", Views: 4},
			{Name: "ChatGPT-User", Class: "ai", Views: 2},
			{Name: "Googlebot", Class: "search-bot", Views: 1},
			{Name: "ClaudeBot", Class: "training-bot", Views: 1},
		},
		Pages: []wire.AgentPage{
			{Path: "/guide", Name: "Claude-User", Class: "ai", Views: 4},
			{Path: "/guide", Name: "GPTBot", Class: "training-bot", Views: 3},
			{Path: "/guide", Name: "ChatGPT-User", Class: "ai", Views: 2},
			{Path: "/guide", Name: "Googlebot", Class: "search-bot", Views: 1},
			{Path: "/quickstart", Name: "ClaudeBot", Class: "training-bot", Views: 1},
			{Path: "/quickstart", Name: "GPTBot", Class: "training-bot", Views: 1},
		},
	}
	if d := cmp.Diff(want, e.agents("?dateFrom=2026-08-14T10:00:00Z&dateTo=2026-08-14T11:00:00Z")); d != "" {
		t.Errorf("agents of the day (-want +got):\n%s", d)
	}
	// The filters, and the pages paged as the views export pages.
	ai := "ai"
	guide := "/guide"
	if d := cmp.Diff(wire.AgentsPage{
		Class:   &ai,
		Agents:  []wire.AgentViews{{Name: "Claude-User", Class: "ai", Views: 4}, {Name: "ChatGPT-User", Class: "ai", Views: 2}},
		Pages:   []wire.AgentPage{{Path: "/guide", Name: "Claude-User", Class: "ai", Views: 4}},
		HasMore: true,
	}, e.agents("?class=ai&limit=1")); d != "" {
		t.Errorf("class=ai&limit=1 (-want +got):\n%s", d)
	}
	if got := e.agents("?path=/guide/index.html&offset=3"); got.Path == nil || *got.Path != guide || len(got.Agents) != 4 ||
		len(got.Pages) != 1 || got.Pages[0].Name != "Googlebot" || got.HasMore {
		t.Errorf("path=/guide/index.html&offset=3: %+v", got)
	}
	if got := e.agents("?dateFrom=2026-08-15"); len(got.Agents)+len(got.Pages) != 0 {
		t.Errorf("the next day holds agents: %+v", got)
	}
	for _, q := range []string{"?class=human", "?class=bot", "?limit=0", "?limit=251", "?offset=-1", "?path=guide", "?dateFrom=yesterday", "?class=ai&class=ai"} {
		if resp, b := e.Do("ro", "GET", "/v1/analytics/alpha/agents"+q, ""); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want 400", q, resp.StatusCode, b)
		}
	}
	if resp, _ := e.Do("beta", "GET", "/v1/analytics/alpha/agents", ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("another project's key: %d, want 403", resp.StatusCode)
	}
	if resp, _ := e.Do("", "GET", "/v1/analytics/alpha/agents", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no key: %d, want 401", resp.StatusCode)
	}
}

// 100,000 distinct made-up user agents sent to the ingestion endpoint are
// stored under no more names than the classifier's table has: a user
// agent never becomes a name.
func TestAgentsFloodOfUserAgentsAddsNoNames(t *testing.T) {
	e, _, _ := agentsEnv(t)
	tokens := []string{"GPTBot", "ClaudeBot", "Claude-User", "curl", "bot", "Spider", "AI-Agent"}
	for req := range 100 {
		var b strings.Builder
		b.WriteString(`{"views":[`)
		for i := range 1000 {
			n := req*1000 + i
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"path":"/p%d","userAgent":"Mozilla/5.0 (compatible; %s-%d/1.%d) %s/%d"}`, n%20, tokens[n%len(tokens)], n, n, tokens[(n/7)%len(tokens)], n)
		}
		b.WriteString(`]}`)
		if resp, body := e.Do("rw", "POST", "/v1/analytics/alpha/views", b.String()); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("ingest %d: %d %s", req, resp.StatusCode, body)
		}
	}
	known := map[traffic.Agent]bool{}
	for _, a := range traffic.Default().Agents() {
		known[a] = true
	}
	got := e.agents("?limit=250")
	if len(got.Agents) == 0 || len(got.Agents) > len(known) {
		t.Fatalf("%d agent names after the flood; the table has %d", len(got.Agents), len(known))
	}
	for _, a := range got.Agents {
		class, err := traffic.ParseClass(a.Class)
		if err != nil || !known[traffic.Agent{Name: a.Name, Class: class}] {
			t.Errorf("agent %+v is not a name of the classifier's table", a)
		}
	}
}
