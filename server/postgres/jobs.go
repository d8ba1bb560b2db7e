package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/docsapi/docsapi-go/server/store"
)

// notifyChannel is the LISTEN/NOTIFY channel of job wake-ups.
const notifyChannel = "docsapi_jobs"

// notifyJobs queues a wake-up for the engines of every replica. PostgreSQL
// holds a notification until its transaction commits and drops it on
// rollback, so it may be queued before the writes it announces: a write that
// then fails (a taken job ID) sends nothing.
const notifyJobs = `SELECT pg_notify('` + notifyChannel + `', '')`

// jobColumns are the columns of a job, of the table named j, in the order
// scanJob reads them before the prompts.
const jobColumns = `j.id, j.project_id, j.status, j.repository, j.ref, j.model, j.branch, j.handled,
	j.pr_link, j.failure_reason, j.attempts, j.lease_owner, j.lease_expires_at, j.created_at,
	j.updated_at, j.archived_at`

// jobQuery selects jobs with their prompt histories. The prompts are
// aggregated in a lateral subquery of the same statement, so a job and its
// prompts come from one snapshot, in one round trip, without a transaction.
const jobQuery = `SELECT ` + jobColumns + `, p.texts, p.ats
	FROM jobs j CROSS JOIN LATERAL (
		SELECT coalesce(array_agg(jp.text ORDER BY jp.position), '{}') AS texts,
		       coalesce(array_agg(jp.at ORDER BY jp.position), '{}') AS ats
		FROM job_prompts jp WHERE jp.job_id = j.id
	) p
	WHERE `

// scanJob reads a row of jobQuery.
func scanJob(row pgx.CollectableRow) (store.Job, error) { return scanJobAnd(row) }

// scanJobAnd reads a row of jobQuery's columns followed by the columns of
// extra.
func scanJobAnd(row pgx.CollectableRow, extra ...any) (store.Job, error) {
	var (
		j                                      store.Job
		status                                 string
		owner                                  pgtype.Text
		leaseExp, created, updated, archivedAt pgtype.Timestamptz
		texts                                  []string
		ats                                    []pgtype.Timestamptz
	)
	if err := row.Scan(append([]any{
		&j.ID, &j.ProjectID, &status, &j.Repository, &j.Ref, &j.Model, &j.Branch, &j.Handled,
		&j.PRLink, &j.FailureReason, &j.Attempts, &owner, &leaseExp, &created,
		&updated, &archivedAt, &texts, &ats}, extra...)...); err != nil {
		return store.Job{}, err
	}
	if len(texts) != len(ats) {
		return store.Job{}, fmt.Errorf("job %q: %d prompt texts but %d times", j.ID, len(texts), len(ats))
	}
	j.Status = store.JobStatus(status)
	j.LeaseOwner = owner.String
	j.LeaseExpiresAt = fromTS(leaseExp)
	j.CreatedAt = fromTS(created)
	j.UpdatedAt = fromTS(updated)
	j.ArchivedAt = fromTS(archivedAt)
	j.Prompts = make([]store.Prompt, len(texts))
	for i := range texts {
		j.Prompts[i] = store.Prompt{Text: texts[i], At: fromTS(ats[i])}
	}
	return j, nil
}

// Job reads the job jobID of the project.
func (t txn) Job(ctx context.Context, projectID, jobID string) (store.Job, bool, error) {
	return queryOne(ctx, t.q, scanJob, jobQuery+`j.id = $1 AND j.project_id = $2`, jobID, projectID)
}

// JobByID reads the job id.
func (t txn) JobByID(ctx context.Context, id string) (store.Job, bool, error) {
	return queryOne(ctx, t.q, scanJob, jobQuery+`j.id = $1`, id)
}

// LockJob reads the job jobID of the project and locks its row.
func (t txn) LockJob(ctx context.Context, projectID, jobID string) (store.Job, bool, error) {
	return t.lockJob(ctx, `id = $1 AND project_id = $2 FOR UPDATE`, jobID, projectID)
}

// LockLeasedJob reads the job jobID whose lease owner holds and locks its
// row. A claim by another owner either committed before (the lease is gone)
// or waits, and then finds the job no longer ready.
func (t txn) LockLeasedJob(ctx context.Context, jobID, owner string) (store.Job, bool, error) {
	return t.lockJob(ctx, `id = $1 AND lease_owner = $2 FOR UPDATE`, jobID, owner)
}

