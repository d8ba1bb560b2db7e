package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server/store"
)

// notifyChannel is the LISTEN/NOTIFY channel of job wake-ups.
const notifyChannel = "docsapi_jobs"

// notifyJobs queues a wake-up for the engines of every replica. PostgreSQL
// holds a notification until its transaction commits and drops it on
// rollback, so it may be queued before the writes it announces: a write that
// then fails (a taken job ID) sends nothing.
const notifyJobs = `SELECT pg_notify('` + notifyChannel + `', '')`

// jobQuery selects jobs with their prompt histories. The prompts are
// aggregated in a lateral subquery of the same statement, so a job and its
// prompts come from one snapshot, in one round trip, without a transaction.
const jobQuery = `SELECT j.id, j.project_id, j.status, j.repository, j.ref, j.model, j.branch, j.handled,
	j.pr_link, j.failure_reason, j.attempts, j.lease_owner, j.lease_expires_at, j.created_at,
	j.updated_at, j.archived_at, p.texts, p.ats
	FROM jobs j CROSS JOIN LATERAL (
		SELECT coalesce(array_agg(jp.text ORDER BY jp.position), '{}') AS texts,
		       coalesce(array_agg(jp.at ORDER BY jp.position), '{}') AS ats
		FROM job_prompts jp WHERE jp.job_id = j.id
	) p
	WHERE `

// loadJob reads the job selected by where (a condition on jobs j). found is
// false if there is no such job.
func loadJob(ctx context.Context, q querier, where string, args ...any) (job store.Job, found bool, err error) {
	var (
		j                                      store.Job
		status                                 string
		owner                                  pgtype.Text
		leaseExp, created, updated, archivedAt pgtype.Timestamptz
		texts                                  []string
		ats                                    []pgtype.Timestamptz
	)
	err = q.QueryRow(ctx, jobQuery+where, args...).Scan(
		&j.ID, &j.ProjectID, &status, &j.Repository, &j.Ref, &j.Model, &j.Branch, &j.Handled,
		&j.PRLink, &j.FailureReason, &j.Attempts, &owner, &leaseExp, &created,
		&updated, &archivedAt, &texts, &ats)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Job{}, false, nil
	}
	if err != nil {
		return store.Job{}, false, err
	}
	if len(texts) != len(ats) {
		return store.Job{}, false, fmt.Errorf("job %q: %d prompt texts but %d times", j.ID, len(texts), len(ats))
	}
	j.Status = docsapi.JobStatus(status)
	j.LeaseOwner = owner.String
	j.LeaseExpiresAt = fromTS(leaseExp)
	j.CreatedAt = fromTS(created)
	j.UpdatedAt = fromTS(updated)
	j.ArchivedAt = fromTS(archivedAt)
	j.Prompts = make([]store.Prompt, len(texts))
	for i := range texts {
		j.Prompts[i] = store.Prompt{Text: texts[i], At: fromTS(ats[i])}
	}
	return j, true, nil
}

// mustLoadJob is loadJob for a job the transaction knows exists.
func mustLoadJob(ctx context.Context, tx pgx.Tx, id string) (store.Job, error) {
	j, found, err := loadJob(ctx, tx, `j.id = $1`, id)
	if err == nil && !found {
		err = fmt.Errorf("job %q vanished inside its transaction", id)
	}
	return j, err
}

