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

const pollPath = "/v2/agent/proj/job/" + fixtureJobID

// fastWait are the WaitParams of most tests. With jitter 0, pollInterval(n,
// 1s, 8s, 0) is 1s, 2s, 4s, 4s, ...: the window starts at [1s, 2s) and
// doubles until it reaches [4s, 8s), and jitter 0 picks its lower end. So
// the polls happen at 0s, 1s, 3s, 7s, 11s, 15s, ...
var fastWait = WaitParams{MinInterval: 1 * time.Second, MaxInterval: 8 * time.Second}

func durations(ds ...time.Duration) []time.Duration { return ds }

func TestPollInterval(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		name     string
		n        int
		min, max time.Duration
		jitter   float64
		want     time.Duration
	}{
		{"jitter 0, first poll", 1, 1 * time.Second, 8 * time.Second, 0, 1 * time.Second},
		{"jitter 0, second poll", 2, 1 * time.Second, 8 * time.Second, 0, 2 * time.Second},
		{"jitter 0, third poll reaches the cap window", 3, 1 * time.Second, 8 * time.Second, 0, 4 * time.Second},
		{"jitter 0, capped", 4, 1 * time.Second, 8 * time.Second, 0, 4 * time.Second},
		{"jitter 0, many polls do not overflow", 1000, 1 * time.Second, 8 * time.Second, 0, 4 * time.Second},
		{"jitter 0.5, first poll", 1, 1 * time.Second, 8 * time.Second, 0.5, 1500 * ms},
		{"jitter 0.5, second poll", 2, 1 * time.Second, 8 * time.Second, 0.5, 3 * time.Second},
		{"jitter 0.5, capped", 5, 1 * time.Second, 8 * time.Second, 0.5, 6 * time.Second},
		{"jitter 0.999, first poll", 1, 1 * time.Second, 8 * time.Second, 0.999, 1999 * ms},
		{"jitter 0.999, second poll", 2, 1 * time.Second, 8 * time.Second, 0.999, 3998 * ms},
		{"jitter 0.999, capped just below max", 5, 1 * time.Second, 8 * time.Second, 0.999, 7996 * ms},
		{"jitter 1 is clamped below max", 5, 1 * time.Second, 8 * time.Second, 1, 8*time.Second - 1},
		{"negative jitter acts as 0", 1, 1 * time.Second, 8 * time.Second, -0.5, 1 * time.Second},
		// max < 2·min: the window is [max/2, max), and min is the floor.
		{"max < 2·min, jitter 0 raised to min", 1, 3 * time.Second, 5 * time.Second, 0, 3 * time.Second},
		{"max < 2·min, jitter 0.5", 1, 3 * time.Second, 5 * time.Second, 0.5, 3750 * ms},
		{"max < 2·min, jitter 0.999", 3, 3 * time.Second, 5 * time.Second, 0.999, 4997500 * time.Microsecond},
		{"max < 2·min, low jitter raised to min", 2, 3 * time.Second, 4 * time.Second, 0.25, 3 * time.Second},
		{"max == min, jitter 0", 1, 2 * time.Second, 2 * time.Second, 0, 2 * time.Second},
		{"max == min, jitter 0.999", 7, 2 * time.Second, 2 * time.Second, 0.999, 2 * time.Second},
		{"defaults, first poll", 1, DefaultWaitMinInterval, DefaultWaitMaxInterval, 0, 2 * time.Second},
		{"defaults, second poll", 2, DefaultWaitMinInterval, DefaultWaitMaxInterval, 0, 4 * time.Second},
		{"defaults, capped", 9, DefaultWaitMinInterval, DefaultWaitMaxInterval, 0, 15 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pollInterval(tt.n, tt.min, tt.max, tt.jitter); got != tt.want {
				t.Errorf("pollInterval(%d, %s, %s, %v) = %s, want %s", tt.n, tt.min, tt.max, tt.jitter, got, tt.want)
			}
		})
	}
}

// Whatever the jitter, an interval stays within [min, max]: the documented
// meaning of MinInterval and MaxInterval.
func TestPollIntervalStaysWithinMinAndMax(t *testing.T) {
	bounds := [][2]time.Duration{{1 * time.Second, 8 * time.Second}, {3 * time.Second, 5 * time.Second}, {2 * time.Second, 2 * time.Second}, {time.Millisecond, time.Hour}}
	for _, b := range bounds {
		for n := 1; n <= 40; n++ {
			for _, j := range []float64{0, 0.1, 0.5, 0.9, 0.999999, 1, 2} {
				if d := pollInterval(n, b[0], b[1], j); d < b[0] || d > b[1] {
					t.Errorf("pollInterval(%d, %s, %s, %v) = %s, outside [min, max]", n, b[0], b[1], j, d)
				}
			}
		}
	}
}

