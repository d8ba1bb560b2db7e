package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/store"
)

// siteOrigin is the origin of alpha's documentation site in these tests.
const siteOrigin = "https://docs.alpha.example"

// newSiteEnv is newEnv with a site token of alpha for siteOrigin, in
// e.keys["site"].
func newSiteEnv(t testing.TB, mutate ...func(*server.Config)) *env {
	t.Helper()
	e := newEnv(t, mutate...)
	tok, err := e.srv.CreateSiteToken(context.Background(), server.SiteTokenParams{Project: "alpha", Name: "docs", Origins: []string{siteOrigin}})
	if err != nil {
		t.Fatalf("CreateSiteToken: %v", err)
	}
	e.keys["site"] = tok.Token
	return e
}

// siteRequest is a request to a site endpoint as a page of origin sends it
// from the client address addr ("" for the test default), with the site
// token in the query. header adds or, with an empty value, removes
// headers.
type siteRequest struct {
	method, target, body string
	origin, addr         string
	header               []string
}

// site sends r and returns the response with its body read.
func (e *env) site(r siteRequest) (*http.Response, []byte) {
	e.t.Helper()
	var body io.Reader
	if r.body != "" {
		body = bytes.NewBufferString(r.body)
	}
	req := httptest.NewRequest(r.method, r.target, body)
	if r.addr != "" {
		req.RemoteAddr = r.addr
	}
	if r.origin != "" {
		req.Header.Set("Origin", r.origin)
	}
	if r.body != "" {
		req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
	}
	for i := 0; i+1 < len(r.header); i += 2 {
		if r.header[i+1] == "" {
			req.Header.Del(r.header[i])
		} else {
			req.Header.Add(r.header[i], r.header[i+1])
		}
	}
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	resp := rec.Result()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// post sends body to a site endpoint of alpha ("feedback" or "searches")
// from siteOrigin with the site token, and returns the status and body.
func (e *env) post(endpoint, body string) (int, []byte) {
	e.t.Helper()
	resp, b := e.site(siteRequest{method: "POST", target: "/v1/site/alpha/" + endpoint + "?token=" + e.keys["site"], body: body, origin: siteOrigin})
	return resp.StatusCode, b
}

// mustPost posts what must be accepted.
func (e *env) mustPost(endpoint, body string) {
	e.t.Helper()
	if status, b := e.post(endpoint, body); status != http.StatusAccepted {
		e.t.Fatalf("POST %s %s: %d %s, want 202", endpoint, body, status, b)
	}
}

// stored returns every feedback entry of alpha, newest first.
func (e *env) stored() []store.Feedback {
	e.t.Helper()
	page, err := e.store.QueryFeedback(context.Background(), store.FeedbackQuery{FeedbackFilter: store.FeedbackFilter{ProjectID: "alpha"}, Limit: 1000})
	if err != nil {
		e.t.Fatalf("QueryFeedback: %v", err)
	}
	return page.Entries
}

// searches returns every query of alpha as the store counts them.
func (e *env) searches() []store.SearchRow {
	e.t.Helper()
	res, err := e.store.QuerySearches(context.Background(), store.SearchesQuery{ProjectID: "alpha", Limit: 1000})
	if err != nil {
		e.t.Fatalf("QuerySearches: %v", err)
	}
	return res.Rows
}

// getJSON sends a GET as the named key, wants 200, and decodes the body.
func (e *env) getJSON(key, target string, v any) {
	e.t.Helper()
	resp, body := e.do(key, "GET", target, "")
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("GET %s: %d %s", target, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		e.t.Fatalf("GET %s: %v in %s", target, err, body)
	}
}

// analyticsDetails decodes an analytics error's details.
func analyticsDetails(t *testing.T, body []byte) []docsapi.ErrorDetail {
	t.Helper()
	var e struct {
		Error   string                `json:"error"`
		Details []docsapi.ErrorDetail `json:"details"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
		t.Fatalf("body %s is not an analytics error: %v", body, err)
	}
	return e.Details
}
