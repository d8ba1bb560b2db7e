package docsapi

import (
	"context"
	"errors"
	"net/http"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jarcoal/httpmock"
)

// The delay after a poll: pollInterval's, lengthened (never shortened) by
// the Retry-After of a failed poll; only an *APIError carries one.
func TestNextPollDelay(t *testing.T) {
	sched := pollSchedule{minInterval: time.Second, maxInterval: 8 * time.Second, timeout: time.Minute}
	limited := &APIError{StatusCode: http.StatusTooManyRequests, RetryAfter: 20 * time.Second}
	short := &APIError{StatusCode: http.StatusServiceUnavailable, RetryAfter: time.Second}
	for _, tt := range []struct {
		name   string
		n      int
		jitter float64
		err    error
		want   time.Duration
	}{
		{"first poll", 1, 0, nil, time.Second},
		{"third poll", 3, 0, nil, 4 * time.Second},
		{"jitter", 2, 0.5, nil, 3 * time.Second},
		{"capped", 40, 0.999, nil, 7996 * time.Millisecond},
		{"Retry-After longer", 2, 0, limited, 20 * time.Second},
		{"Retry-After past the cap", 40, 0, limited, 20 * time.Second},
		{"Retry-After shorter", 3, 0, short, 4 * time.Second},
		{"wrapped APIError", 1, 0, &attemptsError{attempts: 2, err: limited}, 20 * time.Second},
		{"APIError without Retry-After", 2, 0, &APIError{StatusCode: 503}, 2 * time.Second},
		{"network error", 2, 0, syscall.ECONNRESET, 2 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := nextPollDelay(tt.n, sched, tt.jitter, tt.err); got != tt.want {
				t.Errorf("nextPollDelay(%d, %v, %v) = %s, want %s", tt.n, tt.jitter, tt.err, got, tt.want)
			}
		})
	}
}

func TestPollScheduleDefaults(t *testing.T) {
	const s = time.Second
	for _, tt := range []struct {
		name      string
		in, want  pollSchedule
		wantValid bool
	}{
		{"zero", pollSchedule{}, pollSchedule{2 * s, 30 * s, 30 * time.Minute}, true},
		{"max below the default min pulls min down", pollSchedule{maxInterval: s / 2}, pollSchedule{s / 2, s / 2, 30 * time.Minute}, true},
		{"min above the default max pulls max up", pollSchedule{minInterval: 40 * s}, pollSchedule{40 * s, 40 * s, 30 * time.Minute}, true},
		{"all given", pollSchedule{s, 8 * s, time.Hour}, pollSchedule{s, 8 * s, time.Hour}, true},
		{"min above an explicit max", pollSchedule{minInterval: 5 * s, maxInterval: 2 * s}, pollSchedule{5 * s, 2 * s, 30 * time.Minute}, false},
		{"negative timeout", pollSchedule{timeout: -s}, pollSchedule{2 * s, 30 * s, -s}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.in.withDefaults(); got != tt.want {
				t.Errorf("withDefaults() = %+v, want %+v", got, tt.want)
			}
			if err := tt.in.validate(); (err == nil) != tt.wantValid {
				t.Errorf("validate() = %v, want valid %v", err, tt.wantValid)
			}
		})
	}
}

// waiterCase is one of the new waiters, driven the same way: its path, the
// bodies of a reading in each state, and the waiter run with fastWait's
// schedule.
type waiterCase struct {
	name, path                         string
	running, unknown, succeeded, fails string
	// wait runs the waiter with fastWait's intervals and timeout,
	// recording the state of every reading OnUpdate sees. It returns the
	// reading (nil or a pointer) and its state.
	wait func(ctx context.Context, c *Client, timeout time.Duration, seen *[]string) (got any, state string, err error)
	// failed returns the reading in a typed failure error.
	failed func(err error) (any, bool)
	// timedOut returns the reading, Waited and LastErr of a typed timeout.
	timedOut func(err error) (got any, waited time.Duration, lastErr error, ok bool)
}

func updateJSON(state string) string {
	return `{"_id":"` + statusID + `","projectId":"proj","status":"` + state + `","summary":"Build ` + state + `"}`
}

