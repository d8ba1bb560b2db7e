package docsapi

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jarcoal/httpmock"
)

var (
	fixtureRowsPage1 = []PageView{
		{Path: "/quickstart", Human: 12, AI: 8, Total: 20},
		{Path: "/api-reference/auth", Human: 12, AI: 0, Total: 12},
	}
	fixtureRowsPage2 = []PageView{{Path: "/guides/llms-txt", Human: 0, AI: 10, Total: 10}}
	fixtureRowsAll   = slices.Concat(fixtureRowsPage1, fixtureRowsPage2)
)

func TestAllViewsWalksPagesWithOffsetPlusLimit(t *testing.T) {
	tests := []struct {
		name        string
		params      ViewsParams
		wantQueries []string
	}{
		{
			// offset += limit, not += len(rows): the server may return
			// fewer rows than asked and still have more.
			name:        "zero limit means 250",
			params:      ViewsParams{},
			wantQueries: []string{"limit=250", "limit=250&offset=250"},
		},
		{
			name:        "caller's limit and dates on every page",
			params:      ViewsParams{DateFrom: Day(2026, time.January, 1), DateTo: Day(2026, time.February, 1), Limit: 2},
			wantQueries: []string{"dateFrom=2026-01-01&dateTo=2026-02-01&limit=2", "dateFrom=2026-01-01&dateTo=2026-02-01&limit=2&offset=2"},
		},
		{
			name:        "starts at the caller's offset",
			params:      ViewsParams{Offset: 500},
			wantQueries: []string{"limit=250&offset=500", "limit=250&offset=750"},
		},
		{
			name:        "limit 1 walks one row at a time",
			params:      ViewsParams{Limit: 1, Offset: 7},
			wantQueries: []string{"limit=1&offset=7", "limit=1&offset=8"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := newTestClient(t)
			stub := serveInOrder(t, mt, replyFixture(t, http.StatusOK, "views_page1.json"), replyFixture(t, http.StatusOK, "views_page2.json"))

			rows, errs := splitPairs(t, collectPairs(t, c.Analytics.AllViews(t.Context(), "", tt.params)))
			if len(errs) != 0 {
				t.Fatalf("got %d errors (first: %v), want none", len(errs), firstErr(errs))
			}
			if diff := cmp.Diff(fixtureRowsAll, rows); diff != "" {
				t.Errorf("rows mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantQueries, stub.Queries()); diff != "" {
				t.Errorf("queries mismatch (-want +got):\n%s", diff)
			}
			for i, call := range stub.Requests() {
				if call.Method != http.MethodGet || call.Path != "/v1/analytics/proj/views" || call.Header.Get("Authorization") != "Bearer "+testKey {
					t.Errorf("request %d = %s %s (auth %q), want GET /v1/analytics/proj/views with the key", i, call.Method, call.Path, call.Header.Get("Authorization"))
				}
			}
		})
	}
}

func TestAllViewsWalksThreePagesInOrder(t *testing.T) {
	c, mt := newTestClient(t)
	p1, p2, p3 := viewRows("a", 3), viewRows("b", 3), viewRows("c", 1)
	stub := serveInOrder(t, mt,
		replyJSON(http.StatusOK, viewsPageJSON(t, p1, true)),
		replyJSON(http.StatusOK, viewsPageJSON(t, p2, true)),
		replyJSON(http.StatusOK, viewsPageJSON(t, p3, false)),
	)

	rows, errs := splitPairs(t, collectPairs(t, c.Analytics.AllViews(t.Context(), "other", ViewsParams{Limit: 3})))
	if len(errs) != 0 {
		t.Fatalf("got %d errors (first: %v), want none", len(errs), firstErr(errs))
	}
	if diff := cmp.Diff(slices.Concat(p1, p2, p3), rows); diff != "" {
		t.Errorf("rows mismatch (-want +got):\n%s", diff)
	}
	want := []sentRequest{
		{Method: http.MethodGet, Path: "/v1/analytics/other/views", Query: "limit=3", Header: authorized},
		{Method: http.MethodGet, Path: "/v1/analytics/other/views", Query: "limit=3&offset=3", Header: authorized},
		{Method: http.MethodGet, Path: "/v1/analytics/other/views", Query: "limit=3&offset=6", Header: authorized},
	}
	if diff := cmp.Diff(want, stub.Requests(), onTheWire); diff != "" {
		t.Errorf("requests mismatch (-want +got):\n%s", diff)
	}
}

func TestAllViewsSendsNothingUntilRanged(t *testing.T) {
	c, mt := newTestClient(t)
	stub := serveInOrder(t, mt, replyFixture(t, http.StatusOK, "views_page2.json"))

	seq := c.Analytics.AllViews(t.Context(), "", ViewsParams{Limit: 10})
	if n := len(stub.Requests()); n != 0 {
		t.Fatalf("building the iterator sent %d requests, want 0", n)
	}
	if n := mt.GetTotalCallCount(); n != 0 {
		t.Fatalf("transport saw %d calls before ranging, want 0", n)
	}
	rows, errs := splitPairs(t, collectPairs(t, seq))
	if len(errs) != 0 || len(rows) != 1 {
		t.Fatalf("ranging gave %d rows and %d errors (first: %v), want 1 row", len(rows), len(errs), firstErr(errs))
	}
	if n := len(stub.Requests()); n != 1 {
		t.Errorf("sent %d requests after ranging, want 1", n)
	}
}

// The iterator applies its default limit and advances its offset on a copy;
// a caller who reuses params for the next export must find them unchanged.
func TestAllViewsNeverChangesParams(t *testing.T) {
	c, mt := newTestClient(t)
	serveInOrder(t, mt, replyFixture(t, http.StatusOK, "views_page1.json"), replyFixture(t, http.StatusOK, "views_page2.json"))

	params := ViewsParams{DateFrom: Day(2026, time.January, 1), DateTo: Instant(time.Date(2026, 2, 1, 12, 0, 0, 0, plusTwo)), Offset: 10}
	saved := params
	collectPairs(t, c.Analytics.AllViews(t.Context(), "", params))
	if params != saved {
		t.Errorf("params after ranging = %+v, want %+v", params, saved)
	}
}

func TestAllViewsRangingAgainRestartsFromFirstPage(t *testing.T) {
	c, mt := newTestClient(t)
	page1, page2 := replyFixture(t, http.StatusOK, "views_page1.json"), replyFixture(t, http.StatusOK, "views_page2.json")
	stub := serveInOrder(t, mt, page1, page2, page1, page2)

	seq := c.Analytics.AllViews(t.Context(), "", ViewsParams{Limit: 2, Offset: 4})
	first, errs1 := splitPairs(t, collectPairs(t, seq))
	second, errs2 := splitPairs(t, collectPairs(t, seq))
	if len(errs1)+len(errs2) != 0 {
		t.Fatalf("errors: %v, %v", firstErr(errs1), firstErr(errs2))
	}
	if diff := cmp.Diff(fixtureRowsAll, first); diff != "" {
		t.Errorf("first range rows mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("second range differs from first (-first +second):\n%s", diff)
	}
	want := []string{"limit=2&offset=4", "limit=2&offset=6", "limit=2&offset=4", "limit=2&offset=6"}
	if diff := cmp.Diff(want, stub.Queries()); diff != "" {
		t.Errorf("queries mismatch (-want +got):\n%s", diff)
	}
}

func TestAllViewsErrorOnSecondPageYieldsOnceAndStops(t *testing.T) {
	c, mt := newTestClient(t)
	stub := serveInOrder(t, mt,
		replyFixture(t, http.StatusOK, "views_page1.json"),
		replyJSON(http.StatusForbidden, `{"error":"API key lacks the read scope"}`),
	)

	pairs := collectPairs(t, c.Analytics.AllViews(t.Context(), "", ViewsParams{Limit: 2}))
	rows, errs := splitPairs(t, pairs)
	if diff := cmp.Diff(fixtureRowsPage1, rows); diff != "" {
		t.Errorf("rows before the error mismatch (-want +got):\n%s", diff)
	}
	if len(errs) != 1 || len(pairs) != len(fixtureRowsPage1)+1 {
		t.Fatalf("got %d pairs with %d errors, want the page-1 rows then exactly one error", len(pairs), len(errs))
	}
	if pairs[len(pairs)-1].Err == nil {
		t.Error("the error is not the last pair")
	}
	var apiErr *APIError
	if !errors.As(errs[0], &apiErr) {
		t.Fatalf("error = %v (%T), want an *APIError", errs[0], errs[0])
	}
	if apiErr.StatusCode != http.StatusForbidden || apiErr.Message != "API key lacks the read scope" || apiErr.Path != "/v1/analytics/proj/views" {
		t.Errorf("APIError = %d %q at %q, want 403 %q at /v1/analytics/proj/views",
			apiErr.StatusCode, apiErr.Message, apiErr.Path, "API key lacks the read scope")
	}
	if !errors.Is(errs[0], ErrForbidden) {
		t.Error("errors.Is(err, ErrForbidden) = false")
	}
	if diff := cmp.Diff([]string{"limit=2", "limit=2&offset=2"}, stub.Queries()); diff != "" {
		t.Errorf("queries mismatch (-want +got):\n%s", diff)
	}
}

// A 5xx on a later page is retried like any read; once retries run out the
// iterator still yields one error that keeps the *APIError reachable.
func TestAllViewsServerErrorOnSecondPageRetriedThenYieldedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		unavailable := replyJSON(http.StatusServiceUnavailable, `{"error":"down for maintenance"}`)
		stub := serveInOrder(t, mt, replyFixture(t, http.StatusOK, "views_page1.json"), unavailable, unavailable, unavailable, unavailable)

		rows, errs := splitPairs(t, collectPairs(t, c.Analytics.AllViews(t.Context(), "", ViewsParams{})))
		if diff := cmp.Diff(fixtureRowsPage1, rows); diff != "" {
			t.Errorf("rows mismatch (-want +got):\n%s", diff)
		}
		if len(errs) != 1 {
			t.Fatalf("got %d errors, want exactly one", len(errs))
		}
		var apiErr *APIError
		if !errors.As(errs[0], &apiErr) || apiErr.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("error = %v, want an *APIError with status 503", errs[0])
		}
		if !errors.Is(errs[0], ErrServer) {
			t.Error("errors.Is(err, ErrServer) = false")
		}
		const wantText = "docsapi: GET /v1/analytics/proj/views: 503 Service Unavailable: down for maintenance (after 4 attempts)"
		if errs[0].Error() != wantText {
			t.Errorf("Error() = %q, want %q", errs[0], wantText)
		}
		wantQueries := []string{"limit=250", "limit=250&offset=250", "limit=250&offset=250", "limit=250&offset=250", "limit=250&offset=250"}
		if diff := cmp.Diff(wantQueries, stub.Queries()); diff != "" {
			t.Errorf("queries mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestAllViewsBreakSendsNoFurtherRequest(t *testing.T) {
	tests := []struct {
		name     string
		breakAt  int // index of the row after which the loop breaks
		wantRows []PageView
	}{
		{"break after the first row", 0, fixtureRowsPage1[:1]},
		// The page is used up here and hasMore is true, which is exactly
		// when a careless pager would prefetch the next page.
		{"break after the last row of a page", 1, fixtureRowsPage1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := newTestClient(t)
			stub := serveInOrder(t, mt, replyFixture(t, http.StatusOK, "views_page1.json"))

			var rows []PageView
			for v, err := range c.Analytics.AllViews(t.Context(), "", ViewsParams{Limit: 2}) {
				if err != nil {
					t.Fatalf("error: %v", err)
				}
				rows = append(rows, v)
				if len(rows) == tt.breakAt+1 {
					break
				}
			}
			if diff := cmp.Diff(tt.wantRows, rows); diff != "" {
				t.Errorf("rows mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"limit=2"}, stub.Queries()); diff != "" {
				t.Errorf("queries mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// Asking again at the next offset after an empty page could loop over
// nothing for ever against a server that always says hasMore.
func TestAllViewsEmptyPageEndsIterationEvenIfHasMore(t *testing.T) {
	tests := []struct {
		name        string
		fixtures    []string
		wantRows    []PageView
		wantQueries []string
	}{
		{
			name:        "empty second page",
			fixtures:    []string{"views_page1.json", "views_empty_hasmore.json"},
			wantRows:    fixtureRowsPage1,
			wantQueries: []string{"limit=2", "limit=2&offset=2"},
		},
		{
			name:        "empty first page",
			fixtures:    []string{"views_empty_hasmore.json"},
			wantRows:    nil,
			wantQueries: []string{"limit=2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := newTestClient(t)
			var replies []httpmock.Responder
			for _, name := range tt.fixtures {
				replies = append(replies, replyFixture(t, http.StatusOK, name))
			}
			stub := serveInOrder(t, mt, replies...)

			rows, errs := splitPairs(t, collectPairs(t, c.Analytics.AllViews(t.Context(), "", ViewsParams{Limit: 2})))
			if len(errs) != 0 {
				t.Fatalf("got %d errors (first: %v), want none", len(errs), firstErr(errs))
			}
			if diff := cmp.Diff(tt.wantRows, rows); diff != "" {
				t.Errorf("rows mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantQueries, stub.Queries()); diff != "" {
				t.Errorf("queries mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// A full page with hasMore false is the last one: the pager trusts hasMore
// rather than guessing from the row count.
func TestAllViewsHasMoreFalseEndsIteration(t *testing.T) {
	c, mt := newTestClient(t)
	full := viewRows("full", 3)
	stub := serveInOrder(t, mt, replyJSON(http.StatusOK, viewsPageJSON(t, full, false)))

	rows, errs := splitPairs(t, collectPairs(t, c.Analytics.AllViews(t.Context(), "", ViewsParams{Limit: 3})))
	if len(errs) != 0 {
		t.Fatalf("got %d errors (first: %v), want none", len(errs), firstErr(errs))
	}
	if diff := cmp.Diff(full, rows); diff != "" {
		t.Errorf("rows mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"limit=3"}, stub.Queries()); diff != "" {
		t.Errorf("queries mismatch (-want +got):\n%s", diff)
	}
}

func TestAllViewsYieldsValidationErrorOnceWithoutRequest(t *testing.T) {
	tests := []struct {
		name      string
		noProject bool
		params    ViewsParams
		wantParam string
	}{
		{name: "negative limit", params: ViewsParams{Limit: -1}, wantParam: "limit"},
		{name: "limit above 250", params: ViewsParams{Limit: 251}, wantParam: "limit"},
		{name: "negative offset", params: ViewsParams{Offset: -1}, wantParam: "offset"},
		{name: "dates reversed", params: ViewsParams{DateFrom: Day(2026, time.March, 1), DateTo: Day(2026, time.February, 1)}, wantParam: "dateFrom"},
		{name: "no project", noProject: true, wantParam: "projectID"},
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

			seq := c.Analytics.AllViews(t.Context(), "", tt.params)
			// Twice: the error must come back on every range, not only the first.
			for round := 1; round <= 2; round++ {
				pairs := collectPairs(t, seq)
				if len(pairs) != 1 {
					t.Fatalf("round %d: %d pairs %+v, want exactly one error", round, len(pairs), pairs)
				}
				if pairs[0].Item != (PageView{}) {
					t.Errorf("round %d: row = %+v, want zero", round, pairs[0].Item)
				}
				var vErr *ValidationError
				if !errors.As(pairs[0].Err, &vErr) || vErr.Param != tt.wantParam {
					t.Errorf("round %d: error = %v, want a *ValidationError for %q", round, pairs[0].Err, tt.wantParam)
				}
			}
			if n := len(stub.Requests()); n != 0 {
				t.Errorf("sent %d requests, want 0", n)
			}
		})
	}
}

func TestAllViewsContextCanceledMidIterationYieldsOneError(t *testing.T) {
	c, mt := newTestClient(t)
	stub := serveInOrder(t, mt, replyFixture(t, http.StatusOK, "views_page1.json"), replyFixture(t, http.StatusOK, "views_page2.json"))

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var pairs []pair[PageView]
	for v, err := range c.Analytics.AllViews(ctx, "", ViewsParams{Limit: 2}) {
		pairs = append(pairs, pair[PageView]{v, err})
		if len(pairs) == len(fixtureRowsPage1) {
			cancel() // page 1 is used up; the next step needs a request
		}
		if len(pairs) == rangeBound {
			t.Errorf("iterator still yielding after %d pairs", rangeBound)
			break
		}
	}
	rows, errs := splitPairs(t, pairs)
	if diff := cmp.Diff(fixtureRowsPage1, rows); diff != "" {
		t.Errorf("rows mismatch (-want +got):\n%s", diff)
	}
	if len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Fatalf("got %d errors (first: %v), want exactly one matching context.Canceled", len(errs), firstErr(errs))
	}
	if n := len(stub.Requests()); n != 1 {
		t.Errorf("server saw %d requests, want 1", n)
	}
}

// ignoreCancelTransport hands requests on with a context that is never
// cancelled, as some instrumentation or test transports do; the iterator must
// then notice the cancellation itself.
type ignoreCancelTransport struct{ next http.RoundTripper }

func (tr ignoreCancelTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return tr.next.RoundTrip(req.WithContext(context.WithoutCancel(req.Context())))
}

func TestAllViewsContextCanceledStopsEvenIfTransportIgnoresIt(t *testing.T) {
	mt := httpmock.NewMockTransport()
	c, err := NewClient(testKey, WithHTTPClient(&http.Client{Transport: ignoreCancelTransport{mt}}),
		WithBaseURL(testBaseURL), WithProjectID("proj"))
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	stub := serveInOrder(t, mt, replyFixture(t, http.StatusOK, "views_page1.json"), replyFixture(t, http.StatusOK, "views_page2.json"))

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var pairs []pair[PageView]
	for v, err := range c.Analytics.AllViews(ctx, "", ViewsParams{Limit: 2}) {
		pairs = append(pairs, pair[PageView]{v, err})
		if len(pairs) == len(fixtureRowsPage1) {
			cancel()
		}
		if len(pairs) == rangeBound {
			t.Errorf("iterator still yielding after %d pairs", rangeBound)
			break
		}
	}
	rows, errs := splitPairs(t, pairs)
	if diff := cmp.Diff(fixtureRowsPage1, rows); diff != "" {
		t.Errorf("rows mismatch (-want +got):\n%s", diff)
	}
	if len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Errorf("got %d errors (first: %v), want exactly one matching context.Canceled", len(errs), firstErr(errs))
	}
	if n := len(stub.Requests()); n != 1 {
		t.Errorf("server saw %d requests, want 1 (none after the cancel)", n)
	}
}

func TestCollectGathersAllRows(t *testing.T) {
	c, mt := newTestClient(t)
	serveInOrder(t, mt, replyFixture(t, http.StatusOK, "views_page1.json"), replyFixture(t, http.StatusOK, "views_page2.json"))

	rows, err := Collect(c.Analytics.AllViews(t.Context(), "", ViewsParams{Limit: 2}))
	if err != nil {
		t.Fatalf("Collect: %v", err)
	}
	if diff := cmp.Diff(fixtureRowsAll, rows); diff != "" {
		t.Errorf("rows mismatch (-want +got):\n%s", diff)
	}
}

func TestCollectReturnsRowsSoFarWithError(t *testing.T) {
	c, mt := newTestClient(t)
	stub := serveInOrder(t, mt,
		replyFixture(t, http.StatusOK, "views_page1.json"),
		replyJSON(http.StatusNotFound, `{"error":"Project not found"}`),
	)

	rows, err := Collect(c.Analytics.AllViews(t.Context(), "", ViewsParams{Limit: 2}))
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("error = %v, want one matching ErrNotFound", err)
	}
	if diff := cmp.Diff(fixtureRowsPage1, rows); diff != "" {
		t.Errorf("rows mismatch (-want +got):\n%s", diff)
	}
	if n := len(stub.Requests()); n != 2 {
		t.Errorf("sent %d requests, want 2", n)
	}
}

func TestCollectOfValidationErrorReturnsNoRows(t *testing.T) {
	c, mt := newTestClient(t)
	stub := serveInOrder(t, mt)

	rows, err := Collect(c.Analytics.AllViews(t.Context(), "", ViewsParams{Limit: 300}))
	if rows != nil {
		t.Errorf("rows = %+v, want nil", rows)
	}
	var vErr *ValidationError
	if !errors.As(err, &vErr) || vErr.Param != "limit" {
		t.Errorf("error = %v, want a *ValidationError for limit", err)
	}
	if n := len(stub.Requests()); n != 0 {
		t.Errorf("sent %d requests, want 0", n)
	}
}

// Collect is generic and pure, so its contract is checked on synthetic
// sequences: which items it keeps, and that it stops pulling at the error.
func TestCollect(t *testing.T) {
	boom := errors.New("boom")
	type step struct {
		item int
		err  error
	}
	tests := []struct {
		name      string
		steps     []step
		want      []int
		wantErr   error
		wantPulls int // how many steps the sequence got to yield
	}{
		{name: "empty", steps: nil, want: nil, wantPulls: 0},
		{name: "all items", steps: []step{{1, nil}, {2, nil}, {3, nil}}, want: []int{1, 2, 3}, wantPulls: 3},
		{name: "error first", steps: []step{{0, boom}, {9, nil}}, want: nil, wantErr: boom, wantPulls: 1},
		{name: "error after items stops pulling", steps: []step{{1, nil}, {2, nil}, {0, boom}, {9, nil}}, want: []int{1, 2}, wantErr: boom, wantPulls: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pulls := 0
			seq := func(yield func(int, error) bool) {
				for _, s := range tt.steps {
					pulls++
					if !yield(s.item, s.err) {
						return
					}
				}
			}
			got, err := Collect(seq)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Errorf("error = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("items mismatch (-want +got):\n%s", diff)
			}
			if pulls != tt.wantPulls {
				t.Errorf("sequence yielded %d times, want %d", pulls, tt.wantPulls)
			}
		})
	}
}
