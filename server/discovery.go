package server

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/docsapi/docsapi-go/server/internal/assistantauth"
	"github.com/docsapi/docsapi-go/server/internal/input"
	"github.com/docsapi/docsapi-go/server/internal/lastsearch"
	"github.com/docsapi/docsapi-go/server/internal/public"
	"github.com/docsapi/docsapi-go/server/internal/ratelimit"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/internal/searchresult"
	"github.com/docsapi/docsapi-go/server/internal/strictjson"
	"github.com/docsapi/docsapi-go/server/store"
)

// The /discovery endpoints are the hosted Assistant API's search and page
// content (its discovery-openapi.json), under assistant keys (the gate of
// package assistantauth) and addressed by the project's domain.

// maxDiscoveryBodyBytes bounds a /discovery request's body: a query and a
// few filters, or a path.
const maxDiscoveryBodyBytes = 16 << 10

// maxDiscoveryQueryBytes bounds a query as sent, as the site's searches
// endpoint bounds it.
const maxDiscoveryQueryBytes = 1000

// defaultSearchPageSize is the hosted API's pageSize when none is sent.
const defaultSearchPageSize = 10

// searchClickWindow is how long after a search a page fetched by the same
// client (address and key) counts as a click on one of its results: long
// enough to read a result list, short enough that a later visit does not.
const searchClickWindow = 5 * time.Minute

// discoveryOptions decode the /discovery bodies: the hosted document
// declares no object closed, so fields it does not list are ignored (a
// client written for a later version of it still works); names match as
// written, as the hosted service's JavaScript reads them; a known field of
// the wrong type is refused, naming it.
var discoveryOptions = strictjson.Options{IgnoreUnknown: true, MatchCase: true}

// discoverySearchBody is the body of POST /discovery/v1/search/{domain}.
type discoverySearchBody struct {
	Query *string `json:"query"`
	// PageSize is a float so that 2.5 is refused as not an integer, not
	// as not a number.
	PageSize       *float64             `json:"pageSize"`
	ScoreThreshold *float64             `json:"scoreThreshold"`
	Filter         *searchresult.Filter `json:"filter"`
}

// discoveryPageBody is the body of POST /discovery/v1/page/{domain}.
type discoveryPageBody struct {
	Path   *string  `json:"path"`
	Groups []string `json:"groups"` // access groups, as the filter's
}

// discoveryResult is one result of a search, in the hosted shape; the
// assistant's stream lists the same as its sources.
type discoveryResult = searchresult.Result

// discoveryRoutes adds the /discovery endpoints and their preflights.
func (s *Server) discoveryRoutes(mux *routeMux) {
	observe := func(endpoint string) func(string) {
		if s.cfg.OnPublicRequest == nil {
			return nil
		}
		return func(outcome string) { s.cfg.OnPublicRequest(PublicRequestInfo{Endpoint: endpoint, Outcome: outcome}) }
	}
	mux.Handle("POST /discovery/v1/search/{domain}", s.assistant.Serve(s.discoverySearch, observe(public.DiscoverySearch)))
	mux.Handle("POST /discovery/v1/page/{domain}", s.assistant.Serve(s.discoveryPage, observe(public.DiscoveryPage)))
	mux.Handle("OPTIONS /discovery/v1/search/{domain}", s.assistant.Preflight(observe(public.DiscoveryPreflight)))
	mux.Handle("OPTIONS /discovery/v1/page/{domain}", s.assistant.Preflight(observe(public.DiscoveryPreflight)))
}

