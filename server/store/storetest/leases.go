package storetest

import (
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// wantLeaseLost checks that owner can neither extend, finish nor release
// jobID, and that trying changed nothing.
func wantLeaseLost(t *testing.T, s store.Store, projectID, jobID, owner, why string) {
	t.Helper()
	before, beforeErr := s.Job(t.Context(), projectID, jobID)
	// At the lease's last instant the lease still holds, so only ownership
	// can make the extension fail. (A LeaseClock judges by its own clock,
	// which every lease this is called on outlasts.)
	now := At(0)
	if beforeErr == nil && !before.LeaseExpiresAt.IsZero() {
		now = before.LeaseExpiresAt
	}
	wantErr(t, "ExtendLease "+why, s.ExtendLease(t.Context(), jobID, owner, now, 24*time.Hour), store.ErrLeaseLost)
	for _, f := range []store.Finish{
		{JobID: jobID, Owner: owner, At: At(24 * time.Hour), Outcome: store.Completed, PRLink: "https://git.example.com/pr/stale", Handled: 1},
		{JobID: jobID, Owner: owner, At: At(24 * time.Hour), Outcome: store.Failed, FailureReason: "stale"},
	} {
		_, err := s.FinishJob(t.Context(), f)
		wantErr(t, "FinishJob "+why, err, store.ErrLeaseLost)
	}
	wantErr(t, "ReleaseJob "+why, s.ReleaseJob(t.Context(), jobID, owner), store.ErrLeaseLost)
	if beforeErr == nil {
		diff(t, "Job after the refused lease calls", before, mustJob(t, s, projectID, jobID))
	}
}

// runOutOfAttempts creates the job j1 of project p1 and claims it with
// MaxAttempts 1; then, once that lease expired without an outcome, claims
// again, which fails the job. It returns the claim and the error of the
// second ClaimJob.
func runOutOfAttempts(t *testing.T, s store.Store) (store.Claim, error) {
	t.Helper()
	lt := leaseTimesOf(t, s)
	mustProject(t, s, "p1")
	mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
	c := store.Claim{Owner: "w1", Now: At(time.Minute), LeaseFor: lt.lapsing(time.Minute), MaxAttempts: 1}
	j, err := s.ClaimJob(t.Context(), c)
	must(t, "ClaimJob", err)
	c.Now = lt.onceEnded(j, At(time.Hour))
	_, err = s.ClaimJob(t.Context(), c)
	return c, err
}

func testLeases(t *testing.T, open opener) {
	runAll(t, open, []subtest{
		{"ClaimTakesOldestReadyJobFirst", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustProject(t, s, "p2")
			// Insertion order (a c b d), ID order (a b c d) and the wanted
			// order (d b c a: CreatedAt, then ID) all differ; the queue
			// spans projects.
			created := map[string]struct {
				project string
				at      time.Duration
			}{
				"job-a": {"p1", 2 * time.Minute},
				"job-c": {"p2", time.Minute},
				"job-b": {"p1", time.Minute},
				"job-d": {"p2", 0},
			}
			for _, id := range []string{"job-a", "job-c", "job-b", "job-d"} {
				mustCreateJob(t, s, NewJob(created[id].project, id, At(created[id].at)))
			}
			for i, want := range []string{"job-d", "job-b", "job-c", "job-a"} {
				mustClaim(t, s, "w1", At(time.Hour+time.Duration(i)*time.Second), want)
			}
			wantNoJob(t, s, "after claiming every job", At(time.Hour+time.Minute))
		}},
		{"ClaimLeasesJobAndCountsAttempt", func(t *testing.T, s store.Store) {
			lt := leaseTimesOf(t, s)
			mustProject(t, s, "p1")
			created := mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			var got store.Job
			told := At(time.Minute).In(elsewhere)
			from, to := lt.measured(told, func() {
				var err error
				got, err = s.ClaimJob(t.Context(), store.Claim{Owner: "w1", Now: told, LeaseFor: 90 * time.Second, MaxAttempts: 3})
				must(t, "ClaimJob", err)
			})
			want := created
			want.Attempts = 1
			want.LeaseOwner = "w1"
			// At(time.Minute + 90*time.Second), on a store told the time.
			want.LeaseExpiresAt = lt.leaseEnd("ClaimJob", got.LeaseExpiresAt, from, to, 90*time.Second)
			diffJob(t, "ClaimJob result", want, got)
			diffJob(t, "Job", want, mustJob(t, s, "p1", "j1"))
		}},
		{"LeasedJobIsClaimableOnlyAfterExpiry", func(t *testing.T, s store.Store) {
			lt := leaseTimesOf(t, s)
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			first := mustClaim(t, s, "w1", At(time.Minute), "j1")
			wantNoJob(t, s, "during the lease", lt.whileHeld(first, At(time.Minute+time.Second)))
			if lt.toldTime() {
				// "Its lease expired before c.Now": at the expiry
				// instant itself the lease still holds.
				wantNoJob(t, s, "at the instant the lease expires", first.LeaseExpiresAt)
			}
			first = lt.endSoon(first)
			expiry := first.LeaseExpiresAt
			var second store.Job
			told := lt.onceEnded(first, expiry.Add(time.Microsecond))
			from, to := lt.measured(told, func() { second = mustClaim(t, s, "w2", told, "j1") })
			want := first
			want.Attempts = 2
			want.LeaseOwner = "w2"
			// expiry+1µs+leaseFor, on a store told the time.
			want.LeaseExpiresAt = lt.leaseEnd("second ClaimJob", second.LeaseExpiresAt, from, to, leaseFor)
			diffJob(t, "second ClaimJob result", want, second)
			diffJob(t, "Job", want, mustJob(t, s, "p1", "j1"))
		}},
		{"NothingReadyIsErrNoJob", func(t *testing.T, s store.Store) {
			wantNoJob(t, s, "empty store", At(0))
			mustProject(t, s, "p1")
			for _, id := range []string{"completed", "failed", "archived"} {
				mustCreateJob(t, s, NewJob("p1", id, At(0)))
			}
			mustClaim(t, s, "w1", At(time.Minute), "archived")
			mustClaim(t, s, "w1", At(time.Minute), "completed")
			mustClaim(t, s, "w1", At(time.Minute), "failed")
			mustFinish(t, s, store.Finish{JobID: "completed", Owner: "w1", At: At(2 * time.Minute), Outcome: store.Completed, Handled: 1})
			mustFinish(t, s, store.Finish{JobID: "failed", Owner: "w1", At: At(2 * time.Minute), Outcome: store.Failed, FailureReason: "boom"})
			_, err := s.ArchiveJob(t.Context(), "p1", "archived", At(2*time.Minute))
			must(t, "ArchiveJob", err)
			// Far beyond every lease: only the status keeps them out.
			wantNoJob(t, s, "only completed, failed and archived jobs", At(24*time.Hour))
		}},
		{"JobAtMaxAttemptsFailsAndClaimMovesOn", func(t *testing.T, s store.Store) {
			lt := leaseTimesOf(t, s)
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			mustCreateJob(t, s, NewJob("p1", "j2", At(time.Second)))
			c := store.Claim{Owner: "w1", Now: At(time.Minute), LeaseFor: lt.lapsing(time.Minute), MaxAttempts: 2}
			for attempt := 1; attempt <= 2; attempt++ {
				j, err := s.ClaimJob(t.Context(), c)
				must(t, "ClaimJob", err)
				if j.ID != "j1" || j.Attempts != attempt {
					t.Fatalf("ClaimJob: job %q attempt %d, want j1 attempt %d", j.ID, j.Attempts, attempt)
				}
				c.Now = lt.onceEnded(j, j.LeaseExpiresAt.Add(time.Second)) // the run crashed
			}
			c.Owner = "w2"
			got, err := s.ClaimJob(t.Context(), c)
			must(t, "ClaimJob after j1 used its attempts", err)
			if got.ID != "j2" || got.Attempts != 1 || got.LeaseOwner != "w2" {
				t.Errorf("ClaimJob: job %q attempt %d owner %q, want j2 attempt 1 owner w2", got.ID, got.Attempts, got.LeaseOwner)
			}
			j1 := mustJob(t, s, "p1", "j1")
			if j1.Status != store.JobStatusFailed || j1.FailureReason == "" {
				t.Errorf("Job j1: status %q, reason %q; want failed with a reason", j1.Status, j1.FailureReason)
			}
			if j1.Attempts != 2 {
				t.Errorf("Job j1: Attempts = %d, want 2 (it was not leased again)", j1.Attempts)
			}
			if j1.LeaseOwner != "" || !j1.LeaseExpiresAt.IsZero() {
				t.Errorf("Job j1: lease (%q until %v) kept by a failed job, want none", j1.LeaseOwner, j1.LeaseExpiresAt)
			}
			// The crashed run's owner cannot overwrite the failure.
			wantLeaseLost(t, s, "p1", "j1", "w1", "by the owner of the expired lease")
		}},
		{"JobFailedAtMaxAttemptsStaysFailedWhenNothingElseIsReady", func(t *testing.T, s store.Store) {
			_, err := runOutOfAttempts(t, s)
			wantErr(t, "ClaimJob after j1 used its attempts", err, store.ErrNoJob)
			// ErrNoJob must not roll the failure back.
			if j := mustJob(t, s, "p1", "j1"); j.Status != store.JobStatusFailed || j.FailureReason == "" {
				t.Errorf("Job j1: status %q, reason %q; want failed with a reason", j.Status, j.FailureReason)
			}
		}},
		{"LeasedJobAtMaxAttemptsIsLeftAlone", func(t *testing.T, s store.Store) {
			lt := leaseTimesOf(t, s)
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			c := store.Claim{Owner: "w1", Now: At(time.Minute), LeaseFor: time.Hour, MaxAttempts: 1}
			leased, err := s.ClaimJob(t.Context(), c)
			must(t, "ClaimJob", err)
			// The job is not ready (its lease runs), so it is neither
			// claimed nor failed, even though its attempts are used up.
			c.Owner, c.Now = "w2", lt.whileHeld(leased, At(2*time.Minute))
			_, err = s.ClaimJob(t.Context(), c)
			wantErr(t, "ClaimJob during the lease", err, store.ErrNoJob)
			diffJob(t, "Job", leased, mustJob(t, s, "p1", "j1"))
		}},
		{"ExtendLeaseMovesExpiry", func(t *testing.T, s store.Store) {
			lt := leaseTimesOf(t, s)
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			leased := mustClaim(t, s, "w1", At(time.Minute), "j1")
			// Extended at the lease's last instant, by an hour.
			told := lt.whileHeld(leased, leased.LeaseExpiresAt).In(elsewhere)
			from, to := lt.measured(told, func() {
				must(t, "ExtendLease", s.ExtendLease(t.Context(), "j1", "w1", told, time.Hour))
			})
			extended := mustJob(t, s, "p1", "j1")
			want := leased
			want.LeaseExpiresAt = lt.leaseEnd("ExtendLease", extended.LeaseExpiresAt, from, to, time.Hour)
			diffJob(t, "Job", want, extended)
			wantNoJob(t, s, "after the old expiry", lt.whileHeld(extended, leased.LeaseExpiresAt.Add(time.Minute)))

			// A lease may be made shorter too, as the engine does to wait
			// out a retry delay: it then ends before the hour is up.
			told = lt.whileHeld(extended, leased.LeaseExpiresAt.Add(time.Minute))
			shortFor := lt.lapsing(time.Minute)
			from, to = lt.measured(told, func() {
				must(t, "ExtendLease shortening the lease", s.ExtendLease(t.Context(), "j1", "w1", told, shortFor))
			})
			shortened := mustJob(t, s, "p1", "j1")
			want.LeaseExpiresAt = lt.leaseEnd("ExtendLease shortening the lease", shortened.LeaseExpiresAt, from, to, shortFor)
			diffJob(t, "Job after shortening its lease", want, shortened)
			mustClaim(t, s, "w2", lt.onceEnded(shortened, shortened.LeaseExpiresAt.Add(time.Microsecond)), "j1")
		}},
		{"LeaseCallsOfNonOwnerAreLost", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			mustCreateJob(t, s, NewJob("p1", "never-claimed", At(time.Hour)))
			mustClaim(t, s, "w1", At(time.Minute), "j1")
			wantLeaseLost(t, s, "p1", "j1", "w2", "by another owner")
			wantLeaseLost(t, s, "p1", "j1", "", "by an empty owner")
			wantLeaseLost(t, s, "p1", "never-claimed", "w1", "of a job never claimed")
			// "It was never the caller's" covers a job that does not exist.
			wantLeaseLost(t, s, "p1", "missing", "w1", "of a missing job")
			must(t, "ExtendLease by the owner", s.ExtendLease(t.Context(), "j1", "w1", At(time.Minute), time.Hour))
		}},
		{"ExtendLeaseAfterExpiryIsLost", func(t *testing.T, s store.Store) {
			lt := leaseTimesOf(t, s)
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			leased := claimFor(t, s, "w1", At(time.Minute), lt.lapsing(leaseFor), "j1")
			// Nobody has claimed the job yet, but anyone may from now on:
			// the engine must hear that it lost the lease.
			late := lt.onceEnded(leased, leased.LeaseExpiresAt.Add(time.Microsecond))
			wantErr(t, "ExtendLease just after expiry", s.ExtendLease(t.Context(), "j1", "w1", late, time.Hour), store.ErrLeaseLost)
			diffJob(t, "Job", leased, mustJob(t, s, "p1", "j1"))
			if lt.toldTime() {
				// The expiry instant itself still belongs to the lease.
				must(t, "ExtendLease at expiry", s.ExtendLease(t.Context(), "j1", "w1", leased.LeaseExpiresAt, time.Hour))
			}
		}},
		{"LeaseCallsAfterReclaimAreLost", func(t *testing.T, s store.Store) {
			lt := leaseTimesOf(t, s)
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			first := claimFor(t, s, "w1", At(time.Minute), lt.lapsing(leaseFor), "j1")
			second := mustClaim(t, s, "w2", lt.onceEnded(first, first.LeaseExpiresAt.Add(time.Second)), "j1")
			wantLeaseLost(t, s, "p1", "j1", "w1", "by the owner of the expired lease")
			diffJob(t, "Job", second, mustJob(t, s, "p1", "j1"))
			mustFinish(t, s, store.Finish{JobID: "j1", Owner: "w2", At: At(time.Hour), Outcome: store.Completed, Handled: 1})
		}},
		{"FinishCompletedSetsPRLinkAndDropsLease", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			leased := mustClaim(t, s, "w1", At(time.Minute), "j1")
			got := mustFinish(t, s, store.Finish{JobID: "j1", Owner: "w1", At: At(2 * time.Minute).In(elsewhere),
				Outcome: store.Completed, PRLink: "https://git.example.com/pr/1", Handled: 1})
			want := leased
			want.Status = store.JobStatusCompleted
			want.PRLink = "https://git.example.com/pr/1"
			want.Handled = 1
			want.LeaseOwner = ""
			want.LeaseExpiresAt = time.Time{}
			diffJob(t, "FinishJob result", want, got)
			diffJob(t, "Job", want, mustJob(t, s, "p1", "j1"))
			wantLeaseLost(t, s, "p1", "j1", "w1", "after finishing")
			wantNoJob(t, s, "after completion", At(24*time.Hour))
		}},
		{"FinishCompletedWithoutPRLinkKeepsNone", func(t *testing.T, s store.Store) {
			// A run that changed no file completes with no pull request.
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			mustClaim(t, s, "w1", At(time.Minute), "j1")
			got := mustFinish(t, s, store.Finish{JobID: "j1", Owner: "w1", At: At(2 * time.Minute), Outcome: store.Completed, Handled: 1})
			if got.Status != store.JobStatusCompleted || got.PRLink != "" {
				t.Errorf("FinishJob: status %q, PRLink %q; want completed with no link", got.Status, got.PRLink)
			}
		}},
		{"FinishCompletedWithUnhandledPromptKeepsJobActive", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			mustClaim(t, s, "w1", At(time.Minute), "j1")
			mustAddPrompt(t, s, "p1", "j1", "one more thing", At(2*time.Minute))
			got := mustFinish(t, s, store.Finish{JobID: "j1", Owner: "w1", At: At(3 * time.Minute),
				Outcome: store.Completed, PRLink: "https://git.example.com/pr/1", Handled: 1})
			// Attempts go back to 0: the run succeeded, and a job whose
			// follow-ups keep arriving mid-run must never run out of them.
			if got.Status != store.JobStatusActive || got.Handled != 1 || got.PRLink != "https://git.example.com/pr/1" ||
				got.LeaseOwner != "" || !got.LeaseExpiresAt.IsZero() || got.Attempts != 0 {
				t.Errorf("FinishJob with a prompt unhandled: status %q, Handled %d, PRLink %q, lease %q until %v, Attempts %d; "+
					"want active, 1, the link, no lease, 0", got.Status, got.Handled, got.PRLink, got.LeaseOwner, got.LeaseExpiresAt, got.Attempts)
			}
			diffJob(t, "Job", got, mustJob(t, s, "p1", "j1"))
			// Claimable at once, with no lease left to expire.
			mustClaim(t, s, "w2", At(3*time.Minute), "j1")
			// The second run opened no new pull request: the first stays.
			done := mustFinish(t, s, store.Finish{JobID: "j1", Owner: "w2", At: At(4 * time.Minute), Outcome: store.Completed, Handled: 2})
			if done.Status != store.JobStatusCompleted || done.Handled != 2 || done.PRLink != "https://git.example.com/pr/1" {
				t.Errorf("second FinishJob: status %q, Handled %d, PRLink %q; want completed, 2, the first link",
					done.Status, done.Handled, done.PRLink)
			}
		}},
		{"FinishFailedSetsReasonAndDropsLease", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			leased := mustClaim(t, s, "w1", At(time.Minute), "j1")
			got := mustFinish(t, s, store.Finish{JobID: "j1", Owner: "w1", At: At(2 * time.Minute),
				Outcome: store.Failed, FailureReason: "clone failed: repository not found"})
			want := leased
			want.Status = store.JobStatusFailed
			want.FailureReason = "clone failed: repository not found"
			want.LeaseOwner = ""
			want.LeaseExpiresAt = time.Time{}
			diffJob(t, "FinishJob result", want, got)
			diffJob(t, "Job", want, mustJob(t, s, "p1", "j1"))
			wantNoJob(t, s, "after failure", At(24*time.Hour))
		}},
		{"ReleaseMakesJobClaimableAndGivesAttemptBack", func(t *testing.T, s store.Store) {
			lt := leaseTimesOf(t, s)
			mustProject(t, s, "p1")
			created := mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			// MaxAttempts 1: the second claim succeeds only if the
			// released attempt was given back.
			c := store.Claim{Owner: "w1", Now: At(time.Minute), LeaseFor: time.Hour, MaxAttempts: 1}
			_, err := s.ClaimJob(t.Context(), c)
			must(t, "ClaimJob", err)
			must(t, "ReleaseJob", s.ReleaseJob(t.Context(), "j1", "w1"))
			diffJob(t, "Job after release", created, mustJob(t, s, "p1", "j1"))
			c.Owner = "w2" // same Now: no waiting for the old lease to expire
			var got store.Job
			from, to := lt.measured(c.Now, func() {
				var err error
				got, err = s.ClaimJob(t.Context(), c)
				must(t, "ClaimJob after release", err)
			})
			want := created
			want.Attempts = 1
			want.LeaseOwner = "w2"
			// At(time.Minute + time.Hour), on a store told the time.
			want.LeaseExpiresAt = lt.leaseEnd("ClaimJob after release", got.LeaseExpiresAt, from, to, time.Hour)
			diffJob(t, "ClaimJob after release", want, got)
			wantLeaseLost(t, s, "p1", "j1", "w1", "after releasing")
		}},
		{"ArchiveDuringLeaseLosesLease", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			mustClaim(t, s, "w1", At(time.Minute), "j1")
			archived, err := s.ArchiveJob(t.Context(), "p1", "j1", At(2*time.Minute))
			must(t, "ArchiveJob", err)
			wantLeaseLost(t, s, "p1", "j1", "w1", "after archiving")
			diffJob(t, "Job", archived, mustJob(t, s, "p1", "j1"))
			wantNoJob(t, s, "after archiving", At(24*time.Hour))
		}},
	})
}
