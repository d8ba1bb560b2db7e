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
	"github.com/docsapi/docsapi-go/server/store"
)

func (e *env) addViews(counts ...store.ViewCount) {
	e.T.Helper()
	if err := e.Store.AddViews(context.Background(), counts); err != nil {
		e.T.Fatalf("AddViews: %v", err)
	}
}

func (e *env) views(key, query string) docsapi.ViewsPage {
	e.T.Helper()
	var page docsapi.ViewsPage
	e.GetJSON(key, "/v1/analytics/alpha/views"+query, &page)
	return page
}

func TestViewsOrderTotalsAndPaging(t *testing.T) {
	e := newEnv(t)
	h := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	e.addViews(
		store.ViewCount{ProjectID: "alpha", Path: "/a", Hour: h, Human: 5, AI: 1},
		store.ViewCount{ProjectID: "alpha", Path: "/b", Hour: h, Human: 2, AI: 4},
		store.ViewCount{ProjectID: "alpha", Path: "/c", Hour: h, Human: 1},
		store.ViewCount{ProjectID: "alpha", Path: "/c", Hour: h.Add(time.Hour), Human: 3, Bot: 50},
		store.ViewCount{ProjectID: "alpha", Path: "/bots-only", Hour: h, Bot: 99},
	)
	page := e.views("ro", "")
	want := docsapi.ViewsPage{
		Totals: docsapi.ViewCounts{Human: 11, AI: 5, Total: 16},
		Views: []docsapi.PageView{
			{Path: "/a", Human: 5, AI: 1, Total: 6},
			{Path: "/b", Human: 2, AI: 4, Total: 6}, // a tie with /a: path order decides
			{Path: "/c", Human: 4, AI: 0, Total: 4},
		},
	}
	if diff := cmp.Diff(want, page); diff != "" {
		t.Fatalf("page (-want +got):\n%s", diff)
	}
	if p := e.views("ro", "?limit=2"); len(p.Views) != 2 || !p.HasMore || p.Totals != want.Totals {
		t.Errorf("first page of 2: %+v", p)
	}
	if p := e.views("ro", "?limit=2&offset=2"); len(p.Views) != 1 || p.HasMore || p.Views[0].Path != "/c" {
		t.Errorf("second page of 2: %+v", p)
	}
	if p := e.views("ro", "?offset=10"); len(p.Views) != 0 || p.HasMore || p.Views == nil {
		t.Errorf("past the end: %+v", p)
	}
}

// Counts are hourly: an hour counts when any part of it lies in
// [dateFrom, dateTo), and a date means midnight UTC.
func TestViewsDateRange(t *testing.T) {
	e := newEnv(t)
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	for i, path := range []string{"/day1-00h", "/day1-23h", "/day2-00h"} {
		hour := day.Add([]time.Duration{0, 23 * time.Hour, 24 * time.Hour}[i])
		e.addViews(store.ViewCount{ProjectID: "alpha", Path: path, Hour: hour, Human: 1})
	}
	paths := func(q string) []string {
		var out []string
		for _, v := range e.views("ro", q).Views {
			out = append(out, v.Path)
		}
		return out
	}
	tests := []struct {
		query string
		want  []string
	}{
		{"?dateFrom=2026-08-01&dateTo=2026-08-02", []string{"/day1-00h", "/day1-23h"}},
		{"?dateFrom=2026-08-02", []string{"/day2-00h"}},
		{"?dateTo=2026-08-01T23:00:00Z", []string{"/day1-00h"}},
		{"?dateTo=2026-08-01T23:00:01Z", []string{"/day1-00h", "/day1-23h"}},
		{"?dateFrom=2026-08-01T23:59:59Z&dateTo=2026-08-02T00:00:01Z", []string{"/day1-23h", "/day2-00h"}},
		{"?dateFrom=2026-08-01T10:00:00Z&dateTo=2026-08-01T10:00:00Z", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, paths(tt.query)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.query, diff)
		}
	}
}

func TestViewsValidationAnswers400WithDetails(t *testing.T) {
	e := newEnv(t)
	resp, body := e.Do("ro", "GET", "/v1/analytics/alpha/views?limit=0&offset=-2&dateFrom=soon", "")
	var got struct {
		Error   string                `json:"error"`
		Details []docsapi.ErrorDetail `json:"details"`
	}
	if err := json.Unmarshal(body, &got); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("got %d %s", resp.StatusCode, body)
	}
	if len(got.Details) != 3 || !strings.Contains(got.Details[0].Message, "dateFrom") ||
		!strings.Contains(got.Details[1].Message, "limit") || !strings.Contains(got.Details[2].Message, "offset") {
		t.Fatalf("details = %+v, want dateFrom, limit and offset", got.Details)
	}
}
