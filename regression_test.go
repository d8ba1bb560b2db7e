package docsapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The regression tests of the faults an outside test found. Each failed on
// the code before its fix; the failure is quoted above each test.

// Before: the call slept until the context's deadline (10 s here) and came
// back as "context deadline exceeded; last attempt: 429", although the
// server had said at once that no retry could succeed in time.
func TestRegressionRetryAfterPastTheDeadlineReturnsTheAnswerAtOnce(t *testing.T) {
	tests := []struct {
		name       string
		retryAfter string
		timeout    time.Duration
		want       time.Duration
	}{
		{"Retry-After longer than the time left", "30", 10 * time.Second, 30 * time.Second},
		{"Retry-After equal to the time left", "10", 10 * time.Second, 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t, WithMaxRetryAfter(time.Minute))
				mt.RegisterResponder(http.MethodGet, jobURLJ1, replyJSON(http.StatusTooManyRequests, `{"error":"rate limit exceeded"}`).
					HeaderSet(http.Header{"Retry-After": {tt.retryAfter}}))
				ctx, cancel := context.WithTimeout(context.Background(), tt.timeout)
				defer cancel()
				start := time.Now()
				_, err := c.AgentJobs.Get(ctx, "", "j1")
				if d := time.Since(start); d != 0 {
					t.Errorf("call took %v, want it to return at once", d)
				}
				if n := callCount(mt, http.MethodGet, jobURLJ1); n != 1 {
					t.Errorf("attempts = %d, want 1", n)
				}
				var apiErr *APIError
				if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusTooManyRequests || apiErr.RetryAfter != tt.want {
					t.Fatalf("err = %v, want the 429 *APIError with RetryAfter %v", err, tt.want)
				}
				if errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("err = %v matches context.DeadlineExceeded: the context had not ended", err)
				}
			})
		})
	}
}

// A Retry-After that fits in the time left is still slept and retried.
func TestRetryAfterWithinTheDeadlineIsStillHonoured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t, WithMaxRetryAfter(time.Minute))
		rec, r := record(inTurn(replyJSON(http.StatusTooManyRequests, `{"error":"slow down"}`).
			HeaderSet(http.Header{"Retry-After": {"5"}}), replyJSON(200, jobJSONJ1)))
		mt.RegisterResponder(http.MethodGet, jobURLJ1, r)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := c.AgentJobs.Get(ctx, "", "j1"); err != nil {
			t.Fatalf("Get: %v", err)
		}
		if diff := cmp.Diff([]time.Duration{0, 5 * time.Second}, rec.Times()); diff != "" {
			t.Errorf("attempt times (-want +got):\n%s", diff)
		}
	})
}

// Before: 9007199254740993.0 went through a float64 and came back as
// 9007199254740992, without an error; 1e30 was refused as "not a whole
// number".
func TestRegressionCountsAreExactOrRefused(t *testing.T) {
	exact := []struct {
		spelling string
		want     int64
	}{
		{"9007199254740993.0", 9007199254740993}, // 2^53 + 1, the first integer a float64 rounds
		{"9007199254740993", 9007199254740993},
		{"9.007199254740993e15", 9007199254740993},
		{"90071992547409930e-1", 9007199254740993},
		{"9223372036854775807.000", 9223372036854775807},
		{"9.223372036854775807E18", 9223372036854775807},
	}
	for _, tt := range exact {
		t.Run(tt.spelling, func(t *testing.T) {
			body := `{"totals":{"human":` + tt.spelling + `,"ai":0,"total":` + tt.spelling + `},"views":[],"hasMore":false}`
			var page ViewsPage
			if err := json.Unmarshal([]byte(body), &page); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if page.Totals.Human != tt.want || page.Totals.Total != tt.want {
				t.Errorf("decoded %d and %d, want exactly %d", page.Totals.Human, page.Totals.Total, tt.want)
			}
		})
	}
	refused := []struct {
		spelling, want string
	}{
		{"1e30", "1e30 is out of range"},
		{"9223372036854775808.0", "9223372036854775808.0 is out of range"},
		{"9007199254740993.5", "9007199254740993.5 is not a whole number"},
	}
	for _, tt := range refused {
		t.Run(tt.spelling, func(t *testing.T) {
			var page ViewsPage
			err := json.Unmarshal([]byte(`{"totals":{"human":`+tt.spelling+`},"views":[],"hasMore":false}`), &page)
			if err == nil || !strings.HasSuffix(err.Error(), tt.want) {
				t.Errorf("error = %v, want one ending %q", err, tt.want)
			}
		})
	}
}

// Before: every debug line carried request_id, as "" when the server sent
// no request id header, which the hosted service never does.
func TestRegressionDebugLogLeavesOutAMissingRequestID(t *testing.T) {
	logger, sink := captureLogs()
	c, mt := newTestClient(t, WithLogger(logger))
	mt.RegisterResponder(http.MethodGet, viewsURL, replyJSON(200, viewsJSON))
	if _, err := c.Analytics.Views(context.Background(), "", ViewsParams{}); err != nil {
		t.Fatalf("Views: %v", err)
	}
	want := []logRecord{{Level: slog.LevelDebug, Msg: "docsapi: request", Attrs: map[string]any{
		"method": "GET", "path": viewsPath, "status": int64(200), "attempt": int64(1),
		"duration": time.Duration(0), "error": "",
	}}}
	got := sink.all()
	// The duration is real time here; only its presence matters.
	for _, r := range got {
		if _, ok := r.Attrs["duration"]; ok {
			r.Attrs["duration"] = time.Duration(0)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("log records (-want +got):\n%s", diff)
	}
}