func TestWaitPollsAtOnceThenAtGrowingIntervals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		active := replyFixture(t, http.StatusOK, "job_active.json")
		log := serve(t, mt, on(http.MethodGet, pollPath,
			active, active, active, active, active, replyFixture(t, http.StatusOK, "job_completed.json")))

		job, err := c.AgentJobs.Wait(t.Context(), "", fixtureJobID, fastWait)
		if err != nil || job.Status != JobStatusCompleted {
			t.Fatalf("Wait = %+v, %v; want the completed job", job, err)
		}
		want := durations(0, 1*time.Second, 3*time.Second, 7*time.Second, 11*time.Second, 15*time.Second)
		if diff := cmp.Diff(want, log.Times()); diff != "" {
			t.Errorf("poll times (-want +got):\n%s", diff)
		}
		// The schedule is the one pollInterval defines, poll after poll.
		times := log.Times()
		for i := 1; i < len(times); i++ {
			if got, want := times[i]-times[i-1], pollInterval(i, fastWait.MinInterval, fastWait.MaxInterval, 0); got != want {
				t.Errorf("wait after poll %d = %s, want pollInterval = %s", i, got, want)
			}
		}
		if since := time.Since(log.start); since != 15*time.Second {
			t.Errorf("Wait returned at %s, want at the last poll (15s)", since)
		}
		for _, call := range log.Requests() {
			wantStandardHeaders(t, call, false)
		}
	})
}

func TestWaitAppliesJitterToEveryInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		c.cfg.jitter = func() float64 { return 0.5 }
		active := replyFixture(t, http.StatusOK, "job_active.json")
		log := serve(t, mt, on(http.MethodGet, pollPath, active, active, active, replyFixture(t, http.StatusOK, "job_completed.json")))

		if _, err := c.AgentJobs.Wait(t.Context(), "", fixtureJobID, fastWait); err != nil {
			t.Fatalf("Wait: %v", err)
		}
		// Jitter 0.5 picks the middle of each window: 1.5s, 3s, 6s.
		want := durations(0, 1500*time.Millisecond, 4500*time.Millisecond, 10500*time.Millisecond)
		if diff := cmp.Diff(want, log.Times()); diff != "" {
			t.Errorf("poll times (-want +got):\n%s", diff)
		}
	})
}

func TestWaitCallsOnUpdateForEveryObservedJobInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t, WithMaxRetries(0))
		serve(t, mt, on(http.MethodGet, pollPath,
			replyFixture(t, http.StatusOK, "job_active.json"),
			replyJSON(http.StatusServiceUnavailable, `{"error":"Service unavailable"}`),
			replyFixture(t, http.StatusOK, "job_queued.json"),
			replyError(syscall.ECONNRESET),
			replyFixture(t, http.StatusOK, "job_active.json"),
			replyFixture(t, http.StatusOK, "job_completed.json")))

		var seen jobStatuses
		params := fastWait
		params.OnUpdate = seen.OnUpdate
		job, err := c.AgentJobs.Wait(t.Context(), "", fixtureJobID, params)
		if err != nil {
			t.Fatalf("Wait: %v", err)
		}
		want := []JobStatus{JobStatusActive, "queued", JobStatusActive, JobStatusCompleted}
		if diff := cmp.Diff(want, seen.Seen()); diff != "" {
			t.Errorf("OnUpdate statuses (-want +got):\n%s", diff)
		}
		if seen.last != job {
			t.Errorf("OnUpdate's last job %p is not the returned job %p", seen.last, job)
		}
	})
}

func TestWaitReturnsTerminalJobWithoutError(t *testing.T) {
	tests := []struct {
		fixture    string
		wantStatus JobStatus
		wantPRLink string
	}{
		{"job_completed.json", JobStatusCompleted, "https://github.com/acme/docs/pull/118"},
		// Completed with no pull request (no file changed) is a success too.
		{"job_completed_no_pr.json", JobStatusCompleted, ""},
		{"job_archived.json", JobStatusArchived, "https://github.com/acme/docs/pull/118"},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t)
				log := serve(t, mt, on(http.MethodGet, pollPath,
					replyFixture(t, http.StatusOK, "job_active.json"), replyFixture(t, http.StatusOK, tt.fixture)))

				job, err := c.AgentJobs.Wait(t.Context(), "", fixtureJobID, fastWait)
				if err != nil {
					t.Fatalf("Wait error = %v, want nil", err)
				}
				if diff := cmp.Diff(*decodeJob(t, tt.fixture), *job); diff != "" {
					t.Errorf("job (-want +got):\n%s", diff)
				}
				if job.Status != tt.wantStatus || job.PRLink != tt.wantPRLink {
					t.Errorf("job = %s %q, want %s %q", job.Status, job.PRLink, tt.wantStatus, tt.wantPRLink)
				}
				if diff := cmp.Diff(durations(0, 1*time.Second), log.Times()); diff != "" {
					t.Errorf("poll times (-want +got):\n%s", diff)
				}
			})
		})
	}
}

