package store

import (
	"fmt"
	"time"
)

// Problem returns what makes c unfit for AddViews, or "" if nothing does.
// Every backend refuses the same counts, in the same words.
func (c ViewCount) Problem() string {
	switch {
	case c.ProjectID == "":
		return "empty project ID"
	case c.Path == "":
		return "empty path"
	case !wholeHour(c.Hour):
		return fmt.Sprintf("hour %v is not a whole hour", c.Hour)
	case c.Human < 0 || c.AI < 0 || c.Bot < 0:
		return fmt.Sprintf("negative count (human %d, ai %d, bot %d)", c.Human, c.AI, c.Bot)
	}
	return ""
}

// Problem returns what makes q unfit for QueryViews, or "" if nothing does.
func (q ViewsQuery) Problem() string {
	switch {
	case q.ProjectID == "":
		return "empty project ID"
	case q.Limit < 1:
		return fmt.Sprintf("limit %d: must be at least 1", q.Limit)
	case q.Offset < 0:
		return fmt.Sprintf("offset %d: must be at least 0", q.Offset)
	case !q.From.IsZero() && !wholeHour(q.From):
		return fmt.Sprintf("from %v is not a whole hour", q.From)
	case !q.To.IsZero() && !wholeHour(q.To):
		return fmt.Sprintf("to %v is not a whole hour", q.To)
	}
	return ""
}

// Problem returns what makes p unfit for CreateProject or UpdateProject, or
// "" if nothing does.
func (p Project) Problem() string {
	if p.ID == "" {
		return "empty project ID"
	}
	return ""
}

// Problem returns what makes k unfit for CreateKey, or "" if nothing does.
// Every project is checked before any scope.
func (k APIKey) Problem() string {
	if k.ID == "" {
		return "empty key ID"
	}
	if len(k.Hash) == 0 {
		return fmt.Sprintf("key %q: empty hash", k.ID)
	}
	for _, p := range k.Projects {
		if p == "" {
			return fmt.Sprintf("key %q: empty project ID", k.ID)
		}
	}
	for _, sc := range k.Scopes {
		if sc == "" {
			return fmt.Sprintf("key %q: empty scope", k.ID)
		}
	}
	return ""
}

// RevokeKeyProblem returns what makes id and at unfit for RevokeKey, or "" if
// nothing does. A zero at is refused: it would store "not revoked".
func RevokeKeyProblem(id string, at time.Time) string {
	switch {
	case id == "":
		return "empty key ID"
	case at.IsZero():
		return fmt.Sprintf("key %q: zero revocation time", id)
	}
	return ""
}

// Problem returns what makes idem unfit for CreateJob or AddPrompt, or "" if
// nothing does. A nil idem is fit: the idempotency key is optional. It is a
// method of the pointer so that callers can ask the optional field directly.
func (idem *Idempotency) Problem() string {
	switch {
	case idem == nil:
		return ""
	case idem.Key == "":
		return "empty idempotency key"
	case len(idem.RequestHash) == 0:
		return fmt.Sprintf("idempotency key %q: empty request hash", idem.Key)
	}
	return ""
}

// Problem returns what makes j unfit for CreateJob, or "" if nothing does.
// It leaves out j.Idempotency, which callers check after any check of their
// own on the prompt (PostgreSQL's on the bytes it can store), so that every
// backend reports the first problem in the same order.
func (j NewJob) Problem() string {
	switch {
	case j.ID == "":
		return "empty job ID"
	case j.ProjectID == "":
		return fmt.Sprintf("job %q: empty project ID", j.ID)
	case j.Prompt == "":
		return fmt.Sprintf("job %q: empty prompt", j.ID)
	}
	return ""
}

// Problem returns what makes p unfit for AddPrompt, or "" if nothing does.
// Like NewJob's, it leaves out p.Idempotency.
func (p NewPrompt) Problem() string {
	switch {
	case p.ProjectID == "":
		return "empty project ID"
	case p.JobID == "":
		return "empty job ID"
	case p.Prompt == "":
		return fmt.Sprintf("job %q: empty prompt", p.JobID)
	}
	return ""
}

// ArchiveJobProblem returns what makes its arguments unfit for ArchiveJob, or
// "" if nothing does. A zero at is refused: it would store an archived job
// without ArchivedAt.
func ArchiveJobProblem(projectID, jobID string, at time.Time) string {
	switch {
	case projectID == "":
		return "empty project ID"
	case jobID == "":
		return "empty job ID"
	case at.IsZero():
		return fmt.Sprintf("job %q: zero archive time", jobID)
	}
	return ""
}

// Problem returns what makes c unfit for ClaimJob, or "" if nothing does.
// Times are kept to the microsecond, so a shorter lease could be stored as
// one that ends as it starts.
func (c Claim) Problem() string {
	switch {
	case c.Owner == "":
		return "empty owner"
	case c.Now.IsZero():
		return "zero Now"
	case c.LeaseFor < time.Microsecond:
		return fmt.Sprintf("lease duration %v: must be at least 1µs", c.LeaseFor)
	case c.MaxAttempts < 1:
		return fmt.Sprintf("MaxAttempts %d: must be at least 1", c.MaxAttempts)
	}
	return ""
}

// ExtendLeaseProblem returns what makes now and until unfit for ExtendLease,
// or "" if nothing does. jobID only names the job in the message: an empty
// job ID (or owner) is not a problem, since no lease has one, so the caller
// simply does not hold a lease and gets ErrLeaseLost.
func ExtendLeaseProblem(jobID string, now, until time.Time) string {
	switch {
	case now.IsZero():
		return fmt.Sprintf("job %q: zero current time", jobID)
	case until.IsZero():
		return fmt.Sprintf("job %q: zero lease expiry", jobID)
	}
	return ""
}

// Problem returns what makes f unfit for FinishJob, or "" if nothing does.
// An empty JobID or Owner is not a problem: it holds no lease, which is
// ErrLeaseLost. Whether Handled exceeds the job's prompts needs the stored
// job, so the backends check that themselves.
func (f Finish) Problem() string {
	switch {
	case f.Outcome != Completed && f.Outcome != Failed:
		return fmt.Sprintf("job %q: unknown outcome %d", f.JobID, f.Outcome)
	case f.Outcome == Completed && f.Handled < 0:
		return fmt.Sprintf("job %q: negative Handled %d", f.JobID, f.Handled)
	}
	return ""
}

// wholeHour reports whether t is the start of an hour. Truncate works on
// absolute time, whose hours are aligned with UTC's, so a time in a zone with
// a half-hour offset is correctly refused even if its clock reads :00.
func wholeHour(t time.Time) bool {
	return !t.IsZero() && t.Truncate(time.Hour).Equal(t)
}
