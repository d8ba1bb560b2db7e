package store

import (
	"bytes"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"
)

// The changes the methods of Store make to a job or a key, each computed
// here once, as a method of the record as stored (Job.Claimed for
// Store.ClaimJob, APIKey.Revoked for Store.RevokeKey): a backend reads the
// record inside its transaction, calls the method, and stores what it
// returns. The methods are named for the record they return, so that none
// shares a name with the Store method it serves. A backend decides how to find and lock the rows, never
// how a record changes. Times are passed through as given; the backend
// stores them to the microsecond.

// Created returns the job Store.CreateJob stores for j: active, its history
// the one prompt, created and last updated at j.CreatedAt.
func (j NewJob) Created() Job {
	return Job{
		ID:         j.ID,
		ProjectID:  j.ProjectID,
		Status:     JobStatusActive,
		Repository: j.Repository,
		Ref:        j.Ref,
		Model:      j.Model,
		Branch:     j.Branch,
		Prompts:    []Prompt{{Text: j.Prompt, At: j.CreatedAt}},
		CreatedAt:  j.CreatedAt,
		UpdatedAt:  j.CreatedAt,
	}
}

// WithPrompt returns j with the follow-up p appended, as Store.AddPrompt
// leaves it, or ErrArchived if j is archived.
//
// The job becomes active again without a FailureReason; PRLink and Branch
// stay, so the next run updates the same pull request. A job that is running
// (it has a lease, even an expired one that nobody took over) keeps its
// lease and its Attempts: its run goes on, and FinishJob sees the new prompt
// when the run ends. A job that is not running starts again with Attempts 0:
// the prompt starts a new run, which must not inherit the attempts of runs
// that already ended, or a job that failed for running out of attempts would
// fail again at its next claim without running.
//
// A prompt that would take the history past p.Limits is refused as
// invalid, naming the cap: the history is j's, as the backend read it
// inside its write, so two follow-ups racing for the last place cannot
// both take it.
func (j Job) WithPrompt(p NewPrompt) (Job, error) {
	if j.Status == JobStatusArchived {
		return Job{}, fmt.Errorf("job %q: %w", j.ID, ErrArchived)
	}
	if err := p.Limits.admit(j, p.Prompt); err != nil {
		return Job{}, err
	}
	j.Prompts = append(slices.Clip(j.Prompts), Prompt{Text: p.Prompt, At: p.At})
	j.Status = JobStatusActive
	j.FailureReason = ""
	j.UpdatedAt = p.At
	if j.LeaseOwner == "" {
		j.Attempts = 0
	}
	return j, nil
}

// admit returns the refusal of a follow-up prompt to j, or nil if the
// history, prompt included, stays within l.
func (l PromptLimits) admit(j Job, prompt string) error {
	if l.Prompts > 0 && len(j.Prompts)+1 > l.Prompts {
		return Invalid("job %q holds %d prompts, and the cap is %d prompts per job; start a new job for further instructions",
			j.ID, len(j.Prompts), l.Prompts)
	}
	if l.Characters > 0 {
		// Counted in full, though the sum could stop at the cap: the
		// message says how far past it the prompt would go.
		total := utf8.RuneCountInString(prompt)
		for _, h := range j.Prompts {
			total += utf8.RuneCountInString(h.Text)
		}
		if total > l.Characters {
			return Invalid("job %q: this prompt of %d characters would bring the job's prompts to %d characters, and the cap is %d characters per job; start a new job for further instructions",
				j.ID, utf8.RuneCountInString(prompt), total, l.Characters)
		}
	}
	return nil
}

// Archived returns j archived at at, as Store.ArchiveJob leaves it, with
// changed true. The lease is dropped, so the running engine's next
// ExtendLease or FinishJob gets ErrLeaseLost. A job archived already is
// returned as it is, with changed false: its first ArchivedAt stays.
func (j Job) Archived(at time.Time) (job Job, changed bool) {
	if j.Status == JobStatusArchived {
		return j, false
	}
	j.Status = JobStatusArchived
	j.ArchivedAt = at
	j.UpdatedAt = at
	dropLease(&j)
	return j, true
}

