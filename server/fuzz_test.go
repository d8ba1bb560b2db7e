package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server/internal/openapitest"
)

// FuzzServerAnswersBadInputWithout5xx sends arbitrary bodies and query
// strings through the whole handler, on a real SQLite store, and requires an
// answer below 500, described by the OpenAPI document, with a JSON error
// body for every refusal: bad input is the client's problem, never a server
// error.
func FuzzServerAnswersBadInputWithout5xx(f *testing.F) {
	e := newEnv(f)
	v := openapitest.New(f)
	for _, seed := range []struct {
		body, query, idempotencyKey string
	}{
		{`{"prompt":"x"}`, "", ""},
		{`{"prompt":"x"}`, "limit=250&offset=0", "k1"},
		{`{}`, "limit=0", ""},
		{`{"prompt":null}`, "dateFrom=2026-01-01&dateTo=2025-01-01", "k1"},
		{"{\"prompt\":\"\xff\"}", "dateFrom=%zz", " "},
		{`[1,2]`, "offset=99999999999999999999", "k\x00"},
		{`{"prompt":"a","prompt":"b","x":1}`, "limit=1&limit=2", ""},
		{`{"views":[{"path":"/a","count":3,"at":"2026-08-14T08:00:00Z","userAgent":"curl/8"}]}`, "", ""},
		{`{"views":[{"path":"/a","count":-1},{"path":""},{"path":"/b","at":"9999-01-01T00:00:00Z"}]}`, "", ""},
		{`{"views":[{"path":"/a","visitor":"s-1","userAgent":"Mozilla/5.0"},{"path":"/a","visitor":""},{"path":"/b","visitor":"\u0000x"},{"path":"/c","visitor":7}]}`, "", ""},
		{"", "status=active,failed&limit=100&cursor=AQ&dateFrom=2026-08-01", ""},
		{"", "status=,&limit=-1&cursor=%ff", ""},
		{"", "interval=hour&dateFrom=2026-08-13T22:30:00Z&dateTo=2026-08-14T08:10:00Z&path=/guide/", ""},
		{"", "interval=day&dateFrom=0001-01-01&dateTo=9999-12-31&path=%00", ""},
		{"", "dateFrom=9999-12-31T23:59:59Z&path=/" + strings.Repeat("a", 2100), ""},
		// What a client of the hosted service sends: fields the server does
		// not know, and ISO 8601 dates without a zone or seconds, with an
		// offset escaped or not, or out of range.
		{`{"prompt":"Document the flag","model":"claude-opus-4","source":{"ref":"dev"}}`, "dateFrom=2026-10-24T00:00:00&dateTo=2026-10-24T00:00Z", ""},
		{`{"model":"x","prompt":5}`, "dateFrom=2026-10-24T11:30+02:00&dateTo=2026-10-24T11:30:00.123456", "k2"},
		{`{"prompt":"p","extra":[{"deep":{"x":null}}]}`, "dateFrom=2026-10-24T09:30:00%2B0200&dateTo=2026-10-24T24:00Z", ""},
	} {
		f.Add(seed.body, seed.query, seed.idempotencyKey)
	}
	f.Fuzz(func(t *testing.T, body, query, idempotencyKey string) {
		requests := []*http.Request{
			httptest.NewRequest("POST", "/v2/agent/alpha/job", bytes.NewBufferString(body)),
			httptest.NewRequest("POST", "/v2/agent/alpha/job/job_x/message", bytes.NewBufferString(body)),
			httptest.NewRequest("GET", "/v1/analytics/alpha/views?"+url.PathEscape(query), nil),
			httptest.NewRequest("POST", "/v1/analytics/alpha/views", bytes.NewBufferString(body)),
			httptest.NewRequest("GET", "/v1/analytics/alpha/visitors", nil),
			httptest.NewRequest("GET", "/v2/agent/alpha/jobs", nil),
			httptest.NewRequest("GET", "/v1/analytics/alpha/views/series", nil),
			// beta names no ref and no model: its jobs still name both.
			httptest.NewRequest("POST", "/v2/agent/beta/job", bytes.NewBufferString(body)),
		}
		for _, i := range []int{2, 4, 5, 6} {
			requests[i].URL.RawQuery = query
		}
		for _, req := range requests {
			key := e.Keys["rw"]
			if strings.HasPrefix(req.URL.Path, "/v2/agent/beta/") {
				key = e.Keys["beta"]
			}
			req.Header.Set("Authorization", "Bearer "+key)
			if idempotencyKey != "" {
				req.Header["Idempotency-Key"] = []string{idempotencyKey}
			}
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
