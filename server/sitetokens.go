package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/base62"
	"github.com/docsapi/docsapi-go/server/site"
	"github.com/docsapi/docsapi-go/server/store"
)

// siteTokenPrefix starts every site token, so that one is told from an
// admin key at a glance (and by secret scanners, which should not flag it).
const siteTokenPrefix = "site_"

// SiteTokenParams describes a new site token.
type SiteTokenParams struct {
	// Project is the project whose pages record with the token.
	Project string
	// Name says what the token is for (the site, its environment).
	Name string
	// Origins are the web origins whose pages may use the token, such as
	// https://docs.example.com: a scheme (http or https), a host and an
	// optional port, nothing else. At least one. A page of another origin
	// is refused, by its browser (CORS) and by the server.
	Origins []string
}

// CreateSiteToken makes a site token with which the pages of the given
// origins record readers' feedback and searches. The token is not a
// secret: it is written into every page. To rotate it, create another,
// deploy it, and revoke the first.
func (s *Server) CreateSiteToken(ctx context.Context, p SiteTokenParams) (store.SiteToken, error) {
	if len(p.Origins) == 0 {
		return store.SiteToken{}, errors.New("server: a site token needs at least one origin, such as https://docs.example.com")
	}
	origins := make([]string, len(p.Origins))
	for i, o := range p.Origins {
		n, err := site.NormalizeOrigin(o)
		if err != nil {
			return store.SiteToken{}, fmt.Errorf("server: origin %q: %w", o, err)
		}
		origins[i] = n
	}
	t := store.SiteToken{
		Token:     siteTokenPrefix + base62.Random(24),
		ProjectID: p.Project,
		Name:      strings.TrimSpace(p.Name),
		Origins:   sortedUnique(origins),
		CreatedAt: s.cfg.Now().UTC().Truncate(time.Microsecond),
	}
	if err := s.cfg.Store.CreateSiteToken(ctx, t); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return store.SiteToken{}, fmt.Errorf("server: no project %q", p.Project)
		}
		return store.SiteToken{}, fmt.Errorf("server: storing site token: %w", err)
	}
	return t, nil
}

// SiteTokens lists the site tokens of a project ("" for every project's),
// oldest first, revoked ones included.
func (s *Server) SiteTokens(ctx context.Context, project string) ([]store.SiteToken, error) {
	return s.cfg.Store.SiteTokens(ctx, project)
}

// RevokeSiteToken stops a site token from working at once: its pages'
// submissions are refused from then on.
func (s *Server) RevokeSiteToken(ctx context.Context, token string) error {
	err := s.cfg.Store.RevokeSiteToken(ctx, token, s.cfg.Now().UTC().Truncate(time.Microsecond))
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("server: no site token %q", token)
	}
	return err
}
