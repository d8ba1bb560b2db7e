package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// CreateJob stores a new active job whose history is the one prompt, as
// store.Store documents, and announces it to the engines of other
// processes. Job IDs are unique across projects: ErrConflict if any project
// has a job with that ID.
func (s *Store) CreateJob(ctx context.Context, nj store.NewJob) (store.Job, bool, error) {
	var replayed bool
	job, err := write(ctx, s, "create job", s.checkPrompt(nj.Validate(), nj.ID, nj.Prompt), func(tx Tx) (store.Job, error) {
		if err := requireProject(ctx, tx, nj.ProjectID); err != nil {
			return store.Job{}, err
		}
		// The key comes before the job's ID: a replay answers whatever ID
		// the retry carries.
		var job store.Job
		var err error
		if job, replayed, err = reserve(ctx, tx, nj.ProjectID, nj.Idempotency, nj.ID); err != nil || replayed {
			return job, err
		}
		if err := tx.AnnounceJobs(ctx); err != nil {
			return store.Job{}, err
		}
		if err := tx.InsertJob(ctx, nj.Created()); err != nil {
			return store.Job{}, err
		}
		if err := keep(ctx, tx, nj.ProjectID, nj.Idempotency, nj.ID); err != nil {
			return store.Job{}, err
		}
		// The job as written, not read back: one round trip fewer a create.
		return asStored(nj.Created()), nil
	})
	return job, replayed && err == nil, err
}

// asStored is j as reading it back returns it: its times in UTC, to the
// microsecond, as every backend keeps them. (The conformance suite holds a
// create's answer to the job read afterwards.)
func asStored(j store.Job) store.Job {
	micro := func(t time.Time) time.Time {
		if t.IsZero() {
			return t
		}
		return time.UnixMicro(t.UnixMicro()).UTC()
	}
	j.CreatedAt, j.UpdatedAt = micro(j.CreatedAt), micro(j.UpdatedAt)
	for i := range j.Prompts {
		j.Prompts[i].At = micro(j.Prompts[i].At)
	}
	return j
}

// Job returns a job of the project, or ErrNotFound.
func (s *Store) Job(ctx context.Context, projectID, jobID string) (store.Job, error) {
	return read(ctx, s, "job", func(tx Tx) (store.Job, error) {
		j, found, err := tx.Job(ctx, projectID, jobID)
		if err == nil && !found {
			err = jobNotFound(projectID, jobID)
		}
		return j, err
	})
}

// AddPrompt appends a follow-up prompt and makes the job active again, as
// store.Store documents, and announces it to the engines of other
// processes.
func (s *Store) AddPrompt(ctx context.Context, p store.NewPrompt) (store.Job, bool, error) {
	var replayed bool
	job, err := write(ctx, s, "add prompt", s.checkPrompt(p.Validate(), p.JobID, p.Prompt), func(tx Tx) (store.Job, error) {
		// The key comes first: a replay returns the job as it is now, even
		// if it was archived since the original request.
		var job store.Job
		var err error
		if job, replayed, err = reserve(ctx, tx, p.ProjectID, p.Idempotency, p.JobID); err != nil || replayed {
			return job, err
		}
		j, found, err := tx.LockJob(ctx, p.ProjectID, p.JobID)
		if err == nil && !found {
			err = jobNotFound(p.ProjectID, p.JobID)
		}
		if err != nil {
			return store.Job{}, err
		}
		next, err := j.WithPrompt(p)
		if err != nil {
			return store.Job{}, err
		}
		if err := tx.AnnounceJobs(ctx); err != nil {
			return store.Job{}, err
		}
		if err := tx.SaveJob(ctx, j, next); err != nil {
			return store.Job{}, err
		}
		if err := keep(ctx, tx, p.ProjectID, p.Idempotency, p.JobID); err != nil {
			return store.Job{}, err
		}
		return stored(ctx, tx, p.JobID)
	})
	return job, replayed && err == nil, err
}

// ArchiveJob archives the job and drops any lease, as store.Store documents.
func (s *Store) ArchiveJob(ctx context.Context, projectID, jobID string, at time.Time) (store.Job, error) {
	return write(ctx, s, "archive job", store.ValidateArchiveJob(projectID, jobID, at), func(tx Tx) (store.Job, error) {
		j, found, err := tx.LockJob(ctx, projectID, jobID)
		if err == nil && !found {
			err = jobNotFound(projectID, jobID)
		}
		if err != nil {
			return store.Job{}, err
		}
		next, changed := j.Archived(at)
		if !changed {
			return j, nil
		}
		if err := tx.SaveJob(ctx, j, next); err != nil {
			return store.Job{}, err
		}
		return stored(ctx, tx, jobID)
	})
}