var waiterCases = []waiterCase{
	{
		name: "WaitUpdate", path: updateStatusPath,
		running: updateJSON("in_progress"), unknown: updateJSON("skipped"), succeeded: updateJSON("success"), fails: updateJSON("failure"),
		wait: func(ctx context.Context, c *Client, timeout time.Duration, seen *[]string) (any, string, error) {
			got, err := c.Deployments.WaitUpdate(ctx, statusID, UpdateWaitParams{
				MinInterval: fastWait.MinInterval, MaxInterval: fastWait.MaxInterval, Timeout: timeout,
				OnUpdate: func(u *UpdateStatus) { *seen = append(*seen, string(u.Status)) },
			})
			if got == nil {
				return nil, "", err
			}
			return got, string(got.Status), err
		},
		failed: func(err error) (any, bool) {
			var f *UpdateFailedError
			if !errors.As(err, &f) {
				return nil, false
			}
			return f.Status, true
		},
		timedOut: func(err error) (any, time.Duration, error, bool) {
			var te *UpdateWaitTimeoutError
			if !errors.As(err, &te) {
				return nil, 0, nil, false
			}
			if te.Status == nil {
				return nil, te.Waited, te.LastErr, true
			}
			return te.Status, te.Waited, te.LastErr, true
		},
	},
	{
		name: "StaticExports.Wait", path: exportJobPath,
		running: exportJobJSON("running"), unknown: exportJobJSON("paused"), succeeded: exportJobJSON("completed"),
		fails: `{"jobId":"` + exportJobID + `","status":"failed","progress":12,"pageCount":3,"error":"render failed"}`,
		wait: func(ctx context.Context, c *Client, timeout time.Duration, seen *[]string) (any, string, error) {
			got, err := c.StaticExports.Wait(ctx, exportJobID, StaticExportWaitParams{
				MinInterval: fastWait.MinInterval, MaxInterval: fastWait.MaxInterval, Timeout: timeout,
				OnUpdate: func(j *StaticExportJob) { *seen = append(*seen, string(j.Status)) },
			})
			if got == nil {
				return nil, "", err
			}
			return got, string(got.Status), err
		},
		failed: func(err error) (any, bool) {
			var f *StaticExportFailedError
			if !errors.As(err, &f) {
				return nil, false
			}
			return f.Job, true
		},
		timedOut: func(err error) (any, time.Duration, error, bool) {
			var te *StaticExportWaitTimeoutError
			if !errors.As(err, &te) {
				return nil, 0, nil, false
			}
			if te.Job == nil {
				return nil, te.Waited, te.LastErr, true
			}
			return te.Job, te.Waited, te.LastErr, true
		},
	},
}

// forEachWaiter runs test for every waiter, inside a synctest bubble.
func forEachWaiter(t *testing.T, test func(t *testing.T, w waiterCase)) {
	for _, w := range waiterCases {
		t.Run(w.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { test(t, w) })
		})
	}
}

func TestWaitersPollUntilSuccess(t *testing.T) {
	forEachWaiter(t, func(t *testing.T, w waiterCase) {
		c, mt := newTestClient(t)
		ok := replyJSON(http.StatusOK, w.running)
		log := serve(t, mt, on(http.MethodGet, w.path, ok, replyJSON(http.StatusOK, w.unknown), ok, replyJSON(http.StatusOK, w.succeeded)))
		var seen []string
		got, state, err := w.wait(t.Context(), c, 0, &seen)
		if err != nil || got == nil {
			t.Fatalf("wait = %v, %v; want the final reading", got, err)
		}
		// The unknown state counts as running; OnUpdate saw every reading.
		want := []string{stateOf(t, w.running), stateOf(t, w.unknown), stateOf(t, w.running), state}
		if diff := cmp.Diff(want, seen); diff != "" {
			t.Errorf("OnUpdate states (-want +got):\n%s", diff)
		}
		// The schedule is AgentJobs.Wait's: at once, then pollInterval's.
		if diff := cmp.Diff(durations(0, 1*time.Second, 3*time.Second, 7*time.Second), log.Times()); diff != "" {
			t.Errorf("poll times (-want +got):\n%s", diff)
		}
		for _, r := range log.Requests() {
			wantStandardHeaders(t, r, false)
		}
	})
}

