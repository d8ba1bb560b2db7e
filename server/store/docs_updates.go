package store

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// DocsUpdateStore keeps the updates of projects' documentation indexes:
// each one a request to re-read the project's repository (the hosted
// Deployment API's "update"), queued, then leased to one worker among the
// replicas sharing the store, as jobs are (see ClaimJob), and ended with
// its outcome. A worker that dies leaves a lease that lapses; the update
// is then claimed again, by any worker, until its attempts run out.
//
// Leases follow the same clock as jobs' (the time told, or the database's
// on a LeaseClock).
type DocsUpdateStore interface {
	// CreateDocsUpdate queues an update. If the project has an update
	// that is queued and not yet claimed, none is created: that one is
	// returned with joined true, since it will read the repository as it
	// is when it runs anyway. ErrNotFound if the project does not exist;
	// ErrConflict if the ID is taken.
	CreateDocsUpdate(ctx context.Context, u NewDocsUpdate) (rec DocsUpdateRecord, joined bool, err error)
	// DocsUpdate returns one update, or ErrNotFound.
	DocsUpdate(ctx context.Context, id string) (DocsUpdateRecord, error)
	// ClaimDocsUpdate leases one ready update to c.Owner for c.LeaseFor
	// and returns it in progress, Attempts incremented. An update is
	// ready when it is queued, or in progress with a lease that expired
	// before the store's lease time (its worker died), and no other
	// update of its project is in progress under a lease that has not
	// expired: a project's updates run one at a time. The oldest
	// (CreatedAt, then ID) is taken first. A ready update whose Attempts
	// reached c.MaxAttempts is not leased but ends as a failure (ended
	// at c.Now, its Summary saying so), and the claim moves on. ErrNoJob
	// when none is ready. Two concurrent claims never lease the same
	// update.
	ClaimDocsUpdate(ctx context.Context, c Claim) (DocsUpdateRecord, error)
	// ExtendDocsUpdateLease moves the lease's expiry as ExtendLease does a
	// job's; ErrLeaseLost as it says.
	ExtendDocsUpdateLease(ctx context.Context, id, owner string, now time.Time, leaseFor time.Duration) error
	// FinishDocsUpdate records the outcome of the lease holder's run and
	// drops the lease: the update ends with f's status, summary, logs and
	// commit, EndedAt f.At. As for FinishJob, an expired lease nobody
	// else claimed is still the holder's: the finish writes the update's
	// record alone, which a takeover would have made another owner's, so
	// the owner's check in the finish's transaction fences it; the index
	// write, which the project's next update may also make once the
	// lease expired, needs the lease to hold (DocsFence). ErrLeaseLost if
	// owner does not hold the lease (or the update has ended).
	FinishDocsUpdate(ctx context.Context, f DocsUpdateFinish) (DocsUpdateRecord, error)
	// PruneDocsUpdates deletes the updates that ended before endedBefore,
	// and none that is queued or in progress, and returns how many it
	// deleted: the periodic refresh makes an update per project and
	// interval, which would otherwise be kept for ever.
	PruneDocsUpdates(ctx context.Context, endedBefore time.Time) (int, error)
}

// DocsUpdateStatus is where an update stands: the hosted status values.
type DocsUpdateStatus string

// The statuses of an update.
const (
	DocsUpdateQueued     DocsUpdateStatus = "queued"
	DocsUpdateInProgress DocsUpdateStatus = "in_progress"
	DocsUpdateSuccess    DocsUpdateStatus = "success"
	DocsUpdateFailure    DocsUpdateStatus = "failure"
)

// Ended reports whether s is an outcome.
func (s DocsUpdateStatus) Ended() bool { return s == DocsUpdateSuccess || s == DocsUpdateFailure }

// What asked for an update (DocsUpdateRecord.Trigger).
const (
	DocsTriggerAPI      = "api"      // POST /v1/project/update/{projectId}
	DocsTriggerJob      = "job"      // an agent job of the project completed
	DocsTriggerInterval = "interval" // the periodic refresh
	DocsTriggerStart    = "start"    // the first index of a project at start
)

// DocsUpdateRecord is an update as the store keeps it.
type DocsUpdateRecord struct {
	ID        string
	ProjectID string
	Status    DocsUpdateStatus
	// Trigger is what asked for it (DocsTriggerAPI and the others).
	Trigger string
	// Summary says what the update did ("12 pages updated, 1 removed"),
	// or why it failed; "" until it ends.
	Summary string
	// Logs are its lines: files skipped and why, problems by file and
	// line; never nil.
	Logs []string
	// Commit is what the update read; zero until it ends, and on a
	// failure before the repository was read.
	Commit         DocsCommit
	Attempts       int
	LeaseOwner     string
	LeaseExpiresAt time.Time // by the store's lease time, as a job's
	CreatedAt      time.Time
	UpdatedAt      time.Time
	EndedAt        time.Time // zero until it ends
}

// DocsCommit is the commit an update read and what changed since the
// index's last one.
type DocsCommit struct {
	SHA, Ref, Message string
	// Added, Modified and Removed are the repository files read (pages
	// and navigation) whose blobs are new, changed or gone, sorted;
	// never nil.
	Added, Modified, Removed []string
}

// NewDocsUpdate is what CreateDocsUpdate stores.
type NewDocsUpdate struct {
	ID, ProjectID string
	Trigger       string
	CreatedAt     time.Time
}

// DocsUpdateFinish is a run's outcome for FinishDocsUpdate.
type DocsUpdateFinish struct {
	ID, Owner string
	At        time.Time
	Status    DocsUpdateStatus // DocsUpdateSuccess or DocsUpdateFailure
	Summary   string
	Logs      []string
	Commit    DocsCommit
}

