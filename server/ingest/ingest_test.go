package ingest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/pageviews"
	"github.com/docsapi/docsapi-go/server/store"
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
	resp, body := e.Do("rw", "POST", "/v1/analytics/alpha/views", ingestBody)
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

// TestIngestAcknowledgedViewsAreStored: configured as "docsapi serve"
// configures it (a Recorder, never flushed here), a 202 means the views are
// in the store at that moment, not in the Recorder's memory, where a crash
// would lose them.
func TestIngestAcknowledgedViewsAreStored(t *testing.T) {
	var rec *pageviews.Recorder
	e := newEnv(t, func(c *server.Config) {
		var err error
		rec, err = pageviews.New(pageviews.Config{Sink: c.Store, Now: c.Now})
		if err != nil {
			t.Fatal(err)
		}
		c.PageViews = rec
	})
	if resp, body := e.Do("rw", "POST", "/v1/analytics/alpha/views", ingestBody); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("ingest: %d %s", resp.StatusCode, body)
	}
	// Straight from the store, right after the answer.
	res, err := e.Store.QueryViews(context.Background(), store.ViewsQuery{ProjectID: "alpha", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if want := (store.Counts{Human: 3, AI: 5}); res.Totals != want {
		t.Fatalf("the store holds %+v right after the 202, want %+v", res.Totals, want)
	}
	if s := rec.Stats(); s.Recorded != 0 {
		t.Errorf("ingested views went through the recorder: %+v", s)
	}
	// The recorder's flush adds nothing: the views are not counted twice.
	if err := rec.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p := e.views("ro", ""); p.Totals != (docsapi.ViewCounts{Human: 3, AI: 5, Total: 8}) {
		t.Fatalf("after the recorder's flush: %+v", p.Totals)
	}
}

func TestIngestRefusals(t *testing.T) {
	e := newEnv(t, func(c *server.Config) { c.MaxBodyBytes = 4096 })
	if resp, _ := e.Do("ro", "POST", "/v1/analytics/alpha/views", `{"views":[{"path":"/a"}]}`); resp.StatusCode != http.StatusForbidden {
		t.Errorf("read-only key: %d, want 403", resp.StatusCode)
	}
	if resp, _ := e.Do("rw", "POST", "/v1/analytics/alpha/views", `{"views":[{"path":"/`+strings.Repeat("a", 5000)+`"}]}`); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %d, want 413", resp.StatusCode)
	}
	future := time.Date(2026, 8, 14, 11, 0, 0, 0, time.UTC).Format(time.RFC3339)
	tests := []struct {
		body string
		want []string
	}{
		{`{}`, []string{`field "views" is required: an array of {"path", "userAgent", "accept", "at", "count", "visitor"}`}},
		{`{"views":[]}`, []string{`field "views" is empty`}},
		{`{"views":{}}`, []string{`field "views" must be an array, not a JSON object`}},
		{`{"views":[{"path":"/a","count":"2"}]}`, []string{`field "views.count" must be a number, not a JSON string`}},
		// An unknown field is told with the fields of its object, not of
		// another body's.
		{`{"views":[{"path":"/a","referrer":"x"}]}`, []string{`views[0]: unknown field "referrer"; the fields are "path", "userAgent", "accept", "at", "count", "visitor"`}},
		{`{"views":[{"path":"/a"},{"path":"/b","Referrer":"x"}]}`, []string{`views[1]: unknown field "Referrer"; the fields are "path", "userAgent", "accept", "at", "count", "visitor"`}},
		{`{"views":[],"referrer":"x"}`, []string{`unknown field "referrer"; the only field is "views"`}},
		{`{"referrer":"x","views":[{"path":"/a","referrer":"x"}]}`, []string{`unknown field "referrer"; the only field is "views"`}},
		{`{"views":[{"path":"a"},{"userAgent":"x"},{"path":"/b","count":0},{"path":"/c","at":"yesterday"},{"path":"/d","at":"` + future + `"}]}`,
			[]string{"views[0].path must start with /", "views[1].path is required", "views[2].count must be from 1 to 1000000, got 0", `views[3].at must be an RFC 3339 timestamp, got "yesterday"`, "views[4].at (" + future + ") is more than an hour in the future"}},
		{`{"views":[{"path":"/a\u0007"}]}`, []string{"views[0].path holds a control character (U+0007) at byte 2"}},
		{`{"views":[{"path":"/a","visitor":""},{"path":"/b","visitor":"s\n1"},{"path":"/c","visitor":"` + strings.Repeat("v", 257) + `"}]}`,
			[]string{"views[0].visitor is empty; omit it to count no visitor", "views[1].visitor holds a control character (U+000A) at byte 1", "views[2].visitor has 257 bytes; at most 256 are allowed"}},
	}
	for _, tt := range tests {
		resp, body := e.Do("rw", "POST", "/v1/analytics/alpha/views", tt.body)
		var got struct {
			Details []docsapi.ErrorDetail `json:"details"`
		}
		json.Unmarshal(body, &got)
		if resp.StatusCode != http.StatusBadRequest || len(got.Details) != len(tt.want) {
			t.Errorf("%.60s: %d %s, want 400 with %d details", tt.body, resp.StatusCode, body, len(tt.want))
			continue
		}
		for i, d := range got.Details {
			if d.Message != tt.want[i] {
				t.Errorf("%.60s: detail %d = %q, want %q", tt.body, i, d.Message, tt.want[i])
			}
		}
	}
	if p := e.views("ro", ""); p.Totals.Total != 0 {
		t.Fatalf("refused batches stored views: %+v", p.Totals)
	}
}

