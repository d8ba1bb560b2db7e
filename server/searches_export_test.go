package server_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	docsapi "github.com/docsapi/docsapi-go"
)

// The export ranks queries by hits, with ctr, the most opened result and
// the total of the whole range, over whole UTC days, and pages by cursor
// until nextCursor is null.
func TestSearchesExport(t *testing.T) {
	e := newSiteEnv(t)
	post := func(n int, body string) {
		for range n {
			e.MustPost("searches", body)
		}
	}
	post(3, `{"query": "install", "clickedPath": "/install"}`)
	post(1, `{"query": "Install", "clickedPath": "/setup"}`)
	post(1, `{"query": "INSTALL"}`)
	post(2, `{"query": "api keys"}`)
	e.Clock.Advance(24 * time.Hour) // the next day
	post(2, `{"query": "webhooks", "clickedPath": "/webhooks"}`)
	post(1, `{"query": "zebra"}`)

	var page docsapi.SearchesPage
	e.GetJSON("ro", "/v1/analytics/alpha/searches", &page)
	day1 := time.Date(2026, 8, 14, 9, 0, 0, 0, time.UTC)
	want := docsapi.SearchesPage{TotalSearches: 10, Searches: []docsapi.Search{
		{Query: "install", Hits: 5, CTR: 0.8, TopClickedPage: "/install", LastSearchedAt: day1},
		{Query: "api keys", Hits: 2, LastSearchedAt: day1},
		{Query: "webhooks", Hits: 2, CTR: 1, TopClickedPage: "/webhooks", LastSearchedAt: day1.Add(24 * time.Hour)},
		{Query: "zebra", Hits: 1, LastSearchedAt: day1.Add(24 * time.Hour)},
	}}
	if diff := cmp.Diff(want, page); diff != "" {
		t.Fatalf("searches (-want +got):\n%s", diff)
	}
	// The null cursor is sent, not left out: it is the export's only end mark.
	resp, body := e.Do("ro", "GET", "/v1/analytics/alpha/searches", "")
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"nextCursor":null`) {
		t.Fatalf("the last page: %s", body)
	}

	// Pages of two, by cursor.
	var seen []string
	query := "?limit=2"
	for range 5 {
		var p docsapi.SearchesPage
		e.GetJSON("ro", "/v1/analytics/alpha/searches"+query, &p)
		if p.TotalSearches != 10 {
			t.Errorf("a page's totalSearches = %d, want the range's 10", p.TotalSearches)
		}
		for _, s := range p.Searches {
			seen = append(seen, s.Query)
		}
		if p.NextCursor == "" {
			break
		}
		query = "?limit=2&cursor=" + url.QueryEscape(p.NextCursor)
	}
	if diff := cmp.Diff([]string{"install", "api keys", "webhooks", "zebra"}, seen); diff != "" {
		t.Errorf("paged (-want +got):\n%s", diff)
	}

	// A range given with times is widened to the days it touches.
	for q, want := range map[string][]string{
		"?dateFrom=2026-08-15":                                       {"webhooks", "zebra"},
		"?dateTo=2026-08-14T00:00:01Z":                               {"install", "api keys"},
		"?dateFrom=2026-08-14T23:00:00Z&dateTo=2026-08-15T01:00:00Z": {"install", "api keys", "webhooks", "zebra"},
		"?dateFrom=2026-08-16":                                       nil,
	} {
		var p docsapi.SearchesPage
		e.GetJSON("ro", "/v1/analytics/alpha/searches"+q, &p)
		var got []string
		for _, s := range p.Searches {
			got = append(got, s.Query)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", q, diff)
		}
	}
}
