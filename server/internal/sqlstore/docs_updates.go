package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// DocsUpdateTx is the statements of the documentation updates' methods.
type DocsUpdateTx interface {
	// InsertDocsUpdate stores a new update: store.ErrConflict if its ID is
	// taken.
	InsertDocsUpdate(ctx context.Context, u store.DocsUpdateRecord) error
	// DocsUpdate reads the update id.
	DocsUpdate(ctx context.Context, id string) (u store.DocsUpdateRecord, found bool, err error)
	// LockQueuedDocsUpdate reads the project's queued, unclaimed update,
	// if any, and locks it; the project's row is locked first, so that
	// two creations for one project queue and the second finds the
	// first's update.
	LockQueuedDocsUpdate(ctx context.Context, projectID string) (u store.DocsUpdateRecord, found bool, err error)
	// LockReadyDocsUpdate reads the oldest update (CreatedAt, then ID)
	// that is ready at the database's lease time (see LockReadyJob), as
	// store.DocsUpdateStore.ClaimDocsUpdate says, and locks it; leaseNow
	// is that time. An update another transaction holds is passed over.
	LockReadyDocsUpdate(ctx context.Context, now time.Time) (u store.DocsUpdateRecord, leaseNow time.Time, found bool, err error)
	// LockLeasedDocsUpdate reads the update id whose lease owner holds,
	// expired or not, and locks it.
	LockLeasedDocsUpdate(ctx context.Context, id, owner string) (u store.DocsUpdateRecord, found bool, err error)
	// HoldDocsUpdateLease locks the update id if it is of the project, in
	// progress, leased to owner, and its lease has not expired at the
	// store's lease time (now on a database told the time; on a
	// LeaseClock, the database's clock as this statement runs, after the
	// index's lock was granted); held is false otherwise. It is
	// store.DocsFence's check, which UpdateDocs makes in its transaction.
	HoldDocsUpdateLease(ctx context.Context, projectID, id, owner string, now time.Time) (held bool, err error)
	// SaveDocsUpdate stores the fields the claim and finish change.
	SaveDocsUpdate(ctx context.Context, u store.DocsUpdateRecord) error
	// ExtendDocsUpdateLease moves the lease's expiry as ExtendLease does
	// a job's; held is false if owner does not hold an unexpired lease.
	ExtendDocsUpdateLease(ctx context.Context, id, owner string, now time.Time, leaseFor time.Duration) (held bool, err error)
	// DeleteEndedDocsUpdates deletes the updates ended before endedBefore.
	DeleteEndedDocsUpdates(ctx context.Context, endedBefore time.Time) (int, error)
}

// PruneDocsUpdates deletes the updates that ended before endedBefore.
func (s *Store) PruneDocsUpdates(ctx context.Context, endedBefore time.Time) (int, error) {
	var refused error
	if endedBefore.IsZero() {
		refused = store.Invalid("zero time to prune before")
	}
	return write(ctx, s, "prune docs updates", refused, func(tx Tx) (int, error) {
		return tx.DeleteEndedDocsUpdates(ctx, endedBefore)
	})
}

// CreateDocsUpdate queues an update, or returns the project's queued one,
// as store.DocsUpdateStore documents.
func (s *Store) CreateDocsUpdate(ctx context.Context, u store.NewDocsUpdate) (store.DocsUpdateRecord, bool, error) {
	var joined bool
	rec, err := write(ctx, s, "create docs update", u.Validate(), func(tx Tx) (store.DocsUpdateRecord, error) {
		if err := requireProject(ctx, tx, u.ProjectID); err != nil {
			return store.DocsUpdateRecord{}, err
		}
		queued, found, err := tx.LockQueuedDocsUpdate(ctx, u.ProjectID)
		if err != nil {
			return store.DocsUpdateRecord{}, err
		}
		if found {
			joined = true
			return queued, nil
		}
		rec := store.DocsUpdateRecord{ID: u.ID, ProjectID: u.ProjectID, Status: store.DocsUpdateQueued,
			Trigger: u.Trigger, Logs: []string{}, CreatedAt: u.CreatedAt, UpdatedAt: u.CreatedAt}
		if err := tx.InsertDocsUpdate(ctx, rec); err != nil {
			return store.DocsUpdateRecord{}, err
		}
		return storedUpdate(ctx, tx, u.ID)
	})
	return rec, joined && err == nil, err
}

