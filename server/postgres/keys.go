package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/docsapi/docsapi-go/server/store"
)

// InsertKey stores a new key and its sets. The two unique constraints
// decide atomically, whichever replica inserts first; the second insert
// waits for the first's commit and then fails.
func (t txn) InsertKey(ctx context.Context, k store.APIKey) error {
	_, err := t.q.Exec(ctx,
		`INSERT INTO api_keys (id, hash, hint, name, created_at, expires_at, revoked_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		k.ID, k.Hash, k.Hint, k.Name, ts(k.CreatedAt), ts(k.ExpiresAt), ts(k.RevokedAt))
	switch {
	case uniqueViolation(err, "api_keys_pkey"):
		return fmt.Errorf("key %q: %w", k.ID, store.ErrConflict)
	case uniqueViolation(err, "api_keys_hash_key"):
		return fmt.Errorf("key %q: hash %w", k.ID, store.ErrConflict)
	case err != nil:
		return err
	}
	scopes := make([]string, len(k.Scopes))
	for i, sc := range k.Scopes {
		scopes[i] = string(sc)
	}
	projects := k.Projects
	if projects == nil {
		projects = []string{} // an empty array, not NULL, for unnest
	}
	// DO NOTHING: a value listed twice is one member of the set.
	if _, err := t.q.Exec(ctx,
		`INSERT INTO api_key_projects (key_id, project_id) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING`,
		k.ID, projects); err != nil {
		return err
	}
	_, err = t.q.Exec(ctx,
		`INSERT INTO api_key_scopes (key_id, scope) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING`,
		k.ID, scopes)
	return err
}

// keyQuery selects keys with their sets. The sets are array subqueries of
// the same statement, so a key and its sets come from one snapshot without a
// transaction; their ORDER BY follows the join tables' primary keys, whose
// "C" collation sorts as Go does.
const keyQuery = `SELECT k.id, k.hash, k.hint, k.name, k.created_at, k.expires_at, k.revoked_at,
	ARRAY(SELECT p.project_id FROM api_key_projects p WHERE p.key_id = k.id ORDER BY p.project_id),
	ARRAY(SELECT s.scope FROM api_key_scopes s WHERE s.key_id = k.id ORDER BY s.scope)
	FROM api_keys k`

func scanKey(row pgx.CollectableRow) (store.APIKey, error) {
	var (
		k                         store.APIKey
		created, expires, revoked pgtype.Timestamptz
		scopes                    []string
	)
	if err := row.Scan(&k.ID, &k.Hash, &k.Hint, &k.Name, &created, &expires, &revoked, &k.Projects, &scopes); err != nil {
		return store.APIKey{}, err
	}
	k.CreatedAt = fromTS(created)
	k.ExpiresAt = fromTS(expires)
	k.RevokedAt = fromTS(revoked)
	if len(k.Projects) == 0 {
		k.Projects = nil // as SQLite's backend returns a key without projects
	}
	for _, sc := range scopes {
		k.Scopes = append(k.Scopes, store.Scope(sc))
	}
	return k, nil
}

// KeyByHash reads the key whose hash is hash: a seek in the unique index
// on hash.
func (t txn) KeyByHash(ctx context.Context, hash []byte) (store.APIKey, bool, error) {
	if hash == nil {
		hash = []byte{} // bytea '' rather than NULL: found by nothing either way
	}
	return queryOne(ctx, t.q, scanKey, keyQuery+` WHERE k.hash = $1`, hash)
}

// LockKey reads the key id and locks its row.
func (t txn) LockKey(ctx context.Context, id string) (store.APIKey, bool, error) {
	return queryOne(ctx, t.q, scanKey, keyQuery+` WHERE k.id = $1 FOR UPDATE OF k`, id)
}

// Keys reads every key, ordered by CreatedAt then ID; a key without
// CreatedAt comes first, as the zero time sorts before every other time.
func (t txn) Keys(ctx context.Context) ([]store.APIKey, error) {
	rows, _ := t.q.Query(ctx, keyQuery+` ORDER BY k.created_at NULLS FIRST, k.id`) // CollectRows reports its error
	return pgx.CollectRows(rows, scanKey)
}

// SaveKey stores k's RevokedAt.
func (t txn) SaveKey(ctx context.Context, k store.APIKey) error {
	_, err := t.q.Exec(ctx, `UPDATE api_keys SET revoked_at = $2 WHERE id = $1`, k.ID, ts(k.RevokedAt))
	return err
}