func stateOf(t *testing.T, body string) string {
	t.Helper()
	return jsonValue(t, []byte(body)).(map[string]any)["status"].(string)
}

func TestWaitersReturnTheFailureTyped(t *testing.T) {
	forEachWaiter(t, func(t *testing.T, w waiterCase) {
		c, mt := newTestClient(t)
		log := serve(t, mt, on(http.MethodGet, w.path, replyJSON(http.StatusOK, w.running), replyJSON(http.StatusOK, w.fails)))
		var seen []string
		got, _, err := w.wait(t.Context(), c, 0, &seen)
		in, ok := w.failed(err)
		if !ok || got == nil || in != got {
			t.Fatalf("wait = %v, %v; want the failed reading, and the same in the typed error", got, err)
		}
		if n := len(log.Requests()); n != 2 || len(seen) != 2 {
			t.Errorf("%d polls, %d readings seen; want 2 and 2", n, len(seen))
		}
	})
}

func TestWaitersTimeOutWithTheLastReading(t *testing.T) {
	forEachWaiter(t, func(t *testing.T, w waiterCase) {
		c, mt := newTestClient(t, WithMaxRetries(0))
		running := replyJSON(http.StatusOK, w.running)
		unavailable := replyJSON(http.StatusServiceUnavailable, `{"error":"Service unavailable"}`)
		log := serve(t, mt, on(http.MethodGet, w.path, running, running, running, unavailable))
		var seen []string
		got, _, err := w.wait(t.Context(), c, 10*time.Second, &seen)
		last, waited, lastErr, ok := w.timedOut(err)
		if !ok || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v (%T), want the typed timeout, unwrapping to DeadlineExceeded", err, err)
		}
		if got == nil || last != got || waited != 10*time.Second || !errors.Is(lastErr, ErrServer) {
			t.Errorf("timeout carries %v after %s, last poll %v; want the returned reading after 10s, and the 503", last, waited, lastErr)
		}
		if diff := cmp.Diff(durations(0, 1*time.Second, 3*time.Second, 7*time.Second), log.Times()); diff != "" {
			t.Errorf("poll times (-want +got):\n%s", diff)
		}
	})
}

func TestWaitersStopWhenCancelled(t *testing.T) {
	forEachWaiter(t, func(t *testing.T, w waiterCase) {
		c, mt := newTestClient(t)
		serve(t, mt, on(http.MethodGet, w.path, replyJSON(http.StatusOK, w.running)))
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		time.AfterFunc(5*time.Second, cancel)
		var seen []string
		got, _, err := w.wait(ctx, c, 0, &seen)
		last, waited, _, ok := w.timedOut(err)
		if !ok || !errors.Is(err, context.Canceled) || got == nil || last != got || waited != 5*time.Second {
			t.Errorf("wait = %v, %v; want the typed timeout for the cancel at 5s, with the last reading", got, err)
		}
		if len(seen) != 3 { // polls at 0, 1s and 3s
			t.Errorf("%d readings seen, want 3", len(seen))
		}
	})
}

func TestWaitersStopAtErrorsThatCannotHeal(t *testing.T) {
	forEachWaiter(t, func(t *testing.T, w waiterCase) {
		c, mt := newTestClient(t)
		log := serve(t, mt, on(http.MethodGet, w.path, replyJSON(http.StatusOK, w.running),
			replyJSON(http.StatusNotFound, `{"error":"No job exists with the provided ID."}`, "Retry-After", "1")))
		var seen []string
		got, _, err := w.wait(t.Context(), c, 0, &seen)
		if !errors.Is(err, ErrNotFound) || asAPIError(t, err).Message != "No job exists with the provided ID." {
			t.Errorf("err = %v, want the 404 with its message", err)
		}
		if _, _, _, timedOut := w.timedOut(err); timedOut || got == nil {
			t.Errorf("wait = %v, %v; want the reading before the 404 and the 404 itself", got, err)
		}
		if diff := cmp.Diff(durations(0, 1*time.Second), log.Times()); diff != "" {
			t.Errorf("poll times (-want +got):\n%s", diff)
		}
	})
}

