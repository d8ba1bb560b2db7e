package storetest

import (
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

func testJobs(t *testing.T, open opener) {
	runAll(t, open, []subtest{
		{"CreateJobStoresActiveJobWithOnePrompt", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			nj := NewJob("p1", "j1", At(time.Hour).In(elsewhere))
			want := createdJob(nj)
			got, replayed, err := s.CreateJob(t.Context(), nj)
			must(t, "CreateJob", err)
			if replayed {
				t.Errorf("CreateJob: replayed = true for a new job")
			}
			// UpdatedAt is compared here too: see createdJob.
			diff(t, "CreateJob result", want, got)
			checkTimes(t, "CreateJob result", jobTimes(got)...)
			back := mustJob(t, s, "p1", "j1")
			diff(t, "Job", want, back)
			checkTimes(t, "Job", jobTimes(back)...)
		}},
		{"CreateJobKeepsEmptyRef", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			nj := NewJob("p1", "j1", At(0))
			nj.Ref = ""
			mustCreateJob(t, s, nj)
			diffJob(t, "Job", createdJob(nj), mustJob(t, s, "p1", "j1"))
		}},
		{"TimesAreKeptToTheMicrosecond", func(t *testing.T, s store.Store) {
			// store.go: "stored with microsecond precision". Whether the
			// nanoseconds below are truncated or rounded is not said, so
			// either is accepted; keeping them, or losing a microsecond,
			// is not.
			mustProject(t, s, "p1")
			in := At(0).Add(789 * time.Nanosecond)
			mustCreateJob(t, s, NewJob("p1", "j1", in))
			j := mustJob(t, s, "p1", "j1")
			for _, got := range []time.Time{j.CreatedAt, j.Prompts[0].At} {
				checkTimes(t, "Job", got)
				if d := got.Sub(in); d <= -time.Microsecond || d >= time.Microsecond {
					t.Errorf("Job: time %v is %v away from %v, want less than 1µs", got, d, in)
				}
			}
		}},
		{"CreateJobWithTakenIDConflicts", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustProject(t, s, "p2")
			nj := NewJob("p1", "j1", At(0))
			want := mustCreateJob(t, s, nj)
			again := NewJob("p1", "j1", At(time.Hour))
			again.Prompt = "something else"
			_, _, err := s.CreateJob(t.Context(), again)
			wantErr(t, "CreateJob j1 again", err, store.ErrConflict)
			// Job IDs are global: ClaimJob, ExtendLease, FinishJob and
			// ReleaseJob name a job by its ID alone.
			_, _, err = s.CreateJob(t.Context(), NewJob("p2", "j1", At(time.Hour)))
			wantErr(t, "CreateJob j1 in another project", err, store.ErrConflict)
			diffJob(t, "Job j1 after conflicts", want, mustJob(t, s, "p1", "j1"))
			_, err = s.Job(t.Context(), "p2", "j1")
			wantErr(t, "Job j1 in p2", err, store.ErrNotFound)
		}},
		{"CreateJobInUnknownProjectIsNotFound", func(t *testing.T, s store.Store) {
			_, _, err := s.CreateJob(t.Context(), NewJob("nope", "j1", At(0)))
			wantErr(t, "CreateJob in unknown project", err, store.ErrNotFound)
			wantNoJob(t, s, "after refused CreateJob", At(time.Hour))
			// Nothing was stored: the ID is still free.
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			// A project unknown once is looked for again: once created,
			// its writes succeed.
			mustProject(t, s, "nope")
			mustCreateJob(t, s, NewJob("nope", "j2", At(0)))
		}},
		{"JobOfAnotherProjectIsNotFound", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustProject(t, s, "p2")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			_, err := s.Job(t.Context(), "p2", "j1")
			wantErr(t, "Job j1 in p2", err, store.ErrNotFound)
			_, err = s.Job(t.Context(), "nope", "j1")
			wantErr(t, "Job j1 in unknown project", err, store.ErrNotFound)
			_, err = s.Job(t.Context(), "p1", "j2")
			wantErr(t, "Job j2 (missing)", err, store.ErrNotFound)
		}},
		{"AddPromptAppendsInOrder", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			nj := NewJob("p1", "j1", At(0))
			want := mustCreateJob(t, s, nj)
			mustAddPrompt(t, s, "p1", "j1", "second", At(time.Minute).In(elsewhere))
			got := mustAddPrompt(t, s, "p1", "j1", "third", At(2*time.Minute))
			want.Prompts = append(want.Prompts,
				store.Prompt{Text: "second", At: At(time.Minute)},
				store.Prompt{Text: "third", At: At(2 * time.Minute)})
			diffJob(t, "AddPrompt result", want, got)
			diffJob(t, "Job", want, mustJob(t, s, "p1", "j1"))
		}},
		{"AddPromptReactivatesCompletedJobKeepingPRLinkAndBranch", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			mustClaim(t, s, "w1", At(time.Minute), "j1")
			done := mustFinish(t, s, store.Finish{JobID: "j1", Owner: "w1", At: At(2 * time.Minute),
				Outcome: store.Completed, PRLink: "https://git.example.com/pr/1", Handled: 1})
			got := mustAddPrompt(t, s, "p1", "j1", "follow-up", At(3*time.Minute))
			want := done
			want.Status = store.JobStatusActive
			want.Prompts = append(want.Prompts, store.Prompt{Text: "follow-up", At: At(3 * time.Minute)})
			want.Attempts = 0 // not running: a new run (see FollowUpGivesFreshAttempts)
			diffJob(t, "AddPrompt result", want, got)
			diffJob(t, "Job", want, mustJob(t, s, "p1", "j1"))
			mustClaim(t, s, "w2", At(4*time.Minute), "j1")
		}},
		{"AddPromptReactivatesFailedJobAndClearsReason", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			mustClaim(t, s, "w1", At(time.Minute), "j1")
			failed := mustFinish(t, s, store.Finish{JobID: "j1", Owner: "w1", At: At(2 * time.Minute),
				Outcome: store.Failed, FailureReason: "agent crashed"})
			got := mustAddPrompt(t, s, "p1", "j1", "try again", At(3*time.Minute))
			want := failed
			want.Status = store.JobStatusActive
			want.FailureReason = ""
			want.Prompts = append(want.Prompts, store.Prompt{Text: "try again", At: At(3 * time.Minute)})
			want.Attempts = 0
			diffJob(t, "AddPrompt result", want, got)
			diffJob(t, "Job", want, mustJob(t, s, "p1", "j1"))
			mustClaim(t, s, "w2", At(4*time.Minute), "j1")
		}},
		{"AddPromptKeepsLeaseOfRunningJob", func(t *testing.T, s store.Store) {
			lt := leaseTimesOf(t, s)
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			leased := mustClaim(t, s, "w1", At(time.Minute), "j1")
			got := mustAddPrompt(t, s, "p1", "j1", "also this", At(2*time.Minute))
			want := leased // Attempts included: its run goes on
			want.Prompts = append(want.Prompts, store.Prompt{Text: "also this", At: At(2 * time.Minute)})
			diffJob(t, "AddPrompt result", want, got)
			diffJob(t, "Job", want, mustJob(t, s, "p1", "j1"))
			wantNoJob(t, s, "while the lease runs", lt.whileHeld(leased, At(3*time.Minute)))
			must(t, "ExtendLease by the owner", s.ExtendLease(t.Context(), "j1", "w1", At(3*time.Minute), time.Hour))
		}},
		{"FollowUpGivesFreshAttempts", func(t *testing.T, s store.Store) {
			// A job that failed for running out of attempts runs again
			// after a follow-up, instead of failing at its next claim.
			c, err := runOutOfAttempts(t, s)
			wantErr(t, "ClaimJob after the last attempt", err, store.ErrNoJob)
			if j := mustJob(t, s, "p1", "j1"); j.Status != store.JobStatusFailed || j.Attempts != 1 {
				t.Fatalf("Job after its attempts ran out: status %q, attempts %d; want failed, 1", j.Status, j.Attempts)
			}

			if j := mustAddPrompt(t, s, "p1", "j1", "try again", At(2*time.Hour)); j.Attempts != 0 {
				t.Errorf("AddPrompt result: Attempts = %d, want 0", j.Attempts)
			}
			c.Now = At(3 * time.Hour)
			j, err := s.ClaimJob(t.Context(), c)
			must(t, "ClaimJob after the follow-up", err)
			if j.ID != "j1" || j.Attempts != 1 {
				t.Errorf("ClaimJob after the follow-up: job %q, attempts %d; want j1, 1", j.ID, j.Attempts)
			}

			// A running job keeps its attempts: its run goes on.
			j = mustAddPrompt(t, s, "p1", "j1", "and this", At(3*time.Hour))
			if j.Attempts != 1 || j.LeaseOwner != "w1" {
				t.Errorf("running job after AddPrompt: attempts %d, owner %q; want 1, w1", j.Attempts, j.LeaseOwner)
			}
		}},
		{"AddPromptToArchivedJobIsRefused", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			archived, err := s.ArchiveJob(t.Context(), "p1", "j1", At(time.Minute))
			must(t, "ArchiveJob", err)
			_, _, err = s.AddPrompt(t.Context(), store.NewPrompt{ProjectID: "p1", JobID: "j1", Prompt: "late", At: At(2 * time.Minute)})
			wantErr(t, "AddPrompt to archived job", err, store.ErrArchived)
			diffJob(t, "Job after refused prompt", archived, mustJob(t, s, "p1", "j1"))
		}},
		{"AddPromptToMissingJobIsNotFound", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustProject(t, s, "p2")
			want := mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			_, _, err := s.AddPrompt(t.Context(), store.NewPrompt{ProjectID: "p1", JobID: "j2", Prompt: "x", At: At(time.Minute)})
			wantErr(t, "AddPrompt to missing job", err, store.ErrNotFound)
			_, _, err = s.AddPrompt(t.Context(), store.NewPrompt{ProjectID: "p2", JobID: "j1", Prompt: "x", At: At(time.Minute)})
			wantErr(t, "AddPrompt to job of another project", err, store.ErrNotFound)
			diffJob(t, "Job j1", want, mustJob(t, s, "p1", "j1"))
		}},
		{"ArchiveJobSetsArchivedAndDropsLease", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			leased := mustClaim(t, s, "w1", At(time.Minute), "j1")
			got, err := s.ArchiveJob(t.Context(), "p1", "j1", At(2*time.Minute).In(elsewhere))
			must(t, "ArchiveJob", err)
			want := leased
			want.Status = store.JobStatusArchived
			want.ArchivedAt = At(2 * time.Minute)
			want.LeaseOwner = ""
			want.LeaseExpiresAt = time.Time{}
			diffJob(t, "ArchiveJob result", want, got)
			diffJob(t, "Job", want, mustJob(t, s, "p1", "j1"))
			wantNoJob(t, s, "after archiving", At(time.Hour))
		}},
		{"ArchiveJobTwiceKeepsFirstArchivedAt", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			first, err := s.ArchiveJob(t.Context(), "p1", "j1", At(time.Minute))
			must(t, "first ArchiveJob", err)
			second, err := s.ArchiveJob(t.Context(), "p1", "j1", At(time.Hour))
			must(t, "second ArchiveJob", err)
			// "Changes nothing": UpdatedAt included.
			diff(t, "second ArchiveJob result", first, second)
			diff(t, "Job", first, mustJob(t, s, "p1", "j1"))
		}},
		{"ArchiveMissingJobIsNotFound", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustProject(t, s, "p2")
			want := mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			_, err := s.ArchiveJob(t.Context(), "p1", "j2", At(time.Minute))
			wantErr(t, "ArchiveJob of missing job", err, store.ErrNotFound)
			_, err = s.ArchiveJob(t.Context(), "p2", "j1", At(time.Minute))
			wantErr(t, "ArchiveJob of job of another project", err, store.ErrNotFound)
			diffJob(t, "Job j1", want, mustJob(t, s, "p1", "j1"))
		}},
		{"UpdatedAtIsTheTimeOfTheLastTimedChange", func(t *testing.T, s store.Store) {
			// store.go: UpdatedAt is the time given to the last method
			// that changed the job. Pinned here for CreateJob, AddPrompt,
			// FinishJob and ArchiveJob; the suite does not pin what
			// the lease methods do, as ExtendLease and ReleaseJob have no
			// time to set.
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			check := func(what string, j store.Job, want time.Time) {
				t.Helper()
				if !j.UpdatedAt.Equal(want) {
					t.Errorf("%s: UpdatedAt = %v, want %v", what, j.UpdatedAt, want)
				}
				back := mustJob(t, s, "p1", "j1")
				if !back.UpdatedAt.Equal(want) {
					t.Errorf("Job after %s: UpdatedAt = %v, want %v", what, back.UpdatedAt, want)
				}
			}
			check("CreateJob", mustJob(t, s, "p1", "j1"), At(0))
			check("AddPrompt", mustAddPrompt(t, s, "p1", "j1", "more", At(time.Minute)), At(time.Minute))
			mustClaim(t, s, "w1", At(2*time.Minute), "j1")
			check("FinishJob", mustFinish(t, s, store.Finish{JobID: "j1", Owner: "w1", At: At(3 * time.Minute),
				Outcome: store.Completed, Handled: 2}), At(3*time.Minute))
			j, err := s.ArchiveJob(t.Context(), "p1", "j1", At(4*time.Minute))
			must(t, "ArchiveJob", err)
			check("ArchiveJob", j, At(4*time.Minute))
		}},
	})
}