func TestWaitFailedJobReturnsJobAndJobFailedError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		log := serve(t, mt, on(http.MethodGet, pollPath,
			replyFixture(t, http.StatusOK, "job_active.json"), replyFixture(t, http.StatusOK, "job_failed.json")))

		job, err := c.AgentJobs.Wait(t.Context(), "", fixtureJobID, fastWait)
		if job == nil || job.Status != JobStatusFailed {
			t.Fatalf("job = %+v, want the failed job", job)
		}
		var failed *JobFailedError
		if !errors.As(err, &failed) {
			t.Fatalf("err = %v (%T), want *JobFailedError", err, err)
		}
		if failed.Job != job {
			t.Errorf("JobFailedError.Job = %+v, want the returned job %+v", failed.Job, job)
		}
		if n := len(log.Requests()); n != 2 {
			t.Errorf("got %d polls, want 2", n)
		}
	})
}

func TestWaitKeepsPollingOnUnknownStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		queued := replyFixture(t, http.StatusOK, "job_queued.json")
		log := serve(t, mt, on(http.MethodGet, pollPath, queued, queued, replyFixture(t, http.StatusOK, "job_completed.json")))

		job, err := c.AgentJobs.Wait(t.Context(), "", fixtureJobID, fastWait)
		if err != nil || job.Status != JobStatusCompleted {
			t.Fatalf("Wait = %+v, %v; want the completed job", job, err)
		}
		if diff := cmp.Diff(durations(0, 1*time.Second, 3*time.Second), log.Times()); diff != "" {
			t.Errorf("poll times (-want +got):\n%s", diff)
		}
	})
}

func TestWaitStopsAtOnceOnErrorsThatCannotHeal(t *testing.T) {
	tests := []struct {
		status   int
		body     string
		sentinel error
	}{
		{http.StatusBadRequest, `{"error":"Invalid job id"}`, ErrBadRequest},
		{http.StatusUnauthorized, `{"error":"Invalid API key"}`, ErrUnauthorized},
		{http.StatusForbidden, `{"error":"Key lacks the read scope"}`, ErrForbidden},
		{http.StatusNotFound, `{"error":"Job not found"}`, ErrNotFound},
	}
	for _, tt := range tests {
		for _, afterJob := range []bool{false, true} {
			name := http.StatusText(tt.status) + " on first poll"
			if afterJob {
				name = http.StatusText(tt.status) + " after a job was seen"
			}
			t.Run(name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					c, mt := newTestClient(t)
					// A Retry-After must not make an error that cannot heal
					// look like one that can.
					fail := replyJSON(tt.status, tt.body, "Retry-After", "1")
					replies := []httpmock.Responder{fail}
					if afterJob {
						replies = []httpmock.Responder{replyFixture(t, http.StatusOK, "job_active.json"), fail}
					}
					log := serve(t, mt, on(http.MethodGet, pollPath, replies...))

					job, err := c.AgentJobs.Wait(t.Context(), "", fixtureJobID, fastWait)
					if !errors.Is(err, tt.sentinel) {
						t.Errorf("err = %v, want %v", err, tt.sentinel)
					}
					if code := asAPIError(t, err).StatusCode; code != tt.status {
						t.Errorf("StatusCode = %d, want %d", code, tt.status)
					}
					var timeout *WaitTimeoutError
					if errors.As(err, &timeout) {
						t.Errorf("err is a *WaitTimeoutError: %v", err)
					}
					wantTimes := durations(0)
					if afterJob {
						wantTimes = durations(0, 1*time.Second)
						if job == nil || job.ID != fixtureJobID || job.Status != JobStatusActive {
							t.Errorf("job = %+v, want the active job seen before the error", job)
						}
					} else if job != nil {
						t.Errorf("job = %+v, want nil: no poll succeeded", job)
					}
					if diff := cmp.Diff(wantTimes, log.Times()); diff != "" {
						t.Errorf("poll times (-want +got):\n%s", diff)
					}
					if since := time.Since(log.start); since != wantTimes[len(wantTimes)-1] {
						t.Errorf("Wait returned at %s, want at once after the failed poll", since)
					}
				})
			})
		}
	}
}