func TestWaitersHonourRetryAfterAndPollThroughHealingErrors(t *testing.T) {
	forEachWaiter(t, func(t *testing.T, w waiterCase) {
		c, mt := newTestClient(t, WithMaxRetries(0))
		log := serve(t, mt, on(http.MethodGet, w.path,
			replyJSON(http.StatusOK, w.running),
			replyJSON(http.StatusTooManyRequests, `{"error":"Rate limit exceeded"}`, "Retry-After", "20"),
			httpmock.NewErrorResponder(syscall.ECONNRESET),
			replyJSON(http.StatusOK, w.succeeded)))
		var seen []string
		if _, _, err := w.wait(t.Context(), c, 0, &seen); err != nil {
			t.Fatal(err)
		}
		// 1s, then the 20s asked for instead of 2s, then 4s.
		if diff := cmp.Diff(durations(0, 1*time.Second, 21*time.Second, 25*time.Second), log.Times()); diff != "" {
			t.Errorf("poll times (-want +got):\n%s", diff)
		}
	})
}

func TestWaitersRefuseBadParamsBeforeSending(t *testing.T) {
	for _, tt := range []struct {
		name     string
		min, max time.Duration
		timeout  time.Duration
		param    string
	}{
		{"negative MinInterval", -time.Second, 0, 0, "MinInterval"},
		{"negative MaxInterval", 0, -time.Second, 0, "MaxInterval"},
		{"negative Timeout", 0, 0, -time.Second, "Timeout"},
		{"MinInterval above MaxInterval", 5 * time.Second, 2 * time.Second, 0, "MinInterval"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t)
				wantRejected(t, mt, errOf(c.Deployments.WaitUpdate(t.Context(), statusID,
					UpdateWaitParams{MinInterval: tt.min, MaxInterval: tt.max, Timeout: tt.timeout})), tt.param)
				wantRejected(t, mt, errOf(c.StaticExports.Wait(t.Context(), exportJobID,
					StaticExportWaitParams{MinInterval: tt.min, MaxInterval: tt.max, Timeout: tt.timeout})), tt.param)
			})
		})
	}
	c, mt := newTestClient(t)
	//lint:ignore SA1012 a nil context is what is tested
	wantRejected(t, mt, errOf(c.Deployments.WaitUpdate(nil, statusID, UpdateWaitParams{})), "ctx")
	//lint:ignore SA1012 a nil context is what is tested
	wantRejected(t, mt, errOf(c.StaticExports.Wait(nil, exportJobID, StaticExportWaitParams{})), "ctx")
}

// The typed errors' messages name what was waited for and why it ended.
func TestWaiterErrorMessages(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&UpdateFailedError{Status: &UpdateStatus{ID: "s1", Summary: "Build failed: broken link /a"}}, "docsapi: deployment s1 failed: Build failed: broken link /a"},
		{&UpdateFailedError{Status: &UpdateStatus{ID: "s1"}}, "docsapi: deployment s1 failed"},
		{&StaticExportFailedError{Job: &StaticExportJob{ID: "se1", Error: "render failed"}}, "docsapi: static export se1 failed: render failed"},
		{&StaticExportFailedError{Job: &StaticExportJob{ID: "se1"}}, "docsapi: static export se1 failed"},
		{&UpdateWaitTimeoutError{Status: &UpdateStatus{ID: "s1", Status: "in_progress"}, Waited: 10 * time.Second, cause: context.DeadlineExceeded},
			"docsapi: stopped waiting for deployment s1 (last status in_progress) after 10s: context deadline exceeded"},
		{&UpdateWaitTimeoutError{Waited: time.Second, cause: context.Canceled, LastErr: errors.New("boom")},
			"docsapi: stopped waiting for deployment after 1s: context canceled; last poll: boom"},
		{&StaticExportWaitTimeoutError{Job: &StaticExportJob{ID: "se1", Status: "running"}, Waited: 2 * time.Second, cause: context.DeadlineExceeded},
			"docsapi: stopped waiting for static export se1 (last status running) after 2s: context deadline exceeded"},
		{&StaticExportWaitTimeoutError{Waited: time.Second, cause: context.Canceled},
			"docsapi: stopped waiting for static export after 1s: context canceled"},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}
