package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/pageviews"
)

const ingestBody = `{"views": [
	{"path": "/guide/", "userAgent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", "at": "2026-08-14T08:10:00Z"},
	{"path": "/guide/index.html", "userAgent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0", "at": "2026-08-14T08:50:00Z", "count": 2},
	{"path": "/guide.md", "userAgent": "curl/8.5.0", "at": "2026-08-14T08:20:00Z"},
	{"path": "/guide", "userAgent": "Mozilla/5.0 (compatible; Claude-User/1.0)", "count": 4},
	{"path": "/faq", "userAgent": "Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)", "count": 9}
]}`

func TestIngestedViewsAreClassifiedAndExported(t *testing.T) {
	e := newEnv(t)
	resp, body := e.do("rw", "POST", "/v1/analytics/alpha/views", ingestBody)
	if resp.StatusCode != http.StatusAccepted || strings.TrimSpace(string(body)) != `{"accepted":17}` {
		t.Fatalf("ingest: %d %s", resp.StatusCode, body)
	}
	// Written at once (no recorder configured): the export shows them.
	// Every form of /guide is one page; the crawler is kept but not shown.
	page := e.views("ro", "")
	want := docsapi.ViewsPage{
		Totals: docsapi.ViewCounts{Human: 3, AI: 5, Total: 8},
		Views:  []docsapi.PageView{{Path: "/guide", Human: 3, AI: 5, Total: 8}},
	}
	if diff := cmp.Diff(want, page); diff != "" {
		t.Fatalf("export (-want +got):\n%s", diff)
	}
	// The hour of each view is kept: the 08:xx views and the one at "now"
	// (09:00) fall in different hours.
	if p := e.views("ro", "?dateFrom=2026-08-14T08:00:00Z&dateTo=2026-08-14T09:00:00Z"); p.Totals.Total != 4 {
		t.Fatalf("08:00–09:00 holds %d views, want 4", p.Totals.Total)
	}
}

func TestIngestThroughTheRecorderAppearsOnFlush(t *testing.T) {
	var rec *pageviews.Recorder
	e := newEnv(t, func(c *server.Config) {
		var err error
		rec, err = pageviews.New(pageviews.Config{Sink: c.Store, Now: c.Now})
		if err != nil {
			t.Fatal(err)
		}
		c.PageViews = rec
	})
	if resp, body := e.do("rw", "POST", "/v1/analytics/alpha/views", ingestBody); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("ingest: %d %s", resp.StatusCode, body)
	}
	if p := e.views("ro", ""); p.Totals.Total != 0 {
		t.Fatalf("views visible before the flush: %+v", p.Totals)
	}
	if err := rec.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p := e.views("ro", ""); p.Totals != (docsapi.ViewCounts{Human: 3, AI: 5, Total: 8}) {
		t.Fatalf("after the flush: %+v", p.Totals)
	}
}

func TestIngestRefusals(t *testing.T) {
	e := newEnv(t, func(c *server.Config) { c.MaxBodyBytes = 4096 })
	if resp, _ := e.do("ro", "POST", "/v1/analytics/alpha/views", `{"views":[{"path":"/a"}]}`); resp.StatusCode != http.StatusForbidden {
		t.Errorf("read-only key: %d, want 403", resp.StatusCode)
	}
	if resp, _ := e.do("rw", "POST", "/v1/analytics/alpha/views", `{"views":[{"path":"/`+strings.Repeat("a", 5000)+`"}]}`); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %d, want 413", resp.StatusCode)
	}
	future := time.Date(2026, 8, 14, 11, 0, 0, 0, time.UTC).Format(time.RFC3339)
	tests := []struct {
		body string
		want []string
	}{
		{`{}`, []string{`field "views" is required`}},
		{`{"views":[]}`, []string{`field "views" is empty`}},
		{`{"views":{}}`, []string{`field "views" must be an array, not a JSON object`}},
		{`{"views":[{"path":"/a","count":"2"}]}`, []string{`field "views.count" must be a number, not a JSON string`}},
		{`{"views":[{"path":"/a","referrer":"x"}]}`, []string{`unknown field "referrer"`}},
		{`{"views":[{"path":"a"},{"userAgent":"x"},{"path":"/b","count":0},{"path":"/c","at":"yesterday"},{"path":"/d","at":"` + future + `"}]}`,
			[]string{"views[0].path must start with /", "views[1].path is required", "views[2].count must be from 1 to 1000000", "views[3].at must be an RFC 3339 timestamp", "views[4].at (" + future + ") is in the future"}},
		{`{"views":[{"path":"/a\u0007"}]}`, []string{"no control characters"}},
	}
	for _, tt := range tests {
		resp, body := e.do("rw", "POST", "/v1/analytics/alpha/views", tt.body)
		var got struct {
			Details []docsapi.ErrorDetail `json:"details"`
		}
		json.Unmarshal(body, &got)
		if resp.StatusCode != http.StatusBadRequest || len(got.Details) != len(tt.want) {
			t.Errorf("%.60s: %d %s, want 400 with %d details", tt.body, resp.StatusCode, body, len(tt.want))
			continue
		}
		for i, d := range got.Details {
			if !strings.Contains(d.Message, tt.want[i]) {
				t.Errorf("%.60s: detail %d = %q, want %q", tt.body, i, d.Message, tt.want[i])
			}
		}
	}
	if p := e.views("ro", ""); p.Totals.Total != 0 {
		t.Fatalf("refused batches stored views: %+v", p.Totals)
	}
}
