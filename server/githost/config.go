package githost

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/docsapi/docsapi-go/server/githost/internal/hostkit"
)

// Config configures the GitHub or the GitLab host (github.Config and
// gitlab.Config are this type; their package documents what differs). A
// token is required; everything else has a default. The library never reads
// environment variables: the caller decides where the token comes from.
type Config struct {
	// Token is an access token allowed to read the repository and to open
	// pull (merge) requests: on GitHub a personal access token or any token
	// GitHub accepts as a bearer token, on GitLab a personal, group or
	// project access token with the "api" scope, sent as PRIVATE-TOKEN.
	Token string
	// TokenFunc, instead of Token, is called before every request and
	// returns the token to send. It suits short-lived tokens, such as a
	// GitHub App's installation tokens, that must be renewed while the
	// server runs. Its error is returned by Ensure; mark it with
	// engine.Permanent when no retry can help.
	TokenFunc func(ctx context.Context) (string, error)
	// BaseURL is the REST API of a GitHub Enterprise Server or of a
	// self-managed GitLab; each host package says which path it adds when
	// missing. Empty means GitHub.com or GitLab.com.
	BaseURL string
	// RepositoryHosts lists further host names that the repositories'
	// clone URLs may use, for example an SSH alias. By default a repository
	// must be on the API's host (each host package names the others it
	// accepts).
	RepositoryHosts []string
	// Draft opens new pull (merge) requests as drafts. GitHub refuses them
	// on plans that do not offer drafts, and Ensure then fails permanently;
	// GitLab marks them by its convention of a "Draft: " title prefix.
	Draft bool
	// HTTPClient sends the requests. It is copied, never modified. The
	// default is a pooled client with a 60 s timeout.
	HTTPClient *http.Client
	// Logger receives the pull requests found and opened (info), and every
	// request's method, path, status and duration (debug). Tokens are never
	// logged. The default discards everything.
	Logger *slog.Logger
}

// String describes c without its token and without user information in its
// base URL, so that printing or logging a configuration cannot leak a
// credential. The token shows only as "func", "[REDACTED]" or "none".
func (c Config) String() string {
	base := "default"
	if c.BaseURL != "" {
		base = fmt.Sprintf("%q", hostkit.Redact(c.BaseURL))
	}
	tok := "none"
	switch {
	case c.TokenFunc != nil:
		tok = "func"
	case c.Token != "":
		tok = "[REDACTED]"
	}
	return fmt.Sprintf("githost.Config{BaseURL: %s, Token: %s, Draft: %t}", base, tok, c.Draft)
}

// GoString is String, for the %#v verb.
func (c Config) GoString() string { return c.String() }

// LogValue is the redacted form of c for slog.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }
