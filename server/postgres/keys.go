package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/docsapi/docsapi-go/server/store"
)

// CreateKey stores a new API key. ErrConflict if its ID or Hash exists.
// Projects and Scopes are sets: they are read back sorted, duplicates
// dropped.
func (s *Store) CreateKey(ctx context.Context, k store.APIKey) error {
	const op = "create key"
	if p := k.Problem(); p != "" {
		return invalid(op, "%s", p)
	}
	scopes := make([]string, len(k.Scopes))
	for i, sc := range k.Scopes {
		scopes[i] = string(sc)
	}
	projects := k.Projects
	if projects == nil {
		projects = []string{} // an empty array, not NULL, for unnest
	}
	return s.tx(ctx, op, func(tx pgx.Tx) error {
		// The two unique constraints decide atomically, whichever replica
		// inserts first; the second insert waits for the first's commit
		// and then fails.
		_, err := tx.Exec(ctx,
			`INSERT INTO api_keys (id, hash, hint, name, created_at, expires_at, revoked_at)
			 VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			k.ID, k.Hash, k.Hint, k.Name, ts(k.CreatedAt), ts(k.ExpiresAt), ts(k.RevokedAt))
		switch {
		case uniqueViolation(err, "api_keys_pkey"):
			return fmt.Errorf("postgres: key %q: %w", k.ID, store.ErrConflict)
		case uniqueViolation(err, "api_keys_hash_key"):
			return fmt.Errorf("postgres: key %q: hash %w", k.ID, store.ErrConflict)
		case err != nil:
			return s.dbErr(op, err)
		}
		// DO NOTHING: a value listed twice is one member of the set.
		if _, err := tx.Exec(ctx,
			`INSERT INTO api_key_projects (key_id, project_id) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING`,
			k.ID, projects); err != nil {
			return s.dbErr(op, err)
		}
		if _, err := tx.Exec(ctx,
			`INSERT INTO api_key_scopes (key_id, scope) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING`,
			k.ID, scopes); err != nil {
			return s.dbErr(op, err)
		}
		return nil
	})
}

// keyQuery selects keys with their sets. The sets are array subqueries of
// the same statement, so a key and its sets come from one snapshot without a
// transaction; their ORDER BY follows the join tables' primary keys, whose
// "C" collation sorts as Go does.
const keyQuery = `SELECT k.id, k.hash, k.hint, k.name, k.created_at, k.expires_at, k.revoked_at,
	ARRAY(SELECT p.project_id FROM api_key_projects p WHERE p.key_id = k.id ORDER BY p.project_id),
	ARRAY(SELECT s.scope FROM api_key_scopes s WHERE s.key_id = k.id ORDER BY s.scope)
	FROM api_keys k`

func scanKey(row pgx.Row) (store.APIKey, error) {
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

// KeyByHash returns the key whose Hash equals hash, revoked and expired ones
// included, or ErrNotFound. The lookup is a seek in the unique index on
// hash.
func (s *Store) KeyByHash(ctx context.Context, hash []byte) (store.APIKey, error) {
	db, err := s.db()
	if err != nil {
		return store.APIKey{}, err
	}
	if hash == nil {
		hash = []byte{} // bytea '' rather than NULL: found by nothing either way
	}
	k, err := scanKey(db.QueryRow(ctx, keyQuery+` WHERE k.hash = $1`, hash))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.APIKey{}, fmt.Errorf("postgres: key by hash: %w", store.ErrNotFound)
	}
	if err != nil {
		return store.APIKey{}, s.dbErr("key by hash", err)
	}
	return k, nil
}

// Keys returns every key, ordered by CreatedAt then ID; a key without
// CreatedAt comes first, as the zero time sorts before every other time.
func (s *Store) Keys(ctx context.Context) ([]store.APIKey, error) {
	const op = "keys"
	db, err := s.db()
	if err != nil {
		return nil, err
	}
	rows, err := db.Query(ctx, keyQuery+` ORDER BY k.created_at NULLS FIRST, k.id`)
	if err != nil {
		return nil, s.dbErr(op, err)
	}
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.APIKey, error) { return scanKey(r) })
	if err != nil {
		return nil, s.dbErr(op, err)
	}
	if keys == nil {
		keys = []store.APIKey{} // none is an empty list, not nil
	}
	return keys, nil
}

// RevokeKey sets the key's RevokedAt to at unless it is revoked already.
// ErrNotFound if no such key. A zero at is refused: it would store "not
// revoked".
func (s *Store) RevokeKey(ctx context.Context, id string, at time.Time) error {
	const op = "revoke key"
	if p := store.RevokeKeyProblem(id, at); p != "" {
		return invalid(op, "%s", p)
	}
	db, err := s.db()
	if err != nil {
		return err
	}
	// One statement both finds the key and keeps the first revocation time
	// (it is when the key stopped working, which an audit must not see
	// move): coalesce leaves a set revoked_at as it is, and the row counts
	// as updated either way, so "no row" means "no such key".
	tag, err := db.Exec(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, $2) WHERE id = $1`, id, ts(at))
	if err != nil {
		return s.dbErr(op, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: key %q: %w", id, store.ErrNotFound)
	}
	return nil
}
