package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/docsapi/docsapi-go/server/internal/sqlstore"
	"github.com/docsapi/docsapi-go/server/store"
)

// domainFree returns store.ErrConflict if another project holds p's domain
// (the write lock keeps it so until the write).
func (t txn) domainFree(ctx context.Context, p store.Project) error {
	if p.Domain == "" {
		return nil
	}
	taken, err := exists(ctx, t.tx, `SELECT 1 FROM projects WHERE domain = ? AND domain <> '' AND id <> ?`, p.Domain, p.ID)
	if err == nil && taken {
		err = fmt.Errorf("project %q: domain %q is another project's: %w", p.ID, p.Domain, store.ErrConflict)
	}
	return err
}

// ProjectByDomain reads the project of the domain: a seek in the partial
// unique index, which the repeated condition lets SQLite use.
func (t txn) ProjectByDomain(ctx context.Context, domain string) (store.Project, bool, error) {
	p, err := scanProject(t.tx.QueryRowContext(ctx,
		`SELECT `+projectColumns+` FROM projects WHERE domain = ? AND domain <> ''`, domain))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Project{}, false, nil
	}
	return p, err == nil, err
}

// InsertAssistantKey stores a new key, after checking that its ID and hash
// are free (the write lock keeps them free until the insert).
func (t txn) InsertAssistantKey(ctx context.Context, k store.AssistantKey) error {
	found, err := exists(ctx, t.tx, `SELECT 1 FROM assistant_keys WHERE id = ?`, k.ID)
	if err != nil {
		return err
	}
	if found {
		return fmt.Errorf("assistant key %q: %w", k.ID, store.ErrConflict)
	}
	found, err = exists(ctx, t.tx, `SELECT 1 FROM assistant_keys WHERE hash = ?`, k.Hash)
	if err != nil {
		return err
	}
	if found {
		return fmt.Errorf("assistant key %q: hash %w", k.ID, store.ErrConflict)
	}
	_, err = t.tx.ExecContext(ctx,
		`INSERT INTO assistant_keys (id, hash, hint, project_id, name, origins, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.Hash, k.Hint, k.ProjectID, k.Name, sqlstore.JoinOrigins(k.Origins), micros(k.CreatedAt), micros(k.RevokedAt))
	return err
}

const assistantKeyColumns = `id, hash, hint, project_id, name, origins, created_at, revoked_at`

func scanAssistantKey(sc scanner) (store.AssistantKey, error) {
	var (
		k       store.AssistantKey
		origins string
	)
	err := sc.Scan(&k.ID, &k.Hash, &k.Hint, &k.ProjectID, &k.Name, &origins, timeCol{&k.CreatedAt}, timeCol{&k.RevokedAt})
	k.Origins = sqlstore.SplitOrigins(origins)
	return k, err
}

// assistantKeyWhere reads the one key the condition selects.
func (t txn) assistantKeyWhere(ctx context.Context, cond string, arg any) (store.AssistantKey, bool, error) {
	k, err := scanAssistantKey(t.tx.QueryRowContext(ctx, `SELECT `+assistantKeyColumns+` FROM assistant_keys WHERE `+cond, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return store.AssistantKey{}, false, nil
	}
	return k, err == nil, err
}

// AssistantKeyByHash reads the key of the hash: a seek in the unique index
// on hash.
func (t txn) AssistantKeyByHash(ctx context.Context, hash []byte) (store.AssistantKey, bool, error) {
	return t.assistantKeyWhere(ctx, `hash = ?`, hash)
}

// LockAssistantKey reads the key; the write lock keeps it as read.
func (t txn) LockAssistantKey(ctx context.Context, id string) (store.AssistantKey, bool, error) {
	return t.assistantKeyWhere(ctx, `id = ?`, id)
}

// AssistantKeys reads the project's keys, or every project's: NULL
// created_at sorts first, as the zero time does.
func (t txn) AssistantKeys(ctx context.Context, projectID string) ([]store.AssistantKey, error) {
	rows, err := t.tx.QueryContext(ctx,
		`SELECT `+assistantKeyColumns+` FROM assistant_keys WHERE ? = '' OR project_id = ? ORDER BY created_at, id`,
		projectID, projectID)
	return collect(rows, err, scanAssistantKey)
}

// SaveAssistantKey stores the key's RevokedAt.
func (t txn) SaveAssistantKey(ctx context.Context, k store.AssistantKey) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE assistant_keys SET revoked_at = ? WHERE id = ?`, micros(k.RevokedAt), k.ID)
	return err
}
