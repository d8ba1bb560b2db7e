package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server/store"
)

const jobColumns = `id, project_id, status, repository, ref, model, branch, handled, pr_link,
	failure_reason, attempts, lease_owner, lease_expires_at, created_at, updated_at, archived_at`

// loadJob reads the job selected by where (a condition on jobs) and its
// prompts. found is false if there is no such job. Called inside a
// transaction, so the job row and its prompts come from one snapshot.
func loadJob(ctx context.Context, q querier, where string, args ...any) (job store.Job, found bool, err error) {
	var (
		j                                      store.Job
		status                                 string
		owner                                  sql.NullString
		leaseExp, created, updated, archivedAt sql.NullInt64
	)
	err = q.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE `+where, args...).Scan(
		&j.ID, &j.ProjectID, &status, &j.Repository, &j.Ref, &j.Model, &j.Branch, &j.Handled, &j.PRLink,
		&j.FailureReason, &j.Attempts, &owner, &leaseExp, &created, &updated, &archivedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Job{}, false, nil
	}
	if err != nil {
		return store.Job{}, false, err
	}
	j.Status = docsapi.JobStatus(status)
	j.LeaseOwner = owner.String
	j.LeaseExpiresAt = fromMicros(leaseExp)
	j.CreatedAt = fromMicros(created)
	j.UpdatedAt = fromMicros(updated)
	j.ArchivedAt = fromMicros(archivedAt)

	rows, err := q.QueryContext(ctx, `SELECT text, at FROM job_prompts WHERE job_id = ? ORDER BY position`, j.ID)
	if err != nil {
		return store.Job{}, false, err
	}
	defer rows.Close()
	j.Prompts = []store.Prompt{}
	for rows.Next() {
		var p store.Prompt
		var at sql.NullInt64
		if err := rows.Scan(&p.Text, &at); err != nil {
			return store.Job{}, false, err
		}
		p.At = fromMicros(at)
		j.Prompts = append(j.Prompts, p)
	}
	if err := rows.Err(); err != nil {
		return store.Job{}, false, err
	}
	return j, true, nil
}

// mustLoadJob is loadJob for a job the transaction knows exists.
func mustLoadJob(ctx context.Context, tx *sql.Tx, id string) (store.Job, error) {
	j, found, err := loadJob(ctx, tx, `id = ?`, id)
	if err == nil && !found {
		err = fmt.Errorf("job %q vanished inside its transaction", id)
	}
	return j, err
}

// replay looks the idempotency key up. If the project used it before with the
// same request hash it returns the job that request wrote; with another hash,
// ErrIdempotencyMismatch; if never, ok is false.
func replay(ctx context.Context, tx *sql.Tx, op, projectID string, idem *store.Idempotency) (job store.Job, ok bool, err error) {
	if idem == nil {
		return store.Job{}, false, nil
	}
	var hash []byte
	var jobID string
	err = tx.QueryRowContext(ctx,
		`SELECT request_hash, job_id FROM idempotency_keys WHERE project_id = ? AND key = ?`,
		projectID, idem.Key).Scan(&hash, &jobID)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Job{}, false, nil
	}
	if err != nil {
		return store.Job{}, false, dbErr(op, err)
	}
	if !bytes.Equal(hash, idem.RequestHash) {
		return store.Job{}, false, fmt.Errorf("sqlite: %s: idempotency key %q of project %q: %w",
			op, idem.Key, projectID, store.ErrIdempotencyMismatch)
	}
	job, err = mustLoadJob(ctx, tx, jobID)
	if err != nil {
		return store.Job{}, false, dbErr(op, err)
	}
	return job, true, nil
}

// remember records the idempotency key, in the transaction of the write it
// protects, so that the write and its record exist together or not at all.
func remember(ctx context.Context, tx *sql.Tx, projectID string, idem *store.Idempotency, jobID string) error {
	if idem == nil {
		return nil
	}
	_, err := tx.ExecContext(ctx,
		`INSERT INTO idempotency_keys (project_id, key, request_hash, job_id) VALUES (?, ?, ?, ?)`,
		projectID, idem.Key, idem.RequestHash, jobID)
	return err
}

// CreateJob stores a new active job whose history is the one prompt, as
// store.Store documents. Job IDs are unique across projects: ErrConflict if
// any project has a job with that ID.
func (s *Store) CreateJob(ctx context.Context, j store.NewJob) (store.Job, bool, error) {
	const op = "create job"
	if p := j.Problem(); p != "" {
		return store.Job{}, false, invalid(op, "%s", p)
	}
	if p := j.Idempotency.Problem(); p != "" {
		return store.Job{}, false, invalid(op, "%s", p)
	}
	var (
		job      store.Job
		replayed bool
	)
	err := s.write(ctx, op, func(tx *sql.Tx) error {
		found, err := exists(ctx, tx, `SELECT 1 FROM projects WHERE id = ?`, j.ProjectID)
		if err != nil {
			return dbErr(op, err)
		}
		if !found {
			return fmt.Errorf("sqlite: %s: project %q: %w", op, j.ProjectID, store.ErrNotFound)
		}
		// The replay comes before the ID check: a retried request carries
		// the ID of the job its first attempt created.
		if job, replayed, err = replay(ctx, tx, op, j.ProjectID, j.Idempotency); err != nil || replayed {
			return err
		}
		found, err = exists(ctx, tx, `SELECT 1 FROM jobs WHERE id = ?`, j.ID)
		if err != nil {
			return dbErr(op, err)
		}
		if found {
			return fmt.Errorf("sqlite: %s: job %q: %w", op, j.ID, store.ErrConflict)
		}
		created := micros(j.CreatedAt)
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO jobs (id, project_id, status, repository, ref, model, branch, created_at, updated_at)
			 VALUES (?, ?, 'active', ?, ?, ?, ?, ?, ?)`,
			j.ID, j.ProjectID, j.Repository, j.Ref, j.Model, j.Branch, created, created); err != nil {
			return dbErr(op, err)
		}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO job_prompts (job_id, position, text, at) VALUES (?, 0, ?, ?)`,
			j.ID, j.Prompt, created); err != nil {
			return dbErr(op, err)
		}
		if err := remember(ctx, tx, j.ProjectID, j.Idempotency, j.ID); err != nil {
			return dbErr(op, err)
		}
		if job, err = mustLoadJob(ctx, tx, j.ID); err != nil {
			return dbErr(op, err)
		}
		return nil
	})
	if err != nil {
		return store.Job{}, false, err
	}
	return job, replayed, nil
}

// Job returns a job of the project, or ErrNotFound.
func (s *Store) Job(ctx context.Context, projectID, jobID string) (store.Job, error) {
	const op = "job"
	var job store.Job
	err := s.read(ctx, op, func(tx *sql.Tx) error {
		j, found, err := loadJob(ctx, tx, `id = ? AND project_id = ?`, jobID, projectID)
		if err != nil {
			return dbErr(op, err)
		}
		if !found {
			return fmt.Errorf("sqlite: job %q of project %q: %w", jobID, projectID, store.ErrNotFound)
		}
		job = j
		return nil
	})
	if err != nil {
		return store.Job{}, err
	}
	return job, nil
}

// AddPrompt appends a follow-up prompt and makes the job active again, as
// store.Store documents. A job that is not running (no lease) also gets its
// Attempts reset to zero: the prompt starts a new run, which must not inherit
// the attempts of runs that already ended (a job that failed for reaching
// MaxAttempts would otherwise fail again at its next claim without running).
// A running job keeps its lease and its Attempts: its run goes on.
func (s *Store) AddPrompt(ctx context.Context, p store.NewPrompt) (store.Job, bool, error) {
	const op = "add prompt"
	if pr := p.Problem(); pr != "" {
		return store.Job{}, false, invalid(op, "%s", pr)
	}
	if pr := p.Idempotency.Problem(); pr != "" {
		return store.Job{}, false, invalid(op, "%s", pr)
	}
	var (
		job      store.Job
		replayed bool
	)
	err := s.write(ctx, op, func(tx *sql.Tx) error {
		// The replay comes first: it returns the job as it is now, even if
		// it was archived since the original request.
		var err error
		if job, replayed, err = replay(ctx, tx, op, p.ProjectID, p.Idempotency); err != nil || replayed {
			return err
		}
		j, found, err := loadJob(ctx, tx, `id = ? AND project_id = ?`, p.JobID, p.ProjectID)
		if err != nil {
			return dbErr(op, err)
		}
		if !found {
			return fmt.Errorf("sqlite: %s: job %q of project %q: %w", op, p.JobID, p.ProjectID, store.ErrNotFound)
		}
		if j.Status == docsapi.JobStatusArchived {
			return fmt.Errorf("sqlite: %s: job %q: %w", op, p.JobID, store.ErrArchived)
		}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO job_prompts (job_id, position, text, at) VALUES (?, ?, ?, ?)`,
			p.JobID, len(j.Prompts), p.Prompt, micros(p.At)); err != nil {
			return dbErr(op, err)
		}
		if _, err := tx.ExecContext(ctx,
			`UPDATE jobs SET status = 'active', failure_reason = '', updated_at = ?,
			        attempts = CASE WHEN lease_owner IS NULL THEN 0 ELSE attempts END
			 WHERE id = ?`,
			micros(p.At), p.JobID); err != nil {
			return dbErr(op, err)
		}
		if err := remember(ctx, tx, p.ProjectID, p.Idempotency, p.JobID); err != nil {
			return dbErr(op, err)
		}
		if job, err = mustLoadJob(ctx, tx, p.JobID); err != nil {
			return dbErr(op, err)
		}
		return nil
	})
	if err != nil {
		return store.Job{}, false, err
	}
	return job, replayed, nil
}

