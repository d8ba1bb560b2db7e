package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/base62"
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
		n, err := normalizeOrigin(o)
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

// normalizeOrigin returns a web origin as browsers send it in the Origin
// header: scheme and host in lower case, the scheme's default port left
// out. Anything but scheme://host[:port] is refused, so that an allowlist
// entry cannot look broader or narrower than what it matches.
func normalizeOrigin(o string) (string, error) {
	u, err := url.Parse(o)
	switch {
	case err != nil:
		return "", errors.New("not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return "", errors.New("the scheme must be http or https")
	case u.Opaque != "" || u.Host == "":
		return "", errors.New("no host")
	case u.User != nil:
		return "", errors.New("an origin has no user name or password")
	case (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return "", errors.New("an origin has no path, query or fragment: only scheme://host[:port]")
	case strings.ContainsAny(u.Host, "*%"):
		return "", errors.New("wildcards are not supported: list each origin")
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		port = ""
	}
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return u.Scheme + "://" + host, nil
}
