package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/docsapi/docsapi-go/server/internal/sqlstore"
	"github.com/docsapi/docsapi-go/server/store"
)

const docsUpdateColumns = `id, project_id, status, trigger, summary, lists, commit_sha, commit_ref, commit_message,
	attempts, lease_owner, lease_expires_at, created_at, updated_at, ended_at`

func scanDocsUpdate(row pgx.CollectableRow) (store.DocsUpdateRecord, error) {
	var (
		u                                 store.DocsUpdateRecord
		status, lists                     string
		owner                             pgtype.Text
		leaseExp, created, updated, ended pgtype.Timestamptz
	)
	if err := row.Scan(&u.ID, &u.ProjectID, &status, &u.Trigger, &u.Summary, &lists,
		&u.Commit.SHA, &u.Commit.Ref, &u.Commit.Message, &u.Attempts, &owner, &leaseExp,
		&created, &updated, &ended); err != nil {
		return u, err
	}
	u.Status = store.DocsUpdateStatus(status)
	u.LeaseOwner = owner.String
	u.LeaseExpiresAt, u.CreatedAt, u.UpdatedAt, u.EndedAt = fromTS(leaseExp), fromTS(created), fromTS(updated), fromTS(ended)
	return u, sqlstore.DecodeDocsLists(lists, &u)
}

func (t txn) docsUpdateWhere(ctx context.Context, where string, args ...any) (store.DocsUpdateRecord, bool, error) {
	return queryOne(ctx, t.q, scanDocsUpdate, `SELECT `+docsUpdateColumns+` FROM docs_updates WHERE `+where, args...)
}