// ArchiveJob archives the job and drops any lease, as store.Store documents.
// A zero at is refused: it would store an archived job without ArchivedAt.
func (s *Store) ArchiveJob(ctx context.Context, projectID, jobID string, at time.Time) (store.Job, error) {
	const op = "archive job"
	if p := store.ArchiveJobProblem(projectID, jobID, at); p != "" {
		return store.Job{}, invalid(op, "%s", p)
	}
	var job store.Job
	err := s.write(ctx, op, func(tx *sql.Tx) error {
		j, found, err := loadJob(ctx, tx, `id = ? AND project_id = ?`, jobID, projectID)
		if err != nil {
			return dbErr(op, err)
		}
		if !found {
			return fmt.Errorf("sqlite: %s: job %q of project %q: %w", op, jobID, projectID, store.ErrNotFound)
		}
		if j.Status == docsapi.JobStatusArchived {
			job = j
			return nil
		}
		if _, err := tx.ExecContext(ctx,
			`UPDATE jobs SET status = 'archived', archived_at = ?, updated_at = ?,
			        lease_owner = NULL, lease_expires_at = NULL
			 WHERE id = ?`,
			micros(at), micros(at), jobID); err != nil {
			return dbErr(op, err)
		}
		if job, err = mustLoadJob(ctx, tx, jobID); err != nil {
			return dbErr(op, err)
		}
		return nil
	})
	if err != nil {
		return store.Job{}, err
	}
	return job, nil
}