func TestWaitKeepsPollingThroughErrorsThatCanHeal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// No pipeline retries, so each failure costs exactly one poll.
		c, mt := newTestClient(t, WithMaxRetries(0))
		log := serve(t, mt, on(http.MethodGet, pollPath,
			replyFixture(t, http.StatusOK, "job_active.json"),
			replyJSON(http.StatusServiceUnavailable, `{"error":"Service unavailable"}`),
			replyError(syscall.ECONNRESET),
			replyJSON(http.StatusOK, "<html><body>502 Bad Gateway</body></html>", "Content-Type", "text/html"),
			replyJSON(http.StatusTooManyRequests, `{"error":"Rate limit exceeded"}`),
			replyJSON(http.StatusInternalServerError, `{"error":"Internal server error"}`),
			replyFixture(t, http.StatusOK, "job_completed.json")))

		job, err := c.AgentJobs.Wait(t.Context(), "", fixtureJobID, fastWait)
		if err != nil || job.Status != JobStatusCompleted {
			t.Fatalf("Wait = %+v, %v; want the completed job", job, err)
		}
		// Failed polls follow the normal schedule.
		want := durations(0, 1*time.Second, 3*time.Second, 7*time.Second, 11*time.Second, 15*time.Second, 19*time.Second)
		if diff := cmp.Diff(want, log.Times()); diff != "" {
			t.Errorf("poll times (-want +got):\n%s", diff)
		}
	})
}

func TestWaitHonoursRetryAfterOfFailedPoll(t *testing.T) {
	tests := []struct {
		name   string
		fail   httpmock.Responder
		wantAt []time.Duration
	}{
		{
			// The second interval would be 2s; the server asked for 20s.
			name:   "429 Retry-After longer than the interval",
			fail:   replyJSON(http.StatusTooManyRequests, `{"error":"Rate limit exceeded"}`, "Retry-After", "20"),
			wantAt: durations(0, 1*time.Second, 21*time.Second, 25*time.Second),
		},
		{
			name:   "503 Retry-After longer than the interval",
			fail:   replyJSON(http.StatusServiceUnavailable, `{"error":"Service unavailable"}`, "Retry-After", "10"),
			wantAt: durations(0, 1*time.Second, 11*time.Second, 15*time.Second),
		},
		{
			// Retry-After lengthens an interval, never shortens one.
			name:   "429 Retry-After shorter than the interval",
			fail:   replyJSON(http.StatusTooManyRequests, `{"error":"Rate limit exceeded"}`, "Retry-After", "1"),
			wantAt: durations(0, 1*time.Second, 3*time.Second, 7*time.Second),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t, WithMaxRetries(0))
				active := replyFixture(t, http.StatusOK, "job_active.json")
				log := serve(t, mt, on(http.MethodGet, pollPath, active, tt.fail, active, replyFixture(t, http.StatusOK, "job_completed.json")))

				if _, err := c.AgentJobs.Wait(t.Context(), "", fixtureJobID, fastWait); err != nil {
					t.Fatalf("Wait: %v", err)
				}
				if diff := cmp.Diff(tt.wantAt, log.Times()); diff != "" {
					t.Errorf("poll times (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// wantTimeoutError checks that err is a *WaitTimeoutError caused by cause,
// after waited, and returns it.
func wantTimeoutError(t *testing.T, err, cause error, waited time.Duration) *WaitTimeoutError {
	t.Helper()
	var te *WaitTimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("err = %v (%T), want *WaitTimeoutError", err, err)
	}
	if !errors.Is(err, cause) {
		t.Errorf("errors.Is(err, %v) = false; err = %v", cause, err)
	}
	for _, other := range []error{context.Canceled, context.DeadlineExceeded} {
		if other != cause && errors.Is(err, other) {
			t.Errorf("errors.Is(err, %v) = true, want only %v", other, cause)
		}
	}
	if te.Waited != waited {
		t.Errorf("Waited = %s, want %s", te.Waited, waited)
	}
	return te
}

func TestWaitTimeoutReturnsLastJobSeen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		log := serve(t, mt, on(http.MethodGet, pollPath,
			replyFixture(t, http.StatusOK, "job_active.json"), replyFixture(t, http.StatusOK, "job_queued.json")))

		params := fastWait
		params.Timeout = 10 * time.Second
		job, err := c.AgentJobs.Wait(t.Context(), "", fixtureJobID, params)
		te := wantTimeoutError(t, err, context.DeadlineExceeded, 10*time.Second)
		if job == nil || job.Status != "queued" {
			t.Fatalf("job = %+v, want the last one seen (queued)", job)
		}
		if te.Job != job {
			t.Errorf("WaitTimeoutError.Job = %+v, want the returned job", te.Job)
		}
		if te.LastErr != nil {
			t.Errorf("LastErr = %v, want nil: the last poll succeeded", te.LastErr)
		}
		// The next poll would be at 11s, after the timeout.
		if diff := cmp.Diff(durations(0, 1*time.Second, 3*time.Second, 7*time.Second), log.Times()); diff != "" {
			t.Errorf("poll times (-want +got):\n%s", diff)
		}
		if since := time.Since(log.start); since != 10*time.Second {
			t.Errorf("Wait returned at %s, want at the timeout", since)
		}
	})
}

