package site_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/store"
)

// The SDK's feedback and searches methods, against the real server over a
// loopback listener: what a page records through the public endpoints is
// what the exports give back, every field of it.
func TestSDKFeedbackAndSearchesEndToEnd(t *testing.T) {
	e := newSiteEnv(t)
	base := e.Serve()
	ctx := context.Background()
	record := func(endpoint, body string) {
		t.Helper()
		req, err := http.NewRequest("POST", base+"/v1/site/alpha/"+endpoint+"?token="+e.Keys["site"], bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", servertest.SiteOrigin)
		req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted || resp.Header.Get("Access-Control-Allow-Origin") != servertest.SiteOrigin {
			t.Fatalf("POST %s %s: %d %v", endpoint, body, resp.StatusCode, resp.Header)
		}
		e.Clock.Advance(time.Minute)
	}
	t0 := e.Clock.Now()
	record("feedback", `{"path": "/quickstart", "helpful": true}`)
	record("feedback", `{"path": "/quickstart", "helpful": false, "comment": "Step 2 fails on Windows.", "contact": "ada@example.com"}`)
	record("feedback", `{"path": "/api/auth", "code": "curl -H 'Authorization: Bearer $KEY' https://api.example.com", "filename": "auth.sh", "lang": "bash", "comment": "Returns 404."}`)
	record("feedback", `{"path": "/api/auth", "code": "print(1)"}`)
	record("feedback", `{"path": "/quickstart", "helpful": true, "comment": ""}`)
	record("searches", `{"query": "Rate Limits", "clickedPath": "/api/rate-limits"}`)
	record("searches", `{"query": "rate limits"}`)
	record("searches", `{"query": "webhooks", "clickedPath": "/webhooks"}`)

	c := e.client("rw")
	entries, err := docsapi.Collect(c.Analytics.AllFeedback(ctx, "", docsapi.FeedbackParams{Limit: 2}))
	if err != nil {
		t.Fatalf("AllFeedback: %v", err)
	}
	empty, failing := "", "Step 2 fails on Windows."
	returns404 := "Returns 404."
	want := []docsapi.FeedbackEntry{
		{Path: "/quickstart", Comment: &empty, CreatedAt: t0.Add(4 * time.Minute), Source: docsapi.FeedbackSourceContextual,
			Status: docsapi.FeedbackStatusPending, Helpful: docsapi.VoteYes},
		{Path: "/api/auth", CreatedAt: t0.Add(3 * time.Minute), Source: docsapi.FeedbackSourceCodeSnippet,
			Status: docsapi.FeedbackStatusPending, Code: "print(1)"},
		{Path: "/api/auth", Comment: &returns404, CreatedAt: t0.Add(2 * time.Minute), Source: docsapi.FeedbackSourceCodeSnippet,
			Status: docsapi.FeedbackStatusPending, Code: "curl -H 'Authorization: Bearer $KEY' https://api.example.com", Filename: "auth.sh", Lang: "bash"},
		{Path: "/quickstart", Comment: &failing, CreatedAt: t0.Add(time.Minute), Source: docsapi.FeedbackSourceContextual,
			Status: docsapi.FeedbackStatusPending, Helpful: docsapi.VoteNo, Contact: "ada@example.com"},
		// A thumbs-only entry carries its vote (a self-hosted addition).
		{Path: "/quickstart", CreatedAt: t0, Source: docsapi.FeedbackSourceThumbsOnly, Status: docsapi.FeedbackStatusPending, Helpful: docsapi.VoteYes},
	}
	if diff := cmp.Diff(want, entries, cmpopts.IgnoreFields(docsapi.FeedbackEntry{}, "ID")); diff != "" {
		t.Fatalf("AllFeedback (-want +got):\n%s", diff)
	}
	ids := map[string]bool{}
	for _, f := range entries {
		ids[f.ID] = true
	}
	if len(ids) != len(entries) {
		t.Errorf("IDs repeat: %v", ids)
	}

	// An operator resolves one; the filters see it.
	if _, err := e.Server.SetFeedbackStatus(ctx, "alpha", entries[3].ID, store.FeedbackStatusResolved); err != nil {
		t.Fatal(err)
	}
	page, err := c.Analytics.Feedback(ctx, "", docsapi.FeedbackParams{Status: []docsapi.FeedbackStatus{docsapi.FeedbackStatusResolved}})
	if err != nil || len(page.Feedback) != 1 || page.Feedback[0].ID != entries[3].ID || page.HasMore || page.NextCursor != "" {
		t.Fatalf("Feedback(resolved) = %+v, %v", page, err)
	}
	page, err = c.Analytics.Feedback(ctx, "", docsapi.FeedbackParams{Source: docsapi.FeedbackSourceCodeSnippet, Limit: 1,
		DateFrom: docsapi.Instant(t0.Add(time.Minute)), DateTo: docsapi.Instant(t0.Add(4 * time.Minute))})
	if err != nil || len(page.Feedback) != 1 || page.Feedback[0].Code != "print(1)" || !page.HasMore || page.NextCursor == "" {
		t.Fatalf("Feedback(code_snippet, limit 1) = %+v, %v", page, err)
	}

	byPage, err := c.Analytics.FeedbackByPage(ctx, "", docsapi.FeedbackByPageParams{})
	if err != nil {
		t.Fatalf("FeedbackByPage: %v", err)
	}
	wantByPage := &docsapi.FeedbackByPageResult{Feedback: []docsapi.PageFeedback{
		{Path: "/quickstart", ThumbsUp: 2, ThumbsDown: 1, Total: 3},
		{Path: "/api/auth", Code: 2, Total: 2},
	}}
	if diff := cmp.Diff(wantByPage, byPage); diff != "" {
		t.Errorf("FeedbackByPage (-want +got):\n%s", diff)
	}

	searches, err := docsapi.Collect(c.Analytics.AllSearches(ctx, "", docsapi.SearchesParams{Limit: 1}))
	if err != nil {
		t.Fatalf("AllSearches: %v", err)
	}
	wantSearches := []docsapi.Search{
		{Query: "rate limits", Hits: 2, CTR: 0.5, TopClickedPage: "/api/rate-limits", LastSearchedAt: t0.Add(6 * time.Minute)},
		{Query: "webhooks", Hits: 1, CTR: 1, TopClickedPage: "/webhooks", LastSearchedAt: t0.Add(7 * time.Minute)},
	}
	if diff := cmp.Diff(wantSearches, searches); diff != "" {
		t.Errorf("AllSearches (-want +got):\n%s", diff)
	}
	sp, err := c.Analytics.Searches(ctx, "", docsapi.SearchesParams{DateFrom: docsapi.Day(2026, time.August, 14)})
	if err != nil || sp.TotalSearches != 3 || len(sp.Searches) != 2 || sp.NextCursor != "" {
		t.Errorf("Searches = %+v, %v", sp, err)
	}

	// No reader asked the assistant: its caller statistics are zeros.
	if cs, err := c.Analytics.AssistantCallerStats(ctx, "", docsapi.AssistantCallerStatsParams{}); err != nil || cs.Total != 0 {
		t.Errorf("AssistantCallerStats = %+v, %v; want zeros", cs, err)
	}
}