// readyJobQuery finds the oldest ready job at a time. The condition repeats
// the partial index's status = 'active', which is what lets SQLite use
// jobs_ready: it then reads active jobs in claim order and stops at the first
// whose lease is free.
const readyJobQuery = `SELECT id, attempts FROM jobs
	WHERE status = 'active' AND (lease_owner IS NULL OR lease_expires_at < ?)
	ORDER BY created_at, id LIMIT 1`

// ClaimJob leases the oldest ready job to c.Owner, as store.Store documents.
// The search and the lease are one BEGIN IMMEDIATE transaction, which holds
// the database's write lock from its first statement, so no other claim, in
// this process or another, can pick the same job in between.
func (s *Store) ClaimJob(ctx context.Context, c store.Claim) (store.Job, error) {
	const op = "claim job"
	if p := c.Problem(); p != "" {
		return store.Job{}, invalid(op, "%s", p)
	}
	now := micros(c.Now)
	until := micros(c.Now.Add(c.LeaseFor))
	var job store.Job
	claimed := false
	err := s.write(ctx, op, func(tx *sql.Tx) error {
		for {
			var id string
			var attempts int
			err := tx.QueryRowContext(ctx, readyJobQuery, now).Scan(&id, &attempts)
			if errors.Is(err, sql.ErrNoRows) {
				// Commit the jobs failed on the way: they are decided.
				return nil
			}
			if err != nil {
				return dbErr(op, err)
			}
			if attempts >= c.MaxAttempts {
				if _, err := tx.ExecContext(ctx,
					`UPDATE jobs SET status = 'failed', failure_reason = ?, updated_at = ?,
					        lease_owner = NULL, lease_expires_at = NULL
					 WHERE id = ?`,
					fmt.Sprintf("gave up after %d attempts (the limit is %d): every run ended without an outcome", attempts, c.MaxAttempts),
					now, id); err != nil {
					return dbErr(op, err)
				}
				continue
			}
			if _, err := tx.ExecContext(ctx,
				`UPDATE jobs SET attempts = attempts + 1, lease_owner = ?, lease_expires_at = ?, updated_at = ?
				 WHERE id = ?`,
				c.Owner, until, now, id); err != nil {
				return dbErr(op, err)
			}
			if job, err = mustLoadJob(ctx, tx, id); err != nil {
				return dbErr(op, err)
			}
			claimed = true
			return nil
		}
	})
	if err != nil {
		return store.Job{}, err
	}
	if !claimed {
		return store.Job{}, fmt.Errorf("sqlite: %s: %w", op, store.ErrNoJob)
	}
	return job, nil
}

