package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// AssistantTx is the statements of projects' domains and assistant keys.
type AssistantTx interface {
	// ProjectByDomain reads the project whose domain is domain (never "").
	ProjectByDomain(ctx context.Context, domain string) (p store.Project, found bool, err error)
	// InsertAssistantKey stores a new assistant key: store.ErrConflict if
	// its ID or its hash is taken.
	InsertAssistantKey(ctx context.Context, k store.AssistantKey) error
	// AssistantKeyByHash reads the assistant key whose hash is hash, its
	// origins sorted.
	AssistantKeyByHash(ctx context.Context, hash []byte) (k store.AssistantKey, found bool, err error)
	// AssistantKeys reads the project's assistant keys ("" every
	// project's), ordered by CreatedAt (a zero one first), then ID.
	AssistantKeys(ctx context.Context, projectID string) ([]store.AssistantKey, error)
	// LockAssistantKey reads the assistant key id and locks it.
	LockAssistantKey(ctx context.Context, id string) (k store.AssistantKey, found bool, err error)
	// SaveAssistantKey stores what RevokeAssistantKey changes of k, a key
	// the transaction locked: its RevokedAt.
	SaveAssistantKey(ctx context.Context, k store.AssistantKey) error
}

// ProjectByDomain returns the project whose Domain is domain, or
// ErrNotFound (always for "").
func (s *Store) ProjectByDomain(ctx context.Context, domain string) (store.Project, error) {
	return read(ctx, s, "project by domain", func(tx Tx) (store.Project, error) {
		if domain == "" {
			return store.Project{}, fmt.Errorf("project of no domain: %w", store.ErrNotFound)
		}
		p, found, err := tx.ProjectByDomain(ctx, domain)
		if err == nil && !found {
			err = fmt.Errorf("project of domain %q: %w", domain, store.ErrNotFound)
		}
		return p, err
	})
}

// CreateAssistantKey stores a new assistant key. ErrConflict if its ID or
// Hash exists; ErrNotFound if its project does not. Origins are a set:
// read back sorted, duplicates dropped.
func (s *Store) CreateAssistantKey(ctx context.Context, k store.AssistantKey) error {
	return s.exec(ctx, "create assistant key", k.Validate(), func(tx Tx) error {
		if err := requireProject(ctx, tx, k.ProjectID); err != nil {
			return err
		}
		return tx.InsertAssistantKey(ctx, k)
	})
}

// AssistantKeyByHash returns the assistant key whose Hash equals hash,
// revoked or not, or ErrNotFound.
func (s *Store) AssistantKeyByHash(ctx context.Context, hash []byte) (store.AssistantKey, error) {
	return read(ctx, s, "assistant key by hash", func(tx Tx) (store.AssistantKey, error) {
		k, found, err := tx.AssistantKeyByHash(ctx, hash)
		if err == nil && !found {
			err = fmt.Errorf("assistant key: %w", store.ErrNotFound)
		}
		return k, err
	})
}

// AssistantKeys returns the assistant keys of a project ("" every
// project's), ordered by CreatedAt then ID.
func (s *Store) AssistantKeys(ctx context.Context, projectID string) ([]store.AssistantKey, error) {
	return read(ctx, s, "assistant keys", func(tx Tx) ([]store.AssistantKey, error) {
		ks, err := tx.AssistantKeys(ctx, projectID)
		return append([]store.AssistantKey{}, ks...), err // none is an empty list, not nil
	})
}

// RevokeAssistantKey revokes the key at at, as store.AssistantKey.Revoked
// says. ErrNotFound if no such key.
func (s *Store) RevokeAssistantKey(ctx context.Context, id string, at time.Time) error {
	return s.exec(ctx, "revoke assistant key", store.ValidateRevokeAssistantKey(id, at), func(tx Tx) error {
		k, found, err := tx.LockAssistantKey(ctx, id)
		if err == nil && !found {
			err = fmt.Errorf("assistant key %q: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if next, changed := k.Revoked(at); changed {
			return tx.SaveAssistantKey(ctx, next)
		}
		return nil
	})
}
