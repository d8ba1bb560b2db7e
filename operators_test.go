package docsapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The self-hosted operators' additions: the job list and the views series.

const (
	jobsListPath = "/v2/agent/proj/jobs"
	seriesPath   = "/v1/analytics/proj/views/series"
	jobJSONJ2    = `{"id":"j2","status":"failed","source":{"repository":"acme/docs","ref":null},"model":"m1","prLink":null,"createdAt":"2026-08-02T12:00:00Z","archivedAt":null}`
)

func TestJobListFollowsTheCursorNewestFirst(t *testing.T) {
	c, mt := newTestClient(t)
	rec := serve(t, mt, on("GET", jobsListPath,
		replyJSON(http.StatusOK, `{"jobs":[`+jobJSONJ2+`],"nextCursor":"c+1","hasMore":true}`),
		replyJSON(http.StatusOK, `{"jobs":[`+jobJSONJ1+`],"nextCursor":null,"hasMore":false}`),
	))
	params := JobsParams{Status: []JobStatus{JobStatusActive, JobStatusFailed}, DateFrom: Day(2026, time.August, 1)}
	jobs, err := Collect(c.AgentJobs.All(t.Context(), "", params))
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{{ID: "j2", Status: JobStatusFailed, Source: JobSource{Repository: "acme/docs"}, Model: "m1", CreatedAt: time.Date(2026, 8, 2, 12, 0, 0, 0, time.UTC)}, *wantJobJ1}
	if d := cmp.Diff(want, jobs); d != "" {
		t.Errorf("jobs (-want +got):\n%s", d)
	}
	wantQueries := []string{
		"dateFrom=2026-08-01&limit=100&status=active%2Cfailed",
		"cursor=c%2B1&dateFrom=2026-08-01&limit=100&status=active%2Cfailed",
	}
	if d := cmp.Diff(wantQueries, rec.Queries()); d != "" {
		t.Errorf("queries (-want +got):\n%s", d)
	}
	if params.Limit != 0 || params.Cursor != "" {
		t.Errorf("All changed its params: %+v", params)
	}
}

func TestJobListOnePage(t *testing.T) {
	c, mt := newTestClient(t)
	rec := serve(t, mt, on("GET", "/v2/agent/other/jobs", replyJSON(http.StatusOK, `{"jobs":[`+jobJSONJ1+`],"nextCursor":"n","hasMore":true}`)))
	page, err := c.AgentJobs.List(t.Context(), "other", JobsParams{Limit: 1, Cursor: "x", DateTo: Instant(time.Date(2026, 8, 3, 4, 5, 6, 0, plusTwo))})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&JobsPage{Jobs: []Job{*wantJobJ1}, NextCursor: "n", HasMore: true}, page); d != "" {
		t.Errorf("page (-want +got):\n%s", d)
	}
	if got := rec.Queries(); len(got) != 1 || got[0] != "cursor=x&dateTo=2026-08-03T02%3A05%3A06Z&limit=1" {
		t.Errorf("query %v", got)
	}
}

func TestJobListRefusesBadArgumentsWithoutSending(t *testing.T) {
	c, mt := newTestClient(t)
	serve(t, mt) // any request fails the test
	for name, tc := range map[string]struct {
		params JobsParams
		param  string
	}{
		"limit past 100":     {JobsParams{Limit: 101}, "limit"},
		"negative limit":     {JobsParams{Limit: -1}, "limit"},
		"a status's comma":   {JobsParams{Status: []JobStatus{"active,failed"}}, "status"},
		"an empty status":    {JobsParams{Status: []JobStatus{""}}, "status"},
		"dates out of order": {JobsParams{DateFrom: Day(2026, 8, 2), DateTo: Day(2026, 8, 1)}, "dateFrom"},
	} {
		for call, err := range map[string]error{
			"List": func() error { _, err := c.AgentJobs.List(t.Context(), "", tc.params); return err }(),
			"All":  firstErrOf(c.AgentJobs.All(t.Context(), "", tc.params)),
		} {
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Param != tc.param {
				t.Errorf("%s with %s: error %v, want a ValidationError of %s", call, name, err, tc.param)
			}
		}
	}
}

func TestJobsPageJSON(t *testing.T) {
	var page JobsPage
	for body, want := range map[string]string{
		`{"nextCursor":null,"hasMore":false}`:                           `docsapi: jobs page: required field "jobs" is missing or null`,
		`{"jobs":[],"nextCursor":null}`:                                 `docsapi: jobs page: required field "hasMore" is missing or null`,
		`{"jobs":[{"id":"j","createdAt":"yesterday"}],"hasMore":false}`: `docsapi: jobs page field jobs.createdAt: "yesterday" is not an ISO 8601 timestamp`,
	} {
		if err := json.Unmarshal([]byte(body), &page); err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", body, err, want)
		}
	}
}

func TestViewsSeriesRequestAndCounts(t *testing.T) {
	c, mt := newTestClient(t)
	rec := serve(t, mt, on("GET", seriesPath, replyJSON(http.StatusOK, `{"interval":"hour","dateFrom":"2026-08-01T10:00:00Z","dateTo":"2026-08-01T12:00:00Z","path":"/guide",`+
		`"points":[{"at":"2026-08-01T10:00:00Z","human":9007199254740993.0,"ai":1e1,"total":9007199254741003,"bots":7},`+
		`{"at":"2026-08-01T11:00:00Z","human":1,"ai":2,"bots":0}]}`)))
	s, err := c.Analytics.ViewsSeries(t.Context(), "", ViewsSeriesParams{Interval: SeriesHour, Path: "/guide/", DateFrom: Instant(time.Date(2026, 8, 1, 10, 30, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	want := &ViewsSeries{
		Interval: SeriesHour, DateFrom: time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC), DateTo: time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC), Path: "/guide",
		Points: []ViewsPoint{
			{At: time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC), Human: 9007199254740993, AI: 10, Total: 9007199254741003, Bots: 7},
			{At: time.Date(2026, 8, 1, 11, 0, 0, 0, time.UTC), Human: 1, AI: 2, Total: 3}, // total absent: human + ai
		},
	}
	if d := cmp.Diff(want, s); d != "" {
		t.Errorf("series (-want +got):\n%s", d)
	}
	if got := rec.Queries(); len(got) != 1 || got[0] != "dateFrom=2026-08-01T10%3A30%3A00Z&interval=hour&path=%2Fguide%2F" {
		t.Errorf("query %v", got)
	}
}

func TestViewsSeriesRefusals(t *testing.T) {
	c, mt := newTestClient(t)
	serve(t, mt)
	var ve *ValidationError
	if _, err := c.Analytics.ViewsSeries(t.Context(), "", ViewsSeriesParams{Interval: "week"}); !errors.As(err, &ve) || ve.Param != "interval" {
		t.Errorf("interval week: %v", err)
	}
	if _, err := c.Analytics.ViewsSeries(t.Context(), "", ViewsSeriesParams{DateFrom: Day(2026, 8, 2), DateTo: Day(2026, 8, 1)}); !errors.As(err, &ve) || ve.Param != "dateFrom" {
		t.Errorf("dates out of order: %v", err)
	}
	var s ViewsSeries
	if err := json.Unmarshal([]byte(`{"interval":"day"}`), &s); err == nil || err.Error() != `docsapi: views series: required field "points" is missing or null` {
		t.Errorf("no points: %v", err)
	}
}
