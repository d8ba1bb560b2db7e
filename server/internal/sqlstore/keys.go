package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// CreateKey stores a new API key. ErrConflict if its ID or Hash exists.
// Projects and Scopes are sets: they are read back sorted, duplicates
// dropped.
func (s *Store) CreateKey(ctx context.Context, k store.APIKey) error {
	return s.exec(ctx, "create key", k.Validate(), func(tx Tx) error { return tx.InsertKey(ctx, k) })
}

// KeyByHash returns the key whose Hash equals hash, revoked and expired ones
// included, or ErrNotFound.
func (s *Store) KeyByHash(ctx context.Context, hash []byte) (store.APIKey, error) {
	return read(ctx, s, "key by hash", func(tx Tx) (store.APIKey, error) {
		k, found, err := tx.KeyByHash(ctx, hash)
		if err == nil && !found {
			err = store.ErrNotFound
		}
		return k, err
	})
}

// Keys returns every key, ordered by CreatedAt then ID.
func (s *Store) Keys(ctx context.Context) ([]store.APIKey, error) {
	return read(ctx, s, "keys", func(tx Tx) ([]store.APIKey, error) {
		keys, err := tx.Keys(ctx)
		return append([]store.APIKey{}, keys...), err // none is an empty list, not nil
	})
}

// RevokeKey revokes the key at at, as store.APIKey.Revoked says.
// ErrNotFound if no such key.
func (s *Store) RevokeKey(ctx context.Context, id string, at time.Time) error {
	return s.exec(ctx, "revoke key", store.ValidateRevokeKey(id, at), func(tx Tx) error {
		k, found, err := tx.LockKey(ctx, id)
		if err == nil && !found {
			err = fmt.Errorf("key %q: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if next, changed := k.Revoked(at); changed {
			return tx.SaveKey(ctx, next)
		}
		return nil
	})
}
