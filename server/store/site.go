package store

import (
	"context"
	"time"
)

// SiteStore keeps the site tokens with which a documentation site's pages
// record feedback and searches from readers' browsers.
type SiteStore interface {
	// CreateSiteToken stores a new site token. ErrConflict if the token
	// exists (in any project); ErrNotFound if its project does not.
	CreateSiteToken(ctx context.Context, t SiteToken) error
	// SiteToken returns the token, revoked ones included (the caller
	// decides), or ErrNotFound.
	SiteToken(ctx context.Context, token string) (SiteToken, error)
	// SiteTokens returns the tokens of a project, revoked ones included,
	// ordered by CreatedAt, then Token; "" lists every project's.
	SiteTokens(ctx context.Context, projectID string) ([]SiteToken, error)
	// RevokeSiteToken sets the token's RevokedAt to at, unless it is
	// revoked already, in which case the first time stays (see the
	// function RevokeSiteToken). ErrNotFound if no such token.
	RevokeSiteToken(ctx context.Context, token string, at time.Time) error
}

// SiteToken identifies a documentation site to the public recording
// endpoints. It is not a secret: it is written in every page of the site,
// so it authorises nothing but recording, from the Origins it lists.
type SiteToken struct {
	Token     string // what pages send; unique across projects
	ProjectID string
	Name      string   // what the token is for
	Origins   []string // the web origins allowed to use it, sorted
	CreatedAt time.Time
	RevokedAt time.Time // zero: not revoked
}

// Revoked returns t revoked at at, as Store.RevokeSiteToken leaves
// it, with changed true; a token revoked already is returned as it is,
// with changed false, since its first revocation is when it stopped
// working.
func (t SiteToken) Revoked(at time.Time) (token SiteToken, changed bool) {
	if !t.RevokedAt.IsZero() {
		return t, false
	}
	t.RevokedAt = at
	return t, true
}