// InsertDocsUpdate stores a new update; the primary key decides between
// replicas creating the same ID.
func (t txn) InsertDocsUpdate(ctx context.Context, u store.DocsUpdateRecord) error {
	_, err := t.q.Exec(ctx,
		`INSERT INTO docs_updates (id, project_id, status, trigger, lists, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		u.ID, u.ProjectID, string(u.Status), u.Trigger, sqlstore.EncodeDocsLists(u), ts(u.CreatedAt), ts(u.UpdatedAt))
	switch {
	case uniqueViolation(err, "docs_updates_pkey"):
		return fmt.Errorf("docs update %q: %w", u.ID, store.ErrConflict)
	case foreignKeyViolation(err):
		return fmt.Errorf("project %q: %w", u.ProjectID, store.ErrNotFound)
	}
	return err
}

func (t txn) DocsUpdate(ctx context.Context, id string) (store.DocsUpdateRecord, bool, error) {
	return t.docsUpdateWhere(ctx, `id = $1`, id)
}

// lockProjectUpdates locks the project's row against the other updates'
// creations and claims (FOR NO KEY UPDATE, which jobs' foreign keys do not
// wait for), so that they see each other's: READ COMMITTED reads, after
// the lock, every change committed before it was granted.
func (t txn) lockProjectUpdates(ctx context.Context, projectID string) error {
	_, err := t.q.Exec(ctx, `SELECT 1 FROM projects WHERE id = $1 FOR NO KEY UPDATE`, projectID)
	return err
}

func (t txn) LockQueuedDocsUpdate(ctx context.Context, projectID string) (store.DocsUpdateRecord, bool, error) {
	if err := t.lockProjectUpdates(ctx, projectID); err != nil {
		return store.DocsUpdateRecord{}, false, err
	}
	return t.docsUpdateWhere(ctx,
		`project_id = $1 AND status = 'queued' ORDER BY created_at, id LIMIT 1 FOR UPDATE`, projectID)
}

type readyUpdate struct {
	ID, ProjectID string
	Now           pgtype.Timestamptz
}

// LockReadyDocsUpdate takes candidates by the database's clock, skipping
// rows other claims hold; each candidate's project is then locked and the
// rule that a project's updates run one at a time checked again, since a
// concurrent claim may have started another of the project's updates
// after this statement's snapshot.
func (t txn) LockReadyDocsUpdate(ctx context.Context, _ time.Time) (store.DocsUpdateRecord, time.Time, bool, error) {
	passed := []string{} // not nil: id = ANY(NULL) would select nothing
	for {
		r, found, err := queryOne(ctx, t.q, pgx.RowToStructByPos[readyUpdate],
			`SELECT id, project_id, now() FROM docs_updates u
			 WHERE status IN ('queued', 'in_progress') AND (lease_owner IS NULL OR lease_expires_at < now())
			   AND NOT (id = ANY($1::text[]))
			 ORDER BY created_at, id
			 LIMIT 1
			 FOR UPDATE SKIP LOCKED`, passed)
		if !found {
			return store.DocsUpdateRecord{}, time.Time{}, false, err
		}
		if err := t.lockProjectUpdates(ctx, r.ProjectID); err != nil {
			return store.DocsUpdateRecord{}, time.Time{}, false, err
		}
		var busy bool
		if err := t.q.QueryRow(ctx,
			`SELECT EXISTS (SELECT 1 FROM docs_updates
			                WHERE project_id = $1 AND id <> $2 AND status = 'in_progress' AND lease_expires_at >= now())`,
			r.ProjectID, r.ID).Scan(&busy); err != nil {
			return store.DocsUpdateRecord{}, time.Time{}, false, err
		}
		if busy {
			passed = append(passed, r.ID)
			continue
		}
		u, found, err := t.DocsUpdate(ctx, r.ID)
		return u, fromTS(r.Now), found, err
	}
}

func (t txn) LockLeasedDocsUpdate(ctx context.Context, id, owner string) (store.DocsUpdateRecord, bool, error) {
	return t.docsUpdateWhere(ctx, `id = $1 AND lease_owner = $2 AND status = 'in_progress' FOR UPDATE`, id, owner)
}

// HoldDocsUpdateLease judges the lease by clock_timestamp(), the
// database's clock as the statement runs, not now(), the transaction's
// start, which a claim uses: a claim must not judge a lease expired
// before it did, but a fence must not judge it held after it ended, and
// the transaction may have waited for the index's lock since it started.
// A claim taking the update over waits for this lock, or passes the
// update over, until the write commits.
func (t txn) HoldDocsUpdateLease(ctx context.Context, projectID, id, owner string, _ time.Time) (bool, error) {
	_, held, err := queryOne(ctx, t.q, pgx.RowTo[int],
		`SELECT 1 FROM docs_updates
		 WHERE id = $1 AND project_id = $2 AND lease_owner = $3 AND status = 'in_progress'
		   AND lease_expires_at >= clock_timestamp()
		 FOR UPDATE`, id, projectID, owner)
	return held, err
}

func (t txn) SaveDocsUpdate(ctx context.Context, u store.DocsUpdateRecord) error {
	_, err := t.q.Exec(ctx,
		`UPDATE docs_updates SET status = $2, summary = $3, lists = $4, commit_sha = $5, commit_ref = $6,
		        commit_message = $7, attempts = $8, lease_owner = $9, lease_expires_at = $10, updated_at = $11, ended_at = $12
		 WHERE id = $1`,
		u.ID, string(u.Status), u.Summary, sqlstore.EncodeDocsLists(u), u.Commit.SHA, u.Commit.Ref, u.Commit.Message,
		u.Attempts, leaseOwner(u.LeaseOwner), ts(u.LeaseExpiresAt), ts(u.UpdatedAt), ts(u.EndedAt))
	return err
}

func (t txn) DeleteEndedDocsUpdates(ctx context.Context, endedBefore time.Time) (int, error) {
	tag, err := t.q.Exec(ctx,
		`DELETE FROM docs_updates WHERE status IN ('success', 'failure') AND ended_at < $1`, ts(endedBefore))
	return int(tag.RowsAffected()), err
}

// ExtendDocsUpdateLease moves the lease by the database's clock, as
// ExtendLease does a job's.
func (t txn) ExtendDocsUpdateLease(ctx context.Context, id, owner string, _ time.Time, leaseFor time.Duration) (bool, error) {
	tag, err := t.q.Exec(ctx,
		`UPDATE docs_updates SET lease_expires_at = now() + $3 * interval '1 microsecond'
		 WHERE id = $1 AND lease_owner = $2 AND status = 'in_progress' AND lease_expires_at >= now()`,
		id, owner, leaseFor.Microseconds())
	return tag.RowsAffected() > 0, err
}
