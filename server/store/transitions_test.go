package store

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 5, 1, 3, 4, 5, 6000, time.UTC)

// leasedJob is a job in its first run, leased to w1, with a follow-up
// pending from before.
func leasedJob() Job {
	return Job{
		ID: "j", ProjectID: "p", Status: JobStatusActive, Branch: "docs-agent/j",
		Prompts:  []Prompt{{Text: "one", At: t0}, {Text: "two", At: t0.Add(time.Second)}},
		Handled:  1,
		PRLink:   "https://git.example.com/pr/1",
		Attempts: 1, LeaseOwner: "w1", LeaseExpiresAt: t0.Add(time.Hour),
		CreatedAt: t0, UpdatedAt: t0,
	}
}

// unleased returns j without a lease.
func unleased(j Job) Job {
	j.LeaseOwner, j.LeaseExpiresAt = "", time.Time{}
	return j
}

func wantJob(t *testing.T, what string, got, want Job) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

func TestCreateJob(t *testing.T) {
	nj := NewJob{ID: "j", ProjectID: "p", Prompt: "write", Repository: "r", Ref: "main", Model: "m",
		Branch: "docs-agent/j", CreatedAt: t0, Idempotency: &Idempotency{Key: "k", RequestHash: []byte{1}}}
	wantJob(t, "CreateJob", nj.Created(), Job{
		ID: "j", ProjectID: "p", Status: JobStatusActive, Repository: "r", Ref: "main", Model: "m",
		Branch: "docs-agent/j", Prompts: []Prompt{{Text: "write", At: t0}}, CreatedAt: t0, UpdatedAt: t0,
	})
}

func TestAddPrompt(t *testing.T) {
	p := NewPrompt{ProjectID: "p", JobID: "j", Prompt: "three", At: t0.Add(time.Minute)}

	// A running job keeps its lease and attempts.
	running := leasedJob()
	got, err := running.WithPrompt(p)
	if err != nil {
		t.Fatal(err)
	}
	want := leasedJob()
	want.Prompts = append(want.Prompts, Prompt{Text: "three", At: p.At})
	want.UpdatedAt = p.At
	wantJob(t, "AddPrompt to a running job", got, want)
	if len(running.Prompts) != 2 {
		t.Errorf("AddPrompt changed its argument's prompts: %d", len(running.Prompts))
	}

	// A job that ended starts a new run: active, no reason, fresh attempts.
	failed := unleased(leasedJob())
	failed.Status, failed.FailureReason, failed.Attempts = JobStatusFailed, "boom", 3
	got, err = failed.WithPrompt(p)
	if err != nil {
		t.Fatal(err)
	}
	want = unleased(leasedJob())
	want.Prompts = append(want.Prompts, Prompt{Text: "three", At: p.At})
	want.UpdatedAt, want.Attempts = p.At, 0
	wantJob(t, "AddPrompt to a failed job", got, want)

	archived := unleased(leasedJob())
	archived.Status = JobStatusArchived
	if _, err := archived.WithPrompt(p); !errors.Is(err, ErrArchived) {
		t.Errorf("AddPrompt to an archived job: %v, want %v", err, ErrArchived)
	}
}

func TestArchiveJob(t *testing.T) {
	at := t0.Add(time.Minute)
	got, changed := leasedJob().Archived(at)
	want := unleased(leasedJob())
	want.Status, want.ArchivedAt, want.UpdatedAt = JobStatusArchived, at, at
	if !changed {
		t.Error("ArchiveJob of an active job: changed false")
	}
	wantJob(t, "ArchiveJob", got, want)

	again, changed := got.Archived(at.Add(time.Hour))
	if changed {
		t.Error("ArchiveJob of an archived job: changed true")
	}
	wantJob(t, "ArchiveJob again", again, got)
}

func TestClaimed(t *testing.T) {
	c := Claim{Owner: "w2", Now: t0.Add(2 * time.Hour), LeaseFor: time.Minute, MaxAttempts: 2}
	ready := leasedJob() // its lease expired before c.Now

	got, leased := ready.Claimed(c, c.Now)
	want := leasedJob()
	want.Attempts, want.LeaseOwner, want.LeaseExpiresAt, want.UpdatedAt = 2, "w2", c.Now.Add(time.Minute), c.Now
	if !leased {
		t.Error("Claimed with an attempt left: leased false")
	}
	wantJob(t, "Claimed", got, want)

	// On a store whose leases follow the database's clock, the lease runs
	// from that clock's time, and the caller's time is only UpdatedAt.
	dbNow := c.Now.Add(-5 * time.Minute)
	onDB, _ := ready.Claimed(c, dbNow)
	want.LeaseExpiresAt = dbNow.Add(time.Minute)
	wantJob(t, "Claimed on the database's clock", onDB, want)

	got, leased = got.Claimed(c, c.Now)
	want = unleased(want)
	want.Status = JobStatusFailed
	want.FailureReason = "gave up after 2 attempts: every run ended without an outcome (the limit is 2)"
	if leased {
		t.Error("Claimed of a job that used its attempts: leased true")
	}
	wantJob(t, "Claimed of a job that used its attempts", got, want)
}