// TestIngestRefusesViewsOutsideTheWindowOrWithHiddenCharacters: a view
// before 2000 or more than an hour ahead of the server's clock, or whose
// path holds a control or bidirectional formatting character, is refused
// with a 400 naming the view; the whole request is then refused.
func TestIngestRefusesViewsOutsideTheWindowOrWithHiddenCharacters(t *testing.T) {
	e := newEnv(t) // the server's clock: 2026-08-14T09:00:00Z
	ok := `{"path": "/ok"}, `
	tests := []struct {
		name, view string
		want       string // "" if the view is accepted
	}{
		{"the earliest instant", `{"path": "/a", "at": "2000-01-01T00:00:00Z"}`, ""},
		{"before 2000", `{"path": "/a", "at": "1999-12-31T23:59:59Z"}`, "views[1].at (1999-12-31T23:59:59Z) is before 2000-01-01T00:00:00Z"},
		{"before 2000 in another zone", `{"path": "/a", "at": "2000-01-01T00:30:00+01:00"}`, "views[1].at (2000-01-01T00:30:00+01:00) is before 2000-01-01T00:00:00Z"},
		{"the Unix epoch", `{"path": "/a", "at": "1970-01-01T00:00:00Z"}`, "views[1].at (1970-01-01T00:00:00Z) is before 2000"},
		{"year 1", `{"path": "/a", "at": "0001-01-01T00:00:00Z"}`, "views[1].at (0001-01-01T00:00:00Z) is before 2000"},
		{"an hour ahead", `{"path": "/a", "at": "2026-08-14T10:00:00Z"}`, ""},
		{"just over an hour ahead", `{"path": "/a", "at": "2026-08-14T10:00:00.001Z"}`, "views[1].at (2026-08-14T10:00:00.001Z) is more than an hour in the future"},
		{"far ahead", `{"path": "/a", "at": "9999-12-31T23:59:59Z"}`, "views[1].at (9999-12-31T23:59:59Z) is more than an hour in the future"},
		{"letters of any script", `{"path": "/caf\u00e9/\u65e5\u672c\u8a9e"}`, ""},
		{"NUL", `{"path": "/a\u0000b"}`, "views[1].path holds a control character (U+0000) at byte 2"},
		{"line feed", `{"path": "/a\nb"}`, "views[1].path holds a control character (U+000A)"},
		{"escape", `{"path": "/a\u001b[31m"}`, "views[1].path holds a control character (U+001B)"},
		{"DEL", `{"path": "/a\u007f"}`, "views[1].path holds a control character (U+007F)"},
		{"C1 next line", `{"path": "/a\u0085"}`, "views[1].path holds a control character (U+0085)"},
		{"C1 CSI", `{"path": "/a\u009b"}`, "views[1].path holds a control character (U+009B)"},
		{"right-to-left override", `{"path": "/invoice\u202efdp.exe"}`, "views[1].path holds a bidirectional formatting character (U+202E) at byte 8"},
		{"left-to-right embedding", `{"path": "/a\u202a"}`, "views[1].path holds a bidirectional formatting character (U+202A)"},
		{"first strong isolate", `{"path": "/a\u2068"}`, "views[1].path holds a bidirectional formatting character (U+2068)"},
		{"pop directional isolate", `{"path": "/a\u2069"}`, "views[1].path holds a bidirectional formatting character (U+2069)"},
		{"left-to-right mark", `{"path": "/a\u200e"}`, "views[1].path holds a bidirectional formatting character (U+200E)"},
		{"right-to-left mark", `{"path": "/a\u200f"}`, "views[1].path holds a bidirectional formatting character (U+200F)"},
		{"Arabic letter mark", `{"path": "/a\u061c"}`, "views[1].path holds a bidirectional formatting character (U+061C)"},
	}
	var accepted int64
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A browser's views, so that the export shows them.
			views := strings.ReplaceAll(ok+tt.view, `{"path"`, `{"userAgent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0", "path"`)
			resp, body := e.Do("rw", "POST", "/v1/analytics/alpha/views", `{"views": [`+views+`]}`)
			if tt.want == "" {
				if resp.StatusCode != http.StatusAccepted {
					t.Fatalf("%d %s, want 202", resp.StatusCode, body)
				}
				accepted += 2
				return
			}
			var got struct {
				Error   string                `json:"error"`
				Details []docsapi.ErrorDetail `json:"details"`
			}
			if err := json.Unmarshal(body, &got); err != nil || resp.StatusCode != http.StatusBadRequest || len(got.Details) != 1 {
				t.Fatalf("%d %s, want 400 with one detail", resp.StatusCode, body)
			}
			if !strings.Contains(got.Details[0].Message, tt.want) {
				t.Errorf("detail %q, want %q", got.Details[0].Message, tt.want)
			}
		})
	}
	// Refused requests store nothing, not even their good view.
	if p := e.views("ro", "?dateFrom=2000-01-01&dateTo=2027-01-01"); p.Totals.Total != accepted {
		t.Errorf("stored %d views, want the %d of the accepted requests", p.Totals.Total, accepted)
	}
}