// readDiscoveryBody reads r's body into v, answering a refused one in the
// hosted error shape; it returns "" when v holds the body, else the
// request's outcome.
func readDiscoveryBody(w http.ResponseWriter, r *http.Request, v any) string {
	if r.ContentLength > maxDiscoveryBodyBytes {
		assistantauth.WriteMessage(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than %d bytes", maxDiscoveryBodyBytes))
		return public.TooLarge
	}
	body, bad := input.ReadBody(w, r, maxDiscoveryBodyBytes)
	if bad == nil {
		bad = input.DecodeJSON(body, v, discoveryOptions)
	}
	if bad != nil {
		assistantauth.WriteMessage(w, bad.Status, bad.Message)
		if bad.Status == http.StatusRequestEntityTooLarge {
			return public.TooLarge
		}
		return public.BadBody
	}
	return ""
}

// discoverySearch: POST /discovery/v1/search/{domain}. 200 is a JSON
// array of results, best first; the search is counted in the searches
// export, and remembered a while so that a page fetched after it counts as
// its click.
func (s *Server) discoverySearch(w http.ResponseWriter, r *http.Request, a assistantauth.Admission) string {
	var in discoverySearchBody
	if outcome := readDiscoveryBody(w, r, &in); outcome != "" {
		return outcome
	}
	q, normalised, bad := parseDiscoverySearch(in)
	if bad != nil {
		assistantauth.WriteMessage(w, bad.Status, bad.Message)
		return public.BadBody
	}
	q.ProjectID = a.Project.ID
	hits, err := s.cfg.Store.SearchDocs(r.Context(), q)
	if err != nil {
		status, msg := respond.StoreAnswer(r, s.cfg.Logger, err, "site "+respond.Quote(a.Project.Domain), "searching the documentation")
		assistantauth.WriteMessage(w, status, msg)
		return outcomeOfStatus(status)
	}
	out := make([]discoveryResult, len(hits))
	var paths []string
	for i, h := range hits {
		out[i] = resultOf(h)
		if i == 0 || hits[i-1].Path != h.Path {
			paths = append(paths, h.Path)
		}
	}
	s.recordDiscoverySearch(r, a, normalised, paths)
	respond.JSON(w, http.StatusOK, out)
	return public.Accepted
}

// recordDiscoverySearch counts a search in the searches export, through
// the site's searches endpoint's own code (its shares and daily cap), and
// remembers it for the click that may follow. A failure to count is
// logged: the reader still gets the results.
func (s *Server) recordDiscoverySearch(r *http.Request, a assistantauth.Admission, query string, paths []string) {
	sr := store.Search{ProjectID: a.Project.ID, Query: query, At: s.cfg.Now().UTC().Truncate(time.Microsecond)}
	if err := s.site.RecordSearch(r, sr); err != nil {
		respond.LogInternal(r, s.cfg.Logger, "recording a /discovery search", err)
		return
	}
	if len(paths) > 0 {
		s.lastSearch.Remember(s.searchClient(r, a), lastsearch.Search{ProjectID: sr.ProjectID, Query: sr.Query, At: sr.At, Paths: paths}, s.cfg.Now())
	}
}

// searchClient names r's client for lastsearch: its address as budgets
// count it (an IPv6 client's /64) and its key, hashed there.
func (s *Server) searchClient(r *http.Request, a assistantauth.Admission) string {
	return ratelimit.AddrKey(s.proxies.Addr(r)).String() + " " + a.Key.ID
}

// parseDiscoverySearch checks a search's body and returns its query for
// the index, and the query as the searches export counts it.
func parseDiscoverySearch(in discoverySearchBody) (store.DocsQuery, string, *input.Problem) {
	var q store.DocsQuery
	switch {
	case in.Query == nil:
		return q, "", input.Invalid(`field "query" is required: the text to search for`)
	case len(*in.Query) > maxDiscoveryQueryBytes:
		return q, "", input.Invalid(`field "query" has %d bytes; at most %d are allowed`, len(*in.Query), maxDiscoveryQueryBytes)
	}
	if p := input.TextProblem("query", *in.Query, maxDiscoveryQueryBytes, true); p != "" {
		return q, "", input.Invalid("%s", p)
	}
	normalised := store.NormaliseQuery(*in.Query)
	switch n := utf8.RuneCountInString(normalised); {
	case n == 0:
		return q, "", input.Invalid(`field "query" must not be blank`)
	case n > store.MaxQueryLength:
		return q, "", input.Invalid(`field "query" is %d characters long once white space is folded; the limit is %d`, n, store.MaxQueryLength)
	}
	q.Query, q.Limit = *in.Query, defaultSearchPageSize
	if in.PageSize != nil {
		n := *in.PageSize
		if n != math.Trunc(n) || n < 1 || n > store.MaxDocHits {
			return q, "", input.Invalid(`field "pageSize" must be an integer from 1 to %d, got %v`, store.MaxDocHits, n)
		}
		q.Limit = int(n)
	}
	if in.ScoreThreshold != nil {
		t := *in.ScoreThreshold
		if t < 0 || t > 1 {
			return q, "", input.Invalid(`field "scoreThreshold" must be from 0 to 1, got %v`, t)
		}
		q.MinScore = t
	}
	in.Filter.Narrow(&q)
	return q, normalised, nil
}

// resultOf is a hit as the search answers it.
func resultOf(h store.DocHit) discoveryResult { return searchresult.Of(h) }

// discoveryPage: POST /discovery/v1/page/{domain}. 200 {path, content};
// 404 {message} when the index holds no such page, or no index at all. A
// page that is a result of the client's last search, fetched within
// searchClickWindow of it, counts as that search's click.
func (s *Server) discoveryPage(w http.ResponseWriter, r *http.Request, a assistantauth.Admission) string {
	var in discoveryPageBody
	if outcome := readDiscoveryBody(w, r, &in); outcome != "" {
		return outcome
	}
	if in.Path == nil || strings.TrimSpace(*in.Path) == "" {
		assistantauth.WriteMessage(w, http.StatusBadRequest, `field "path" is required: the page's path, as search returns it`)
		return public.BadBody
	}
	if len(*in.Path) > input.MaxPathBytes {
		assistantauth.WriteMessage(w, http.StatusBadRequest, fmt.Sprintf(`field "path" has %d bytes; at most %d are allowed`, len(*in.Path), input.MaxPathBytes))
		return public.BadBody
	}
	path := pagePathOf(*in.Path)
	page, err := s.cfg.Store.DocPage(r.Context(), a.Project.ID, path)
	if errors.Is(err, store.ErrNotFound) {
		return s.pageNotFound(w, r, a, path)
	}
	if err != nil {
		assistantauth.WriteMessage(w, http.StatusInternalServerError, respond.LogInternal(r, s.cfg.Logger, "reading a page of the index", err))
		return public.Error
	}
	if sr, ok := s.lastSearch.Take(s.searchClient(r, a), a.Project.ID, page.Path, s.cfg.Now()); ok {
		click := store.Search{ProjectID: sr.ProjectID, Query: sr.Query, ClickedPath: page.Path, At: sr.At, ClickOnly: true}
		if err := s.site.RecordSearch(r, click); err != nil {
			respond.LogInternal(r, s.cfg.Logger, "recording a /discovery search's click", err)
		}
	}
	respond.JSON(w, http.StatusOK, struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}{page.Path, page.Content()})
	return public.Accepted
}

