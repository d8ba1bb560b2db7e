package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/store"
)

// feedbackPage reads a page of the export as a map, so that the test sees
// exactly what was sent, nulls and absent fields apart.
func (e *env) feedbackPage(key, query string) (entries []map[string]any, next *string, hasMore bool) {
	e.T.Helper()
	var page struct {
		Feedback   []map[string]any `json:"feedback"`
		NextCursor *string          `json:"nextCursor"`
		HasMore    bool             `json:"hasMore"`
	}
	e.GetJSON(key, "/v1/analytics/alpha/feedback"+query, &page)
	return page.Feedback, page.NextCursor, page.HasMore
}

// Each source shows exactly its fields, as the contract says: contextual
// adds helpful and contact, code_snippet adds code, filename and lang, and
// thumbs_only adds its vote, helpful (the self-hosted addition), true or
// false as the reader voted. An SDK reads each vote as it was given.
func TestFeedbackExportShowsEachSourcesFields(t *testing.T) {
	e := newSiteEnv(t)
	e.MustPost("feedback", `{"path": "/a", "helpful": true}`)
	e.Clock.Advance(time.Second)
	e.MustPost("feedback", `{"path": "/a", "helpful": false}`)
	e.Clock.Advance(time.Second)
	e.MustPost("feedback", `{"path": "/b", "helpful": false, "comment": "Unclear."}`)
	e.Clock.Advance(time.Second)
	e.MustPost("feedback", `{"path": "/c", "code": "go run .", "comment": "Fails."}`)
	entries, next, more := e.feedbackPage("ro", "")
	if next != nil || more {
		t.Fatalf("one page: nextCursor %v, hasMore %v", next, more)
	}
	strip := func(m map[string]any) map[string]any {
		if id, _ := m["id"].(string); !strings.HasPrefix(id, "fb_") {
			t.Errorf("id %v, want fb_...", m["id"])
		}
		delete(m, "id")
		return m
	}
	want := []map[string]any{
		{"path": "/c", "comment": "Fails.", "createdAt": "2026-08-14T09:00:03Z", "source": "code_snippet", "status": "pending",
			"code": "go run .", "filename": nil, "lang": nil},
		{"path": "/b", "comment": "Unclear.", "createdAt": "2026-08-14T09:00:02Z", "source": "contextual", "status": "pending",
			"helpful": false, "contact": nil},
		{"path": "/a", "comment": nil, "createdAt": "2026-08-14T09:00:01Z", "source": "thumbs_only", "status": "pending", "helpful": false},
		{"path": "/a", "comment": nil, "createdAt": "2026-08-14T09:00:00Z", "source": "thumbs_only", "status": "pending", "helpful": true},
	}
	var got []map[string]any
	for _, m := range entries {
		got = append(got, strip(m))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("entries (-want +got):\n%s", diff)
	}

	var page docsapi.FeedbackPage
	e.GetJSON("ro", "/v1/analytics/alpha/feedback", &page)
	var votes []docsapi.Vote
	for _, f := range page.Feedback {
		votes = append(votes, f.Helpful)
	}
	if diff := cmp.Diff([]docsapi.Vote{docsapi.VoteUnknown, docsapi.VoteNo, docsapi.VoteNo, docsapi.VoteYes}, votes); diff != "" {
		t.Fatalf("the votes as the SDK reads them, code snippet first (-want +got):\n%s", diff)
	}
}

