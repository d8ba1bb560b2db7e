package store

import (
	"errors"
	"strings"
	"time"
)

// The checks of every input a Store takes, made alike by every backend
// before it touches its storage: each returns nil or an *InvalidError (see
// Invalid) naming the first thing wrong, in the order the fields are
// listed. A backend may refuse more (what its storage cannot hold), after
// these checks.

// Validate returns what makes c unfit for AddViews, or nil.
func (c ViewCount) Validate() error {
	switch {
	case c.ProjectID == "":
		return Invalid("empty project ID")
	case c.Path == "":
		return Invalid("empty path")
	case !wholeHour(c.Hour):
		return Invalid("hour %v is not a whole hour", c.Hour)
	case c.Human < 0 || c.AI < 0 || c.Bot < 0:
		return Invalid("negative count (human %d, ai %d, bot %d)", c.Human, c.AI, c.Bot)
	}
	return c.validateAgents()
}

// ValidateViewCounts returns what makes a batch unfit for AddViews, naming
// the first bad count by its index, or nil: one bad count refuses the
// whole batch.
func ValidateViewCounts(counts []ViewCount) error {
	for i, c := range counts {
		if err := c.Validate(); err != nil {
			return Invalid("count %d: %s", i, problemOf(err))
		}
	}
	return nil
}

// Validate returns what makes q unfit for QueryViews, or nil.
func (q ViewsQuery) Validate() error {
	switch {
	case q.ProjectID == "":
		return Invalid("empty project ID")
	case q.Limit < 1:
		return Invalid("limit %d: must be at least 1", q.Limit)
	case q.Offset < 0:
		return Invalid("offset %d: must be at least 0", q.Offset)
	case !q.From.IsZero() && !wholeHour(q.From):
		return Invalid("from %v is not a whole hour", q.From)
	case !q.To.IsZero() && !wholeHour(q.To):
		return Invalid("to %v is not a whole hour", q.To)
	}
	return nil
}

// Validate returns what makes p unfit for CreateProject or UpdateProject, or
// nil.
func (p Project) Validate() error {
	if p.ID == "" {
		return Invalid("empty project ID")
	}
	if p.Domain != "" {
		if problem := DomainProblem(p.Domain); problem != "" {
			return Invalid("project %q: domain %q %s", p.ID, strings.ToValidUTF8(p.Domain, "?"), problem)
		}
	}
	return nil
}

// Validate returns what makes k unfit for CreateKey, or nil. Every project
// is checked before any scope.
func (k APIKey) Validate() error {
	if k.ID == "" {
		return Invalid("empty key ID")
	}
	if len(k.Hash) == 0 {
		return Invalid("key %q: empty hash", k.ID)
	}
	for _, p := range k.Projects {
		if p == "" {
			return Invalid("key %q: empty project ID", k.ID)
		}
	}
	for _, sc := range k.Scopes {
		if sc == "" {
			return Invalid("key %q: empty scope", k.ID)
		}
	}
	return nil
}

// ValidateRevokeKey returns what makes id and at unfit for RevokeKey, or
// nil. A zero at is refused: it would store "not revoked".
func ValidateRevokeKey(id string, at time.Time) error {
	switch {
	case id == "":
		return Invalid("empty key ID")
	case at.IsZero():
		return Invalid("key %q: zero revocation time", id)
	}
	return nil
}

// Validate returns what makes idem unfit for CreateJob or AddPrompt, or nil.
// A nil idem is fit: the idempotency key is optional. It is a method of the
// pointer so that the optional field can be asked directly.
func (idem *Idempotency) Validate() error {
	switch {
	case idem == nil:
		return nil
	case idem.Key == "":
		return Invalid("empty idempotency key")
	case len(idem.RequestHash) == 0:
		return Invalid("idempotency key %q: empty request hash", idem.Key)
	}
	return nil
}