// ClaimJob leases the oldest ready job to c.Owner, as store.Store documents.
// It takes ready jobs, one at a time, until one is leased: usually the
// first; more only when ready jobs that used up their attempts come first,
// each of which is failed before the next is taken. The jobs failed on the
// way are committed even when no job is left to lease: their fate is
// decided.
func (s *Store) ClaimJob(ctx context.Context, c store.Claim) (store.Job, error) {
	const op = "claim job"
	job, err := write(ctx, s, op, c.Validate(), func(tx Tx) (store.Job, error) {
		for {
			j, leaseNow, found, err := tx.LockReadyJob(ctx, c.Now)
			if err != nil || !found {
				return store.Job{}, err
			}
			next, leased := j.Claimed(c, leaseNow)
			if err := tx.SaveJob(ctx, j, next); err != nil {
				return store.Job{}, err
			}
			if leased {
				return stored(ctx, tx, j.ID)
			}
		}
	})
	if err == nil && job.ID == "" {
		err = s.db.Fail(op, store.ErrNoJob)
	}
	return job, err
}

// ExtendLease moves the lease's expiry to leaseFor after the database's
// lease time if owner holds a lease that has not expired before it.
// ErrLeaseLost otherwise, so the engine stops the run.
func (s *Store) ExtendLease(ctx context.Context, jobID, owner string, now time.Time, leaseFor time.Duration) error {
	return s.exec(ctx, "extend lease", store.ValidateExtendLease(jobID, now, leaseFor), func(tx Tx) error {
		held, err := tx.ExtendLease(ctx, jobID, owner, now, leaseFor)
		if err == nil && !held {
			err = leaseLost(jobID, owner)
		}
		return err
	})
}

// FinishJob records the outcome of owner's run, as store.Store documents.
// The job is locked before it is read, so a claim by another owner either
// came first (the lease is gone: ErrLeaseLost) or waits, and then finds
// the job no longer ready.
func (s *Store) FinishJob(ctx context.Context, f store.Finish) (store.Job, error) {
	return write(ctx, s, "finish job", f.Validate(), func(tx Tx) (store.Job, error) {
		j, err := leased(ctx, tx, f.JobID, f.Owner)
		if err != nil {
			return store.Job{}, err
		}
		next, err := j.Finished(f)
		if err != nil {
			return store.Job{}, err
		}
		if err := tx.SaveJob(ctx, j, next); err != nil {
			return store.Job{}, err
		}
		return stored(ctx, tx, f.JobID)
	})
}

// ReleaseJob drops owner's lease and gives the attempt back, as store.Store
// documents.
func (s *Store) ReleaseJob(ctx context.Context, jobID, owner string) error {
	// An empty job ID or owner is no refusal: it holds no lease.
	return s.exec(ctx, "release job", nil, func(tx Tx) error {
		j, err := leased(ctx, tx, jobID, owner)
		if err != nil {
			return err
		}
		return tx.SaveJob(ctx, j, j.Released())
	})
}

// checkPrompt returns the refusal of a job's input: refused, the error of
// package store's checks, or else the database's refusal of the prompt.
func (s *Store) checkPrompt(refused error, jobID, prompt string) error {
	if refused == nil {
		refused = s.db.CheckPrompt(jobID, prompt)
	}
	return refused
}

// leased locks and reads the job whose lease owner holds, or returns
// ErrLeaseLost. A lease that expired but that no other owner claimed is
// still owner's.
func leased(ctx context.Context, tx Tx, jobID, owner string) (store.Job, error) {
	j, found, err := tx.LockLeasedJob(ctx, jobID, owner)
	if err == nil && !found {
		err = leaseLost(jobID, owner)
	}
	return j, err
}

// reserve looks up idem's key before a write to jobID, and records it if
// the backend records keys first (see Tx.ReserveKey). If the project used
// the key before, it returns the job that request wrote, as it is now, and
// replayed true, or the error of a mismatch (see store.Idempotency.Replay).
func reserve(ctx context.Context, tx Tx, projectID string, idem *store.Idempotency, jobID string) (job store.Job, replayed bool, err error) {
	if idem == nil {
		return store.Job{}, false, nil
	}
	hash, usedBy, used, err := tx.ReserveKey(ctx, projectID, idem, jobID)
	if err != nil || !used {
		return store.Job{}, false, err
	}
	if err := idem.Replay(hash); err != nil {
		return store.Job{}, false, fmt.Errorf("project %q: %w", projectID, err)
	}
	job, err = stored(ctx, tx, usedBy)
	return job, err == nil, err
}

// keep records idem's key for the write to jobID that it protects, in the
// write's transaction, so that the write and its record exist together or
// not at all.
func keep(ctx context.Context, tx Tx, projectID string, idem *store.Idempotency, jobID string) error {
	if idem == nil {
		return nil
	}
	return tx.KeepKey(ctx, projectID, idem, jobID)
}

// stored reads the job id, which the transaction wrote or locked, as it is
// stored.
func stored(ctx context.Context, tx Tx, id string) (store.Job, error) {
	j, found, err := tx.JobByID(ctx, id)
	if err == nil && !found {
		err = fmt.Errorf("job %q vanished inside its transaction", id)
	}
	return j, err
}

// jobNotFound is the error of a job missing from the project.
func jobNotFound(projectID, jobID string) error {
	return fmt.Errorf("job %q of project %q: %w", jobID, projectID, store.ErrNotFound)
}

// leaseLost is the error of a lease owner does not hold.
func leaseLost(jobID, owner string) error {
	return fmt.Errorf("job %q, owner %q: %w", jobID, owner, store.ErrLeaseLost)
}
