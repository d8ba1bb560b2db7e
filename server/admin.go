package server

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/base62"
	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/store"
)

// keySecretLength is the number of base62 characters after the prefix: 43
// characters carry about 256 bits.
const keySecretLength = 43

var projectIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// CreateProject registers a project. Its ID is what API paths use: 1 to 64
// letters, digits, '.', '_' or '-', starting with a letter or digit.
func (s *Server) CreateProject(ctx context.Context, p store.Project) (store.Project, error) {
	if err := checkProject(p); err != nil {
		return store.Project{}, err
	}
	p.CreatedAt = s.cfg.Now().UTC().Truncate(time.Microsecond)
	if err := s.cfg.Store.CreateProject(ctx, p); err != nil {
		if errors.Is(err, store.ErrConflict) {
			if _, perr := s.cfg.Store.Project(ctx, p.ID); errors.Is(perr, store.ErrNotFound) {
				// The ID is free, so the domain is another project's.
				holder := "another project"
				if other, derr := s.cfg.Store.ProjectByDomain(ctx, p.Domain); derr == nil {
					holder = fmt.Sprintf("project %q", other.ID)
				}
				return store.Project{}, fmt.Errorf("server: project %q: the domain %q is %s's already: %w", p.ID, p.Domain, holder, store.ErrConflict)
			}
			// Wrapped, so a first-start routine can tell "already there".
			return store.Project{}, fmt.Errorf("server: project %q already exists: %w", p.ID, store.ErrConflict)
		}
		return store.Project{}, fmt.Errorf("server: creating project %q: %w", p.ID, err)
	}
	return p, nil
}

func checkProject(p store.Project) error {
	if !projectIDPattern.MatchString(p.ID) {
		return fmt.Errorf("server: project ID %q must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", p.ID)
	}
	if p.Domain != "" {
		if problem := store.DomainProblem(p.Domain); problem != "" {
			return fmt.Errorf("server: project %q: the domain %q %s", p.ID, p.Domain, problem)
		}
	}
	if p.Repository != "" {
		// The repository is shown to API clients in every job's source, so
		// it must not carry credentials; git gets those another way.
		if u, err := url.Parse(p.Repository); err == nil && u.User != nil {
			return fmt.Errorf("server: project %q: the repository URL must not contain credentials", p.ID)
		}
	}
	return nil
}

// KeyParams describes a new API key.
type KeyParams struct {
	// Name says what the key is for, for listings.
	Name string
	// Projects lists the project IDs the key may use; at least one.
	Projects []string
	// Scopes lists the key's scopes: read, write (which implies read), or
	// both. At least one.
	Scopes []store.Scope
	// ExpiresAt, if set, is when the key stops working.
	ExpiresAt time.Time
}

// NewKey is a key just created. Secret is shown this once: the store keeps
// only its hash.
type NewKey struct {
	Secret string
	Key    store.APIKey
}

// CreateKey makes an admin API key for existing projects.
func (s *Server) CreateKey(ctx context.Context, p KeyParams) (NewKey, error) {
	now := s.cfg.Now().UTC().Truncate(time.Microsecond)
	if len(p.Projects) == 0 {
		return NewKey{}, errors.New("server: a key needs at least one project")
	}
	if len(p.Scopes) == 0 {
		return NewKey{}, errors.New("server: a key needs at least one scope (read or write)")
	}
	for _, sc := range p.Scopes {
		if sc != store.ScopeRead && sc != store.ScopeWrite {
			return NewKey{}, fmt.Errorf("server: unknown scope %q (want read or write)", sc)
		}
	}
	if !p.ExpiresAt.IsZero() && !p.ExpiresAt.After(now) {
		return NewKey{}, fmt.Errorf("server: the expiry %s is not in the future", p.ExpiresAt.UTC().Format(time.RFC3339))
	}
	for _, id := range p.Projects {
		if _, err := s.cfg.Store.Project(ctx, id); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return NewKey{}, fmt.Errorf("server: no project %q", id)
			}
			return NewKey{}, fmt.Errorf("server: checking project %q: %w", id, err)
		}
	}
	secret := s.cfg.KeyPrefix + base62.Random(keySecretLength)
	hash := keyauth.Hash(secret)
	key := store.APIKey{
		ID:        "key_" + base62.Random(16),
		Hash:      hash[:],
		Hint:      secret[:len(s.cfg.KeyPrefix)+4] + "…",
		Name:      strings.TrimSpace(p.Name),
		Projects:  sortedUnique(p.Projects),
		Scopes:    sortedUnique(p.Scopes),
		CreatedAt: now,
		ExpiresAt: p.ExpiresAt.UTC().Truncate(time.Microsecond),
	}
	if err := s.cfg.Store.CreateKey(ctx, key); err != nil {
		return NewKey{}, fmt.Errorf("server: storing key: %w", err)
	}
	return NewKey{Secret: secret, Key: key}, nil
}

// Keys lists every key, oldest first. Secrets are not kept, so none is shown.
func (s *Server) Keys(ctx context.Context) ([]store.APIKey, error) {
	return s.cfg.Store.Keys(ctx)
}

// RevokeKey stops a key from working: at once on this Server, and within
// their Config.KeyCacheTTL on other Servers sharing the Store.
func (s *Server) RevokeKey(ctx context.Context, id string) error {
	err := s.cfg.Store.RevokeKey(ctx, id, s.cfg.Now().UTC().Truncate(time.Microsecond))
	// After the store, so that no request can cache the key again (see
	// authCache.gen); other replicas see the revocation within their
	// KeyCacheTTL.
	s.auth.Forget()
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("server: no key %q", id)
	}
	return err
}

func sortedUnique[T ~string](in []T) []T {
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}

// validKeyPrefix reports whether p may start keys: 1 to 16 letters or
// digits and an underscore.
func validKeyPrefix(p string) bool {
	body, ok := strings.CutSuffix(p, "_")
	if !ok || len(body) == 0 || len(body) > 16 {
		return false
	}
	for _, c := range body {
		if !base62.Is(c) {
			return false
		}
	}
	return true
}