// claimKey records the idempotency key for a write to jobID, first thing in
// the write's transaction, or finds that it was used before. If the project
// used the key before with the same request hash, it returns the job that
// request wrote (as it is now) and replayed true; with another hash,
// ErrIdempotencyMismatch. Otherwise the key is now the transaction's, and
// is kept only if the transaction commits.
//
// Inserting first, rather than looking the key up and inserting after the
// write, is what makes concurrent retries safe at READ COMMITTED: a second
// insert of the same key waits on the unique index for the first
// transaction; if that one commits, ON CONFLICT DO NOTHING inserts nothing
// and the lookup that follows, a new statement with a new snapshot, sees the
// committed key; if it rolls back, the second insert goes ahead.
func claimKey(ctx context.Context, tx pgx.Tx, op, projectID string, idem *store.Idempotency, jobID string) (job store.Job, replayed bool, err error) {
	if idem == nil {
		return store.Job{}, false, nil
	}
	tag, err := tx.Exec(ctx,
		`INSERT INTO idempotency_keys (project_id, key, request_hash, job_id) VALUES ($1, $2, $3, $4)
		 ON CONFLICT (project_id, key) DO NOTHING`,
		projectID, idem.Key, idem.RequestHash, jobID)
	if err != nil {
		return store.Job{}, false, fmt.Errorf("postgres: %s: record idempotency key: %w", op, err)
	}
	if tag.RowsAffected() == 1 {
		return store.Job{}, false, nil
	}
	var hash []byte
	var usedBy string
	if err := tx.QueryRow(ctx,
		`SELECT request_hash, job_id FROM idempotency_keys WHERE project_id = $1 AND key = $2`,
		projectID, idem.Key).Scan(&hash, &usedBy); err != nil {
		return store.Job{}, false, fmt.Errorf("postgres: %s: read idempotency key: %w", op, err)
	}
	if !bytes.Equal(hash, idem.RequestHash) {
		return store.Job{}, false, fmt.Errorf("postgres: %s: idempotency key %q of project %q: %w",
			op, idem.Key, projectID, store.ErrIdempotencyMismatch)
	}
	job, err = mustLoadJob(ctx, tx, usedBy)
	if err != nil {
		return store.Job{}, false, fmt.Errorf("postgres: %s: %w", op, err)
	}
	return job, true, nil
}

