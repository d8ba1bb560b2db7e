package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/store"
)

// discoveryEnv is an env with project gamma (domain gamma-docs) indexed
// from package docs' test site, an assistant key of it for
// https://docs.example.com (secret in Keys["assistant"]) and an analytics
// key (Keys["gamma"]); the outcomes OnPublicRequest heard are in outcomes.
type discoveryEnv struct {
	*env
	mu       sync.Mutex
	outcomes []string // endpoint/outcome
}

func newDiscoveryEnv(t *testing.T) *discoveryEnv {
	t.Helper()
	d := &discoveryEnv{}
	d.env = newEnv(t, func(c *server.Config) {
		c.OnPublicRequest = func(i server.PublicRequestInfo) {
			d.mu.Lock()
			d.outcomes = append(d.outcomes, i.Endpoint+"/"+i.Outcome)
			d.mu.Unlock()
		}
	})
	ctx := t.Context()
	d.IndexDocs(t, "gamma", "gamma-docs")
	k, err := d.Server.CreateAssistantKey(ctx, server.AssistantKeyParams{Project: "gamma", Name: "site", Origins: []string{"https://docs.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	d.Keys["assistant"] = k.Secret
	d.AddKey("gamma", server.KeyParams{Projects: []string{"gamma"}, Scopes: []store.Scope{store.ScopeRead}})
	return d
}

func (d *discoveryEnv) heard() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.outcomes)
}

// assistantClient is the SDK's client of the server with key.
func (d *discoveryEnv) assistantClient(key string) *docsapi.Client {
	d.T.Helper()
	c, err := docsapi.NewClient(key, docsapi.WithBaseURL(d.Serve()), docsapi.WithRetryDelays(time.Millisecond, 5*time.Millisecond))
	if err != nil {
		d.T.Fatal(err)
	}
	return c
}

// searches returns gamma's searches export as query → row.
func (d *discoveryEnv) searches(ctx context.Context) map[string]docsapi.Search {
	d.T.Helper()
	c, err := docsapi.NewClient(d.Keys["gamma"], docsapi.WithBaseURL(d.Serve()))
	if err != nil {
		d.T.Fatal(err)
	}
	page, err := c.Analytics.Searches(ctx, "gamma", docsapi.SearchesParams{})
	if err != nil {
		d.T.Fatal(err)
	}
	rows := map[string]docsapi.Search{}
	for _, s := range page.Searches {
		rows[s.Query] = s
	}
	return rows
}

// The SDK's Assistant calls work unchanged against the server: a search
// finds the indexed sections, in the hosted shape with the section in
// metadata, and the page endpoint returns a result's page; each search
// counts in the searches export, and a result fetched after it counts as
// its click, once.
func TestDiscoveryThroughTheSDK(t *testing.T) {
	d := newDiscoveryEnv(t)
	ctx := t.Context()
	c := d.assistantClient(d.Keys["assistant"])

	results, err := c.Assistant.Search(ctx, "gamma-docs", docsapi.SearchParams{Query: "  Yarn ", PageSize: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) == 0 || len(results) > 5 {
		t.Fatalf("%d results, want 1 to 5: %+v", len(results), results)
	}
	first := results[0]
	anchor, _ := first.Metadata["anchor"].(string)
	if first.Path != "/quickstart" || first.Title != "Quickstart" || first.Metadata["heading"] != "Install" ||
		!strings.HasPrefix(anchor, "install") || first.Metadata["href"] != "/quickstart#"+anchor || first.Metadata["score"] != 1.0 {
		t.Errorf("first result %+v, want the quickstart's second Install section, score 1", first)
	}
	var marked []string
	for _, part := range first.Metadata["snippet"].([]any) {
		if p := part.(map[string]any); p["match"] == true {
			marked = append(marked, strings.ToLower(p["text"].(string)))
		}
	}
	if first.Content == "" || !slices.Contains(marked, "yarn") {
		t.Errorf("content %q with marked parts %q, want the snippet marking yarn", first.Content, marked)
	}

	// The search counted, not yet clicked.
	rows := d.searches(ctx)
	if r := rows["yarn"]; r.Hits != 1 || r.CTR != 0 || r.TopClickedPage != "" {
		t.Errorf("after the search: %+v, want 1 hit and no click", r)
	}

	page, err := c.Assistant.Page(ctx, "gamma-docs", docsapi.PageParams{Path: first.Path})
	if err != nil {
		t.Fatal(err)
	}
	if page.Path != "/quickstart" || !strings.Contains(page.Content, "# Quickstart") || !strings.Contains(page.Content, "npm i -g example") {
		t.Errorf("page %+v, want the quickstart's text and code", page)
	}
	// Fetched again: still one click for the one search.
	if _, err := c.Assistant.Page(ctx, "gamma-docs", docsapi.PageParams{Path: "/quickstart#" + anchor}); err != nil {
		t.Fatal(err)
	}
	rows = d.searches(ctx)
	if r := rows["yarn"]; r.Hits != 1 || r.CTR != 1 || r.TopClickedPage != "/quickstart" {
		t.Errorf("after opening a result: %+v, want 1 hit, every one clicked, top page /quickstart", r)
	}

	// A page that was no result of the search is no click of it.
	if _, err := c.Assistant.Search(ctx, "gamma-docs", docsapi.SearchParams{Query: "notes"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Assistant.Page(ctx, "gamma-docs", docsapi.PageParams{Path: "/quickstart"}); err != nil {
		t.Fatal(err)
	}
	if r := d.searches(ctx)["notes"]; r.Hits != 1 || r.CTR != 0 {
		t.Errorf("a search followed by a page it did not find: %+v, want no click", r)
	}

	_, err = c.Assistant.Page(ctx, "gamma-docs", docsapi.PageParams{Path: "/missing"})
	var apiErr *docsapi.APIError
	if !errors.Is(err, docsapi.ErrNotFound) || !errors.As(err, &apiErr) || !strings.Contains(apiErr.Message, `no page at "/missing"`) {
		t.Errorf("a missing page: %v, want ErrNotFound naming the path", err)
	}
	// Another project's domain: refused, whether it exists or not.
	if _, err := c.Assistant.Search(ctx, "alpha", docsapi.SearchParams{Query: "install"}); !errors.Is(err, docsapi.ErrForbidden) {
		t.Errorf("another domain: %v, want ErrForbidden", err)
	}

	want := []string{"discovery_search/accepted", "discovery_page/accepted", "discovery_page/accepted", "discovery_search/accepted",
		"discovery_page/accepted", "discovery_page/not_found", "discovery_search/bad_key"}
	if got := d.heard(); !slices.Equal(got, want) {
		t.Errorf("OnPublicRequest heard %q, want %q", got, want)
	}
}

// A project never indexed answers an empty search and a 404 saying so.
func TestDiscoveryWithoutAnIndex(t *testing.T) {
	d := newDiscoveryEnv(t)
	ctx := t.Context()
	if _, err := d.Server.CreateProject(ctx, store.Project{ID: "delta", Domain: "delta-docs"}); err != nil {
		t.Fatal(err)
	}
	k, err := d.Server.CreateAssistantKey(ctx, server.AssistantKeyParams{Project: "delta"})
	if err != nil {
		t.Fatal(err)
	}
	c := d.assistantClient(k.Secret)
	results, err := c.Assistant.Search(ctx, "delta-docs", docsapi.SearchParams{Query: "install"})
	if err != nil || results == nil || len(results) != 0 {
		t.Errorf("search: %v, %v; want an empty array", results, err)
	}
	_, err = c.Assistant.Page(ctx, "delta-docs", docsapi.PageParams{Path: "/"})
	var apiErr *docsapi.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound || !strings.Contains(apiErr.Message, "no search index yet") {
		t.Errorf("page: %v, want 404 saying the site has no index", err)
	}
}

// Keys and origins: an admin key is refused (the SDK refuses to send it;
// the server refuses it when sent), a browser's origin must be the key's,
// on the request and on its preflight.
func TestDiscoveryKeysAndOrigins(t *testing.T) {
	d := newDiscoveryEnv(t)
	ctx := t.Context()
	if _, err := d.assistantClient(d.Keys["gamma"]).Assistant.Search(ctx, "gamma-docs", docsapi.SearchParams{Query: "install"}); err == nil {
		t.Errorf("the SDK sent a search with an admin key")
	}
	body := `{"query": "install"}`
	resp, b := d.Do("gamma", "POST", "/discovery/v1/search/gamma-docs", body)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(messageOf(t, b), "not an admin API key") {
		t.Errorf("an admin key: %d %s, want 401", resp.StatusCode, b)
	}
	resp, b = d.Do("assistant", "POST", "/discovery/v1/search/gamma-docs", body, "Origin", "https://evil.example")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("another origin: %d %v %s, want 403 without CORS", resp.StatusCode, resp.Header, b)
	}
	resp, b = d.Do("assistant", "POST", "/discovery/v1/search/gamma-docs", body, "Origin", "https://docs.example.com")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != "https://docs.example.com" {
		t.Errorf("the key's origin: %d %v %s, want 200 with CORS", resp.StatusCode, resp.Header, b)
	}
	for _, tc := range []struct {
		origin string
		status int
	}{{"https://docs.example.com", http.StatusNoContent}, {"https://evil.example", http.StatusForbidden}} {
		resp, b = d.Do("", "OPTIONS", "/discovery/v1/page/gamma-docs", "", "Origin", tc.origin,
			"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization, content-type")
		allowed := resp.Header.Get("Access-Control-Allow-Origin") == tc.origin
		if resp.StatusCode != tc.status || allowed != (tc.status == http.StatusNoContent) {
			t.Errorf("preflight from %s: %d %v %s, want %d", tc.origin, resp.StatusCode, resp.Header, b, tc.status)
		}
	}
	want := []string{"discovery_search/bad_key", "discovery_search/origin", "discovery_search/accepted",
		"discovery_preflight/accepted", "discovery_preflight/origin"}
	if got := d.heard(); !slices.Equal(got, want) {
		t.Errorf("OnPublicRequest heard %q, want %q", got, want)
	}
}

// Bodies are decoded strictly where the hosted document is: each listed
// field of the wrong type or out of its range is a 400 naming it, in the
// hosted {message} shape; fields it does not list are ignored.
func TestDiscoveryBodies(t *testing.T) {
	d := newDiscoveryEnv(t)
	for _, tc := range []struct {
		endpoint, body string
		status         int
		says           string
	}{
		{"search", `{"query": "install", "pageSize": 2, "scoreThreshold": 0.5, "filter": {"tag": "new", "groups": ["staff"]}, "later": {"x": 1}}`, 200, ""},
		{"search", `{"pageSize": 3}`, 400, `"query" is required`},
		{"search", `{"query": 5}`, 400, `"query" must be a string`},
		{"search", `{"query": "   "}`, 400, `"query" must not be blank`},
		{"search", `{"query": "a` + strings.Repeat("b", 1000) + `"}`, 400, `"query" has 1001 bytes`},
		{"search", `{"query": "` + strings.Repeat("word ", 50) + `"}`, 400, `"query" is 249 characters`},
		{"search", `{"query": "install", "pageSize": 51}`, 400, `"pageSize" must be an integer from 1 to 50, got 51`},
		{"search", `{"query": "install", "pageSize": 2.5}`, 400, `"pageSize" must be an integer`},
		{"search", `{"query": "install", "pageSize": 0}`, 400, `"pageSize"`},
		{"search", `{"query": "install", "scoreThreshold": 1.5}`, 400, `"scoreThreshold" must be from 0 to 1`},
		{"search", `{"query": "install", "filter": {"groups": "staff"}}`, 400, `"filter.groups" must be an array`},
		{"search", `{"query": "install", "filter": []}`, 400, `"filter" must be an object`},
		{"search", `[1]`, 400, "JSON object"},
		{"search", `{"query": "install"} {}`, 400, "after the JSON object"},
		{"search", `{"query": "` + strings.Repeat("x", 20<<10) + `"}`, 413, "larger than 16384 bytes"},
		{"page", `{}`, 400, `"path" is required`},
		{"page", `{"path": ""}`, 400, `"path" is required`},
		{"page", `{"path": "quickstart/", "groups": ["staff"], "later": true}`, 200, ""},
		{"page", `{"path": ["/"]}`, 400, `"path" must be a string`},
	} {
		resp, b := d.Do("assistant", "POST", "/discovery/v1/"+tc.endpoint+"/gamma-docs", tc.body)
		if resp.StatusCode != tc.status {
			t.Errorf("%s %.80s: %d %s, want %d", tc.endpoint, tc.body, resp.StatusCode, b, tc.status)
			continue
		}
		if tc.says != "" && !strings.Contains(messageOf(t, b), tc.says) {
			t.Errorf("%s %.80s: message %q, want it to say %s", tc.endpoint, tc.body, messageOf(t, b), tc.says)
		}
	}
}

// messageOf decodes the Assistant API's error body, {"message": ...}.
func messageOf(t *testing.T, body []byte) string {
	t.Helper()
	var e struct{ Message *string }
	if err := json.Unmarshal(body, &e); err != nil || e.Message == nil {
		t.Fatalf("not an Assistant API error body: %s", body)
	}
	return *e.Message
}