// TestIngestWithRecorderCommitsBeforeAnswering: configured as serve
// configures it, with a Recorder, the endpoint still stores views before
// its 202, and none go through the Recorder's memory.
func TestIngestWithRecorderCommitsBeforeAnswering(t *testing.T) {
	var rec *pageviews.Recorder
	e := newEnv(t, func(c *server.Config) {
		var err error
		if rec, err = pageviews.New(pageviews.Config{Sink: c.Store}); err != nil {
			t.Fatal(err)
		}
		c.PageViews = rec
	})
	const firefox = "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0"
	for i := range 3 {
		body := fmt.Sprintf(`{"views": [{"path": "/p%d", "userAgent": %q}, {"path": "/q", "userAgent": %q}]}`, i, firefox, firefox)
		if resp, b := e.Do("rw", "POST", "/v1/analytics/alpha/views", body); resp.StatusCode != http.StatusAccepted || strings.TrimSpace(string(b)) != `{"accepted":2}` {
			t.Fatalf("answer %d %s, want 202", resp.StatusCode, b)
		}
		res, err := e.Store.QueryViews(context.Background(), store.ViewsQuery{ProjectID: "alpha", Limit: 250})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Totals.Human; got != int64(2*(i+1)) {
			t.Fatalf("after %d acknowledged requests the store holds %d views, want %d", i+1, got, 2*(i+1))
		}
	}
	if s := rec.Stats(); s.Recorded != 0 || s.Pending != 0 {
		t.Errorf("ingested views went through the recorder: %+v", s)
	}
}
