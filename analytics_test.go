package docsapi

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jarcoal/httpmock"
)

var viewsJan2 = Day(2026, time.January, 2)

func TestViewsSendsExactQuery(t *testing.T) {
	tests := []struct {
		name      string
		params    ViewsParams
		wantQuery string
	}{
		{"zero params send no query", ViewsParams{}, ""},
		{"day as date only", ViewsParams{DateFrom: viewsJan2}, "dateFrom=2026-01-02"},
		{
			"instant in another zone as UTC RFC 3339",
			ViewsParams{DateTo: Instant(time.Date(2026, 1, 2, 12, 0, 0, 0, plusTwo))},
			"dateTo=2026-01-02T10%3A00%3A00Z",
		},
		{
			"instant with fraction",
			ViewsParams{DateFrom: Instant(time.Date(2026, 1, 2, 12, 0, 0, 250_000_000, plusTwo))},
			"dateFrom=2026-01-02T10%3A00%3A00.25Z",
		},
		{"limit alone", ViewsParams{Limit: 50}, "limit=50"},
		{"offset alone", ViewsParams{Offset: 100}, "offset=100"},
		{
			"everything, keys sorted",
			ViewsParams{DateFrom: Day(2026, time.January, 1), DateTo: Day(2026, time.February, 1), Limit: 250, Offset: 500},
			"dateFrom=2026-01-01&dateTo=2026-02-01&limit=250&offset=500",
		},
		{"equal dates are allowed", ViewsParams{DateFrom: viewsJan2, DateTo: viewsJan2}, "dateFrom=2026-01-02&dateTo=2026-01-02"},
		{"limit 1 is the lower bound", ViewsParams{Limit: 1}, "limit=1"},
		{
			// 2026-01-01T23:00-02:00 is 01:00 UTC on the 2nd, after the
			// date's midnight: bounds of different kinds compare as instants.
			"date before an instant on the same UTC day",
			ViewsParams{DateFrom: viewsJan2, DateTo: Instant(time.Date(2026, 1, 1, 23, 0, 0, 0, time.FixedZone("UTC-2", -2*60*60)))},
			"dateFrom=2026-01-02&dateTo=2026-01-02T01%3A00%3A00Z",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := newTestClient(t)
			stub := serveInOrder(t, mt, replyFixture(t, http.StatusOK, "views_page2.json"))

			if _, err := c.Analytics.Views(t.Context(), "", tt.params); err != nil {
				t.Fatalf("Views: %v", err)
			}
			want := []sentRequest{{Method: http.MethodGet, Path: "/v1/analytics/proj/views", Query: tt.wantQuery, Header: authorized}}
			if diff := cmp.Diff(want, stub.Requests(), onTheWire); diff != "" {
				t.Errorf("requests mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestViewsReturnsDecodedPage(t *testing.T) {
	c, mt := newTestClient(t)
	serveInOrder(t, mt, replyFixture(t, http.StatusOK, "views_page1.json"))

	got, err := c.Analytics.Views(t.Context(), "", ViewsParams{Limit: 2})
	if err != nil {
		t.Fatalf("Views: %v", err)
	}
	want := &ViewsPage{
		Totals: ViewCounts{Human: 24, AI: 18, Total: 42},
		Views: []PageView{
			{Path: "/quickstart", Human: 12, AI: 8, Total: 20},
			{Path: "/api-reference/auth", Human: 12, AI: 0, Total: 12},
		},
		HasMore: true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("page mismatch (-want +got):\n%s", diff)
	}
}

func TestViewsEscapesProjectInPath(t *testing.T) {
	tests := []struct {
		projectID string
		wantPath  string
	}{
		{"", "/v1/analytics/proj/views"},
		{"other", "/v1/analytics/other/views"},
		{"team docs/v2", "/v1/analytics/team%20docs%2Fv2/views"},
		{"a?b#c", "/v1/analytics/a%3Fb%23c/views"},
		{"dökü", "/v1/analytics/d%C3%B6k%C3%BC/views"},
	}
	for _, tt := range tests {
		t.Run(tt.projectID, func(t *testing.T) {
			c, mt := newTestClient(t)
			stub := serveInOrder(t, mt, replyFixture(t, http.StatusOK, "views_empty.json"))

			if _, err := c.Analytics.Views(t.Context(), tt.projectID, ViewsParams{Limit: 10}); err != nil {
				t.Fatalf("Views: %v", err)
			}
			want := []sentRequest{{Method: http.MethodGet, Path: tt.wantPath, Query: "limit=10", Header: authorized}}
			if diff := cmp.Diff(want, stub.Requests(), onTheWire); diff != "" {
				t.Errorf("requests mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestViewsRejectsInvalidArgumentsBeforeSending(t *testing.T) {
	tests := []struct {
		name      string
		noProject bool
		projectID string
		params    ViewsParams
		want      *ValidationError
	}{
		{
			name:   "negative limit",
			params: ViewsParams{Limit: -1},
			want:   &ValidationError{Param: "limit", Reason: "must be between 1 and 250, got -1"},
		},
		{
			name:   "limit above 250",
			params: ViewsParams{Limit: 251},
			want:   &ValidationError{Param: "limit", Reason: "must be between 1 and 250, got 251"},
		},
		{
			name:   "negative offset",
			params: ViewsParams{Offset: -1},
			want:   &ValidationError{Param: "offset", Reason: "must not be negative, got -1"},
		},
		{
			name:   "dateFrom after dateTo",
			params: ViewsParams{DateFrom: Day(2026, time.January, 3), DateTo: viewsJan2},
			want:   &ValidationError{Param: "dateFrom", Reason: "2026-01-03 is after dateTo 2026-01-02"},
		},
		{
			name: "instant one second after a date",
			params: ViewsParams{
				DateFrom: Instant(time.Date(2026, 1, 2, 0, 0, 1, 0, time.UTC)),
				DateTo:   viewsJan2,
			},
			want: &ValidationError{Param: "dateFrom", Reason: "2026-01-02T00:00:01Z is after dateTo 2026-01-02"},
		},
		{
			name:      "no project and no default",
			noProject: true,
			want:      &ValidationError{Param: "projectID", Reason: "is empty and the client has no default project (see WithProjectID)"},
		},
		{
			name:      "dot-dot project would address another endpoint",
			projectID: "..",
			want:      &ValidationError{Param: "projectID", Reason: `must not be ".."`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c *Client
			var mt *httpmock.MockTransport
			if tt.noProject {
				c, mt = newTestClientWithoutProject(t)
			} else {
				c, mt = newTestClient(t)
			}
			stub := serveInOrder(t, mt)

			page, err := c.Analytics.Views(t.Context(), tt.projectID, tt.params)
			if page != nil {
				t.Errorf("page = %+v, want nil", page)
			}
			var vErr *ValidationError
			if !errors.As(err, &vErr) {
				t.Fatalf("error = %v (%T), want *ValidationError", err, err)
			}
			if diff := cmp.Diff(tt.want, vErr); diff != "" {
				t.Errorf("validation error mismatch (-want +got):\n%s", diff)
			}
			if !errors.Is(err, ErrInvalidParam) {
				t.Error("errors.Is(err, ErrInvalidParam) = false")
			}
			if n := len(stub.Requests()); n != 0 {
				t.Errorf("sent %d requests, want 0", n)
			}
		})
	}
}

func TestViewsValidationErrorMessageNamesParameter(t *testing.T) {
	c, mt := newTestClient(t)
	serveInOrder(t, mt)
	_, err := c.Analytics.Views(t.Context(), "", ViewsParams{Limit: 251})
	const want = "docsapi: invalid limit: must be between 1 and 250, got 251"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

// Analytics endpoints, unlike agent ones, send a details array; it is the
// part that tells the user which parameter the server disliked.
func TestViewsAnalyticsErrorBodyDecoded(t *testing.T) {
	c, mt := newTestClient(t)
	stub := serveInOrder(t, mt, replyFixture(t, http.StatusBadRequest, "views_error_400.json"))

	page, err := c.Analytics.Views(t.Context(), "", ViewsParams{DateFrom: viewsJan2, Limit: 10})
	if page != nil {
		t.Errorf("page = %+v, want nil", page)
	}
	if !errors.Is(err, ErrBadRequest) {
		t.Errorf("errors.Is(err, ErrBadRequest) = false for %v", err)
	}
	for _, other := range []error{ErrNotFound, ErrServer, ErrInvalidParam} {
		if errors.Is(err, other) {
			t.Errorf("errors.Is(err, %v) = true, want false", other)
		}
	}
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("error = %v (%T), want *APIError", err, err)
	}
	type summary struct {
		StatusCode   int
		Message      string
		Details      []ErrorDetail
		Method, Path string
	}
	want := summary{
		StatusCode: http.StatusBadRequest,
		Message:    "Invalid date",
		Details: []ErrorDetail{
			{Message: "dateFrom must be a date (YYYY-MM-DD) or an ISO 8601 timestamp"},
			{Message: "dateTo must be after dateFrom"},
		},
		Method: http.MethodGet,
		Path:   "/v1/analytics/proj/views", // the query stays out of errors and logs
	}
	got := summary{apiErr.StatusCode, apiErr.Message, apiErr.Details, apiErr.Method, apiErr.Path}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("APIError mismatch (-want +got):\n%s", diff)
	}
	const wantText = "docsapi: GET /v1/analytics/proj/views: 400 Bad Request: Invalid date " +
		"(dateFrom must be a date (YYYY-MM-DD) or an ISO 8601 timestamp; dateTo must be after dateFrom)"
	if err.Error() != wantText {
		t.Errorf("Error() =\n%s\nwant\n%s", err, wantText)
	}
	if n := len(stub.Requests()); n != 1 {
		t.Errorf("sent %d requests, want 1 (a 400 is not retried)", n)
	}
}

// A body that is not a valid page is a bug on the other side, not a
// transient failure: it is reported at once and the request not repeated.
func TestViewsUndecodableCountIsErrorWithoutRetry(t *testing.T) {
	c, mt := newTestClient(t)
	stub := serveInOrder(t, mt, replyAs(http.StatusOK, "", `{"totals":{"human":12.5,"ai":0,"total":0},"views":[],"hasMore":false}`))

	page, err := c.Analytics.Views(t.Context(), "", ViewsParams{})
	if page != nil {
		t.Errorf("page = %+v, want nil", page)
	}
	const want = `docsapi: GET /v1/analytics/proj/views: decoding 200 response (Content-Type ""): ` +
		`docsapi: views page field "totals.human": 12.5 is not a whole number`
	if err == nil || err.Error() != want {
		t.Errorf("error =\n%v\nwant\n%s", err, want)
	}
	if n := len(stub.Requests()); n != 1 {
		t.Errorf("sent %d requests, want 1", n)
	}
}