// pageNotFound answers 404 for path, saying whether the site has an index.
func (s *Server) pageNotFound(w http.ResponseWriter, r *http.Request, a assistantauth.Admission, path string) string {
	state, err := s.cfg.Store.DocsState(r.Context(), a.Project.ID)
	if err != nil {
		assistantauth.WriteMessage(w, http.StatusInternalServerError, respond.LogInternal(r, s.cfg.Logger, "reading the index's state", err))
		return public.Error
	}
	msg := "no page at " + respond.Quote(path) + " in the search index of site " + respond.Quote(a.Project.Domain)
	if state.Commit == "" {
		msg = "site " + respond.Quote(a.Project.Domain) + " has no search index yet"
	}
	assistantauth.WriteMessage(w, http.StatusNotFound, msg)
	return public.NotFound
}

// pagePathOf returns the page path p names as the index stores paths: a
// URL's path, without query or fragment (a search's link to a section),
// with a leading slash and no trailing one.
func pagePathOf(p string) string {
	p = strings.TrimSpace(p)
	if u, err := url.Parse(p); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		p = u.Path
	}
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if len(p) > 1 {
		p = strings.TrimRight(p, "/")
		if p == "" {
			p = "/"
		}
	}
	return p
}

// outcomeOfStatus is the outcome of a request answered status by a store
// error.
func outcomeOfStatus(status int) string {
	if status < http.StatusInternalServerError {
		return public.BadBody
	}
	return public.Error
}
