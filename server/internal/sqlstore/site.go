package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// SiteTx is the statements of the site-token methods.
type SiteTx interface {
	// InsertSiteToken stores a new token: store.ErrConflict if it exists.
	InsertSiteToken(ctx context.Context, t store.SiteToken) error
	// SiteToken reads the token, its origins sorted.
	SiteToken(ctx context.Context, token string) (t store.SiteToken, found bool, err error)
	// SiteTokens reads the project's tokens ("" every project's), ordered
	// by CreatedAt (a zero one first), then Token.
	SiteTokens(ctx context.Context, projectID string) ([]store.SiteToken, error)
	// LockSiteToken reads the token and locks it.
	LockSiteToken(ctx context.Context, token string) (t store.SiteToken, found bool, err error)
	// SaveSiteToken stores what RevokeSiteToken changes of t, a token the
	// transaction locked: its RevokedAt.
	SaveSiteToken(ctx context.Context, t store.SiteToken) error
}

// CreateSiteToken stores a new site token. ErrConflict if it exists;
// ErrNotFound if its project does not. Origins are a set: read back
// sorted, duplicates dropped.
func (s *Store) CreateSiteToken(ctx context.Context, t store.SiteToken) error {
	return s.exec(ctx, "create site token", t.Validate(), func(tx Tx) error {
		if err := requireProject(ctx, tx, t.ProjectID); err != nil {
			return err
		}
		return tx.InsertSiteToken(ctx, t)
	})
}

// SiteToken returns the token, revoked or not, or ErrNotFound.
func (s *Store) SiteToken(ctx context.Context, token string) (store.SiteToken, error) {
	return read(ctx, s, "site token", func(tx Tx) (store.SiteToken, error) {
		t, found, err := tx.SiteToken(ctx, token)
		if err == nil && !found {
			err = fmt.Errorf("site token: %w", store.ErrNotFound)
		}
		return t, err
	})
}

// SiteTokens returns the tokens of a project ("" every project's), ordered
// by CreatedAt then Token.
func (s *Store) SiteTokens(ctx context.Context, projectID string) ([]store.SiteToken, error) {
	return read(ctx, s, "site tokens", func(tx Tx) ([]store.SiteToken, error) {
		ts, err := tx.SiteTokens(ctx, projectID)
		return append([]store.SiteToken{}, ts...), err // none is an empty list, not nil
	})
}

// RevokeSiteToken revokes the token at at, as store.SiteToken.Revoked
// says. ErrNotFound if no such token.
func (s *Store) RevokeSiteToken(ctx context.Context, token string, at time.Time) error {
	return s.exec(ctx, "revoke site token", store.ValidateRevokeSiteToken(token, at), func(tx Tx) error {
		t, found, err := tx.LockSiteToken(ctx, token)
		if err == nil && !found {
			err = fmt.Errorf("site token: %w", store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if next, changed := t.Revoked(at); changed {
			return tx.SaveSiteToken(ctx, next)
		}
		return nil
	})
}

// JoinOrigins is how a SQL backend stores a site token's origins in one
// text column: the set, sorted, one space between each (an origin holds
// none). SplitOrigins reads them back.
func JoinOrigins(origins []string) string {
	o := slices.Clone(origins)
	slices.Sort(o)
	return strings.Join(slices.Compact(o), " ")
}

// SplitOrigins returns the origins JoinOrigins stored.
func SplitOrigins(s string) []string { return strings.Fields(s) }