func TestWaitTimeoutCarriesErrorOfLastFailedPoll(t *testing.T) {
	for _, anySeen := range []bool{true, false} {
		name := "no poll succeeded"
		if anySeen {
			name = "after a job was seen"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t, WithMaxRetries(0))
				unavailable := replyJSON(http.StatusServiceUnavailable, `{"error":"Service unavailable"}`)
				replies := []httpmock.Responder{unavailable}
				if anySeen {
					active := replyFixture(t, http.StatusOK, "job_active.json")
					replies = []httpmock.Responder{active, active, unavailable}
				}
				log := serve(t, mt, on(http.MethodGet, pollPath, replies...))

				params := fastWait
				params.Timeout = 10 * time.Second
				job, err := c.AgentJobs.Wait(t.Context(), "", fixtureJobID, params)
				te := wantTimeoutError(t, err, context.DeadlineExceeded, 10*time.Second)
				if !errors.Is(te.LastErr, ErrServer) {
					t.Errorf("LastErr = %v, want the 503", te.LastErr)
				}
				if anySeen {
					if job == nil || job.Status != JobStatusActive || te.Job != job {
						t.Errorf("job = %+v, err.Job = %+v; want the active job from the second poll in both", job, te.Job)
					}
				} else if job != nil || te.Job != nil {
					t.Errorf("job = %+v, err.Job = %+v; want nil: no poll succeeded", job, te.Job)
				}
				if n := len(log.Requests()); n != 4 {
					t.Errorf("got %d polls, want 4", n)
				}
			})
		})
	}
}

func TestWaitStopsWhenContextIsCanceled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		log := serve(t, mt, on(http.MethodGet, pollPath, replyFixture(t, http.StatusOK, "job_active.json")))

		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		// Cancel between the polls at 3s and 7s: the sleep must end at once.
		time.AfterFunc(5*time.Second, cancel)
		job, err := c.AgentJobs.Wait(ctx, "", fixtureJobID, fastWait)
		te := wantTimeoutError(t, err, context.Canceled, 5*time.Second)
		if job == nil || te.Job != job || job.Status != JobStatusActive {
			t.Errorf("job = %+v, err.Job = %+v; want the last active job in both", job, te.Job)
		}
		if diff := cmp.Diff(durations(0, 1*time.Second, 3*time.Second), log.Times()); diff != "" {
			t.Errorf("poll times (-want +got):\n%s", diff)
		}
	})
}

func TestWaitContextDeadlineEarlierThanTimeoutEndsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		log := serve(t, mt, on(http.MethodGet, pollPath, replyFixture(t, http.StatusOK, "job_active.json")))

		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		params := fastWait
		params.Timeout = 10 * time.Second
		job, err := c.AgentJobs.Wait(ctx, "", fixtureJobID, params)
		te := wantTimeoutError(t, err, context.DeadlineExceeded, 5*time.Second)
		if job == nil || te.Job != job {
			t.Errorf("job = %+v, err.Job = %+v; want the last job in both", job, te.Job)
		}
		if diff := cmp.Diff(durations(0, 1*time.Second, 3*time.Second), log.Times()); diff != "" {
			t.Errorf("poll times (-want +got):\n%s", diff)
		}
	})
}

