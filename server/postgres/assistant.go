package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/docsapi/docsapi-go/server/internal/sqlstore"
	"github.com/docsapi/docsapi-go/server/store"
)

// domainConflict is err, or store.ErrConflict if err is the partial unique
// index on domains refusing p's: it decides between two replicas
// atomically, with no check-then-write window.
func domainConflict(p store.Project, err error) error {
	if uniqueViolation(err, "projects_by_domain") {
		return fmt.Errorf("project %q: domain %q is another project's: %w", p.ID, p.Domain, store.ErrConflict)
	}
	return err
}

// ProjectByDomain reads the project of the domain: a seek in the partial
// unique index.
func (t txn) ProjectByDomain(ctx context.Context, domain string) (store.Project, bool, error) {
	return queryOne(ctx, t.q, scanProject, `SELECT `+projectColumns+` FROM projects WHERE domain = $1 AND domain <> ''`, domain)
}

// InsertAssistantKey stores a new key; the two unique constraints decide a
// taken ID or hash atomically.
func (t txn) InsertAssistantKey(ctx context.Context, k store.AssistantKey) error {
	_, err := t.q.Exec(ctx,
		`INSERT INTO assistant_keys (id, hash, hint, project_id, name, origins, created_at, revoked_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		k.ID, k.Hash, k.Hint, k.ProjectID, k.Name, sqlstore.JoinOrigins(k.Origins), ts(k.CreatedAt), ts(k.RevokedAt))
	switch {
	case uniqueViolation(err, "assistant_keys_pkey"):
		return fmt.Errorf("assistant key %q: %w", k.ID, store.ErrConflict)
	case uniqueViolation(err, "assistant_keys_hash_key"):
		return fmt.Errorf("assistant key %q: hash %w", k.ID, store.ErrConflict)
	case foreignKeyViolation(err):
		// The project was deleted since CreateAssistantKey checked it.
		return fmt.Errorf("project %q: %w", k.ProjectID, store.ErrNotFound)
	}
	return err
}

const assistantKeyColumns = `id, hash, hint, project_id, name, origins, created_at, revoked_at`

func scanAssistantKey(row pgx.CollectableRow) (store.AssistantKey, error) {
	var (
		k                store.AssistantKey
		origins          string
		created, revoked pgtype.Timestamptz
	)
	if err := row.Scan(&k.ID, &k.Hash, &k.Hint, &k.ProjectID, &k.Name, &origins, &created, &revoked); err != nil {
		return store.AssistantKey{}, err
	}
	k.Origins = sqlstore.SplitOrigins(origins)
	k.CreatedAt, k.RevokedAt = fromTS(created), fromTS(revoked)
	return k, nil
}

// AssistantKeyByHash reads the key of the hash: a seek in the unique index
// on hash.
func (t txn) AssistantKeyByHash(ctx context.Context, hash []byte) (store.AssistantKey, bool, error) {
	return queryOne(ctx, t.q, scanAssistantKey, `SELECT `+assistantKeyColumns+` FROM assistant_keys WHERE hash = $1`, hash)
}

// LockAssistantKey reads the key and locks its row.
func (t txn) LockAssistantKey(ctx context.Context, id string) (store.AssistantKey, bool, error) {
	return queryOne(ctx, t.q, scanAssistantKey, `SELECT `+assistantKeyColumns+` FROM assistant_keys WHERE id = $1 FOR UPDATE`, id)
}

// AssistantKeys reads the project's keys, or every project's, a key
// without CreatedAt first as the zero time sorts first.
func (t txn) AssistantKeys(ctx context.Context, projectID string) ([]store.AssistantKey, error) {
	rows, _ := t.q.Query(ctx, `SELECT `+assistantKeyColumns+` FROM assistant_keys WHERE $1 = '' OR project_id = $1
		ORDER BY created_at NULLS FIRST, id`, projectID) // CollectRows reports its error
	return pgx.CollectRows(rows, scanAssistantKey)
}

// SaveAssistantKey stores the key's RevokedAt.
func (t txn) SaveAssistantKey(ctx context.Context, k store.AssistantKey) error {
	_, err := t.q.Exec(ctx, `UPDATE assistant_keys SET revoked_at = $2 WHERE id = $1`, k.ID, ts(k.RevokedAt))
	return err
}