// readyJob selects the oldest ready job, locks it, and returns its ID with
// the time its lease was judged by.
//
// Leases follow the database's clock, never a replica's (see LeaseNow):
// now() is the time the transaction started, one instant for every
// statement of the claim, so the job is judged ready and then leased from
// the same time, as a claim told the time is. It starts after the engine
// sent the claim, which is what the engine's fence needs (a lease never
// starts before the call that asked for it). clock_timestamp() would move
// within the transaction, and judge a claim by a time other than the one
// its lease runs from.
//
// FOR UPDATE SKIP LOCKED is what lets replicas claim at once: a row another
// claim holds is passed over instead of waited for, so concurrent claims
// take different jobs and none blocks. A row whose lock was released after
// this statement's snapshot (another claim just committed) is re-checked
// against the WHERE clause on its newest version before it is taken, so a
// job leased meanwhile is never leased again. With the ORDER BY and LIMIT
// matching the partial index jobs_ready, the scan reads active jobs in claim
// order and stops at the first free one it can lock.
const readyJob = `SELECT id, now() FROM jobs
	WHERE status = 'active' AND (lease_owner IS NULL OR lease_expires_at < now())
	ORDER BY created_at NULLS FIRST, id
	LIMIT 1
	FOR UPDATE SKIP LOCKED`

// readyRow is a row of readyJob.
type readyRow struct {
	ID  string
	Now pgtype.Timestamptz
}

// LockReadyJob reads the oldest job ready by the database's clock and locks
// its row; the time the replica sends is not used (see readyJob).
func (t txn) LockReadyJob(ctx context.Context, _ time.Time) (store.Job, time.Time, bool, error) {
	r, found, err := queryOne(ctx, t.q, pgx.RowToStructByPos[readyRow], readyJob)
	if !found {
		return store.Job{}, time.Time{}, false, err
	}
	j, found, err := t.JobByID(ctx, r.ID)
	return j, fromTS(r.Now), found, err
}

// lockJob locks the job row that the clauses rest select (a WHERE condition
// and a locking clause), then reads the job. Every write that reads a job
// before changing it locks it first, so that the read and the change see
// the same job: another replica's AddPrompt, FinishJob or ClaimJob on it
// waits meanwhile. The job is read by a statement of its own, after the
// lock: at READ COMMITTED its snapshot then holds every change committed
// before the lock was granted, prompts included.
func (t txn) lockJob(ctx context.Context, rest string, args ...any) (store.Job, bool, error) {
	id, found, err := queryOne(ctx, t.q, pgx.RowTo[string], `SELECT id FROM jobs WHERE `+rest, args...)
	if !found {
		return store.Job{}, false, err
	}
	return t.JobByID(ctx, id)
}

// InsertJob stores a new job and its prompts. The primary key decides,
// atomically, between replicas creating the same ID.
func (t txn) InsertJob(ctx context.Context, j store.Job) error {
	// The job and its prompts in one statement, one round trip: the
	// prompts' foreign key is checked at the statement's end, when the
	// job's row, inserted by the WITH, is there.
	// A queued wake-up goes in it too: the notify's CTE, joined as one
	// row, runs once (a volatile function's CTE is not inlined), and its
	// notification waits for the commit as any other.
	texts, ats := promptColumns(j.Prompts)
	notify := `SELECT 1`
	if t.takeAnnounce() {
		notify = notifyJobs
	}
	_, err := t.q.Exec(ctx,
		`WITH j AS (
		   INSERT INTO jobs (id, project_id, status, repository, ref, model, branch, handled, pr_link,
		           failure_reason, attempts, lease_owner, lease_expires_at, created_at, updated_at, archived_at)
		   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
		   RETURNING id),
		 wake AS (`+notify+`)
		 INSERT INTO job_prompts (job_id, position, text, at)
		 SELECT j.id, u.n - 1, u.text, u.at
		 FROM j, wake, unnest($17::text[], $18::timestamptz[]) WITH ORDINALITY AS u(text, at, n)`,
		j.ID, j.ProjectID, string(j.Status), j.Repository, j.Ref, j.Model, j.Branch, j.Handled, j.PRLink,
		makeStorable(j.FailureReason), j.Attempts, leaseOwner(j.LeaseOwner), ts(j.LeaseExpiresAt), ts(j.CreatedAt),
		ts(j.UpdatedAt), ts(j.ArchivedAt), texts, ats)
	switch {
	case uniqueViolation(err, "jobs_pkey"):
		return fmt.Errorf("job %q: %w", j.ID, store.ErrConflict)
	case foreignKeyViolation(err):
		// Projects are never deleted, but should another program delete
		// one after CreateJob found it, the answer is the same.
		return fmt.Errorf("project %q: %w", j.ProjectID, store.ErrNotFound)
	}
	return err
}

// SaveJob stores j over was, the job as the transaction locked it: the
// columns the job methods change, and the prompts j has beyond was's. A
// failure reason may quote a tool's output, so it is made storable rather
// than refused, which would leave the job to be run again and again.
func (t txn) SaveJob(ctx context.Context, was, j store.Job) error {
	if _, err := t.q.Exec(ctx,
		`UPDATE jobs SET status = $2, handled = $3, pr_link = $4, failure_reason = $5, attempts = $6,
		        lease_owner = $7, lease_expires_at = $8, updated_at = $9, archived_at = $10
		 WHERE id = $1`,
		j.ID, string(j.Status), j.Handled, j.PRLink, makeStorable(j.FailureReason), j.Attempts,
		leaseOwner(j.LeaseOwner), ts(j.LeaseExpiresAt), ts(j.UpdatedAt), ts(j.ArchivedAt)); err != nil {
		return err
	}
	return t.appendPrompts(ctx, j.ID, len(was.Prompts), j.Prompts[len(was.Prompts):])
}

