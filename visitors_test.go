package docsapi

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
)

// AllVisitors is the offset pager of AllViews over another export; these
// tests check the wiring, the pager's own promises are tested with views.

var allVisitorsRows = []PageVisitors{
	{Path: "/quickstart", Human: 7, AI: 5, Total: 10},
	{Path: "/api-reference/auth", Human: 5, AI: 4, Total: 9},
	{Path: "/guides/llms-txt", Human: 0, AI: 2, Total: 0},
}

func TestAllVisitorsWalksPagesWithOffsetPlusLimit(t *testing.T) {
	tests := []struct {
		prefetch int
		must     []string // sorted
		may      []string // may also be asked for, then cancelled
	}{
		{1, []string{"limit=2&offset=4", "limit=2&offset=6"}, nil},
		// Visitors' totals are de-duplicated, so they prove no page: each
		// is asked for once the page before says more follow, and none
		// past the last.
		{3, []string{"limit=2&offset=4", "limit=2&offset=6"}, nil},
	}
	for _, tt := range tests {
		prefetch := tt.prefetch
		t.Run(fmt.Sprint("prefetch ", prefetch), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t)
				// Pages in flight at once arrive in any order: answer by offset.
				rec := newRecorder()
				mt.RegisterNoResponder(rec.wrap(func(req *http.Request) (*http.Response, error) {
					name := "visitors_page2.json"
					if req.URL.Query().Get("offset") == "4" {
						name = "visitors_page1.json"
					}
					return replyFixture(t, http.StatusOK, name)(req)
				}))
				rows, err := Collect(c.Analytics.AllVisitors(t.Context(), "", VisitorsParams{Limit: 2, Offset: 4}, WithPrefetch(prefetch)))
				if err != nil {
					t.Fatalf("Collect: %v", err)
				}
				if diff := cmp.Diff(allVisitorsRows, rows); diff != "" {
					t.Errorf("rows mismatch (-want +got):\n%s", diff)
				}
				synctest.Wait()
				queries := rec.Queries()
				for _, q := range tt.must {
					if !slices.Contains(queries, q) {
						t.Errorf("query %s not sent (sent %q)", q, queries)
					}
				}
				for _, q := range queries {
					if !slices.Contains(tt.must, q) && !slices.Contains(tt.may, q) {
						t.Errorf("query %s sent, want only %q and maybe %q", q, tt.must, tt.may)
					}
				}
				if len(slices.Compact(slices.Sorted(slices.Values(queries)))) != len(queries) {
					t.Errorf("a query was sent twice: %q", queries)
				}
			})
		})
	}
}

func TestAllVisitorsErrorOnSecondPageYieldsOnce(t *testing.T) {
	c, mt := newTestClient(t)
	serveInOrder(t, mt, replyFixture(t, http.StatusOK, "visitors_page1.json"), replyJSON(http.StatusNotFound, `{"error":"Project not found"}`))
	rows, err := Collect(c.Analytics.AllVisitors(t.Context(), "", VisitorsParams{Limit: 2}))
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("error = %v, want ErrNotFound", err)
	}
	if diff := cmp.Diff(allVisitorsRows[:2], rows); diff != "" {
		t.Errorf("rows mismatch (-want +got):\n%s", diff)
	}
}
