package docsapi

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jarcoal/httpmock"
)

// followCursor is the one rule of both cursor styles; each row is a page.
func TestFollowCursor(t *testing.T) {
	tests := []struct {
		name       string
		style      cursorStyle
		next       string
		hasMore    bool
		wantCursor string
		wantMore   bool
		wantErr    string
	}{
		{"searches: a cursor asks for more", untilNull, "c2", false, "c2", true, ""},
		{"searches: null ends", untilNull, "", false, "", false, ""},
		{"searches: hasMore is not theirs", untilNull, "", true, "", false, ""},
		{"hasMore with a cursor asks for more", whileHasMore, "c2", true, "c2", true, ""},
		{"hasMore false ends, whatever the cursor", whileHasMore, "c2", false, "", false, ""},
		{"hasMore false and null ends", whileHasMore, "", false, "", false, ""},
		{"hasMore without a cursor is an error", whileHasMore, "", true, "", false, "hasMore is true but nextCursor is null or empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cursor, more, err := followCursor(tt.style, tt.next, tt.hasMore)
			if cursor != tt.wantCursor || more != tt.wantMore {
				t.Errorf("followCursor = %q, %v; want %q, %v", cursor, more, tt.wantCursor, tt.wantMore)
			}
			if (err == nil) != (tt.wantErr == "") || (err != nil && err.Error() != tt.wantErr) {
				t.Errorf("error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// cursorExport is one cursor iterator under test, seen through the IDs of its
// items, with a way to write its pages.
type cursorExport struct {
	name  string
	path  string
	limit int // the iterator's default page size
	style cursorStyle
	// page writes a body holding items with these IDs; next "" is null.
	// hasMore is left out by the searches export, which has none.
	page func(ids []string, next string, hasMore bool) []byte
	// all ranges the iterator from cursor and yields item IDs.
	all func(c *Client, ctx context.Context, cursor string, opts ...RequestOption) iter.Seq2[string, error]
}

func jsonOrNull(s string) string {
	if s == "" {
		return "null"
	}
	return fmt.Sprintf("%q", s)
}

func jsonArray(ids []string, item func(id string) string) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = item(id)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// idsOf turns an iterator of items into one of their IDs.
func idsOf[T any](seq iter.Seq2[T, error], id func(T) string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for item, err := range seq {
			if err != nil {
				var zero T
				if !cmp.Equal(item, zero) {
					panic(fmt.Sprintf("error %v came with item %+v", err, item))
				}
				if !yield("", err) {
					return
				}
				continue // anything the pager yields after an error reaches drain, which fails on it
			}
			if !yield(id(item), nil) {
				return
			}
		}
	}
}

var cursorExports = []cursorExport{
	{
		name: "AllSearches", path: "/v1/analytics/proj/searches", limit: 100, style: untilNull,
		page: func(ids []string, next string, _ bool) []byte {
			items := jsonArray(ids, func(id string) string {
				return `{"searchQuery":"` + id + `","hits":1,"ctr":0.5,"topClickedPage":null,"lastSearchedAt":"2026-01-01T00:00:00Z"}`
			})
			return []byte(`{"searches":` + items + `,"totalSearches":99,"nextCursor":` + jsonOrNull(next) + `}`)
		},
		all: func(c *Client, ctx context.Context, cursor string, opts ...RequestOption) iter.Seq2[string, error] {
			return idsOf(c.Analytics.AllSearches(ctx, "", SearchesParams{Cursor: cursor}, opts...), func(s Search) string { return s.Query })
		},
	},
	{
		name: "AllFeedback", path: "/v1/analytics/proj/feedback", limit: 100, style: whileHasMore,
		page: func(ids []string, next string, hasMore bool) []byte {
			items := jsonArray(ids, func(id string) string {
				return `{"id":"` + id + `","path":"/a","comment":null,"createdAt":null,"source":"agent","status":"pending"}`
			})
			return fmt.Appendf(nil, `{"feedback":%s,"nextCursor":%s,"hasMore":%v}`, items, jsonOrNull(next), hasMore)
		},
		all: func(c *Client, ctx context.Context, cursor string, opts ...RequestOption) iter.Seq2[string, error] {
			return idsOf(c.Analytics.AllFeedback(ctx, "", FeedbackParams{Cursor: cursor}, opts...), func(e FeedbackEntry) string { return e.ID })
		},
	},
	{
		name: "AllAssistantConversations", path: "/v1/analytics/proj/assistant", limit: 1000, style: whileHasMore,
		page: func(ids []string, next string, hasMore bool) []byte {
			items := jsonArray(ids, func(id string) string {
				return `{"id":"` + id + `","timestamp":"2026-01-01T00:00:00Z","query":"q","response":"r","sources":[],"resolutionStatus":"answered","queryCategory":null,"pageUrl":null}`
			})
			return fmt.Appendf(nil, `{"conversations":%s,"nextCursor":%s,"hasMore":%v}`, items, jsonOrNull(next), hasMore)
		},
		all: func(c *Client, ctx context.Context, cursor string, opts ...RequestOption) iter.Seq2[string, error] {
			return idsOf(c.Analytics.AllAssistantConversations(ctx, "", AssistantConversationsParams{Cursor: cursor}, opts...),
				func(a AssistantConversation) string { return a.ID })
		},
	},
}

// cursorPage is one page as a test describes it. more is what the page says
// about a next one: for searches a cursor alone, for the others hasMore.
type cursorPage struct {
	ids  []string
	next string
	more bool
}

func (e cursorExport) reply(p cursorPage) httpmock.Responder {
	return replyJSON(http.StatusOK, string(e.page(p.ids, p.next, p.more)))
}

// query is what the iterator sends for cursor.
func (e cursorExport) query(cursor string) string {
	if cursor == "" {
		return fmt.Sprintf("limit=%d", e.limit)
	}
	return fmt.Sprintf("cursor=%s&limit=%d", cursor, e.limit)
}

// forEachCursorExport runs body for every cursor iterator, in a synctest
// bubble: retries sleep, and must do so on the bubble's clock.
func forEachCursorExport(t *testing.T, body func(t *testing.T, e cursorExport)) {
	for _, e := range cursorExports {
		t.Run(e.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { body(t, e) })
		})
	}
}

func TestCursorIteratorsFollowEveryPage(t *testing.T) {
	forEachCursorExport(t, func(t *testing.T, e cursorExport) {
		c, mt := newTestClient(t)
		stub := serveInOrder(t, mt,
			e.reply(cursorPage{[]string{"a1", "a2"}, "c2", true}),
			e.reply(cursorPage{[]string{"b1"}, "c3", true}),
			e.reply(cursorPage{[]string{"c1", "c2"}, "", false}),
		)
		ids, errs := drain(t, e.all(c, t.Context(), ""))
		if len(errs) != 0 {
			t.Fatalf("errors: %v", errs)
		}
		if diff := cmp.Diff([]string{"a1", "a2", "b1", "c1", "c2"}, ids); diff != "" {
			t.Errorf("items mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{e.query(""), e.query("c2"), e.query("c3")}, stub.Queries()); diff != "" {
			t.Errorf("queries mismatch (-want +got):\n%s", diff)
		}
		for _, call := range stub.Requests() {
			if call.Path != e.path {
				t.Errorf("path %s, want %s", call.Path, e.path)
			}
		}
	})
}

func TestCursorIteratorsSendNothingUntilRangedAndRestartEachRange(t *testing.T) {
	forEachCursorExport(t, func(t *testing.T, e cursorExport) {
		c, mt := newTestClient(t)
		p1, p2 := e.reply(cursorPage{[]string{"x"}, "c2", true}), e.reply(cursorPage{[]string{"y"}, "", false})
		stub := serveInOrder(t, mt, p1, p2, p1, p2)
		seq := e.all(c, t.Context(), "start")
		if n := len(stub.Requests()); n != 0 {
			t.Fatalf("building the iterator sent %d requests", n)
		}
		first, errs1 := drain(t, seq)
		second, errs2 := drain(t, seq)
		if len(errs1)+len(errs2) != 0 {
			t.Fatalf("errors: %v %v", errs1, errs2)
		}
		if diff := cmp.Diff([]string{"x", "y"}, first); diff != "" {
			t.Errorf("first range (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(first, second); diff != "" {
			t.Errorf("second range differs (-first +second):\n%s", diff)
		}
		want := []string{e.query("start"), e.query("c2"), e.query("start"), e.query("c2")}
		if diff := cmp.Diff(want, stub.Queries()); diff != "" {
			t.Errorf("queries mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestCursorIteratorsBreakSendsNoFurtherRequest(t *testing.T) {
	for _, breakAfter := range []int{1, 2} { // inside the page, and at its end with more to come
		t.Run(fmt.Sprint("after ", breakAfter), func(t *testing.T) {
			forEachCursorExport(t, func(t *testing.T, e cursorExport) {
				c, mt := newTestClient(t)
				stub := serveInOrder(t, mt, e.reply(cursorPage{[]string{"a", "b"}, "c2", true}))
				var ids []string
				for id, err := range e.all(c, t.Context(), "") {
					if err != nil {
						t.Fatal(err)
					}
					if ids = append(ids, id); len(ids) == breakAfter {
						break
					}
				}
				synctest.Wait()
				if diff := cmp.Diff([]string{e.query("")}, stub.Queries()); diff != "" {
					t.Errorf("queries mismatch (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// Each failure is yielded once, after the items before it, and ends the
// loop: nothing is requested after it.
func TestCursorIteratorsYieldOneErrorThenStop(t *testing.T) {
	tests := []struct {
		name      string
		pages     func(e cursorExport) []httpmock.Responder
		wantIDs   []string
		wantErr   func(e cursorExport) string // the error's text, or a part of it
		wantCalls int
	}{
		{
			name: "an API error on the second page",
			pages: func(e cursorExport) []httpmock.Responder {
				return []httpmock.Responder{e.reply(cursorPage{[]string{"a"}, "c2", true}), replyJSON(http.StatusForbidden, `{"error":"no read scope"}`)}
			},
			wantIDs:   []string{"a"},
			wantErr:   func(e cursorExport) string { return "GET " + e.path + ": 403 Forbidden: no read scope" },
			wantCalls: 2,
		},
		{
			name: "a cursor repeated at once",
			pages: func(e cursorExport) []httpmock.Responder {
				return []httpmock.Responder{e.reply(cursorPage{[]string{"a"}, "c2", true}), e.reply(cursorPage{[]string{"b"}, "c2", true})}
			},
			wantIDs: []string{"a", "b"},
			wantErr: func(e cursorExport) string {
				return "docsapi: GET " + e.path + `: page 2: nextCursor "c2" was already used; stopping rather than asking for the same pages again`
			},
			wantCalls: 2,
		},
		{
			name: "a cycle of two cursors",
			pages: func(e cursorExport) []httpmock.Responder {
				return []httpmock.Responder{
					e.reply(cursorPage{[]string{"a"}, "c2", true}),
					e.reply(cursorPage{[]string{"b"}, "c3", true}),
					e.reply(cursorPage{[]string{"c"}, "c2", true}),
				}
			},
			wantIDs:   []string{"a", "b", "c"},
			wantErr:   func(e cursorExport) string { return `page 3: nextCursor "c2" was already used` },
			wantCalls: 3,
		},
		{
			name: "a 200 that is not a page",
			pages: func(e cursorExport) []httpmock.Responder {
				return []httpmock.Responder{e.reply(cursorPage{[]string{"a"}, "c2", true}), replyJSON(http.StatusOK, `{}`)}
			},
			wantIDs:   []string{"a"},
			wantErr:   func(e cursorExport) string { return "is missing or null" },
			wantCalls: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forEachCursorExport(t, func(t *testing.T, e cursorExport) {
				c, mt := newTestClient(t)
				stub := serveInOrder(t, mt, tt.pages(e)...)
				ids, errs := drain(t, e.all(c, t.Context(), ""))
				if diff := cmp.Diff(tt.wantIDs, ids); diff != "" {
					t.Errorf("items mismatch (-want +got):\n%s", diff)
				}
				if len(errs) != 1 || !strings.Contains(errs[0].Error(), tt.wantErr(e)) {
					t.Fatalf("errors = %v, want exactly one containing %q", errs, tt.wantErr(e))
				}
				if n := len(stub.Requests()); n != tt.wantCalls {
					t.Errorf("sent %d requests, want %d", n, tt.wantCalls)
				}
			})
		})
	}
}

// A page that says more follow but gives no cursor to ask with: asking with
// "" would restart at the first page. For searches, null is the last page.
func TestCursorIteratorsMoreWithoutACursor(t *testing.T) {
	forEachCursorExport(t, func(t *testing.T, e cursorExport) {
		c, mt := newTestClient(t)
		stub := serveInOrder(t, mt, e.reply(cursorPage{[]string{"a"}, "", true}))
		ids, errs := drain(t, e.all(c, t.Context(), ""))
		if diff := cmp.Diff([]string{"a"}, ids); diff != "" {
			t.Errorf("items mismatch (-want +got):\n%s", diff)
		}
		switch e.style {
		case untilNull:
			if len(errs) != 0 {
				t.Errorf("errors = %v, want none: null ends the searches export", errs)
			}
		default:
			want := "docsapi: GET " + e.path + ": page 1: hasMore is true but nextCursor is null or empty"
			if len(errs) != 1 || errs[0].Error() != want {
				t.Errorf("errors = %v, want exactly %q", errs, want)
			}
		}
		if n := len(stub.Requests()); n != 1 {
			t.Errorf("sent %d requests, want 1", n)
		}
	})
}

// hasMore false ends the feedback and assistant exports even when a cursor
// comes with it.
func TestCursorIteratorsTrustHasMore(t *testing.T) {
	forEachCursorExport(t, func(t *testing.T, e cursorExport) {
		if e.style == untilNull {
			t.Skip("the searches export has no hasMore")
		}
		c, mt := newTestClient(t)
		stub := serveInOrder(t, mt, e.reply(cursorPage{[]string{"a"}, "c2", false}))
		ids, errs := drain(t, e.all(c, t.Context(), ""))
		if len(errs) != 0 || !slices.Equal(ids, []string{"a"}) || len(stub.Requests()) != 1 {
			t.Errorf("items %v, errors %v, %d requests; want [a], none, 1", ids, errs, len(stub.Requests()))
		}
	})
}

// An empty page ends the loop whatever it says of more, as for views.
func TestCursorIteratorsEmptyPageEnds(t *testing.T) {
	forEachCursorExport(t, func(t *testing.T, e cursorExport) {
		c, mt := newTestClient(t)
		stub := serveInOrder(t, mt, e.reply(cursorPage{[]string{"a"}, "c2", true}), e.reply(cursorPage{nil, "c3", true}))
		ids, errs := drain(t, e.all(c, t.Context(), ""))
		if len(errs) != 0 || !slices.Equal(ids, []string{"a"}) {
			t.Errorf("items %v, errors %v; want [a] and none", ids, errs)
		}
		if diff := cmp.Diff([]string{e.query(""), e.query("c2")}, stub.Queries()); diff != "" {
			t.Errorf("queries mismatch (-want +got):\n%s", diff)
		}
	})
}

// The cursor the loop started from counts as used.
func TestCursorIteratorsStartCursorHandedBackIsAnError(t *testing.T) {
	forEachCursorExport(t, func(t *testing.T, e cursorExport) {
		c, mt := newTestClient(t)
		serveInOrder(t, mt, e.reply(cursorPage{[]string{"a"}, "start", true}))
		_, errs := drain(t, e.all(c, t.Context(), "start"))
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), `nextCursor "start" was already used`) {
			t.Errorf("errors = %v, want one about the repeated cursor", errs)
		}
	})
}

// A 5xx in the middle of a walk is retried after a backoff (on the bubble's
// clock) and the walk goes on where it was.
func TestCursorIteratorsRetryAPageAndGoOn(t *testing.T) {
	forEachCursorExport(t, func(t *testing.T, e cursorExport) {
		c, mt := newTestClient(t, WithRetryDelays(time.Second, time.Minute))
		unavailable := replyJSON(http.StatusServiceUnavailable, `{"error":"down"}`)
		stub := serveInOrder(t, mt, e.reply(cursorPage{[]string{"a"}, "c2", true}), unavailable, unavailable, e.reply(cursorPage{[]string{"b"}, "", false}))
		start := time.Now()
		ids, errs := drain(t, e.all(c, t.Context(), ""))
		if len(errs) != 0 || !slices.Equal(ids, []string{"a", "b"}) {
			t.Errorf("items %v, errors %v; want [a b] and none", ids, errs)
		}
		if d := time.Since(start); d != 1500*time.Millisecond {
			t.Errorf("took %v, want 1.5s (backoffs of 0.5s and 1s: equal jitter at 0)", d)
		}
		want := []string{e.query(""), e.query("c2"), e.query("c2"), e.query("c2")}
		if diff := cmp.Diff(want, stub.Queries()); diff != "" {
			t.Errorf("queries mismatch (-want +got):\n%s", diff)
		}
	})
}

// A context that ends while the loop consumes a page stops it before the
// next request, with one error matching the context's.
func TestCursorIteratorsContextEndingStopsTheWalk(t *testing.T) {
	forEachCursorExport(t, func(t *testing.T, e cursorExport) {
		c, mt := newTestClient(t)
		stub := serveInOrder(t, mt, e.reply(cursorPage{[]string{"a"}, "c2", true}))
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		var errs []error
		for _, err := range e.all(c, ctx, "") {
			if err != nil {
				errs = append(errs, err)
				continue
			}
			time.Sleep(2 * time.Minute) // a slow consumer outlives the deadline
		}
		if len(errs) != 1 || !errors.Is(errs[0], context.DeadlineExceeded) {
			t.Errorf("errors = %v, want one matching context.DeadlineExceeded", errs)
		}
		if n := len(stub.Requests()); n != 1 {
			t.Errorf("sent %d requests, want 1", n)
		}
	})
}

// The iterators copy their params: neither the loop nor a later change of
// the caller's Status slice shows on either side.
func TestAllFeedbackNeverChangesOrSharesParams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		e := cursorExports[1]
		stub := serveInOrder(t, mt, e.reply(cursorPage{[]string{"a"}, "c2", true}), e.reply(cursorPage{[]string{"b"}, "", false}))
		params := FeedbackParams{Source: FeedbackSourceContextual, Status: []FeedbackStatus{FeedbackStatusPending, FeedbackStatusResolved}}
		saved := params
		saved.Status = slices.Clone(params.Status)
		seq := c.Analytics.AllFeedback(t.Context(), "", params)
		params.Status[0] = "dismissed" // after the iterator was made
		for _, err := range seq {
			if err != nil {
				t.Fatal(err)
			}
		}
		want := []string{
			"limit=100&source=contextual&status=pending%2Cresolved",
			"cursor=c2&limit=100&source=contextual&status=pending%2Cresolved",
		}
		if diff := cmp.Diff(want, stub.Queries()); diff != "" {
			t.Errorf("queries mismatch (-want +got):\n%s", diff)
		}
		params.Status[0] = saved.Status[0]
		if diff := cmp.Diff(saved, params, cmp.AllowUnexported(DateBound{})); diff != "" {
			t.Errorf("params changed (-want +got):\n%s", diff)
		}
	})
}

func TestAllSearchesNeverChangesParams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		e := cursorExports[0]
		serveInOrder(t, mt, e.reply(cursorPage{[]string{"a"}, "c2", true}), e.reply(cursorPage{[]string{"b"}, "", false}))
		params := SearchesParams{DateFrom: janDay(1), Cursor: "start"}
		saved := params
		if _, err := Collect(c.Analytics.AllSearches(t.Context(), "", params)); err != nil {
			t.Fatal(err)
		}
		if params != saved {
			t.Errorf("params = %+v, want %+v", params, saved)
		}
	})
}

// WithPrefetch has nothing to request ahead on a cursor export: it is
// ignored, and the walk is the plain sequential one.
func TestCursorIteratorsIgnoreWithPrefetch(t *testing.T) {
	forEachCursorExport(t, func(t *testing.T, e cursorExport) {
		c, mt := newTestClient(t)
		stub := serveInOrder(t, mt, e.reply(cursorPage{[]string{"a"}, "c2", true}), e.reply(cursorPage{[]string{"b"}, "", false}))
		ids, errs := drain(t, e.all(c, t.Context(), "", WithPrefetch(4)))
		if len(errs) != 0 || !slices.Equal(ids, []string{"a", "b"}) || len(stub.Requests()) != 2 {
			t.Errorf("items %v, errors %v, %d requests; want [a b], none, 2", ids, errs, len(stub.Requests()))
		}
	})
}

// A validation error comes back on every range, with nothing sent.
func TestCursorIteratorsYieldValidationErrorOnEveryRange(t *testing.T) {
	c, mt := newTestClient(t)
	stub := serveInOrder(t, mt)
	seqs := map[string]iter.Seq2[string, error]{
		"AllSearches": idsOf(c.Analytics.AllSearches(t.Context(), "", SearchesParams{Limit: 101}), func(s Search) string { return s.Query }),
		"AllFeedback": idsOf(c.Analytics.AllFeedback(t.Context(), "", FeedbackParams{Limit: 101}), func(e FeedbackEntry) string { return e.ID }),
		"AllAssistantConversations": idsOf(c.Analytics.AllAssistantConversations(t.Context(), "", AssistantConversationsParams{Limit: 1001}),
			func(a AssistantConversation) string { return a.ID }),
	}
	for name, seq := range seqs {
		for round := 1; round <= 2; round++ {
			ids, errs := drain(t, seq)
			var vErr *ValidationError
			if len(ids) != 0 || len(errs) != 1 || !errors.As(errs[0], &vErr) || vErr.Param != "limit" {
				t.Errorf("%s round %d: items %v, errors %v; want one *ValidationError for limit", name, round, ids, errs)
			}
		}
	}
	if n := len(stub.Requests()); n != 0 {
		t.Errorf("sent %d requests, want 0", n)
	}
}

// The pager on its own, with a fetch that counts: the promises hold for
// any item type and any fetch.
func TestCursorPagerPureEdgeCases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type page struct {
			items []int
			next  string
			more  bool
			err   error
		}
		boom := errors.New("boom")
		pages := map[string]page{
			"":   {items: []int{1, 2}, next: "p2", more: true},
			"p2": {items: []int{3}, next: "p3", more: true},
			"p3": {err: boom},
		}
		var asked []string
		fetch := func(_ context.Context, cursor string) ([]int, string, bool, error) {
			asked = append(asked, cursor)
			p := pages[cursor]
			return p.items, p.next, p.more, p.err
		}
		var got []int
		var errs []error
		for n, err := range cursorPager(t.Context(), "GET /x", whileHasMore, "", fetch) {
			if err != nil {
				errs = append(errs, err)
				continue
			}
			got = append(got, n)
		}
		if !slices.Equal(got, []int{1, 2, 3}) || len(errs) != 1 || !errors.Is(errs[0], boom) {
			t.Errorf("items %v, errors %v; want [1 2 3] then boom", got, errs)
		}
		if !slices.Equal(asked, []string{"", "p2", "p3"}) {
			t.Errorf("asked %q", asked)
		}
	})
}