// appendPrompts stores prompts as the job's, the first at position from, in
// one statement. The job's row lock serializes appends, so positions never
// collide.
func (t txn) appendPrompts(ctx context.Context, jobID string, from int, prompts []store.Prompt) error {
	if len(prompts) == 0 {
		return nil
	}
	texts, ats := promptColumns(prompts)
	_, err := t.q.Exec(ctx,
		`INSERT INTO job_prompts (job_id, position, text, at)
		 SELECT $1, $2 + u.n - 1, u.text, u.at
		 FROM unnest($3::text[], $4::timestamptz[]) WITH ORDINALITY AS u(text, at, n)`,
		jobID, from, texts, ats)
	return err
}

// promptColumns returns the texts and times of prompts, as arrays for
// unnest.
func promptColumns(prompts []store.Prompt) ([]string, []pgtype.Timestamptz) {
	texts := make([]string, len(prompts))
	ats := make([]pgtype.Timestamptz, len(prompts))
	for i, p := range prompts {
		texts[i], ats[i] = p.Text, ts(p.At)
	}
	return texts, ats
}

// leaseOwner is how a lease's owner is stored: NULL for none, as the
// lease's expiry is.
func leaseOwner(o string) pgtype.Text {
	return pgtype.Text{String: o, Valid: o != ""}
}

// ExtendLease moves the lease's expiry to leaseFor after the database's
// time if owner holds it and it did not expire before that time: now(),
// the start of the transaction, as for a claim (see readyJob); the time
// the replica sends is not used. One UPDATE both tests and moves the lease,
// under the row's lock, so a concurrent claim either sees the extended
// lease or has already taken the job. Should the UPDATE wait for that lock,
// now() is from before the wait: the lease may have ended meanwhile, but
// only a claim could have taken the job, and then the owner no longer
// matches when the row is re-checked. The duration goes as whole
// microseconds, the precision of a timestamp.
func (t txn) ExtendLease(ctx context.Context, jobID, owner string, _ time.Time, leaseFor time.Duration) (bool, error) {
	tag, err := t.q.Exec(ctx,
		`UPDATE jobs SET lease_expires_at = now() + $3 * interval '1 microsecond'
		 WHERE id = $1 AND lease_owner = $2 AND lease_expires_at >= now()`,
		jobID, owner, leaseFor.Microseconds())
	return tag.RowsAffected() > 0, err
}

// AnnounceJobs queues a wake-up for the engines of every replica (see
// notifyJobs): in a write transaction, for its next statement or its end
// to send (see txn.announce).
func (t txn) AnnounceJobs(ctx context.Context) error {
	if t.announce != nil {
		*t.announce = true
		return nil
	}
	_, err := t.q.Exec(ctx, notifyJobs)
	return err
}

// takeAnnounce reports whether a wake-up is queued for the next statement,
// which then sends it.
func (t txn) takeAnnounce() bool {
	if t.announce == nil || !*t.announce {
		return false
	}
	*t.announce = false
	return true
}

// ReserveKey records the idempotency key for a write to jobID, first thing
// in the write's transaction, or finds that it was used before. A recorded
// key is kept only if the transaction commits; KeepKey has nothing left to
// do.
//
// Inserting first, rather than looking the key up and inserting after the
// write, is what makes concurrent retries safe at READ COMMITTED: a second
// insert of the same key waits on the unique index for the first
// transaction; if that one commits, ON CONFLICT DO NOTHING inserts nothing
// and the lookup that follows, a new statement with a new snapshot, sees the
// committed key; if it rolls back, the second insert goes ahead. The key
// may name a job that does not exist yet: its foreign key is checked at
// commit.
func (t txn) ReserveKey(ctx context.Context, projectID string, idem *store.Idempotency, jobID string) ([]byte, string, bool, error) {
	tag, err := t.q.Exec(ctx,
		`INSERT INTO idempotency_keys (project_id, key, request_hash, job_id) VALUES ($1, $2, $3, $4)
		 ON CONFLICT (project_id, key) DO NOTHING`,
		projectID, idem.Key, idem.RequestHash, jobID)
	if err != nil {
		return nil, "", false, fmt.Errorf("record idempotency key: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return nil, "", false, nil
	}
	var hash []byte
	var usedBy string
	if err := t.q.QueryRow(ctx,
		`SELECT request_hash, job_id FROM idempotency_keys WHERE project_id = $1 AND key = $2`,
		projectID, idem.Key).Scan(&hash, &usedBy); err != nil {
		return nil, "", false, fmt.Errorf("read idempotency key: %w", err)
	}
	return hash, usedBy, true, nil
}

// KeepKey does nothing: ReserveKey recorded the key.
func (txn) KeepKey(context.Context, string, *store.Idempotency, string) error { return nil }