// CreateJob stores a new active job whose history is the one prompt, as
// store.Store documents, and wakes the engines of every replica when it
// commits. Job IDs are unique across projects: ErrConflict if any project
// has a job with that ID.
func (s *Store) CreateJob(ctx context.Context, j store.NewJob) (store.Job, bool, error) {
	const op = "create job"
	if p := j.Problem(); p != "" {
		return store.Job{}, false, invalid(op, "%s", p)
	}
	if !storable(j.Prompt) {
		return store.Job{}, false, invalid(op, "job %q: the prompt is not valid UTF-8 or contains NUL, which PostgreSQL cannot store", j.ID)
	}
	if p := j.Idempotency.Problem(); p != "" {
		return store.Job{}, false, invalid(op, "%s", p)
	}
	var (
		job      store.Job
		replayed bool
	)
	err := s.tx(ctx, op, func(tx pgx.Tx) error {
		var found bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM projects WHERE id = $1)`, j.ProjectID).Scan(&found); err != nil {
			return s.dbErr(op, err)
		}
		if !found {
			return fmt.Errorf("postgres: %s: project %q: %w", op, j.ProjectID, store.ErrNotFound)
		}
		// The key comes before the ID check, as in SQLite: a replay
		// answers whatever ID the retry carries.
		var err error
		if job, replayed, err = claimKey(ctx, tx, op, j.ProjectID, j.Idempotency, j.ID); err != nil || replayed {
			return err
		}
		if _, err := tx.Exec(ctx, notifyJobs); err != nil {
			return s.dbErr(op, err)
		}
		created := ts(j.CreatedAt)
		_, err = tx.Exec(ctx,
			`INSERT INTO jobs (id, project_id, status, repository, ref, model, branch, created_at, updated_at)
			 VALUES ($1, $2, 'active', $3, $4, $5, $6, $7, $7)`,
			j.ID, j.ProjectID, j.Repository, j.Ref, j.Model, j.Branch, created)
		switch {
		case uniqueViolation(err, "jobs_pkey"):
			return fmt.Errorf("postgres: %s: job %q: %w", op, j.ID, store.ErrConflict)
		case foreignKeyViolation(err):
			// Projects are never deleted, but should one vanish after
			// the check above, the answer is the same.
			return fmt.Errorf("postgres: %s: project %q: %w", op, j.ProjectID, store.ErrNotFound)
		case err != nil:
			return s.dbErr(op, err)
		}
		if _, err := tx.Exec(ctx,
			`INSERT INTO job_prompts (job_id, position, text, at) VALUES ($1, 0, $2, $3)`,
			j.ID, j.Prompt, created); err != nil {
			return s.dbErr(op, err)
		}
		if job, err = mustLoadJob(ctx, tx, j.ID); err != nil {
			return s.dbErr(op, err)
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
	db, err := s.db()
	if err != nil {
		return store.Job{}, err
	}
	j, found, err := loadJob(ctx, db, `j.id = $1 AND j.project_id = $2`, jobID, projectID)
	if err != nil {
		return store.Job{}, s.dbErr("job", err)
	}
	if !found {
		return store.Job{}, fmt.Errorf("postgres: job %q of project %q: %w", jobID, projectID, store.ErrNotFound)
	}
	return j, nil
}

// lockJob locks the job row selected by where until the transaction ends and
// returns its status; found is false if there is no such job. Every write
// that reads a job before changing it locks it first, so that the read and
// the change see the same job: another replica's AddPrompt, FinishJob or
// ClaimJob on it waits meanwhile.
func lockJob(ctx context.Context, tx pgx.Tx, where string, args ...any) (status docsapi.JobStatus, found bool, err error) {
	var st string
	err = tx.QueryRow(ctx, `SELECT status FROM jobs WHERE `+where+` FOR UPDATE`, args...).Scan(&st)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return docsapi.JobStatus(st), true, nil
}

// AddPrompt appends a follow-up prompt and makes the job active again, as
// store.Store documents, and wakes the engines of every replica when it
// commits. A job that is not running (no lease) also gets its Attempts reset
// to zero: the prompt starts a new run, which must not inherit the attempts
// of runs that already ended (a job that failed for reaching MaxAttempts
// would otherwise fail again at its next claim without running). A running
// job keeps its lease and its Attempts: its run goes on.
func (s *Store) AddPrompt(ctx context.Context, p store.NewPrompt) (store.Job, bool, error) {
	const op = "add prompt"
	if pr := p.Problem(); pr != "" {
		return store.Job{}, false, invalid(op, "%s", pr)
	}
	if !storable(p.Prompt) {
		return store.Job{}, false, invalid(op, "job %q: the prompt is not valid UTF-8 or contains NUL, which PostgreSQL cannot store", p.JobID)
	}
	if pr := p.Idempotency.Problem(); pr != "" {
		return store.Job{}, false, invalid(op, "%s", pr)
	}
	var (
		job      store.Job
		replayed bool
	)
	err := s.tx(ctx, op, func(tx pgx.Tx) error {
		// The key comes first: a replay returns the job as it is now, even
		// if it was archived since the original request.
		var err error
		if job, replayed, err = claimKey(ctx, tx, op, p.ProjectID, p.Idempotency, p.JobID); err != nil || replayed {
			return err
		}
		status, found, err := lockJob(ctx, tx, `id = $1 AND project_id = $2`, p.JobID, p.ProjectID)
		if err != nil {
			return s.dbErr(op, err)
		}
		if !found {
			return fmt.Errorf("postgres: %s: job %q of project %q: %w", op, p.JobID, p.ProjectID, store.ErrNotFound)
		}
		if status == docsapi.JobStatusArchived {
			return fmt.Errorf("postgres: %s: job %q: %w", op, p.JobID, store.ErrArchived)
		}
		if _, err := tx.Exec(ctx, notifyJobs); err != nil {
			return s.dbErr(op, err)
		}
		// The job's row lock serializes appends, so the next position is
		// read and used without a race; max() is one seek backwards in
		// the primary key.
		if _, err := tx.Exec(ctx,
			`INSERT INTO job_prompts (job_id, position, text, at)
			 SELECT $1, coalesce(max(position) + 1, 0), $2, $3 FROM job_prompts WHERE job_id = $1`,
			p.JobID, p.Prompt, ts(p.At)); err != nil {
			return s.dbErr(op, err)
		}
		if _, err := tx.Exec(ctx,
			`UPDATE jobs SET status = 'active', failure_reason = '', updated_at = $2,
			        attempts = CASE WHEN lease_owner IS NULL THEN 0 ELSE attempts END
			 WHERE id = $1`,
			p.JobID, ts(p.At)); err != nil {
			return s.dbErr(op, err)
		}
		if job, err = mustLoadJob(ctx, tx, p.JobID); err != nil {
			return s.dbErr(op, err)
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
	err := s.tx(ctx, op, func(tx pgx.Tx) error {
		status, found, err := lockJob(ctx, tx, `id = $1 AND project_id = $2`, jobID, projectID)
		if err != nil {
			return s.dbErr(op, err)
		}
		if !found {
			return fmt.Errorf("postgres: %s: job %q of project %q: %w", op, jobID, projectID, store.ErrNotFound)
		}
		if status != docsapi.JobStatusArchived {
			if _, err := tx.Exec(ctx,
				`UPDATE jobs SET status = 'archived', archived_at = $2, updated_at = $2,
				        lease_owner = NULL, lease_expires_at = NULL
				 WHERE id = $1`,
				jobID, ts(at)); err != nil {
				return s.dbErr(op, err)
			}
		}
		if job, err = mustLoadJob(ctx, tx, jobID); err != nil {
			return s.dbErr(op, err)
		}
		return nil
	})
	if err != nil {
		return store.Job{}, err
	}
	return job, nil
}

// claimStep is one step of ClaimJob: it takes the oldest ready job and, in
// the same statement, either leases it or, if it used up its attempts,
// fails it, returning which it did.
//
// FOR UPDATE SKIP LOCKED is what lets replicas claim at once: a row another
// claim holds is passed over instead of waited for, so concurrent claims
// take different jobs and none blocks. A row whose lock was released after
// this statement's snapshot (another claim just committed) is re-checked
// against the WHERE clause on its newest version before it is taken, so a
// job leased meanwhile is never leased again. With the ORDER BY and LIMIT
// matching the partial index jobs_ready, the scan reads active jobs in claim
// order and stops at the first free one it can lock.
//
// Every SET expression reads the row as it was before the update, so the
// CASEs all test the same attempts count.
const claimStep = `WITH next AS (
		SELECT id FROM jobs
		WHERE status = 'active' AND (lease_owner IS NULL OR lease_expires_at < $1)
		ORDER BY created_at NULLS FIRST, id
		LIMIT 1
		FOR UPDATE SKIP LOCKED
	)
	UPDATE jobs j SET
		status           = CASE WHEN j.attempts >= $4 THEN 'failed' ELSE j.status END,
		failure_reason   = CASE WHEN j.attempts >= $4
		                        THEN format('gave up after %s attempts (the limit is %s): every run ended without an outcome', j.attempts, $4::integer)
		                        ELSE j.failure_reason END,
		attempts         = CASE WHEN j.attempts >= $4 THEN j.attempts ELSE j.attempts + 1 END,
		lease_owner      = CASE WHEN j.attempts >= $4 THEN NULL ELSE $2 END,
		lease_expires_at = CASE WHEN j.attempts >= $4 THEN NULL ELSE $3::timestamptz END,
		updated_at       = $1
	FROM next
	WHERE j.id = next.id
	RETURNING j.id, j.lease_owner IS NOT NULL`

// ClaimJob leases the oldest ready job to c.Owner, as store.Store documents.
// It is one short transaction of claim steps (see claimStep): usually one,
// which leases the first ready job; more only when ready jobs that used up
// their attempts come first, each of which a step fails before the next step
// looks further. The jobs failed on the way are committed even when no job
// is left to lease: their fate is decided.
func (s *Store) ClaimJob(ctx context.Context, c store.Claim) (store.Job, error) {
	const op = "claim job"
	if p := c.Problem(); p != "" {
		return store.Job{}, invalid(op, "%s", p)
	}
	now := ts(c.Now)
	until := ts(c.Now.Add(c.LeaseFor))
	// attempts is an integer column: no job can reach more than this, so a
	// larger limit (math.MaxInt for "no limit") means the same.
	maxAttempts := min(c.MaxAttempts, math.MaxInt32)
	var job store.Job
	claimed := false
	err := s.tx(ctx, op, func(tx pgx.Tx) error {
		for {
			var id string
			var leased bool
			err := tx.QueryRow(ctx, claimStep, now, c.Owner, until, maxAttempts).Scan(&id, &leased)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			if err != nil {
				return s.dbErr(op, err)
			}
			if !leased {
				continue // failed for its attempts; look further
			}
			if job, err = mustLoadJob(ctx, tx, id); err != nil {
				return s.dbErr(op, err)
			}
			claimed = true
			return nil
		}
	})
	if err != nil {
		return store.Job{}, err
	}
	if !claimed {
		return store.Job{}, fmt.Errorf("postgres: %s: %w", op, store.ErrNoJob)
	}
	return job, nil
}

// ExtendLease moves the lease's expiry to until if owner holds a lease that
// has not expired before now. ErrLeaseLost otherwise. One UPDATE both tests
// and moves the lease, under the row's lock, so a concurrent claim either
// sees the extended lease or has already taken the job.
func (s *Store) ExtendLease(ctx context.Context, jobID, owner string, now, until time.Time) error {
	const op = "extend lease"
	// An empty job ID or owner is not refused as invalid: no lease has
	// either, so the caller simply does not hold one (ErrLeaseLost below).
	if p := store.ExtendLeaseProblem(jobID, now, until); p != "" {
		return invalid(op, "%s", p)
	}
	db, err := s.db()
	if err != nil {
		return err
	}
	tag, err := db.Exec(ctx,
		`UPDATE jobs SET lease_expires_at = $4
		 WHERE id = $1 AND lease_owner = $2 AND lease_expires_at >= $3`,
		jobID, owner, ts(now), ts(until))
	if err != nil {
		return s.dbErr(op, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: %s: job %q, owner %q: %w", op, jobID, owner, store.ErrLeaseLost)
	}
	return nil
}

// FinishJob records the outcome of owner's run, as store.Store documents. A
// lease that expired but that no other owner has claimed yet is still
// owner's: the outcome is accepted rather than thrown away. The job's row is
// locked first, so a claim by another owner either committed before (and
// the lease is gone: ErrLeaseLost) or waits and then finds the job no longer
// ready. Completed with Handled above the number of prompts is refused.
func (s *Store) FinishJob(ctx context.Context, f store.Finish) (store.Job, error) {
	const op = "finish job"
	// An empty job ID or owner holds no lease: ErrLeaseLost below.
	if p := f.Problem(); p != "" {
		return store.Job{}, invalid(op, "%s", p)
	}
	var job store.Job
	err := s.tx(ctx, op, func(tx pgx.Tx) error {
		_, found, err := lockJob(ctx, tx, `id = $1 AND lease_owner = $2`, f.JobID, f.Owner)
		if err != nil {
			return s.dbErr(op, err)
		}
		if !found {
			return fmt.Errorf("postgres: %s: job %q, owner %q: %w", op, f.JobID, f.Owner, store.ErrLeaseLost)
		}
		// Read under the lock: AddPrompt takes the same lock to append.
		j, err := mustLoadJob(ctx, tx, f.JobID)
		if err != nil {
			return s.dbErr(op, err)
		}
		at := ts(f.At)
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
			_, err = tx.Exec(ctx,
				`UPDATE jobs SET status = $2, handled = $3, attempts = $4,
				        pr_link = CASE WHEN $5 = '' THEN pr_link ELSE $5 END,
				        updated_at = $6, lease_owner = NULL, lease_expires_at = NULL
				 WHERE id = $1`,
				f.JobID, string(status), f.Handled, attempts, f.PRLink, at)
		case store.Failed:
			_, err = tx.Exec(ctx,
				`UPDATE jobs SET status = 'failed', failure_reason = $2,
				        updated_at = $3, lease_owner = NULL, lease_expires_at = NULL
				 WHERE id = $1`,
				f.JobID, makeStorable(f.FailureReason), at)
		}
		if err != nil {
			return s.dbErr(op, err)
		}
		if job, err = mustLoadJob(ctx, tx, f.JobID); err != nil {
			return s.dbErr(op, err)
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
	db, err := s.db()
	if err != nil {
		return err
	}
	// An empty job ID or owner holds no lease: ErrLeaseLost below.
	tag, err := db.Exec(ctx,
		`UPDATE jobs SET lease_owner = NULL, lease_expires_at = NULL, attempts = greatest(attempts - 1, 0)
		 WHERE id = $1 AND lease_owner = $2`,
		jobID, owner)
	if err != nil {
		return s.dbErr(op, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: %s: job %q, owner %q: %w", op, jobID, owner, store.ErrLeaseLost)
	}
	return nil
}
