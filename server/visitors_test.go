package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server/internal/hll"
	"github.com/docsapi/docsapi-go/server/store"
)

// sketchOf is the encoded sketch of visitors ids, nil for none.
func sketchOf(ids ...uint64) []byte {
	if len(ids) == 0 {
		return nil
	}
	var s hll.Sketch
	for _, id := range ids {
		s.Insert(hll.Mix64(id))
	}
	return s.AppendBinary(nil)
}

func (e *env) addVisitors(counts ...store.VisitorCount) {
	e.T.Helper()
	var views []store.ViewCount
	for _, c := range counts {
		views = append(views, store.ViewCount{ProjectID: c.ProjectID, Path: c.Path, Hour: c.Hour, Human: 1})
	}
	// Views first, as every flush does: a day holds the paths it has
	// views of.
	e.addViews(views...)
	if err := e.Store.AddVisitors(context.Background(), counts); err != nil {
		e.T.Fatalf("AddVisitors: %v", err)
	}
}

func (e *env) visitorsPage(key, query string) docsapi.VisitorsPage {
	e.T.Helper()
	var page docsapi.VisitorsPage
	e.GetJSON(key, "/v1/analytics/alpha/visitors"+query, &page)
	return page
}

func TestVisitorsOrderTotalsPagingAndDates(t *testing.T) {
	e := newEnv(t)
	h := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	e.addVisitors(
		store.VisitorCount{ProjectID: "alpha", Path: "/a", Hour: h, Human: sketchOf(1, 2, 3), AI: sketchOf(3)},
		store.VisitorCount{ProjectID: "alpha", Path: "/b", Hour: h, Human: sketchOf(4), AI: sketchOf(5, 6)},
		store.VisitorCount{ProjectID: "alpha", Path: "/c", Hour: h.Add(5 * time.Hour), Human: sketchOf(1, 7)},
		store.VisitorCount{ProjectID: "beta", Path: "/a", Hour: h, Human: sketchOf(8)},
	)
	want := docsapi.VisitorsPage{
		// Visitor 3 is human and AI on /a: once in its total and in the
		// project's; visitor 1 is on two paths: once in the totals.
		Totals: docsapi.VisitorCounts{Human: 5, AI: 3, Total: 7},
		Visitors: []docsapi.PageVisitors{
			{Path: "/a", Human: 3, AI: 1, Total: 3},
			{Path: "/b", Human: 1, AI: 2, Total: 3}, // a tie with /a: path order decides
			{Path: "/c", Human: 2, AI: 0, Total: 2},
		},
	}
	if diff := cmp.Diff(want, e.visitorsPage("ro", "")); diff != "" {
		t.Fatalf("page (-want +got):\n%s", diff)
	}
	if p := e.visitorsPage("ro", "?limit=2"); len(p.Visitors) != 2 || !p.HasMore || p.Totals != want.Totals {
		t.Errorf("first page of 2: %+v", p)
	}
	if p := e.visitorsPage("ro", "?limit=2&offset=2"); len(p.Visitors) != 1 || p.Visitors[0].Path != "/c" || p.HasMore {
		t.Errorf("second page of 2: %+v", p)
	}
	if p := e.visitorsPage("ro", "?offset=9"); len(p.Visitors) != 0 || p.HasMore || p.Totals != want.Totals {
		t.Errorf("past the end: %+v", p)
	}
	// Dates as views take them, widened to whole UTC days: visitors are
	// counted per day.
	if diff := cmp.Diff(want, e.visitorsPage("ro", "?dateFrom=2026-08-01&dateTo=2026-08-02")); diff != "" {
		t.Errorf("the day (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, e.visitorsPage("ro", "?dateFrom=2026-08-01T11:30:00Z&dateTo=2026-08-01T11:45:00Z")); diff != "" {
		t.Errorf("a quarter of an hour: its whole day (-want +got):\n%s", diff)
	}
	if next := e.visitorsPage("ro", "?dateFrom=2026-08-02"); next.Totals != (docsapi.VisitorCounts{}) || len(next.Visitors) != 0 {
		t.Errorf("the next day: %+v", next)
	}
}

func TestVisitorsRefusals(t *testing.T) {
	e := newEnv(t)
	resp, body := e.Do("ro", "GET", "/v1/analytics/alpha/visitors?limit=0&offset=x", "")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "limit must be") || !strings.Contains(string(body), "offset must be") {
		t.Errorf("bad query: %d %s", resp.StatusCode, body)
	}
	for _, tc := range []struct {
		key, path string
		status    int
	}{
		{"", "/v1/analytics/alpha/visitors", http.StatusUnauthorized},
		{"beta", "/v1/analytics/alpha/visitors", http.StatusForbidden},
		{"ro", "/v1/analytics/beta/visitors", http.StatusForbidden},
		{"rw", "/v1/analytics/alpha/visitors", http.StatusOK}, // write implies read
	} {
		if resp, body := e.Do(tc.key, "GET", tc.path, ""); resp.StatusCode != tc.status {
			t.Errorf("%s with key %q: %d %s, want %d", tc.path, tc.key, resp.StatusCode, body, tc.status)
		}
	}
}

// The SDK's Visitors and AllVisitors against a real server and SQLite
// store, through a listener.
func TestSDKVisitorsAgainstServer(t *testing.T) {
	e := newEnv(t)
	h := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	const paths = 260
	var counts []store.VisitorCount
	for i := range paths {
		// Path i has paths-i visitors, one of them also seen as AI.
		var human []uint64
		for v := range paths - i {
			human = append(human, uint64(i*1000+v))
		}
		counts = append(counts, store.VisitorCount{ProjectID: "alpha", Path: fmt.Sprintf("/p%04d", i), Hour: h, Human: sketchOf(human...), AI: sketchOf(uint64(i * 1000))})
	}
	e.addVisitors(counts...)
	c := e.client("ro")
	params := docsapi.VisitorsParams{DateFrom: docsapi.Day(2026, 8, 1), DateTo: docsapi.Day(2026, 8, 2), Limit: 100}
	page, err := c.Analytics.Visitors(context.Background(), "", params)
	if err != nil {
		t.Fatalf("Visitors: %v", err)
	}
	if len(page.Visitors) != 100 || !page.HasMore || page.Visitors[0] != (docsapi.PageVisitors{Path: "/p0000", Human: paths, AI: 1, Total: paths}) {
		t.Fatalf("first page: %d rows, hasMore %v, first %+v", len(page.Visitors), page.HasMore, page.Visitors[0])
	}
	if page.Totals.AI != paths || page.Totals.Total != page.Totals.Human {
		t.Errorf("totals %+v: want %d AI visitors, each also human", page.Totals, paths)
	}
	rows, err := docsapi.Collect(c.Analytics.AllVisitors(context.Background(), "", params))
	if err != nil {
		t.Fatalf("AllVisitors: %v", err)
	}
	if len(rows) != paths {
		t.Fatalf("AllVisitors: %d rows, want %d", len(rows), paths)
	}
	for i, r := range rows {
		if want := fmt.Sprintf("/p%04d", i); r.Path != want {
			t.Fatalf("row %d is %s, want %s", i, r.Path, want)
		}
	}
}
