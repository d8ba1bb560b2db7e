package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/docsapi/docsapi-go/server/store"
)

// InsertKey stores a new key and its sets, after checking that its ID and
// hash are free (the write lock keeps them free until the insert).
func (t txn) InsertKey(ctx context.Context, k store.APIKey) error {
	found, err := exists(ctx, t.tx, "SELECT 1 FROM api_keys WHERE id = ?", k.ID)
	if err != nil {
		return err
	}
	if found {
		return fmt.Errorf("key %q: %w", k.ID, store.ErrConflict)
	}
	found, err = exists(ctx, t.tx, "SELECT 1 FROM api_keys WHERE hash = ?", k.Hash)
	if err != nil {
		return err
	}
	if found {
		return fmt.Errorf("key %q: hash %w", k.ID, store.ErrConflict)
	}
	if _, err := t.tx.ExecContext(ctx,
		`INSERT INTO api_keys (id, hash, hint, name, created_at, expires_at, revoked_at)
		 VALUES (?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.Hash, k.Hint, k.Name, micros(k.CreatedAt), micros(k.ExpiresAt), micros(k.RevokedAt)); err != nil {
		return err
	}
	// OR IGNORE: a value listed twice is one member of the set.
	for _, p := range k.Projects {
		if _, err := t.tx.ExecContext(ctx,
			`INSERT OR IGNORE INTO api_key_projects (key_id, project_id) VALUES (?, ?)`, k.ID, p); err != nil {
			return err
		}
	}
	for _, sc := range k.Scopes {
		if _, err := t.tx.ExecContext(ctx,
			`INSERT OR IGNORE INTO api_key_scopes (key_id, scope) VALUES (?, ?)`, k.ID, string(sc)); err != nil {
			return err
		}
	}
	return nil
}

const keyColumns = `id, hash, hint, name, created_at, expires_at, revoked_at`

func scanKey(sc scanner) (store.APIKey, error) {
	var k store.APIKey
	err := sc.Scan(&k.ID, &k.Hash, &k.Hint, &k.Name, timeCol{&k.CreatedAt}, timeCol{&k.ExpiresAt}, timeCol{&k.RevokedAt})
	return k, err
}

// KeyByHash reads the key whose hash is hash, with its sets: a seek in the
// unique index on hash.
func (t txn) KeyByHash(ctx context.Context, hash []byte) (store.APIKey, bool, error) {
	return t.key(ctx, `hash = ?`, hash)
}

// LockKey reads the key id; the write lock keeps it as read.
func (t txn) LockKey(ctx context.Context, id string) (store.APIKey, bool, error) {
	return t.key(ctx, `id = ?`, id)
}

// key reads the key selected by where, with its sets.
func (t txn) key(ctx context.Context, where string, arg any) (store.APIKey, bool, error) {
	k, err := scanKey(t.tx.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE `+where, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return store.APIKey{}, false, nil
	}
	if err != nil {
		return store.APIKey{}, false, err
	}
	if err := fillKeySets(ctx, t.tx, []*store.APIKey{&k}, `WHERE key_id = ?`, k.ID); err != nil {
		return store.APIKey{}, false, err
	}
	return k, true, nil
}

// Keys reads every key with its sets, ordered by CreatedAt then ID: NULL
// created_at sorts first, as the zero time sorts before every other time.
func (t txn) Keys(ctx context.Context) ([]store.APIKey, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT `+keyColumns+` FROM api_keys ORDER BY created_at, id`)
	keys, err := collect(rows, err, scanKey)
	if err != nil {
		return nil, err
	}
	ptrs := make([]*store.APIKey, len(keys))
	for i := range keys {
		ptrs[i] = &keys[i]
	}
	return keys, fillKeySets(ctx, t.tx, ptrs, ``)
}

// fillKeySets sets the Projects and Scopes of keys from the join tables rows
// selected by where, in sorted order (the ORDER BY matches the primary key,
// so SQLite reads them in that order without sorting).
func fillKeySets(ctx context.Context, tx querier, keys []*store.APIKey, where string, args ...any) error {
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

// SaveKey stores k's RevokedAt.
func (t txn) SaveKey(ctx context.Context, k store.APIKey) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE api_keys SET revoked_at = ? WHERE id = ?`, micros(k.RevokedAt), k.ID)
	return err
}