func TestFinishJob(t *testing.T) {
	at := t0.Add(time.Minute)
	for _, tc := range []struct {
		name string
		f    Finish
		want func(*Job)
	}{
		{"completed", Finish{Outcome: Completed, Handled: 2, PRLink: "https://git.example.com/pr/2"}, func(j *Job) {
			j.Status, j.Handled, j.PRLink = JobStatusCompleted, 2, "https://git.example.com/pr/2"
		}},
		{"completed without a link keeps the last", Finish{Outcome: Completed, Handled: 2}, func(j *Job) {
			j.Status, j.Handled = JobStatusCompleted, 2
		}},
		{"completed with a prompt left runs again", Finish{Outcome: Completed, Handled: 1}, func(j *Job) {
			j.Status, j.Handled, j.Attempts = JobStatusActive, 1, 0
		}},
		{"failed", Finish{Outcome: Failed, FailureReason: "boom", Handled: -1}, func(j *Job) {
			j.Status, j.FailureReason = JobStatusFailed, "boom"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.f.JobID, tc.f.Owner, tc.f.At = "j", "w1", at
			got, err := leasedJob().Finished(tc.f)
			if err != nil {
				t.Fatal(err)
			}
			want := unleased(leasedJob())
			want.UpdatedAt = at
			tc.want(&want)
			wantJob(t, "FinishJob", got, want)
		})
	}
	for _, f := range []Finish{
		{JobID: "j", Outcome: Completed, Handled: 3},
		{JobID: "j", Outcome: Completed, Handled: -1},
		{JobID: "j"},
	} {
		if _, err := leasedJob().Finished(f); !errors.Is(err, ErrInvalid) {
			t.Errorf("FinishJob(%+v): %v, want %v", f, err, ErrInvalid)
		}
	}
}

func TestReleaseJob(t *testing.T) {
	want := unleased(leasedJob())
	want.Attempts = 0
	wantJob(t, "ReleaseJob", leasedJob().Released(), want)
	wantJob(t, "ReleaseJob of a job without attempts", want.Released(), want)
}

func TestRevokeKey(t *testing.T) {
	k := APIKey{ID: "k", Hash: []byte{1}}
	got, changed := k.Revoked(t0)
	if !changed || !got.RevokedAt.Equal(t0) {
		t.Errorf("RevokeKey: %+v, changed %v", got, changed)
	}
	again, changed := got.Revoked(t0.Add(time.Hour))
	if changed || !again.RevokedAt.Equal(t0) {
		t.Errorf("RevokeKey again: %+v, changed %v; want the first time kept", again, changed)
	}
}

func TestIdempotencyReplay(t *testing.T) {
	idem := &Idempotency{Key: "k", RequestHash: []byte{1, 2}}
	if err := idem.Replay([]byte{1, 2}); err != nil {
		t.Errorf("Replay of the same request: %v", err)
	}
	if err := idem.Replay([]byte{1, 3}); !errors.Is(err, ErrIdempotencyMismatch) {
		t.Errorf("Replay of another request: %v, want %v", err, ErrIdempotencyMismatch)
	}
}

func TestGaveUpReason(t *testing.T) {
	if got, want := GaveUpReason(3, "the agent failed"), "gave up after 3 attempts: the agent failed"; got != want {
		t.Errorf("GaveUpReason = %q, want %q", got, want)
	}
}

func TestAddPromptLimits(t *testing.T) {
	job := unleased(leasedJob()) // prompts "one" and "two": 2 prompts, 6 characters
	add := func(text string, l PromptLimits) error {
		_, err := job.WithPrompt(NewPrompt{ProjectID: "p", JobID: "j", Prompt: text, At: t0, Limits: l})
		return err
	}
	for _, tc := range []struct {
		name   string
		prompt string
		limits PromptLimits
		refuse string // "" when admitted
	}{
		{"no limits", "three", PromptLimits{}, ""},
		{"exactly the prompt cap", "three", PromptLimits{Prompts: 3}, ""},
		{"past the prompt cap", "three", PromptLimits{Prompts: 2}, `job "j" holds 2 prompts, and the cap is 2 prompts per job`},
		{"exactly the character cap", "three", PromptLimits{Characters: 11}, ""},
		{"past the character cap", "three", PromptLimits{Characters: 10}, `this prompt of 5 characters would bring the job's prompts to 11 characters, and the cap is 10 characters per job`},
		// Characters, not bytes: "ééééé" is 5 characters in 10 bytes.
		{"characters, not bytes", "ééééé", PromptLimits{Characters: 11}, ""},
	} {
		err := add(tc.prompt, tc.limits)
		switch {
		case tc.refuse == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.refuse != "" && (!errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.refuse)):
			t.Errorf("%s: error %v, want ErrInvalid saying %q", tc.name, err, tc.refuse)
		}
	}
	// The archived job is refused as archived, whatever the caps.
	archived := job
	archived.Status = JobStatusArchived
	if _, err := archived.WithPrompt(NewPrompt{Prompt: "x", Limits: PromptLimits{Prompts: 1}}); !errors.Is(err, ErrArchived) {
		t.Errorf("AddPrompt to an archived, full job: %v, want %v", err, ErrArchived)
	}
}