// A poll that hangs must not outlive the wait: the request carries the
// wait's deadline. The cut-off poll is not a failure of the service, so it
// is not reported as LastErr.
func TestWaitEndsDuringHangingPoll(t *testing.T) {
	tests := []struct {
		name  string
		cause error
	}{
		{"timeout", context.DeadlineExceeded},
		{"canceled", context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t)
				hang := func(req *http.Request) (*http.Response, error) {
					<-req.Context().Done()
					return nil, req.Context().Err()
				}
				log := serve(t, mt, on(http.MethodGet, pollPath, replyFixture(t, http.StatusOK, "job_active.json"), hang))

				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				params := fastWait
				params.Timeout = 10 * time.Second
				if tt.cause == context.Canceled {
					time.AfterFunc(6*time.Second, cancel)
				}
				job, err := c.AgentJobs.Wait(ctx, "", fixtureJobID, params)
				want := 10 * time.Second
				if tt.cause == context.Canceled {
					want = 6 * time.Second
				}
				te := wantTimeoutError(t, err, tt.cause, want)
				if job == nil || te.Job != job || job.Status != JobStatusActive {
					t.Errorf("job = %+v, err.Job = %+v; want the active job from the first poll in both", job, te.Job)
				}
				if te.LastErr != nil {
					t.Errorf("LastErr = %v, want nil", te.LastErr)
				}
				if diff := cmp.Diff(durations(0, 1*time.Second), log.Times()); diff != "" {
					t.Errorf("poll times (-want +got):\n%s", diff)
				}
			})
		})
	}
}

func TestWaitRejectsInvalidParamsBeforeAnyRequest(t *testing.T) {
	tests := []struct {
		name   string
		params WaitParams
		param  string
	}{
		{"negative MinInterval", WaitParams{MinInterval: -time.Nanosecond}, "MinInterval"},
		{"negative MaxInterval", WaitParams{MaxInterval: -time.Second}, "MaxInterval"},
		{"negative Timeout", WaitParams{Timeout: -time.Second}, "Timeout"},
		{"MinInterval above MaxInterval", WaitParams{MinInterval: 5 * time.Second, MaxInterval: 2 * time.Second}, "MinInterval"},
		// MaxInterval 0 means the default 30s, which 31s does not exceed,
		// but an explicit 30s is exceeded.
		{"MinInterval above explicit default MaxInterval", WaitParams{MinInterval: 31 * time.Second, MaxInterval: DefaultWaitMaxInterval}, "MinInterval"},
	}
	for _, tt := range tests {
		for _, op := range []string{"Wait", "CreateAndWait"} {
			t.Run(op+"/"+tt.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					c, mt := newTestClient(t)
					checkRejected(t, c, mt, validationCase{name: tt.name, param: tt.param,
						call: func(ctx context.Context, s *AgentJobsService) error {
							if op == "Wait" {
								return errOf(s.Wait(ctx, "", fixtureJobID, tt.params))
							}
							return errOf(s.CreateAndWait(ctx, "", CreateJobParams{Prompt: "p"}, tt.params))
						}})
				})
			})
		}
	}
}

func TestWaitZeroParamsUseDefaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		active := replyFixture(t, http.StatusOK, "job_active.json")
		log := serve(t, mt, on(http.MethodGet, pollPath, active, active, replyFixture(t, http.StatusOK, "job_completed.json")))

		if _, err := c.AgentJobs.Wait(t.Context(), "", fixtureJobID, WaitParams{}); err != nil {
			t.Fatalf("Wait: %v", err)
		}
		// pollInterval(n, DefaultWaitMinInterval, DefaultWaitMaxInterval, 0)
		// is 2s then 4s.
		if diff := cmp.Diff(durations(0, 2*time.Second, 6*time.Second), log.Times()); diff != "" {
			t.Errorf("poll times (-want +got):\n%s", diff)
		}
	})
}

func TestWaitZeroTimeoutMeansDefaultTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		log := serve(t, mt, on(http.MethodGet, pollPath, replyFixture(t, http.StatusOK, "job_active.json")))

		_, err := c.AgentJobs.Wait(t.Context(), "", fixtureJobID, WaitParams{})
		wantTimeoutError(t, err, context.DeadlineExceeded, DefaultWaitTimeout)
		// Polls at 0, 2s, 6s, 14s, then every 15s (the capped window's
		// lower end): 14s + 119·15s = 1799s is the last before 30 minutes.
		times := log.Times()
		if len(times) != 123 || times[122] != 1799*time.Second {
			t.Errorf("got %d polls, the last ones at %v; want 123, the last at 29m59s", len(times), times[max(0, len(times)-3):])
		}
	})
}

