package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/store"
)

// searchEnv is a server (servertest) with project gamma, domain
// gamma-docs, indexed from package docs' test site; its assistant key is
// in Keys["assistant"], a key that reads gamma's analytics in
// Keys["gamma"].
func searchEnv(t *testing.T) *servertest.Env {
	t.Helper()
	e := servertest.New(t)
	ctx := t.Context()
	e.IndexDocs(t, "gamma", "gamma-docs")
	k, err := e.Server.CreateAssistantKey(ctx, server.AssistantKeyParams{Project: "gamma", Name: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	e.Keys["assistant"] = k.Secret
	e.AddKey("gamma", server.KeyParams{Projects: []string{"gamma"}, Scopes: []store.Scope{store.ScopeRead}})
	return e
}

// wantSearchText is what search prints for query, from the store's own
// hits: each hit's link, title and heading, and its snippet with the
// matches in brackets.
func wantSearchText(t *testing.T, e *servertest.Env, query string, limit int) string {
	t.Helper()
	hits, err := e.Store.SearchDocs(t.Context(), store.DocsQuery{ProjectID: "gamma", Query: query, Limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i, h := range hits {
		if i > 0 {
			b.WriteString("\n")
		}
		link := h.Path
		if h.Anchor != "" {
			link += "#" + h.Anchor
		}
		line := link + "  " + h.Title
		if h.Heading != "" && h.Heading != h.Title {
			line += " › " + h.Heading
		}
		snippet, at := "", 0
		for _, m := range h.Marks {
			snippet += h.Snippet[at:m.Start] + "[" + h.Snippet[m.Start:m.End] + "]"
			at = m.End
		}
		snippet += h.Snippet[at:]
		fmt.Fprintf(&b, "%s\n    %s\n", line, strings.TrimSpace(strings.Join(strings.Fields(snippet), " ")))
	}
	return b.String()
}

// docsapi search against a real server with an index: the store's results
// in the text and JSON forms, the key from DOCSAPI_ASSISTANT_KEY or an
// assistant key in DOCSAPI_KEY, the site from --domain or DOCSAPI_DOMAIN;
// each search counts in the searches export.
func TestSearch(t *testing.T) {
	e := searchEnv(t)
	env := map[string]string{"DOCSAPI_ASSISTANT_KEY": e.Keys["assistant"], "DOCSAPI_BASE_URL": e.Serve()}

	r := runCLI(t, env, "", "search", "--domain", "gamma-docs", "--limit", "2", "install")
	r.expect(t, exitOK)
	want := wantSearchText(t, e, "install", 2)
	if all := wantSearchText(t, e, "install", 10); strings.Count(want, "[") < 1 || strings.Count(want, "\n    ") != 2 || all == want {
		t.Fatalf("the store's hits for install have no marks, or not more than two: %q", all)
	}
	if r.stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, want)
	}

	// An assistant key in DOCSAPI_KEY, the site in DOCSAPI_DOMAIN, one
	// result as JSON.
	r = runCLI(t, map[string]string{"DOCSAPI_KEY": e.Keys["assistant"], "DOCSAPI_DOMAIN": "gamma-docs", "DOCSAPI_BASE_URL": e.Serve()},
		"", "search", "--format", "json", "--limit", "1", "yarn")
	r.expect(t, exitOK)
	hits, err := e.Store.SearchDocs(t.Context(), store.DocsQuery{ProjectID: "gamma", Query: "yarn", Limit: 1})
	if err != nil || len(hits) != 1 {
		t.Fatalf("the store's hits for yarn: %v, %v", hits, err)
	}
	var got struct {
		Content, Path string
		Metadata      struct{ Href, Title, Heading string }
	}
	if strings.Count(r.stdout, "\n") != 1 || json.Unmarshal([]byte(r.stdout), &got) != nil {
		t.Fatalf("--format json --limit 1 printed %q, want one JSON object on a line", r.stdout)
	}
	if got.Path != hits[0].Path || got.Content != hits[0].Snippet || got.Metadata.Title != hits[0].Title ||
		got.Metadata.Heading != hits[0].Heading || !strings.HasPrefix(got.Metadata.Href, hits[0].Path+"#") {
		t.Errorf("printed %+v, want the store's %+v", got, hits[0])
	}

	// Nothing found: nothing on stdout, a note on stderr, success.
	r = runCLI(t, env, "", "search", "--domain", "gamma-docs", "xylophone")
	r.expect(t, exitOK, `no results for "xylophone"`)
	if r.stdout != "" {
		t.Errorf("no results printed %q", r.stdout)
	}

	c, err := docsapi.NewClient(e.Keys["gamma"], docsapi.WithBaseURL(e.Serve()))
	if err != nil {
		t.Fatal(err)
	}
	page, err := c.Analytics.Searches(t.Context(), "gamma", docsapi.SearchesParams{})
	if err != nil {
		t.Fatal(err)
	}
	counted := map[string]int64{}
	for _, s := range page.Searches {
		counted[s.Query] = s.Hits
	}
	if counted["install"] != 1 || counted["yarn"] != 1 || counted["xylophone"] != 1 {
		t.Errorf("the searches export counts %v, want install, yarn and xylophone once each", counted)
	}
}

// Mistakes: which key, which site, which limit and format, and the
// server's refusals, each told with what to do.
func TestSearchMistakes(t *testing.T) {
	e := searchEnv(t)
	base := e.Serve()
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		code int
		says string
	}{
		{"no key", map[string]string{"DOCSAPI_BASE_URL": base}, []string{"--domain", "gamma-docs", "q"}, exitUsage, "DOCSAPI_ASSISTANT_KEY is not set; a self-hosted"},
		{"an admin key", map[string]string{"DOCSAPI_KEY": e.Keys["gamma"], "DOCSAPI_BASE_URL": base}, []string{"--domain", "gamma-docs", "q"}, exitUsage, "DOCSAPI_KEY holds an admin API key"},
		{"an admin key as the assistant key", map[string]string{"DOCSAPI_ASSISTANT_KEY": e.Keys["gamma"], "DOCSAPI_BASE_URL": base}, []string{"--domain", "gamma-docs", "q"}, exitUsage, "DOCSAPI_ASSISTANT_KEY does not hold an assistant key"},
		{"no domain", map[string]string{"DOCSAPI_ASSISTANT_KEY": e.Keys["assistant"], "DOCSAPI_BASE_URL": base}, []string{"q"}, exitUsage, "pass --domain or set DOCSAPI_DOMAIN"},
		{"no query", map[string]string{"DOCSAPI_ASSISTANT_KEY": e.Keys["assistant"], "DOCSAPI_BASE_URL": base}, []string{"--domain", "gamma-docs"}, exitUsage, "the query is missing"},
		{"two queries", map[string]string{"DOCSAPI_ASSISTANT_KEY": e.Keys["assistant"], "DOCSAPI_BASE_URL": base}, []string{"--domain", "gamma-docs", "a", "b"}, exitUsage, "one query, in quotes"},
		{"limit 0", map[string]string{"DOCSAPI_ASSISTANT_KEY": e.Keys["assistant"], "DOCSAPI_BASE_URL": base}, []string{"--domain", "gamma-docs", "--limit", "0", "q"}, exitUsage, "--limit must be from 1 to 50, got 0"},
		{"limit 51", map[string]string{"DOCSAPI_ASSISTANT_KEY": e.Keys["assistant"], "DOCSAPI_BASE_URL": base}, []string{"--domain", "gamma-docs", "--limit", "51", "q"}, exitUsage, "--limit must be from 1 to 50, got 51"},
		{"a bad format", map[string]string{"DOCSAPI_ASSISTANT_KEY": e.Keys["assistant"], "DOCSAPI_BASE_URL": base}, []string{"--domain", "gamma-docs", "--format", "csv", "q"}, exitUsage, "--format must be text or json"},
		{"another site", map[string]string{"DOCSAPI_ASSISTANT_KEY": e.Keys["assistant"], "DOCSAPI_BASE_URL": base}, []string{"--domain", "alpha", "q"}, exitFailure, "is not the key of site alpha: check --domain"},
		{"a revoked or unknown key", map[string]string{"DOCSAPI_ASSISTANT_KEY": "mint_dsc_" + strings.Repeat("x", 43), "DOCSAPI_BASE_URL": base}, []string{"--domain", "gamma-docs", "q"}, exitFailure, "refused the assistant key from DOCSAPI_ASSISTANT_KEY"},
	} {
		r := runCLI(t, tc.env, "", append([]string{"search"}, tc.args...)...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.says) || r.stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d saying %q", tc.name, r.code, r.stdout, r.stderr, tc.code, tc.says)
		}
	}
}

// A snippet is printed on one line, its matches bold on a terminal or in
// brackets, and whatever a document's text holds of controls (a
// terminal's escape sequences, bidirectional overrides) is not printed.
func TestSearchSnippetText(t *testing.T) {
	r := docsapi.SearchResult{Content: "unused", Metadata: map[string]any{"snippet": []any{
		map[string]any{"text": "Run\n the ", "match": false},
		map[string]any{"text": "install\x1b[2J", "match": true},
		map[string]any{"text": " step\u202e, then ", "match": false},
		map[string]any{"text": "again", "match": true},
	}}}
	if got, want := snippetText(r, false), "Run the [install [2J] step , then [again]"; got != want {
		t.Errorf("in brackets: %q, want %q", got, want)
	}
	if got, want := snippetText(r, true), "Run the "+boldOn+"install [2J"+boldOff+" step , then "+boldOn+"again"+boldOff; got != want {
		t.Errorf("in bold: %q, want %q", got, want)
	}
	if got := snippetText(docsapi.SearchResult{Content: "plain\ttext\x07"}, false); got != "plain text " {
		t.Errorf("without parts: %q", got)
	}
}
