package docsapi

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jarcoal/httpmock"
)

// The doubles of this file and of the other assistant_*_test.go files
// follow the Assistant API's published document (discovery-openapi.json of
// the platform's documentation, base https://api.mintlify.com/discovery):
// search answers a bare JSON array of {content, path, metadata}; page
// answers {path, content}, or 404 {message} when the page or the index is
// missing; every call takes an assistant key ("mint_dsc_...").

// testAssistantKey is a sentinel like testKey: no error, log line or
// printed value may hold it.
const testAssistantKey = "mint_dsc_SENTINELa55i5tKEYdoNotLeak"

const (
	searchPathAcme = "/discovery/v1/search/acme"
	pagePathAcme   = "/discovery/v1/page/acme"
	askPathAcme    = "/discovery/v2/assistant/acme/message"
)

// newAssistantClient is newMockedClient with an assistant key.
func newAssistantClient(t *testing.T, opts ...Option) (*Client, *httpmock.MockTransport) {
	t.Helper()
	mt := httpmock.NewMockTransport()
	base := []Option{WithHTTPClient(&http.Client{Transport: mt}), WithBaseURL(testBaseURL), WithRetryDelays(time.Millisecond, time.Millisecond)}
	c, err := NewClient(testAssistantKey, append(base, opts...)...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	c.cfg.jitter = func() float64 { return 0 }
	return c, mt
}

// jsonEqual fails the test unless got and want are the same JSON value.
func jsonEqual(t *testing.T, what, got, want string) {
	t.Helper()
	if diff := cmp.Diff(jsonValue(t, []byte(want)), jsonValue(t, []byte(got))); diff != "" {
		t.Errorf("%s (-want +got):\n%s\ngot %s", what, diff, got)
	}
}

func TestAssistantSearch(t *testing.T) {
	c, mt := newAssistantClient(t)
	const answer = `[
		{"content":"Install the CLI with npm.","path":"quickstart","metadata":{"title":"Quickstart","version":"v2"}},
		{"content":"Keys are made in the dashboard.","path":"/api/keys","metadata":{}},
		{"content":"No metadata."}
	]`
	rec := serve(t, mt, on(http.MethodPost, searchPathAcme, replyJSON(200, answer)))
	got, err := c.Assistant.Search(context.Background(), "acme", SearchParams{
		Query:          "install",
		PageSize:       3,
		ScoreThreshold: 0.5,
		Filter:         SearchFilter{Version: "v2", Language: "en", Tag: "cli", Groups: []string{"staff"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []SearchResult{
		{Content: "Install the CLI with npm.", Path: "quickstart", Title: "Quickstart", Metadata: map[string]any{"title": "Quickstart", "version": "v2"}},
		{Content: "Keys are made in the dashboard.", Path: "/api/keys", Metadata: map[string]any{}},
		{Content: "No metadata."},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	reqs := rec.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	jsonEqual(t, "search body", r.Body, `{"query":"install","pageSize":3,"scoreThreshold":0.5,
		"filter":{"version":"v2","language":"en","tag":"cli","groups":["staff"]}}`)
	if got := r.Header.Get("Authorization"); got != "Bearer "+testAssistantKey {
		t.Errorf("Authorization is not the assistant key (len %d)", len(got))
	}
	if got := r.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}

	// The zero values leave the server's defaults: only the query is sent.
	rec = serve(t, mt, on(http.MethodPost, searchPathAcme, replyJSON(200, `[]`)))
	got, err = c.Assistant.Search(context.Background(), "acme", SearchParams{Query: "x"})
	if err != nil || len(got) != 0 {
		t.Fatalf("Search = %v, %v; want no results", got, err)
	}
	jsonEqual(t, "minimal search body", rec.Requests()[0].Body, `{"query":"x"}`)
}

// The calls sit under /discovery of the base URL, its path prefix
// included, so that one base URL reaches a self-hosted server's Assistant
// API too; the domain is escaped.
func TestAssistantPathsUnderTheBaseURL(t *testing.T) {
	c, mt := newAssistantClient(t, WithBaseURL("https://docs.example.test/api/"))
	var paths []string
	mt.RegisterNoResponder(func(req *http.Request) (*http.Response, error) {
		paths = append(paths, req.URL.Host+req.URL.EscapedPath())
		if strings.Contains(req.URL.Path, "/page/") {
			return replyJSON(200, `{"path":"a","content":"b"}`)(req)
		}
		return replyJSON(200, `[]`)(req)
	})
	ctx := context.Background()
	if _, err := c.Assistant.Search(ctx, "my site", SearchParams{Query: "q"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Assistant.Page(ctx, "acme", PageParams{Path: "a"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"docs.example.test/api/discovery/v1/search/my%20site", "docs.example.test/api/discovery/v1/page/acme"}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
}

func TestAssistantSearchValidation(t *testing.T) {
	c, mt := newAssistantClient(t)
	ctx := context.Background()
	tests := []struct {
		name, domain string
		params       SearchParams
		param        string
	}{
		{"no query", "acme", SearchParams{}, "query"},
		{"blank query", "acme", SearchParams{Query: " \t"}, "query"},
		{"page size 51", "acme", SearchParams{Query: "q", PageSize: 51}, "pageSize"},
		{"negative page size", "acme", SearchParams{Query: "q", PageSize: -1}, "pageSize"},
		{"threshold above 1", "acme", SearchParams{Query: "q", ScoreThreshold: 1.01}, "scoreThreshold"},
		{"negative threshold", "acme", SearchParams{Query: "q", ScoreThreshold: -0.1}, "scoreThreshold"},
		{"NaN threshold", "acme", SearchParams{Query: "q", ScoreThreshold: math.NaN()}, "scoreThreshold"},
		{"empty group", "acme", SearchParams{Query: "q", Filter: SearchFilter{Groups: []string{"a", ""}}}, "filter.groups"},
		{"no domain", "", SearchParams{Query: "q"}, "domain"},
		{"dot-dot domain", "..", SearchParams{Query: "q"}, "domain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Assistant.Search(ctx, tt.domain, tt.params)
			var v *ValidationError
			if !errors.As(err, &v) || v.Param != tt.param {
				t.Errorf("Search = %v, want a ValidationError of %s", err, tt.param)
			}
		})
	}
	// The bounds themselves are valid.
	mt.RegisterNoResponder(replyJSON(200, `[]`))
	for _, p := range []SearchParams{{Query: "q", PageSize: 1, ScoreThreshold: 1}, {Query: "q", PageSize: 50}} {
		if _, err := c.Assistant.Search(ctx, "acme", p); err != nil {
			t.Errorf("Search(%+v) = %v", p, err)
		}
	}
	if n := mt.GetTotalCallCount(); n != 2 {
		t.Errorf("%d requests sent, want only the 2 valid ones", n)
	}
}

func TestAssistantSearchDecodeErrors(t *testing.T) {
	c, mt := newAssistantClient(t)
	for _, body := range []string{`{"results":[]}`, `[{"path":7}]`} {
		mt.RegisterNoResponder(replyJSON(200, body))
		_, err := c.Assistant.Search(context.Background(), "acme", SearchParams{Query: "q"})
		if err == nil || !strings.Contains(err.Error(), "search results") {
			t.Errorf("Search of %s = %v, want a decoding error naming the search results", body, err)
		}
	}
}

func TestAssistantPage(t *testing.T) {
	c, mt := newAssistantClient(t)
	rec := serve(t, mt, on(http.MethodPost, pagePathAcme,
		replyJSON(200, `{"path":"quickstart","content":"# Quickstart\nInstall it."}`),
		replyJSON(404, `{"message":"Page not found: nope"}`)))
	ctx := context.Background()
	got, err := c.Assistant.Page(ctx, "acme", PageParams{Path: "quickstart", Groups: []string{"staff"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := (&PageContent{Path: "quickstart", Content: "# Quickstart\nInstall it."}); *got != *want {
		t.Errorf("Page = %+v, want %+v", got, want)
	}
	jsonEqual(t, "page body", rec.Requests()[0].Body, `{"path":"quickstart","groups":["staff"]}`)

	_, err = c.Assistant.Page(ctx, "acme", PageParams{Path: "nope"})
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("Page of a missing page = %v, want ErrNotFound", err)
	}
	if apiErr := asAPIError(t, err); apiErr.Message != "Page not found: nope" {
		t.Errorf("Message = %q, want the body's message", apiErr.Message)
	}
	jsonEqual(t, "page body without groups", rec.Requests()[1].Body, `{"path":"nope"}`)

	for _, p := range []PageParams{{}, {Path: " "}, {Path: "a", Groups: []string{" "}}} {
		if _, err := c.Assistant.Page(ctx, "acme", p); !errors.Is(err, ErrInvalidParam) {
			t.Errorf("Page(%+v) = %v, want ErrInvalidParam", p, err)
		}
	}
	if n := len(rec.Requests()); n != 2 {
		t.Errorf("%d requests, want 2: invalid params are not sent", n)
	}
}

// Search and page only read, so a 5xx is retried although they are POSTs,
// as a GET would be.
func TestAssistantSearchAndPageRetriedAsReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newAssistantClient(t)
		rec := serve(t, mt,
			on(http.MethodPost, searchPathAcme, replyJSON(502, `{"message":"bad gateway"}`), replyJSON(200, `[]`)),
			on(http.MethodPost, pagePathAcme, replyJSON(503, `{"message":"busy"}`), replyJSON(200, `{"path":"a","content":"b"}`)))
		ctx := context.Background()
		if _, err := c.Assistant.Search(ctx, "acme", SearchParams{Query: "q"}); err != nil {
			t.Errorf("Search = %v", err)
		}
		if _, err := c.Assistant.Page(ctx, "acme", PageParams{Path: "a"}); err != nil {
			t.Errorf("Page = %v", err)
		}
		if n := len(rec.Requests()); n != 4 {
			t.Errorf("%d requests, want 4 (each call retried once)", n)
		}
	})
}

func TestPageContentJSON(t *testing.T) {
	var p PageContent
	if err := p.decodeBody([]byte(`{"path":1}`)); err == nil {
		t.Error("a path that is a number decoded")
	}
	b, _ := json.Marshal(PageContent{Path: "a", Content: "b"})
	jsonEqual(t, "PageContent", string(b), `{"path":"a","content":"b"}`)
}
