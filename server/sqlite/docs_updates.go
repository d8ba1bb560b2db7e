package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/sqlstore"
	"github.com/docsapi/docsapi-go/server/store"
)

const docsUpdateColumns = `id, project_id, status, trigger, summary, lists, commit_sha, commit_ref, commit_message,
	attempts, lease_owner, lease_expires_at, created_at, updated_at, ended_at`

func scanDocsUpdate(sc scanner) (store.DocsUpdateRecord, error) {
	var (
		u     store.DocsUpdateRecord
		lists string
		owner sql.NullString
	)
	err := sc.Scan(&u.ID, &u.ProjectID, (*string)(&u.Status), &u.Trigger, &u.Summary, &lists,
		&u.Commit.SHA, &u.Commit.Ref, &u.Commit.Message, &u.Attempts, &owner, timeCol{&u.LeaseExpiresAt},
		timeCol{&u.CreatedAt}, timeCol{&u.UpdatedAt}, timeCol{&u.EndedAt})
	if err != nil {
		return u, err
	}
	u.LeaseOwner = owner.String
	return u, sqlstore.DecodeDocsLists(lists, &u)
}

func (t txn) docsUpdateWhere(ctx context.Context, where string, args ...any) (store.DocsUpdateRecord, bool, error) {
	u, err := scanDocsUpdate(t.tx.QueryRowContext(ctx, `SELECT `+docsUpdateColumns+` FROM docs_updates WHERE `+where, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return store.DocsUpdateRecord{}, false, nil
	}
	return u, err == nil, err
}

// InsertDocsUpdate stores a new update after checking that its ID is free
// (the write lock keeps it free until the insert).
func (t txn) InsertDocsUpdate(ctx context.Context, u store.DocsUpdateRecord) error {
	found, err := exists(ctx, t.tx, `SELECT 1 FROM docs_updates WHERE id = ?`, u.ID)
	if err != nil {
		return err
	}
	if found {
		return fmt.Errorf("docs update %q: %w", u.ID, store.ErrConflict)
	}
	_, err = t.tx.ExecContext(ctx,
		`INSERT INTO docs_updates (id, project_id, status, trigger, lists, created_at, updated_at)
		 VALUES (?, ?, ?, ?, ?, ?, ?)`,
		u.ID, u.ProjectID, string(u.Status), u.Trigger, sqlstore.EncodeDocsLists(u), micros(u.CreatedAt), micros(u.UpdatedAt))
	return err
}

func (t txn) DocsUpdate(ctx context.Context, id string) (store.DocsUpdateRecord, bool, error) {
	return t.docsUpdateWhere(ctx, `id = ?`, id)
}

// LockQueuedDocsUpdate reads the project's queued update; the one writer
// of SQLite keeps it as read.
func (t txn) LockQueuedDocsUpdate(ctx context.Context, projectID string) (store.DocsUpdateRecord, bool, error) {
	return t.docsUpdateWhere(ctx, `project_id = ? AND status = 'queued' ORDER BY created_at, id LIMIT 1`, projectID)
}

// LockReadyDocsUpdate reads the oldest ready update at now, the time told.
func (t txn) LockReadyDocsUpdate(ctx context.Context, now time.Time) (store.DocsUpdateRecord, time.Time, bool, error) {
	u, found, err := t.docsUpdateWhere(ctx,
		`status IN ('queued', 'in_progress') AND (lease_owner IS NULL OR lease_expires_at < ?1)
		   AND NOT EXISTS (SELECT 1 FROM docs_updates AS o
		                   WHERE o.project_id = docs_updates.project_id AND o.id <> docs_updates.id
		                     AND o.status = 'in_progress' AND o.lease_expires_at >= ?1)
		 ORDER BY created_at, id LIMIT 1`, micros(now))
	return u, now, found, err
}

func (t txn) LockLeasedDocsUpdate(ctx context.Context, id, owner string) (store.DocsUpdateRecord, bool, error) {
	return t.docsUpdateWhere(ctx, `id = ? AND lease_owner = ? AND status = 'in_progress'`, id, owner)
}

// HoldDocsUpdateLease judges the lease at now, the time told; the one
// writer of SQLite keeps the update as read until the write commits.
func (t txn) HoldDocsUpdateLease(ctx context.Context, projectID, id, owner string, now time.Time) (bool, error) {
	return exists(ctx, t.tx,
		`SELECT 1 FROM docs_updates
		 WHERE id = ? AND project_id = ? AND lease_owner = ? AND status = 'in_progress' AND lease_expires_at >= ?`,
		id, projectID, owner, micros(now))
}

func (t txn) SaveDocsUpdate(ctx context.Context, u store.DocsUpdateRecord) error {
	_, err := t.tx.ExecContext(ctx,
		`UPDATE docs_updates SET status = ?, summary = ?, lists = ?, commit_sha = ?, commit_ref = ?, commit_message = ?,
		        attempts = ?, lease_owner = ?, lease_expires_at = ?, updated_at = ?, ended_at = ?
		 WHERE id = ?`,
		string(u.Status), u.Summary, sqlstore.EncodeDocsLists(u), u.Commit.SHA, u.Commit.Ref, u.Commit.Message,
		u.Attempts, leaseOwner(u.LeaseOwner), micros(u.LeaseExpiresAt), micros(u.UpdatedAt), micros(u.EndedAt), u.ID)
	return err
}

func (t txn) DeleteEndedDocsUpdates(ctx context.Context, endedBefore time.Time) (int, error) {
	res, err := t.tx.ExecContext(ctx,
		`DELETE FROM docs_updates WHERE status IN ('success', 'failure') AND ended_at < ?`, micros(endedBefore))
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

func (t txn) ExtendDocsUpdateLease(ctx context.Context, id, owner string, now time.Time, leaseFor time.Duration) (bool, error) {
	res, err := t.tx.ExecContext(ctx,
		`UPDATE docs_updates SET lease_expires_at = ?
		 WHERE id = ? AND lease_owner = ? AND status = 'in_progress' AND lease_expires_at >= ?`,
		micros(now.Add(leaseFor)), id, owner, micros(now))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
