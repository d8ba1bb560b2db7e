package site_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/openapitest"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
)

// FuzzSiteAndExportsAnswerBadInputWithout5xx sends arbitrary bodies and
// query strings to the parsers of readers' feedback and searches, through
// the whole handler on a real SQLite store: the public site endpoints (as
// an allowed page sends them), the feedback, by-page and searches exports
// (cursor included) and the status change. Every answer must be below
// 500, described by the OpenAPI document, and a JSON error when a refusal.
func FuzzSiteAndExportsAnswerBadInputWithout5xx(f *testing.F) {
	e := newSiteEnv(f, func(c *server.Config) { c.Site.PerAddress = server.Limit{Requests: 1 << 30, Per: time.Second} })
	v := openapitest.New(f)
	for _, seed := range []struct{ body, query string }{
		{`{"path":"/a","helpful":true,"comment":"ok","contact":"r@example.com"}`, "limit=2&source=contextual&status=pending,resolved"},
		{`{"path":"/a","code":"x","filename":"a.go","lang":"go"}`, "dateFrom=2026-08-01&dateTo=2026-09-01&cursor=AQ"},
		{`{"query":"  Install  ","clickedPath":"/install"}`, "limit=100&cursor=" + "AQIDBAUGBwgJCgsMDQ4PEBES"},
		{`{"status":"resolved"}`, "status=,&source=&limit=-1"},
		{`{"path":"/a","helpful":true,"website":"spam"}`, "dateFrom=2026-09-01&dateTo=2026-08-01"},
		{"{\"query\":\"\u202e\xff\"}", "cursor=%zz&limit=1&limit=2"},
		{`{"path":"/a\u0000","code":"","helpful":false}`, "status=pending&status=resolved"},
		{`[{"path":"/a"}]`, "dateFrom=2026-08-14T23:59:59.999999999Z"},
	} {
		f.Add(seed.body, seed.query)
	}
	f.Fuzz(func(t *testing.T, body, query string) {
		site := func(endpoint string) *http.Request {
			r := httptest.NewRequest("POST", "/v1/site/alpha/"+endpoint+"?token="+e.Keys["site"], bytes.NewBufferString(body))
			r.Header.Set("Origin", servertest.SiteOrigin)
			return r
		}
		keyed := func(method, target string, body *bytes.Buffer, key string) *http.Request {
			var r *http.Request
			if body == nil {
				r = httptest.NewRequest(method, target, nil)
			} else {
				r = httptest.NewRequest(method, target, body)
			}
			r.URL.RawQuery = query
			r.Header.Set("Authorization", "Bearer "+e.Keys[key])
			return r
		}
		requests := []*http.Request{
			site("feedback"),
			site("searches"),
			keyed("GET", "/v1/analytics/alpha/feedback", nil, "ro"),
			keyed("GET", "/v1/analytics/alpha/feedback/by-page", nil, "ro"),
			keyed("GET", "/v1/analytics/alpha/searches", nil, "ro"),
			keyed("PATCH", "/v1/analytics/alpha/feedback/fb_x", bytes.NewBufferString(body), "rw"),
		}
		for _, req := range requests {
			rec := httptest.NewRecorder()
			e.Server.ServeHTTP(rec, req)
			v.CheckRecorder(t, req, rec)
			if rec.Code >= 500 {
				t.Fatalf("%s %s with body %q: %d %s", req.Method, req.URL, body, rec.Code, rec.Body)
			}
			if rec.Code >= 400 {
				var e struct{ Error string }
				if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
					t.Fatalf("%s %s: %d with a body that is not a JSON error: %s", req.Method, req.URL, rec.Code, rec.Body)
				}
			}
		}
	})
}
