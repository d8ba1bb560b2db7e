package docsapi

import (
	"context"
	"math"
	"net/http"
	"net/url"
	"strings"
)

// AssistantService is the Assistant API: search a documentation site, read
// a page's text, and ask the site's assistant, which answers as a stream.
//
// It needs an assistant key (on the hosted service "mint_dsc_..."), so make
// a client of its own for it: a client with an admin key is refused before
// anything is sent, as the assistant's client is by the admin calls. Every
// call is addressed by the site's domain identifier (the "acme" of
// acme.mintlify.site), not by a project ID. The calls live under
// "/discovery" of the client's base URL (the hosted
// https://api.mintlify.com/discovery), so WithBaseURL reaches a self-hosted
// server's Assistant API too. The hosted budget is 10,000 requests per
// organisation per hour (the assistant also 10,000 per address per day):
// WithRateLimiter holds every attempt to it.
type AssistantService struct {
	client *Client
}

// MaxSearchPageSize is the largest SearchParams.PageSize.
const MaxSearchPageSize = 50

// SearchParams is the body of Search.
type SearchParams struct {
	// Query is what to search for. Required.
	Query string
	// PageSize is how many results to return, 1 to 50; zero leaves it to
	// the server (10).
	PageSize int
	// ScoreThreshold is the lowest relevance score, 0 to 1, a result may
	// have; zero asks for no threshold.
	ScoreThreshold float64
	// Filter narrows the results; its zero value filters nothing.
	Filter SearchFilter
}

// SearchFilter narrows Search's results. Empty fields filter nothing.
type SearchFilter struct {
	// Version is a documentation version.
	Version string
	// Language is a content language.
	Language string
	// Tag is a page tag.
	Tag string
	// Groups are the documentation groups the caller may read. On a site
	// with authentication, results are limited to pages they can view; with
	// none, to public pages.
	Groups []string
}

type searchRequestWire struct {
	Query          string      `json:"query"`
	PageSize       int         `json:"pageSize,omitempty"`
	ScoreThreshold float64     `json:"scoreThreshold,omitempty"`
	Filter         *filterWire `json:"filter,omitempty"`
}

// filterWire is the filter of Search and of Ask (which has no tag).
type filterWire struct {
	Version  string   `json:"version,omitempty"`
	Language string   `json:"language,omitempty"`
	Tag      string   `json:"tag,omitempty"`
	Groups   []string `json:"groups,omitempty"`
}

func newFilterWire(version, language, tag string, groups []string) *filterWire {
	if version == "" && language == "" && tag == "" && len(groups) == 0 {
		return nil
	}
	return &filterWire{Version: version, Language: language, Tag: tag, Groups: groups}
}

func (p SearchParams) validate() error {
	switch {
	case strings.TrimSpace(p.Query) == "":
		return invalid("query", "is empty")
	case p.PageSize < 0 || p.PageSize > MaxSearchPageSize:
		return invalid("pageSize", "must be from 1 to %d, got %d", MaxSearchPageSize, p.PageSize)
	case math.IsNaN(p.ScoreThreshold) || p.ScoreThreshold < 0 || p.ScoreThreshold > 1:
		return invalid("scoreThreshold", "must be from 0 to 1, got %v", p.ScoreThreshold)
	}
	return checkGroups("filter.groups", p.Filter.Groups)
}

// SearchResult is one match of Search.
type SearchResult struct {
	// Content is the matching text.
	Content string
	// Path is the page's path (or URL) as the site names it: give it to
	// Page for the page's whole text.
	Path string
	// Title is Metadata's "title", when it is a string.
	Title string
	// Metadata is what the service says about the match besides, as sent
	// (nil when it sent none).
	Metadata map[string]any
}

type searchResultWire struct {
	Content  string         `json:"content"`
	Path     string         `json:"path"`
	Metadata map[string]any `json:"metadata"`
}

// searchResults is Search's answer: a bare JSON array.
type searchResults []SearchResult

func (r *searchResults) decodeBody(b []byte) error {
	var wire []searchResultWire
	if err := decodeWire("search results", b, &wire); err != nil {
		return err
	}
	out := make(searchResults, len(wire))
	for i, w := range wire {
		out[i] = SearchResult{Content: w.Content, Path: w.Path, Title: metadataTitle(w.Metadata), Metadata: w.Metadata}
	}
	*r = out
	return nil
}

func metadataTitle(m map[string]any) string {
	title, _ := m["title"].(string)
	return title
}

// Search searches the site's documentation and returns the matches, best
// first. It only reads, so it is retried after errors as a GET is, though
// it is a POST.
func (s *AssistantService) Search(ctx context.Context, domain string, params SearchParams, opts ...RequestOption) ([]SearchResult, error) {
	if err := checkID("domain", domain); err != nil {
		return nil, err
	}
	if err := params.validate(); err != nil {
		return nil, err
	}
	body := searchRequestWire{
		Query:          params.Query,
		PageSize:       params.PageSize,
		ScoreThreshold: params.ScoreThreshold,
		Filter:         newFilterWire(params.Filter.Version, params.Filter.Language, params.Filter.Tag, params.Filter.Groups),
	}
	var out searchResults
	req := apiRequest{method: http.MethodPost, path: discoveryPath("/v1/search/", domain), body: body, key: assistantKey, readOnly: true}
	if err := s.client.do(ctx, req, opts, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// PageParams is the body of Page.
type PageParams struct {
	// Path is the page's path as Search returns it. Required.
	Path string
	// Groups are the documentation groups the caller may read. On a site
	// with authentication, a page they cannot view is not found; with none,
	// only public pages are found.
	Groups []string
}

// PageContent is a page's whole text, as Page returns it.
type PageContent struct {
	// Path is the page's path, as requested.
	Path string `json:"path"`
	// Content is the page's text.
	Content string `json:"content"`
}

func (p *PageContent) decodeBody(b []byte) error {
	var w struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if err := decodeWire("page", b, &w); err != nil {
		return err
	}
	*p = PageContent(w)
	return nil
}

// Page returns the whole text of one page of the site. A page that does
// not exist (or that the groups may not read), or a site without a search
// index, yields an *APIError matching ErrNotFound whose Message says which.
// It is retried as Search is.
func (s *AssistantService) Page(ctx context.Context, domain string, params PageParams, opts ...RequestOption) (*PageContent, error) {
	if err := checkID("domain", domain); err != nil {
		return nil, err
	}
	if strings.TrimSpace(params.Path) == "" {
		return nil, invalid("path", "is empty")
	}
	if err := checkGroups("groups", params.Groups); err != nil {
		return nil, err
	}
	body := struct {
		Path   string   `json:"path"`
		Groups []string `json:"groups,omitempty"`
	}{params.Path, params.Groups}
	out := new(PageContent)
	req := apiRequest{method: http.MethodPost, path: discoveryPath("/v1/page/", domain), body: body, key: assistantKey, readOnly: true}
	if err := s.client.do(ctx, req, opts, out); err != nil {
		return nil, err
	}
	return out, nil
}

// discoveryPath is an Assistant API path: the hosted base is
// https://api.mintlify.com/discovery, so its operations sit under
// "/discovery" of the client's base URL. op starts and ends with "/".
func discoveryPath(op, domain string) string {
	return "/discovery" + op + url.PathEscape(domain)
}

// checkGroups refuses empty group names, which could only match nothing or,
// worse, be read by a server as "no group".
func checkGroups(param string, groups []string) error {
	for i, g := range groups {
		if strings.TrimSpace(g) == "" {
			return invalid(param, "entry %d is empty", i)
		}
	}
	return nil
}
