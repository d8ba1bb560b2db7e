package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

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
	return s.write(ctx, op, func(tx *sql.Tx) error {
		found, err := exists(ctx, tx, "SELECT 1 FROM api_keys WHERE id = ?", k.ID)
		if err != nil {
			return dbErr(op, err)
		}
		if found {
			return fmt.Errorf("sqlite: key %q: %w", k.ID, store.ErrConflict)
		}
		found, err = exists(ctx, tx, "SELECT 1 FROM api_keys WHERE hash = ?", k.Hash)
		if err != nil {
			return dbErr(op, err)
		}
		if found {
			return fmt.Errorf("sqlite: key %q: hash %w", k.ID, store.ErrConflict)
		}
		_, err = tx.ExecContext(ctx,
			`INSERT INTO api_keys (id, hash, hint, name, created_at, expires_at, revoked_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?)`,
			k.ID, k.Hash, k.Hint, k.Name, micros(k.CreatedAt), micros(k.ExpiresAt), micros(k.RevokedAt))
		if err != nil {
			return dbErr(op, err)
		}
		// OR IGNORE: a value listed twice is one member of the set.
		for _, p := range k.Projects {
			if _, err := tx.ExecContext(ctx,
				`INSERT OR IGNORE INTO api_key_projects (key_id, project_id) VALUES (?, ?)`, k.ID, p); err != nil {
				return dbErr(op, err)
			}
		}
		for _, sc := range k.Scopes {
			if _, err := tx.ExecContext(ctx,
				`INSERT OR IGNORE INTO api_key_scopes (key_id, scope) VALUES (?, ?)`, k.ID, string(sc)); err != nil {
				return dbErr(op, err)
			}
		}
		return nil
	})
}

const keyColumns = `id, hash, hint, name, created_at, expires_at, revoked_at`

func scanKey(sc interface{ Scan(...any) error }) (store.APIKey, error) {
	var k store.APIKey
	var created, expires, revoked sql.NullInt64
	if err := sc.Scan(&k.ID, &k.Hash, &k.Hint, &k.Name, &created, &expires, &revoked); err != nil {
		return store.APIKey{}, err
	}
	k.CreatedAt = fromMicros(created)
	k.ExpiresAt = fromMicros(expires)
	k.RevokedAt = fromMicros(revoked)
	return k, nil
}

// KeyByHash returns the key whose Hash equals hash, revoked and expired ones
// included, or ErrNotFound.
func (s *Store) KeyByHash(ctx context.Context, hash []byte) (store.APIKey, error) {
	const op = "key by hash"
	var k store.APIKey
	err := s.read(ctx, op, func(tx *sql.Tx) error {
		var err error
		k, err = scanKey(tx.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE hash = ?`, hash))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("sqlite: key by hash: %w", store.ErrNotFound)
		}
		if err != nil {
			return dbErr(op, err)
		}
		ks := []*store.APIKey{&k}
		if err := fillKeySets(ctx, tx, ks, `WHERE key_id = ?`, k.ID); err != nil {
			return dbErr(op, err)
		}
		return nil
	})
	if err != nil {
		return store.APIKey{}, err
	}
	return k, nil
}

// Keys returns every key, ordered by CreatedAt then ID.
func (s *Store) Keys(ctx context.Context) ([]store.APIKey, error) {
	const op = "keys"
	keys := []store.APIKey{} // none is an empty list, not nil
	err := s.read(ctx, op, func(tx *sql.Tx) error {
		// NULL created_at sorts first, as the zero time sorts before
		// every other time.
		rows, err := tx.QueryContext(ctx, `SELECT `+keyColumns+` FROM api_keys ORDER BY created_at, id`)
		if err != nil {
			return dbErr(op, err)
		}
		defer rows.Close()
		for rows.Next() {
			k, err := scanKey(rows)
			if err != nil {
				return dbErr(op, err)
			}
			keys = append(keys, k)
		}
		if err := rows.Err(); err != nil {
			return dbErr(op, err)
		}
		ptrs := make([]*store.APIKey, len(keys))
		for i := range keys {
			ptrs[i] = &keys[i]
		}
		if err := fillKeySets(ctx, tx, ptrs, ``); err != nil {
			return dbErr(op, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return keys, nil
}

// fillKeySets sets the Projects and Scopes of keys from the join tables rows
// selected by where, in sorted order (the ORDER BY matches the primary key,
// so SQLite reads them in that order without sorting).
func fillKeySets(ctx context.Context, tx *sql.Tx, keys []*store.APIKey, where string, args ...any) error {
	byID := make(map[string]*store.APIKey, len(keys))
	for _, k := range keys {
		byID[k.ID] = k
	}
	for _, set := range []struct {
		query string
		add   func(k *store.APIKey, v string)
	}{
		{`SELECT key_id, project_id FROM api_key_projects ` + where + ` ORDER BY key_id, project_id`,
			func(k *store.APIKey, v string) { k.Projects = append(k.Projects, v) }},
		{`SELECT key_id, scope FROM api_key_scopes ` + where + ` ORDER BY key_id, scope`,
			func(k *store.APIKey, v string) { k.Scopes = append(k.Scopes, store.Scope(v)) }},
	} {
		rows, err := tx.QueryContext(ctx, set.query, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id, v string
			if err := rows.Scan(&id, &v); err != nil {
				rows.Close()
				return err
			}
			if k := byID[id]; k != nil {
				set.add(k, v)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	return nil
}

// RevokeKey sets the key's RevokedAt to at unless it is revoked already.
// ErrNotFound if no such key. A zero at is refused: it would store "not
// revoked".
func (s *Store) RevokeKey(ctx context.Context, id string, at time.Time) error {
	const op = "revoke key"
	if p := store.RevokeKeyProblem(id, at); p != "" {
		return invalid(op, "%s", p)
	}
	return s.write(ctx, op, func(tx *sql.Tx) error {
		found, err := exists(ctx, tx, "SELECT 1 FROM api_keys WHERE id = ?", id)
		if err != nil {
			return dbErr(op, err)
		}
		if !found {
			return fmt.Errorf("sqlite: key %q: %w", id, store.ErrNotFound)
		}
		// The first revocation time stays: it is when the key stopped
		// working, which an audit must not see move.
		if _, err := tx.ExecContext(ctx,
			`UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, micros(at), id); err != nil {
			return dbErr(op, err)
		}
		return nil
	})
}