// Claimed returns j, a job ready for c (active, and unleased or
// with a lease that expired before leaseNow), as Store.ClaimJob leaves it.
// leaseNow is the store's lease time (see leaseclock.go): c.Now on a store
// told the time, the database's clock on a LeaseClock. The job is leased to
// c.Owner until leaseNow+c.LeaseFor with one more attempt (leased true),
// unless its Attempts reached c.MaxAttempts: then the claim gives up on it
// instead, and it fails with a GaveUpReason and no lease (leased false),
// since each of its runs ended without an outcome (a crash, a stall).
// Either way it was last updated at c.Now, the caller's time.
func (j Job) Claimed(c Claim, leaseNow time.Time) (job Job, leased bool) {
	j.UpdatedAt = c.Now
	if j.Attempts >= c.MaxAttempts {
		j.Status = JobStatusFailed
		j.FailureReason = GaveUpReason(j.Attempts, fmt.Sprintf("every run ended without an outcome (the limit is %d)", c.MaxAttempts))
		dropLease(&j)
		return j, false
	}
	j.Attempts++
	j.LeaseOwner = c.Owner
	j.LeaseExpiresAt = leaseNow.Add(c.LeaseFor)
	return j, true
}

// Finished returns j, whose lease f.Owner holds, as Store.FinishJob leaves
// it: without a lease, last updated at f.At. Failed makes it failed with
// f.FailureReason. Completed records f.Handled and f.PRLink (unless empty,
// so that a run that changed nothing keeps the link of an earlier one) and
// makes the job completed, unless prompts arrived during the run (f.Handled
// below the job's prompts): then it stays active for another run, with
// Attempts back to 0, since this run succeeded. f.Handled above the job's
// prompts is refused as invalid.
func (j Job) Finished(f Finish) (Job, error) {
	if err := f.Validate(); err != nil {
		return Job{}, err
	}
	switch f.Outcome {
	case Completed:
		if f.Handled > len(j.Prompts) {
			return Job{}, Invalid("job %q: Handled %d exceeds its %d prompts", j.ID, f.Handled, len(j.Prompts))
		}
		j.Status = JobStatusCompleted
		j.Handled = f.Handled
		if f.PRLink != "" {
			j.PRLink = f.PRLink
		}
		if f.Handled < len(j.Prompts) {
			j.Status = JobStatusActive
			j.Attempts = 0
		}
	case Failed:
		j.Status = JobStatusFailed
		j.FailureReason = f.FailureReason
	}
	j.UpdatedAt = f.At
	dropLease(&j)
	return j, nil
}

// Released returns j, whose lease its owner gives back without an outcome
// (a graceful shutdown), as Store.ReleaseJob leaves it: without a lease and
// with the attempt given back, so another owner can claim it at once and
// the interrupted run does not count against its attempts.
func (j Job) Released() Job {
	j.Attempts = max(j.Attempts-1, 0)
	dropLease(&j)
	return j
}

// Revoked returns k revoked at at, as Store.RevokeKey leaves it, with
// changed true. A key revoked already is returned as it is, with changed
// false: its first revocation time stays, since that is when the key
// stopped working, which an audit must not see move.
func (k APIKey) Revoked(at time.Time) (key APIKey, changed bool) {
	if !k.RevokedAt.IsZero() {
		return k, false
	}
	k.RevokedAt = at
	return k, true
}

// GaveUpReason is the FailureReason of a job given up after attempts runs:
// why names how the last one ended. The engine gives up on a job whose last
// run failed with an error worth retrying, a claim on one whose runs all
// ended without an outcome (see Job.Claimed).
func GaveUpReason(attempts int, why string) string {
	return fmt.Sprintf("gave up after %d attempts: %s", attempts, why)
}

// dropLease clears j's lease: no owner, no expiry, as a job with no lease
// is stored.
func dropLease(j *Job) {
	j.LeaseOwner = ""
	j.LeaseExpiresAt = time.Time{}
}

// Replay decides a write that carries idem, when its project used idem's key
// before for a request whose hash was usedHash: nil if the write repeats that
// request, whose job it is then answered with instead of writing again;
// ErrIdempotencyMismatch if it is another request, which a key cannot make
// a repeat of.
func (idem *Idempotency) Replay(usedHash []byte) error {
	if !bytes.Equal(usedHash, idem.RequestHash) {
		return fmt.Errorf("idempotency key %q: %w", idem.Key, ErrIdempotencyMismatch)
	}
	return nil
}