// ExtendLease moves the lease's expiry to until if owner holds a lease that
// has not expired before now. ErrLeaseLost otherwise.
func (s *Store) ExtendLease(ctx context.Context, jobID, owner string, now, until time.Time) error {
	const op = "extend lease"
	// An empty job ID or owner is not refused as invalid: no lease has
	// either, so the caller simply does not hold one (ErrLeaseLost below).
	if p := store.ExtendLeaseProblem(jobID, now, until); p != "" {
		return invalid(op, "%s", p)
	}
	return s.write(ctx, op, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`UPDATE jobs SET lease_expires_at = ?
			 WHERE id = ? AND lease_owner = ? AND lease_expires_at >= ?`,
			micros(until), jobID, owner, micros(now))
		if err != nil {
			return dbErr(op, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return dbErr(op, err)
		} else if n == 0 {
			return fmt.Errorf("sqlite: %s: job %q, owner %q: %w", op, jobID, owner, store.ErrLeaseLost)
		}
		return nil
	})
}

// FinishJob records the outcome of owner's run, as store.Store documents. A
// lease that expired but that no other owner has claimed yet is still
// owner's: the outcome is accepted rather than thrown away, and since claims
// and finishes are serialized by the write lock, no other run can have
// started in between. Completed with Handled above the number of prompts is
// refused.
func (s *Store) FinishJob(ctx context.Context, f store.Finish) (store.Job, error) {
	const op = "finish job"
	// An empty job ID or owner holds no lease: ErrLeaseLost below.
	if p := f.Problem(); p != "" {
		return store.Job{}, invalid(op, "%s", p)
	}
	var job store.Job
	err := s.write(ctx, op, func(tx *sql.Tx) error {
		j, found, err := loadJob(ctx, tx, `id = ? AND lease_owner = ?`, f.JobID, f.Owner)
		if err != nil {
			return dbErr(op, err)
		}
		if !found {
			return fmt.Errorf("sqlite: %s: job %q, owner %q: %w", op, f.JobID, f.Owner, store.ErrLeaseLost)
		}
		at := micros(f.At)
		switch f.Outcome {
		case store.Completed:
			if f.Handled > len(j.Prompts) {
				return invalid(op, "job %q: Handled %d exceeds its %d prompts", f.JobID, f.Handled, len(j.Prompts))
			}
			status, attempts := docsapi.JobStatusCompleted, j.Attempts
			if f.Handled < len(j.Prompts) {
				// Prompts arrived during the run: it runs again, and since
				// this run succeeded, the next starts with fresh attempts.
				status, attempts = docsapi.JobStatusActive, 0
			}
			_, err = tx.ExecContext(ctx,
				`UPDATE jobs SET status = ?, handled = ?, attempts = ?,
				        pr_link = CASE WHEN ? = '' THEN pr_link ELSE ? END,
				        updated_at = ?, lease_owner = NULL, lease_expires_at = NULL
				 WHERE id = ?`,
				string(status), f.Handled, attempts, f.PRLink, f.PRLink, at, f.JobID)
		case store.Failed:
			_, err = tx.ExecContext(ctx,
				`UPDATE jobs SET status = 'failed', failure_reason = ?,
				        updated_at = ?, lease_owner = NULL, lease_expires_at = NULL
				 WHERE id = ?`,
				f.FailureReason, at, f.JobID)
		}
		if err != nil {
			return dbErr(op, err)
		}
		if job, err = mustLoadJob(ctx, tx, f.JobID); err != nil {
			return dbErr(op, err)
		}
		return nil
	})
	if err != nil {
		return store.Job{}, err
	}
	return job, nil
}

// ReleaseJob drops owner's lease and gives the attempt back, as store.Store
// documents. As for FinishJob, an expired lease nobody else claimed is still
// owner's to release.
func (s *Store) ReleaseJob(ctx context.Context, jobID, owner string) error {
	const op = "release job"
	// An empty job ID or owner holds no lease: ErrLeaseLost below.
	return s.write(ctx, op, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`UPDATE jobs SET lease_owner = NULL, lease_expires_at = NULL, attempts = max(attempts - 1, 0)
			 WHERE id = ? AND lease_owner = ?`,
			jobID, owner)
		if err != nil {
			return dbErr(op, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return dbErr(op, err)
		} else if n == 0 {
			return fmt.Errorf("sqlite: %s: job %q, owner %q: %w", op, jobID, owner, store.ErrLeaseLost)
		}
		return nil
	})
}
