package servertest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/store"
)

// SiteOrigin is the origin of alpha's documentation site.
const SiteOrigin = "https://docs.alpha.example"

// NewSite is New with a site token of alpha for SiteOrigin, in
// Keys["site"].
func NewSite(t testing.TB, mutate ...func(*server.Config)) *Env {
	t.Helper()
	e := New(t, mutate...)
	tok, err := e.Server.CreateSiteToken(context.Background(), server.SiteTokenParams{Project: "alpha", Name: "docs", Origins: []string{SiteOrigin}})
	if err != nil {
		t.Fatalf("CreateSiteToken: %v", err)
	}
	e.Keys["site"] = tok.Token
	return e
}

// SiteRequest is a request to a site endpoint as a page of Origin sends it
// from the client address Addr ("" for the test default). Header adds or,
// with an empty value, removes headers, given as name, value pairs.
type SiteRequest struct {
	Method, Target, Body string
	Origin, Addr         string
	Header               []string
}

// Site sends r and returns the response with its body read.
func (e *Env) Site(r SiteRequest) (*http.Response, []byte) {
	e.T.Helper()
	var body io.Reader
	if r.Body != "" {
		body = bytes.NewBufferString(r.Body)
	}
	req := httptest.NewRequest(r.Method, r.Target, body)
	if r.Addr != "" {
		req.RemoteAddr = r.Addr
	}
	if r.Origin != "" {
		req.Header.Set("Origin", r.Origin)
	}
	if r.Body != "" {
		req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
	}
	for i := 0; i+1 < len(r.Header); i += 2 {
		if r.Header[i+1] == "" {
			req.Header.Del(r.Header[i])
		} else {
			req.Header.Add(r.Header[i], r.Header[i+1])
		}
	}
	rec := httptest.NewRecorder()
	e.Handler.ServeHTTP(rec, req)
	resp := rec.Result()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// Post sends body to a site endpoint of alpha ("feedback" or "searches")
// from SiteOrigin with the site token, and returns the status and body.
func (e *Env) Post(endpoint, body string) (int, []byte) {
	e.T.Helper()
	resp, b := e.Site(SiteRequest{Method: "POST", Target: "/v1/site/alpha/" + endpoint + "?token=" + e.Keys["site"], Body: body, Origin: SiteOrigin})
	return resp.StatusCode, b
}

// MustPost posts what must be accepted.
func (e *Env) MustPost(endpoint, body string) {
	e.T.Helper()
	if status, b := e.Post(endpoint, body); status != http.StatusAccepted {
		e.T.Fatalf("POST %s %s: %d %s, want 202", endpoint, body, status, b)
	}
}

// Stored returns every feedback entry of alpha, newest first.
func (e *Env) Stored() []store.Feedback {
	e.T.Helper()
	page, err := e.Store.QueryFeedback(context.Background(), store.FeedbackQuery{FeedbackFilter: store.FeedbackFilter{ProjectID: "alpha"}, Limit: 1000})
	if err != nil {
		e.T.Fatalf("QueryFeedback: %v", err)
	}
	return page.Entries
}

// Searches returns every query of alpha as the store counts them.
func (e *Env) Searches() []store.SearchRow {
	e.T.Helper()
	res, err := e.Store.QuerySearches(context.Background(), store.SearchesQuery{ProjectID: "alpha", Limit: 1000})
	if err != nil {
		e.T.Fatalf("QuerySearches: %v", err)
	}
	return res.Rows
}

// NoSiteBudget lifts the per-address request budget of the site
// endpoints, for tests of the attacks on the daily caps: many addresses
// each sending as much as they can. The budget slows an attacker down but
// does not stop one who waits.
func NoSiteBudget(c *server.Config) {
	c.Site.PerAddress = server.Limit{Requests: 1 << 30, Per: time.Second}
}

// PostFrom sends a submission to alpha's endpoint from addr and returns
// the status and the body.
func (e *Env) PostFrom(endpoint, addr, body string) (int, string) {
	e.T.Helper()
	resp, b := e.Site(SiteRequest{Method: "POST", Target: "/v1/site/alpha/" + endpoint + "?token=" + e.Keys["site"],
		Body: body, Origin: SiteOrigin, Addr: addr})
	return resp.StatusCode, string(b)
}

// FloodFeedback posts feedback from each address until it is refused, at
// most limit times each, and returns how many were accepted and the last
// refusal's body.
func (e *Env) FloodFeedback(addrs []string, limit int) (accepted int, refusal string) {
	e.T.Helper()
	for _, a := range addrs {
		for i := range limit {
			status, body := e.PostFrom("feedback", a, fmt.Sprintf(`{"path": "/spam/%d", "helpful": false}`, i))
			if status != http.StatusAccepted {
				if status != http.StatusTooManyRequests {
					e.T.Fatalf("feedback from %s: %d %s, want 202 or 429", a, status, body)
				}
				refusal = body
				break
			}
			accepted++
		}
	}
	return accepted, refusal
}

// Addrs returns n addresses, "host:port", the i-th made by form(i).
func Addrs(n int, form func(i int) string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = form(i)
	}
	return out
}