// Validate returns what makes j unfit for CreateJob, or nil; its
// Idempotency is checked last.
func (j NewJob) Validate() error {
	switch {
	case j.ID == "":
		return Invalid("empty job ID")
	case j.ProjectID == "":
		return Invalid("job %q: empty project ID", j.ID)
	case j.Prompt == "":
		return Invalid("job %q: empty prompt", j.ID)
	}
	return j.Idempotency.Validate()
}

// Validate returns what makes p unfit for AddPrompt, or nil; its
// Idempotency is checked last.
func (p NewPrompt) Validate() error {
	switch {
	case p.ProjectID == "":
		return Invalid("empty project ID")
	case p.JobID == "":
		return Invalid("empty job ID")
	case p.Prompt == "":
		return Invalid("job %q: empty prompt", p.JobID)
	case p.Limits.Prompts < 0 || p.Limits.Characters < 0:
		return Invalid("job %q: negative limits (%d prompts, %d characters)", p.JobID, p.Limits.Prompts, p.Limits.Characters)
	}
	return p.Idempotency.Validate()
}

// ValidateArchiveJob returns what makes its arguments unfit for ArchiveJob,
// or nil. A zero at is refused: it would store an archived job without
// ArchivedAt.
func ValidateArchiveJob(projectID, jobID string, at time.Time) error {
	switch {
	case projectID == "":
		return Invalid("empty project ID")
	case jobID == "":
		return Invalid("empty job ID")
	case at.IsZero():
		return Invalid("job %q: zero archive time", jobID)
	}
	return nil
}

// Validate returns what makes c unfit for ClaimJob, or nil. Times are kept
// to the microsecond, so a shorter lease could be stored as one that ends
// as it starts.
func (c Claim) Validate() error {
	switch {
	case c.Owner == "":
		return Invalid("empty owner")
	case c.Now.IsZero():
		return Invalid("zero Now")
	case c.LeaseFor < time.Microsecond:
		return Invalid("lease duration %v: must be at least 1µs", c.LeaseFor)
	case c.MaxAttempts < 1:
		return Invalid("MaxAttempts %d: must be at least 1", c.MaxAttempts)
	}
	return nil
}

// ValidateExtendLease returns what makes now and leaseFor unfit for
// ExtendLease, or nil: a zero now, or a lease shorter than a microsecond,
// which could be stored as one that ends as it starts (as for Claim). jobID
// only names the job in the message: an empty job ID (or owner) is not
// invalid, since no lease has one, so the caller simply does not hold a
// lease and gets ErrLeaseLost.
func ValidateExtendLease(jobID string, now time.Time, leaseFor time.Duration) error {
	switch {
	case now.IsZero():
		return Invalid("job %q: zero current time", jobID)
	case leaseFor < time.Microsecond:
		return Invalid("job %q: lease duration %v: must be at least 1µs", jobID, leaseFor)
	}
	return nil
}

// Validate returns what makes f unfit for FinishJob, or nil. An empty JobID
// or Owner is not invalid: it holds no lease, which is ErrLeaseLost.
// Whether Handled exceeds the job's prompts needs the stored job: the
// function FinishJob checks it.
func (f Finish) Validate() error {
	switch {
	case f.Outcome != Completed && f.Outcome != Failed:
		return Invalid("job %q: unknown outcome %d", f.JobID, f.Outcome)
	case f.Outcome == Completed && f.Handled < 0:
		return Invalid("job %q: negative Handled %d", f.JobID, f.Handled)
	}
	return nil
}

// problemOf returns the Problem of err, an error of a Validate method.
func problemOf(err error) string {
	var inv *InvalidError
	if errors.As(err, &inv) {
		return inv.Problem
	}
	return ""
}

// wholeHour reports whether t is the start of an hour. Truncate works on
// absolute time, whose hours are aligned with UTC's, so a time in a zone with
// a half-hour offset is correctly refused even if its clock reads :00.
func wholeHour(t time.Time) bool {
	return !t.IsZero() && t.Truncate(time.Hour).Equal(t)
}
