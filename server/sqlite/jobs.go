package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

const jobColumns = `id, project_id, status, repository, ref, model, branch, handled, pr_link,
	failure_reason, attempts, lease_owner, lease_expires_at, created_at, updated_at, archived_at`

// loadJob reads the job selected by where (a condition on jobs) and its
// prompts. found is false if there is no such job. Called inside a
// transaction, so the job row and its prompts come from one snapshot.
func loadJob(ctx context.Context, q querier, where string, args ...any) (job store.Job, found bool, err error) {
	j, err := scanJob(q.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE `+where, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Job{}, false, nil
	}
	if err != nil {
		return store.Job{}, false, err
	}

	rows, err := q.QueryContext(ctx, `SELECT text, at FROM job_prompts WHERE job_id = ? ORDER BY position`, j.ID)
	j.Prompts, err = collect(rows, err, func(sc scanner) (store.Prompt, error) {
		var p store.Prompt
		err := sc.Scan(&p.Text, timeCol{&p.At})
		return p, err
	})
	if err != nil {
		return store.Job{}, false, err
	}
	return j, true, nil
}

// scanJob reads a row of jobColumns: a job without its prompts.
func scanJob(sc scanner) (store.Job, error) { return scanJobAnd(sc) }

// scanJobAnd reads a row of jobColumns followed by the columns of extra.
func scanJobAnd(sc scanner, extra ...any) (store.Job, error) {
	var (
		j     store.Job
		owner sql.NullString
	)
	err := sc.Scan(append([]any{
		&j.ID, &j.ProjectID, (*string)(&j.Status), &j.Repository, &j.Ref, &j.Model, &j.Branch, &j.Handled, &j.PRLink,
		&j.FailureReason, &j.Attempts, &owner, timeCol{&j.LeaseExpiresAt}, timeCol{&j.CreatedAt},
		timeCol{&j.UpdatedAt}, timeCol{&j.ArchivedAt}}, extra...)...)
	j.LeaseOwner = owner.String
	return j, err
}

// Job reads the job jobID of the project.
func (t txn) Job(ctx context.Context, projectID, jobID string) (store.Job, bool, error) {
	return loadJob(ctx, t.tx, `id = ? AND project_id = ?`, jobID, projectID)
}

// LockJob reads the job jobID of the project; the write lock keeps it as
// read.
func (t txn) LockJob(ctx context.Context, projectID, jobID string) (store.Job, bool, error) {
	return t.Job(ctx, projectID, jobID)
}

// LockLeasedJob reads the job jobID whose lease owner holds.
func (t txn) LockLeasedJob(ctx context.Context, jobID, owner string) (store.Job, bool, error) {
	return loadJob(ctx, t.tx, `id = ? AND lease_owner = ?`, jobID, owner)
}

// readyJobQuery finds the oldest ready job at a time. The condition repeats
// the partial index's status = 'active', which is what lets SQLite use
// jobs_ready: it then reads active jobs in claim order and stops at the first
// whose lease is free.
const readyJobQuery = `SELECT id FROM jobs
	WHERE status = 'active' AND (lease_owner IS NULL OR lease_expires_at < ?)
	ORDER BY created_at, id LIMIT 1`

// LockReadyJob reads the oldest job ready at now, the time it is told: a
// SQLite file is shared only by processes of one machine, on one clock,
// so its leases follow the callers' time. The write lock, held from BEGIN
// IMMEDIATE, keeps every other claim, of this process or another, from
// seeing the job before this transaction leases it.
func (t txn) LockReadyJob(ctx context.Context, now time.Time) (store.Job, time.Time, bool, error) {
	var id string
	err := t.tx.QueryRowContext(ctx, readyJobQuery, micros(now)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Job{}, time.Time{}, false, nil
	}
	if err != nil {
		return store.Job{}, time.Time{}, false, err
	}
	j, found, err := t.JobByID(ctx, id)
	return j, now, found, err
}

// JobByID reads the job id.
func (t txn) JobByID(ctx context.Context, id string) (store.Job, bool, error) {
	return loadJob(ctx, t.tx, `id = ?`, id)
}

// InsertJob stores a new job and its prompts, after checking that its ID
// is free (the write lock keeps it free until the insert).
func (t txn) InsertJob(ctx context.Context, j store.Job) error {
	found, err := exists(ctx, t.tx, `SELECT 1 FROM jobs WHERE id = ?`, j.ID)
	if err != nil {
		return err
	}
	if found {
		return fmt.Errorf("job %q: %w", j.ID, store.ErrConflict)
	}
	if _, err := t.tx.ExecContext(ctx,
		`INSERT INTO jobs (id, project_id, status, repository, ref, model, branch, handled, pr_link,
		        failure_reason, attempts, lease_owner, lease_expires_at, created_at, updated_at, archived_at)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		j.ID, j.ProjectID, string(j.Status), j.Repository, j.Ref, j.Model, j.Branch, j.Handled, j.PRLink,
		j.FailureReason, j.Attempts, leaseOwner(j.LeaseOwner), micros(j.LeaseExpiresAt), micros(j.CreatedAt),
		micros(j.UpdatedAt), micros(j.ArchivedAt)); err != nil {
		return err
	}
	return t.appendPrompts(ctx, j.ID, 0, j.Prompts)
}