// DocsUpdate returns one update, or ErrNotFound.
func (s *Store) DocsUpdate(ctx context.Context, id string) (store.DocsUpdateRecord, error) {
	return read(ctx, s, "docs update", func(tx Tx) (store.DocsUpdateRecord, error) {
		return storedUpdate(ctx, tx, id)
	})
}

// ClaimDocsUpdate leases the oldest ready update, failing on the way those
// whose attempts ran out, as ClaimJob does jobs.
func (s *Store) ClaimDocsUpdate(ctx context.Context, c store.Claim) (store.DocsUpdateRecord, error) {
	const op = "claim docs update"
	rec, err := write(ctx, s, op, c.Validate(), func(tx Tx) (store.DocsUpdateRecord, error) {
		for {
			u, leaseNow, found, err := tx.LockReadyDocsUpdate(ctx, c.Now)
			if err != nil || !found {
				return store.DocsUpdateRecord{}, err
			}
			next, failed := u.Claimed(c, leaseNow.Add(c.LeaseFor))
			if err := tx.SaveDocsUpdate(ctx, next); err != nil {
				return store.DocsUpdateRecord{}, err
			}
			if !failed {
				return storedUpdate(ctx, tx, u.ID)
			}
		}
	})
	if err == nil && rec.ID == "" {
		err = s.db.Fail(op, store.ErrNoJob)
	}
	return rec, err
}

// ExtendDocsUpdateLease moves the lease's expiry, or answers ErrLeaseLost.
func (s *Store) ExtendDocsUpdateLease(ctx context.Context, id, owner string, now time.Time, leaseFor time.Duration) error {
	return s.exec(ctx, "extend docs update lease", store.ValidateDocsUpdateLease(id, owner, now, leaseFor), func(tx Tx) error {
		held, err := tx.ExtendDocsUpdateLease(ctx, id, owner, now, leaseFor)
		if err == nil && !held {
			err = fmt.Errorf("docs update %q, owner %q: %w", id, owner, store.ErrLeaseLost)
		}
		return err
	})
}

// FinishDocsUpdate records the outcome of owner's run.
func (s *Store) FinishDocsUpdate(ctx context.Context, f store.DocsUpdateFinish) (store.DocsUpdateRecord, error) {
	return write(ctx, s, "finish docs update", f.Validate(), func(tx Tx) (store.DocsUpdateRecord, error) {
		u, found, err := tx.LockLeasedDocsUpdate(ctx, f.ID, f.Owner)
		if err != nil {
			return store.DocsUpdateRecord{}, err
		}
		if !found {
			return store.DocsUpdateRecord{}, fmt.Errorf("docs update %q, owner %q: %w", f.ID, f.Owner, store.ErrLeaseLost)
		}
		if err := tx.SaveDocsUpdate(ctx, u.Finished(f)); err != nil {
			return store.DocsUpdateRecord{}, err
		}
		return storedUpdate(ctx, tx, f.ID)
	})
}

// storedUpdate reads the update id as stored, or ErrNotFound.
func storedUpdate(ctx context.Context, tx Tx, id string) (store.DocsUpdateRecord, error) {
	u, found, err := tx.DocsUpdate(ctx, id)
	if err == nil && !found {
		err = fmt.Errorf("docs update %q: %w", id, store.ErrNotFound)
	}
	return u, err
}

// EncodeDocsLists and DecodeDocsLists store an update's logs and its
// commit's file lists as one JSON text: read whole, never queried.
func EncodeDocsLists(u store.DocsUpdateRecord) string {
	b, _ := json.Marshal(docsLists{Logs: u.Logs, Added: u.Commit.Added, Modified: u.Commit.Modified, Removed: u.Commit.Removed})
	return string(b)
}

// DecodeDocsLists sets u's logs and file lists from what EncodeDocsLists
// made; every list is empty, never nil, when absent.
func DecodeDocsLists(text string, u *store.DocsUpdateRecord) error {
	var l docsLists
	if text != "" {
		if err := json.Unmarshal([]byte(text), &l); err != nil {
			return fmt.Errorf("docs update %q: reading its logs: %w", u.ID, err)
		}
	}
	nonNil := func(s []string) []string { return append([]string{}, s...) }
	u.Logs, u.Commit.Added, u.Commit.Modified, u.Commit.Removed = nonNil(l.Logs), nonNil(l.Added), nonNil(l.Modified), nonNil(l.Removed)
	return nil
}

type docsLists struct {
	Logs     []string `json:"logs"`
	Added    []string `json:"added"`
	Modified []string `json:"modified"`
	Removed  []string `json:"removed"`
}