// Bounds of an update's record, so that a repository of many problems
// makes a record of bounded size (the worker keeps the first lines and
// says how many it left out).
const (
	MaxDocsUpdateLogs      = 500     // lines
	MaxDocsUpdateLogBytes  = 2048    // per line
	MaxDocsUpdateFiles     = 5000    // per list of DocsCommit
	MaxDocsUpdateTextBytes = 8 << 10 // summary, commit message
)

// Validate returns what makes u unfit for CreateDocsUpdate, or nil.
func (u NewDocsUpdate) Validate() error {
	switch {
	case u.ID == "":
		return Invalid("empty update ID")
	case u.ProjectID == "":
		return Invalid("update %q: empty project ID", u.ID)
	case u.Trigger == "" || !cleanDocText(u.Trigger):
		return Invalid("update %q: trigger %q must be non-empty text", u.ID, u.Trigger)
	case u.CreatedAt.IsZero():
		return Invalid("update %q: zero creation time", u.ID)
	}
	return nil
}

// Validate returns what makes f unfit for FinishDocsUpdate, or nil.
func (f DocsUpdateFinish) Validate() error {
	switch {
	case f.ID == "":
		return Invalid("empty update ID")
	case f.Owner == "":
		return Invalid("update %q: empty owner", f.ID)
	case f.At.IsZero():
		return Invalid("update %q: zero end time", f.ID)
	case !f.Status.Ended():
		return Invalid("update %q: status %q is not an outcome", f.ID, f.Status)
	case len(f.Summary) > MaxDocsUpdateTextBytes || len(f.Commit.Message) > MaxDocsUpdateTextBytes:
		return Invalid("update %q: summary or commit message longer than %d bytes", f.ID, MaxDocsUpdateTextBytes)
	case !cleanDocText(f.Summary, f.Commit.SHA, f.Commit.Ref, f.Commit.Message):
		return Invalid("update %q: summary or commit holds invalid UTF-8 or control characters", f.ID)
	case len(f.Logs) > MaxDocsUpdateLogs:
		return Invalid("update %q: %d log lines, more than %d", f.ID, len(f.Logs), MaxDocsUpdateLogs)
	}
	for _, l := range f.Logs {
		if len(l) > MaxDocsUpdateLogBytes || !cleanDocText(l) {
			return Invalid("update %q: a log line is longer than %d bytes or not clean text", f.ID, MaxDocsUpdateLogBytes)
		}
	}
	for _, list := range [][]string{f.Commit.Added, f.Commit.Modified, f.Commit.Removed} {
		if len(list) > MaxDocsUpdateFiles {
			return Invalid("update %q: more than %d files in a list of the commit", f.ID, MaxDocsUpdateFiles)
		}
		for _, p := range list {
			if p == "" || !cleanDocText(p) {
				return Invalid("update %q: file %q in the commit is not a clean path", f.ID, p)
			}
		}
	}
	return nil
}

// ValidateDocsUpdateLease returns what makes the arguments unfit for
// ExtendDocsUpdateLease, or nil.
func ValidateDocsUpdateLease(id, owner string, now time.Time, leaseFor time.Duration) error {
	switch {
	case id == "" || owner == "":
		return Invalid("empty update ID or owner")
	case now.IsZero():
		return Invalid("update %q: zero current time", id)
	case leaseFor < time.Microsecond:
		return Invalid("update %q: lease duration %v: must be at least 1µs", id, leaseFor)
	}
	return nil
}

// DocsUpdateGaveUp is the summary of an update that ended because its
// attempts ran out: every worker that took it stopped before its end.
func DocsUpdateGaveUp(attempts int) string {
	return fmt.Sprintf("failed: the update was interrupted %d times (its worker stopped or lost its lease); the previous index still serves", attempts)
}

// CleanDocsText makes s fit for an update's record: invalid UTF-8 and
// control characters (tabs and newlines kept) become U+FFFD, and it is cut
// to max bytes on a character's boundary. Commit messages and problems
// quote what a repository holds, so the worker cleans them rather than
// have the record refused.
func CleanDocsText(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if isRefusedControl(r) {
			return '\uFFFD'
		}
		return r
	}, s)
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return s
}

// Claimed returns u as ClaimDocsUpdate leases it to c.Owner, with the lease
// ending at expires; or, with failed true, as it ends because its attempts
// ran out.
func (u DocsUpdateRecord) Claimed(c Claim, expires time.Time) (rec DocsUpdateRecord, failed bool) {
	if u.Attempts >= c.MaxAttempts {
		u.Status = DocsUpdateFailure
		u.Summary = DocsUpdateGaveUp(u.Attempts)
		u.LeaseOwner, u.LeaseExpiresAt = "", time.Time{}
		u.EndedAt, u.UpdatedAt = c.Now, c.Now
		return u, true
	}
	u.Status = DocsUpdateInProgress
	u.Attempts++
	u.LeaseOwner, u.LeaseExpiresAt = c.Owner, expires
	u.UpdatedAt = c.Now
	return u, false
}

// Finished returns u as FinishDocsUpdate ends it with f.
func (u DocsUpdateRecord) Finished(f DocsUpdateFinish) DocsUpdateRecord {
	u.Status, u.Summary = f.Status, f.Summary
	u.Logs = append([]string{}, f.Logs...)
	u.Commit = f.Commit.normalized()
	u.LeaseOwner, u.LeaseExpiresAt = "", time.Time{}
	u.EndedAt, u.UpdatedAt = f.At, f.At
	return u
}

func (c DocsCommit) normalized() DocsCommit {
	c.Added = append([]string{}, c.Added...)
	c.Modified = append([]string{}, c.Modified...)
	c.Removed = append([]string{}, c.Removed...)
	return c
}