// SaveJob stores j over was: the columns the job methods change, and the
// prompts j has beyond was's.
func (t txn) SaveJob(ctx context.Context, was, j store.Job) error {
	if _, err := t.tx.ExecContext(ctx,
		`UPDATE jobs SET status = ?, handled = ?, pr_link = ?, failure_reason = ?, attempts = ?,
		        lease_owner = ?, lease_expires_at = ?, updated_at = ?, archived_at = ?
		 WHERE id = ?`,
		string(j.Status), j.Handled, j.PRLink, j.FailureReason, j.Attempts,
		leaseOwner(j.LeaseOwner), micros(j.LeaseExpiresAt), micros(j.UpdatedAt), micros(j.ArchivedAt), j.ID); err != nil {
		return err
	}
	return t.appendPrompts(ctx, j.ID, len(was.Prompts), j.Prompts[len(was.Prompts):])
}

// appendPrompts stores prompts as the job's, the first at position from.
func (t txn) appendPrompts(ctx context.Context, jobID string, from int, prompts []store.Prompt) error {
	for i, p := range prompts {
		if _, err := t.tx.ExecContext(ctx,
			`INSERT INTO job_prompts (job_id, position, text, at) VALUES (?, ?, ?, ?)`,
			jobID, from+i, p.Text, micros(p.At)); err != nil {
			return err
		}
	}
	return nil
}

// leaseOwner is how a lease's owner is stored: NULL for none, as the
// lease's expiry is.
func leaseOwner(o string) sql.NullString {
	return sql.NullString{String: o, Valid: o != ""}
}

// ExtendLease moves the lease's expiry to leaseFor after now, the time it
// is told (see LockReadyJob), if owner holds it and it did not expire
// before now.
func (t txn) ExtendLease(ctx context.Context, jobID, owner string, now time.Time, leaseFor time.Duration) (bool, error) {
	res, err := t.tx.ExecContext(ctx,
		`UPDATE jobs SET lease_expires_at = ?
		 WHERE id = ? AND lease_owner = ? AND lease_expires_at >= ?`,
		micros(now.Add(leaseFor)), jobID, owner, micros(now))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// AnnounceJobs does nothing: engines sharing a SQLite file find new jobs
// at their next poll.
func (txn) AnnounceJobs(context.Context) error { return nil }

// ReserveKey looks the idempotency key up. A key is recorded at KeepKey,
// after the write: it names the job it protects, which must exist first.
func (t txn) ReserveKey(ctx context.Context, projectID string, idem *store.Idempotency, _ string) ([]byte, string, bool, error) {
	var hash []byte
	var jobID string
	err := t.tx.QueryRowContext(ctx,
		`SELECT request_hash, job_id FROM idempotency_keys WHERE project_id = ? AND key = ?`,
		projectID, idem.Key).Scan(&hash, &jobID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", false, nil
	}
	return hash, jobID, err == nil, err
}

// KeepKey records the idempotency key for jobID.
func (t txn) KeepKey(ctx context.Context, projectID string, idem *store.Idempotency, jobID string) error {
	_, err := t.tx.ExecContext(ctx,
		`INSERT INTO idempotency_keys (project_id, key, request_hash, job_id) VALUES (?, ?, ?, ?)`,
		projectID, idem.Key, idem.RequestHash, jobID)
	return err
}