func TestWaitFillsDefaultsAroundPartialParams(t *testing.T) {
	tests := []struct {
		name   string
		params WaitParams
		want   []time.Duration
	}{
		{
			// MaxInterval below the default minimum: the minimum follows it
			// down instead of making the params invalid.
			name:   "MaxInterval 500ms, MinInterval zero",
			params: WaitParams{MaxInterval: 500 * time.Millisecond},
			want:   durations(0, 500*time.Millisecond, 1000*time.Millisecond, 1500*time.Millisecond),
		},
		{
			// MinInterval above the default maximum: the maximum follows it up.
			name:   "MinInterval 40s, MaxInterval zero",
			params: WaitParams{MinInterval: 40 * time.Second},
			want:   durations(0, 40*time.Second, 80*time.Second, 120*time.Second),
		},
		{
			// MaxInterval 3s < 2·2s: every window is [1.5s, 3s), raised to 2s.
			name:   "MaxInterval 3s, MinInterval zero",
			params: WaitParams{MaxInterval: 3 * time.Second},
			want:   durations(0, 2*time.Second, 4*time.Second, 6*time.Second),
		},
		{
			name:   "MinInterval 1s, MaxInterval zero",
			params: WaitParams{MinInterval: 1 * time.Second},
			want:   durations(0, 1*time.Second, 3*time.Second, 7*time.Second),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t)
				active := replyFixture(t, http.StatusOK, "job_active.json")
				log := serve(t, mt, on(http.MethodGet, pollPath, active, active, active, replyFixture(t, http.StatusOK, "job_completed.json")))

				if _, err := c.AgentJobs.Wait(t.Context(), "", fixtureJobID, tt.params); err != nil {
					t.Fatalf("Wait: %v", err)
				}
				if diff := cmp.Diff(tt.want, log.Times()); diff != "" {
					t.Errorf("poll times (-want +got):\n%s", diff)
				}
			})
		})
	}
}

func TestCreateAndWaitCreatesThenPollsToCompletion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		// An explicit project is used for the create and for every poll.
		log := serve(t, mt, on(http.MethodPost, "/v2/agent/other/job", replyFixture(t, http.StatusCreated, "job_active.json")), on(http.MethodGet, "/v2/agent/other/job/"+fixtureJobID,
			replyFixture(t, http.StatusOK, "job_queued.json"), replyFixture(t, http.StatusOK, "job_completed.json")))

		var seen jobStatuses
		params := fastWait
		params.OnUpdate = seen.OnUpdate
		job, err := c.AgentJobs.CreateAndWait(t.Context(), "other", CreateJobParams{Prompt: createPrompt}, params)
		if err != nil {
			t.Fatalf("CreateAndWait: %v", err)
		}
		if diff := cmp.Diff(*decodeJob(t, "job_completed.json"), *job); diff != "" {
			t.Errorf("job (-want +got):\n%s", diff)
		}
		// The created job is an observation too, and comes first.
		if diff := cmp.Diff([]JobStatus{JobStatusActive, "queued", JobStatusCompleted}, seen.Seen()); diff != "" {
			t.Errorf("OnUpdate statuses (-want +got):\n%s", diff)
		}
		var got []string
		for _, call := range log.Requests() {
			got = append(got, call.Method+" "+call.Path+" @"+call.At.String())
		}
		// Create's answer is the first observation, so the first poll waits
		// one interval instead of re-reading the job just returned.
		want := []string{
			"POST /v2/agent/other/job @0s",
			"GET /v2/agent/other/job/" + fixtureJobID + " @1s",
			"GET /v2/agent/other/job/" + fixtureJobID + " @3s",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("requests (-want +got):\n%s", diff)
		}
	})
}

func TestCreateAndWaitDoesNotPollJobCreatedTerminal(t *testing.T) {
	tests := []struct {
		fixture    string
		wantFailed bool
	}{
		{"job_completed.json", false},
		{"job_failed.json", true},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t)
				log := serve(t, mt, on(http.MethodPost, "/v2/agent/proj/job", replyFixture(t, http.StatusCreated, tt.fixture)))

				var seen jobStatuses
				params := fastWait
				params.OnUpdate = seen.OnUpdate
				job, err := c.AgentJobs.CreateAndWait(t.Context(), "", CreateJobParams{Prompt: "p"}, params)
				if diff := cmp.Diff(*decodeJob(t, tt.fixture), *job); diff != "" {
					t.Errorf("job (-want +got):\n%s", diff)
				}
				var failed *JobFailedError
				if tt.wantFailed {
					if !errors.As(err, &failed) || failed.Job != job {
						t.Errorf("err = %v, want *JobFailedError carrying the returned job", err)
					}
				} else if err != nil {
					t.Errorf("err = %v, want nil", err)
				}
				if n := len(log.Requests()); n != 1 {
					t.Errorf("got %d requests, want only the create", n)
				}
				if diff := cmp.Diff([]JobStatus{job.Status}, seen.Seen()); diff != "" {
					t.Errorf("OnUpdate statuses (-want +got):\n%s", diff)
				}
			})
		})
	}
}