// The cursor pages through every entry once, newest first, while new
// entries arrive between pages; it works on another replica of the same
// database; and it is refused, with a 400 that names it, when changed,
// replayed on another project, or replayed with other filters.
func TestFeedbackCursor(t *testing.T) {
	e := newSiteEnv(t)
	for i := range 7 {
		e.MustPost("feedback", `{"path": "/p`+string(rune('a'+i))+`", "helpful": true}`)
		e.Clock.Advance(time.Second)
	}
	var seen []string
	query := "?limit=3"
	var cursors []string
	for page := 0; ; page++ {
		entries, next, more := e.feedbackPage("ro", query)
		for _, m := range entries {
			seen = append(seen, m["path"].(string))
		}
		// A reader leaves feedback while the export runs.
		e.Clock.Advance(time.Second)
		e.MustPost("feedback", `{"path": "/new", "helpful": true}`)
		if !more {
			if next != nil {
				t.Fatalf("last page: nextCursor %q with hasMore false", *next)
			}
			break
		}
		if next == nil || page > 5 {
			t.Fatalf("page %d: hasMore without a nextCursor", page)
		}
		cursors = append(cursors, *next)
		query = "?limit=3&cursor=" + url.QueryEscape(*next)
	}
	if diff := cmp.Diff([]string{"/pg", "/pf", "/pe", "/pd", "/pc", "/pb", "/pa"}, seen); diff != "" {
		t.Fatalf("entries seen (-want +got):\n%s", diff)
	}

	// Another replica on the same database, given the same secret, reads
	// the same cursor.
	replica, err := server.New(server.Config{Store: e.Store, Now: e.Clock.Now, Secret: e.Secret})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", "/v1/analytics/alpha/feedback?limit=3&cursor="+url.QueryEscape(cursors[0]), nil)
	req.Header.Set("Authorization", "Bearer "+e.Keys["ro"])
	rec := httptest.NewRecorder()
	replica.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"/pd"`) {
		t.Fatalf("another replica: %d %s, want the second page", rec.Code, rec.Body)
	}
	// A server with a secret of its own refuses it, and so does one given
	// none, which draws its own: nothing in the database seals a cursor.
	for _, secret := range [][]byte{[]byte(strings.Repeat("k", 32)), nil} {
		other, err := server.New(server.Config{Store: e.Store, Now: e.Clock.Now, Secret: secret})
		if err != nil {
			t.Fatal(err)
		}
		rec = httptest.NewRecorder()
		other.ServeHTTP(rec, req)
		if rec.Code != http.StatusBadRequest {
			t.Fatalf("a server with another secret (%d bytes): %d %s, want 400", len(secret), rec.Code, rec.Body)
		}
	}

	raw, _ := base64.RawURLEncoding.DecodeString(cursors[0])
	raw[3] ^= 1
	tampered := base64.RawURLEncoding.EncodeToString(raw)
	e.AddKey("beta-reader", server.KeyParams{Projects: []string{"beta"}, Scopes: []store.Scope{store.ScopeRead}})
	for _, tc := range []struct{ name, key, target string }{
		{"a changed cursor", "ro", "/v1/analytics/alpha/feedback?cursor=" + tampered},
		{"garbage", "ro", "/v1/analytics/alpha/feedback?cursor=%21%21not-a-cursor"},
		{"another project", "beta-reader", "/v1/analytics/beta/feedback?cursor=" + cursors[0]},
		{"another status filter", "ro", "/v1/analytics/alpha/feedback?status=resolved&cursor=" + cursors[0]},
		{"another source filter", "ro", "/v1/analytics/alpha/feedback?source=contextual&cursor=" + cursors[0]},
		{"another range", "ro", "/v1/analytics/alpha/feedback?dateFrom=2026-01-01&cursor=" + cursors[0]},
		{"another page path", "ro", "/v1/analytics/alpha/feedback?path=/guide&cursor=" + cursors[0]},
		{"the searches export", "ro", "/v1/analytics/alpha/searches?cursor=" + cursors[0]},
	} {
		resp, body := e.Do(tc.key, "GET", tc.target, "")
		details := analyticsDetails(t, body)
		if resp.StatusCode != http.StatusBadRequest || len(details) != 1 || !strings.Contains(details[0].Message, "cursor") {
			t.Errorf("%s: %d %s, want 400 naming the cursor", tc.name, resp.StatusCode, body)
		}
	}
	// The same filters in another spelling, and another page size, keep it.
	if resp, body := e.Do("ro", "GET", "/v1/analytics/alpha/feedback?limit=10&cursor="+cursors[0], ""); resp.StatusCode != http.StatusOK {
		t.Errorf("another limit: %d %s", resp.StatusCode, body)
	}
}

// Filters select by source, status and creation time; by-page counts the
// same selection per path.
func TestFeedbackExportFiltersAndByPage(t *testing.T) {
	e := newSiteEnv(t)
	e.MustPost("feedback", `{"path": "/a", "helpful": true}`)
	e.MustPost("feedback", `{"path": "/a", "helpful": false, "comment": "x"}`)
	e.MustPost("feedback", `{"path": "/a", "code": "x"}`)
	e.Clock.Advance(time.Hour)
	e.MustPost("feedback", `{"path": "/b", "helpful": true}`)
	e.MustPost("feedback", `{"path": "/b", "helpful": true, "contact": "r@example.com"}`)
	entries := e.Stored()
	if _, err := e.Server.SetFeedbackStatus(context.Background(), "alpha", entries[0].ID, store.FeedbackStatusResolved); err != nil {
		t.Fatal(err)
	}
	count := func(query string) int {
		got, _, _ := e.feedbackPage("ro", query)
		return len(got)
	}
	for query, want := range map[string]int{
		"":                                       5,
		"?source=thumbs_only":                    2,
		"?source=code_snippet":                   1,
		"?status=resolved":                       1,
		"?status=pending,in_progress":            4,
		"?status=dismissed":                      0,
		"?dateFrom=2026-08-14T09:30:00Z":         2,
		"?dateTo=2026-08-14T10:00:00Z":           3,
		"?dateFrom=2026-08-14&dateTo=2026-08-15": 5,
		"?path=/a":                               3,
		"?path=/b&source=thumbs_only":            1,
		"?path=/":                                0,
		"?path=":                                 5,
	} {
		if got := count(query); got != want {
			t.Errorf("feedback%s: %d entries, want %d", query, got, want)
		}
	}
	var byPage docsapi.FeedbackByPageResult
	e.GetJSON("ro", "/v1/analytics/alpha/feedback/by-page", &byPage)
	want := docsapi.FeedbackByPageResult{Feedback: []docsapi.PageFeedback{
		{Path: "/a", ThumbsUp: 1, ThumbsDown: 1, Code: 1, Total: 3},
		{Path: "/b", ThumbsUp: 2, Total: 2},
	}}
	if diff := cmp.Diff(want, byPage); diff != "" {
		t.Errorf("by-page (-want +got):\n%s", diff)
	}
	e.GetJSON("ro", "/v1/analytics/alpha/feedback/by-page?path=/b", &byPage)
	want = docsapi.FeedbackByPageResult{Feedback: []docsapi.PageFeedback{{Path: "/b", ThumbsUp: 2, Total: 2}}}
	if diff := cmp.Diff(want, byPage); diff != "" {
		t.Errorf("by-page of /b (-want +got):\n%s", diff)
	}
	e.GetJSON("ro", "/v1/analytics/alpha/feedback/by-page?limit=1&status=pending", &byPage)
	want = docsapi.FeedbackByPageResult{Feedback: []docsapi.PageFeedback{{Path: "/a", ThumbsUp: 1, ThumbsDown: 1, Code: 1, Total: 3}}, HasMore: true}
	if diff := cmp.Diff(want, byPage); diff != "" {
		t.Errorf("by-page, one pending path (-want +got):\n%s", diff)
	}
}

// Every problem of a query is listed, each naming its parameter.
func TestFeedbackAndSearchesQueriesAreChecked(t *testing.T) {
	e := newSiteEnv(t)
	for _, tc := range []struct {
		target string
		want   []string
	}{
		{"/v1/analytics/alpha/feedback?limit=0&source=email&status=pending,open,&dateFrom=soon",
			[]string{"dateFrom", "source must be one of code_snippet, contextual, agent, thumbs_only", `status must be a comma-separated list`, `status must be`, "limit must be an integer from 1 to 100"}},
		{"/v1/analytics/alpha/feedback/by-page?limit=101&dateFrom=2026-02-01&dateTo=2026-01-01",
			[]string{"dateFrom (2026-02-01T00:00:00Z) is after dateTo", "limit must be an integer from 1 to 100"}},
		{"/v1/analytics/alpha/searches?limit=x&cursor=a&cursor=b", []string{"limit must be", "cursor is given 2 times"}},
	} {
		resp, body := e.Do("ro", "GET", tc.target, "")
		details := analyticsDetails(t, body)
		if resp.StatusCode != http.StatusBadRequest || len(details) != len(tc.want) {
			t.Errorf("%s: %d %s, want 400 with %d details", tc.target, resp.StatusCode, body, len(tc.want))
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(details[i].Message, w) {
				t.Errorf("%s: detail %d = %q, want it to say %q", tc.target, i, details[i].Message, w)
			}
		}
	}
}

// Operators move entries between statuses with a write key; a read key
// cannot, and a bad status or a missing entry is told apart.
func TestFeedbackStatusEndpoint(t *testing.T) {
	e := newSiteEnv(t)
	e.MustPost("feedback", `{"path": "/a", "helpful": false, "comment": "Wrong port."}`)
	id := e.Stored()[0].ID
	target := "/v1/analytics/alpha/feedback/" + id
	e.Clock.Advance(time.Minute)
	resp, body := e.Do("rw", "PATCH", target, `{"status": "in_progress"}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PATCH: %d %s", resp.StatusCode, body)
	}
	var entry map[string]any
	if err := json.Unmarshal(body, &entry); err != nil {
		t.Fatal(err)
	}
	if entry["id"] != id || entry["status"] != "in_progress" || entry["comment"] != "Wrong port." || entry["source"] != "contextual" {
		t.Errorf("PATCH answered %v", entry)
	}
	if got := e.Stored()[0]; got.Status != store.FeedbackStatusInProgress || !got.UpdatedAt.Equal(e.Clock.Now()) {
		t.Errorf("stored %+v", got)
	}
	for _, tc := range []struct {
		key, target, body string
		status            int
		want              string
	}{
		{"ro", target, `{"status": "resolved"}`, 403, "lacks the write scope"},
		{"rw", target, `{"status": "closed"}`, 400, `"status" must be one of pending, in_progress, resolved, dismissed`},
		{"rw", target, `{}`, 400, `"status" is required`},
		{"rw", target, `{"status": "resolved", "note": "x"}`, 400, `unknown field "note"`},
		{"rw", target, `{"status": "` + strings.Repeat("x", 2000) + `"}`, 413, "larger than"},
		{"rw", "/v1/analytics/alpha/feedback/fb_missing", `{"status": "resolved"}`, 404, "not found"},
		{"beta", "/v1/analytics/beta/feedback/" + id, `{"status": "resolved"}`, 404, "not found"},
	} {
		resp, body := e.Do(tc.key, "PATCH", tc.target, tc.body)
		if resp.StatusCode != tc.status || !strings.Contains(servertest.ErrorOf(t, body), tc.want) {
			t.Errorf("PATCH %s %.40s as %s: %d %s, want %d saying %q", tc.target, tc.body, tc.key, resp.StatusCode, body, tc.status, tc.want)
		}
	}
	if got := e.Stored()[0].Status; got != store.FeedbackStatusInProgress {
		t.Errorf("after refused changes, the status is %s", got)
	}
}
