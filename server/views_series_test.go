package server_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server/store"
)

// series reads the views series of alpha, which must answer 200.
func (e *env) series(query string) docsapi.ViewsSeries {
	e.T.Helper()
	resp, body := e.Do("ro", "GET", "/v1/analytics/alpha/views/series"+query, "")
	if resp.StatusCode != http.StatusOK {
		e.T.Fatalf("series%s: %d %s", query, resp.StatusCode, body)
	}
	var s docsapi.ViewsSeries
	if err := json.Unmarshal(body, &s); err != nil {
		e.T.Fatalf("series%s: %v", query, err)
	}
	return s
}

// The env's clock reads 2026-08-14 09:00 UTC.
func TestViewsSeries(t *testing.T) {
	e := newEnv(t)
	day := func(d int) time.Time { return time.Date(2026, 8, d, 0, 0, 0, 0, time.UTC) }
	e.addViews(
		store.ViewCount{ProjectID: "alpha", Path: "/guide", Hour: day(13).Add(23 * time.Hour), Human: 5, AI: 1, Bot: 2},
		store.ViewCount{ProjectID: "alpha", Path: "/api", Hour: day(14).Add(8 * time.Hour), Human: 1, Bot: 40},
		store.ViewCount{ProjectID: "alpha", Path: "/guide", Hour: day(14).Add(8 * time.Hour), AI: 3},
		store.ViewCount{ProjectID: "beta", Path: "/guide", Hour: day(14).Add(8 * time.Hour), Human: 1000},
	)
	// No parameters: the last 30 days, today's included.
	s := e.series("")
	if s.Interval != docsapi.SeriesDay || !s.DateFrom.Equal(day(15).AddDate(0, 0, -30)) || !s.DateTo.Equal(day(15)) || s.Path != "" || len(s.Points) != 30 {
		t.Fatalf("the default series: %s to %s by %s, path %q, %d points", s.DateFrom, s.DateTo, s.Interval, s.Path, len(s.Points))
	}
	want := []docsapi.ViewsPoint{
		{At: day(13), Human: 5, AI: 1, Total: 6, Bots: 2},
		{At: day(14), Human: 1, AI: 3, Total: 4, Bots: 40},
	}
	if d := cmp.Diff(want, s.Points[28:]); d != "" {
		t.Errorf("the last two days (-want +got):\n%s", d)
	}
	if s.Points[0] != (docsapi.ViewsPoint{At: s.DateFrom}) {
		t.Errorf("a day without views: %+v, want zeros", s.Points[0])
	}
	// Hours, widened to whole ones, of one path given as a folder.
	s = e.series("?interval=hour&dateFrom=2026-08-13T22:30:00Z&dateTo=2026-08-14T08:10:00Z&path=/guide/")
	if s.Interval != docsapi.SeriesHour || !s.DateFrom.Equal(day(13).Add(22*time.Hour)) || !s.DateTo.Equal(day(14).Add(9*time.Hour)) || s.Path != "/guide" || len(s.Points) != 11 {
		t.Fatalf("hours of /guide: %s to %s by %s, path %q, %d points", s.DateFrom, s.DateTo, s.Interval, s.Path, len(s.Points))
	}
	if got := []docsapi.ViewsPoint{s.Points[1], s.Points[10]}; !cmp.Equal(got, []docsapi.ViewsPoint{
		{At: day(13).Add(23 * time.Hour), Human: 5, AI: 1, Total: 6, Bots: 2},
		{At: day(14).Add(8 * time.Hour), AI: 3, Total: 3},
	}) {
		t.Errorf("the hours of /guide with views: %+v", got)
	}
	// The most points a request may ask for, and an empty range.
	if s := e.series("?interval=hour&dateFrom=2026-07-01&dateTo=2026-08-11T16:00:00Z"); len(s.Points) != store.MaxSeriesPoints {
		t.Errorf("1,000 hours: %d points", len(s.Points))
	}
	if s := e.series("?dateFrom=2026-08-01&dateTo=2026-08-01"); len(s.Points) != 0 {
		t.Errorf("an empty range: %d points", len(s.Points))
	}
}

// Bad input answers 400 with one detail per problem, each naming its
// parameter.
func TestViewsSeriesRefusals(t *testing.T) {
	e := newEnv(t)
	for query, want := range map[string][]string{
		"?interval=week&path=guide": {`interval must be hour or day, got "week"`, "path must start with /"},
		"?dateFrom=soon&dateTo=2026-08-01&dateTo=2026-08-02": {
			`dateFrom "soon" is neither a date nor an ISO 8601 date-time: send, for example, 2026-10-24, 2026-10-24T09:30:00Z, 2026-10-24T11:30+02:00 or 2026-10-24T09:30:00.5 (no zone means UTC)`, "dateTo is given 2 times; give it once"},
		"?interval=hour&dateFrom=2026-07-01&dateTo=2026-08-11T16:00:01Z": {
			"dateFrom (2026-07-01T00:00:00Z) to dateTo (2026-08-11T17:00:00Z) holds 1001 hours; a series has at most 1000 points: narrow the range, or ask for interval=day"},
		"?dateFrom=2020-01-01": {
			"dateFrom (2020-01-01T00:00:00Z) to dateTo (2026-08-15T00:00:00Z) holds 2418 days; a series has at most 1000 points: narrow the range"},
		"?dateFrom=2026-08-16": {"dateFrom (2026-08-16T00:00:00Z) is after the current day, where the range ends when dateTo is omitted"},
		"?path=/a%00b":         {"path holds a control character (U+0000) at byte 2"},
	} {
		resp, body := e.Do("ro", "GET", "/v1/analytics/alpha/views/series"+query, "")
		var got struct {
			Error   string
			Details []docsapi.ErrorDetail
		}
		if err := json.Unmarshal(body, &got); err != nil || resp.StatusCode != http.StatusBadRequest || got.Error != "invalid query parameters" {
			t.Errorf("%s: %d %s, want 400", query, resp.StatusCode, body)
			continue
		}
		var msgs []string
		for _, d := range got.Details {
			msgs = append(msgs, d.Message)
		}
		if d := cmp.Diff(want, msgs); d != "" {
			t.Errorf("%s: details (-want +got):\n%s", query, d)
		}
	}
	if resp, _ := e.Do("beta", "GET", "/v1/analytics/alpha/views/series", ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("another project's key: %d, want 403", resp.StatusCode)
	}
}