func TestCreateAndWaitReturnsNilJobWhenCreateFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		log := serve(t, mt, on(http.MethodPost, "/v2/agent/proj/job", replyJSON(http.StatusBadRequest, `{"error":"prompt is too long"}`)))

		var seen jobStatuses
		params := fastWait
		params.OnUpdate = seen.OnUpdate
		job, err := c.AgentJobs.CreateAndWait(t.Context(), "", CreateJobParams{Prompt: "p"}, params)
		if job != nil || !errors.Is(err, ErrBadRequest) {
			t.Fatalf("CreateAndWait = %+v, %v; want nil, ErrBadRequest", job, err)
		}
		if n := len(log.Requests()); n != 1 {
			t.Errorf("got %d requests, want only the create", n)
		}
		if s := seen.Seen(); len(s) != 0 {
			t.Errorf("OnUpdate saw %v, want no call", s)
		}
	})
}

func TestCreateAndWaitTimeoutReturnsLastJob(t *testing.T) {
	t.Run("polls succeeded", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c, mt := newTestClient(t)
			serve(t, mt, on(http.MethodPost, "/v2/agent/proj/job", replyFixture(t, http.StatusCreated, "job_active.json")), on(http.MethodGet, pollPath, replyFixture(t, http.StatusOK, "job_queued.json")))

			params := fastWait
			params.Timeout = 10 * time.Second
			job, err := c.AgentJobs.CreateAndWait(t.Context(), "", CreateJobParams{Prompt: "p"}, params)
			te := wantTimeoutError(t, err, context.DeadlineExceeded, 10*time.Second)
			// queued is what the polls saw; the create saw active.
			if job == nil || job.Status != "queued" || te.Job != job {
				t.Errorf("job = %+v, err.Job = %+v; want the last polled (queued) job in both", job, te.Job)
			}
		})
	})
	t.Run("no poll succeeded", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c, mt := newTestClient(t, WithMaxRetries(0))
			unavailable := replyJSON(http.StatusServiceUnavailable, `{"error":"Service unavailable"}`)
			// Polls at 1s, 3s and 7s fail; the service is back for the
			// caller's second wait, at 10s.
			log := serve(t, mt,
				on(http.MethodPost, "/v2/agent/proj/job", replyFixture(t, http.StatusCreated, "job_active.json")),
				on(http.MethodGet, pollPath,
					unavailable, unavailable, unavailable, replyFixture(t, http.StatusOK, "job_completed.json")))

			params := fastWait
			params.Timeout = 10 * time.Second
			job, err := c.AgentJobs.CreateAndWait(t.Context(), "", CreateJobParams{Prompt: "p"}, params)
			te := wantTimeoutError(t, err, context.DeadlineExceeded, 10*time.Second)
			if job == nil || job.ID != fixtureJobID || job.Status != JobStatusActive {
				t.Fatalf("job = %+v, want the created job, so that its ID can be waited on again", job)
			}
			// The error carries the created job too, so code that reads
			// te.Job.ID after a timeout never meets a nil job.
			if te.Job != job {
				t.Errorf("WaitTimeoutError.Job = %+v, want the created job", te.Job)
			}
			again, err := c.AgentJobs.Wait(t.Context(), "", job.ID, fastWait)
			if err != nil || again.Status != JobStatusCompleted {
				t.Errorf("second Wait = %+v, %v; want the completed job", again, err)
			}
			if got := log.Times(); len(got) != 5 || got[4] != 10*time.Second {
				t.Errorf("request times = %v, want create, 3 polls, and the second wait's poll at 10s", got)
			}
		})
	})
}

func TestCreateAndWaitSendsIdempotencyKeyOnCreateOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newTestClient(t)
		log := serve(t, mt, on(http.MethodPost, "/v2/agent/proj/job", replyFixture(t, http.StatusCreated, "job_active.json")), on(http.MethodGet, pollPath,
			replyFixture(t, http.StatusOK, "job_active.json"), replyFixture(t, http.StatusOK, "job_completed.json")))

		_, err := c.AgentJobs.CreateAndWait(t.Context(), "", CreateJobParams{Prompt: "p"}, fastWait, WithIdempotencyKey("release-2026-08-14"))
		if err != nil {
			t.Fatalf("CreateAndWait: %v", err)
		}
		calls := log.Requests()
		if len(calls) != 3 {
			t.Fatalf("got %d requests, want 3", len(calls))
		}
		for _, call := range calls {
			want := ""
			if call.Method == http.MethodPost {
				want = "release-2026-08-14"
			}
			if got := call.Header.Get("Idempotency-Key"); got != want {
				t.Errorf("%s %s: Idempotency-Key = %q, want %q", call.Method, call.Path, got, want)
			}
		}
	})
}
