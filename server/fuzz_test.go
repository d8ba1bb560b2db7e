package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
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
		}
		requests[2].URL.RawQuery = query
		requests[4].URL.RawQuery = query
		for _, req := range requests {
			req.Header.Set("Authorization", "Bearer "+e.keys["rw"])
			if idempotencyKey != "" {
				req.Header["Idempotency-Key"] = []string{idempotencyKey}
			}
			rec := httptest.NewRecorder()
			e.srv.ServeHTTP(rec, req)
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
