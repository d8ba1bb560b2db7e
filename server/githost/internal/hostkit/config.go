package hostkit

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
)

// Setup is what each host's New makes of the configuration fields the hosts
// share.
type Setup struct {
	// Token returns the token to send, before every request.
	Token func(context.Context) (string, error)
	// Base is the configured API base URL, or the host's default.
	Base string
	// API is Base, parsed and checked.
	API *url.URL
	// Log is the configured logger, or one that discards everything.
	Log *slog.Logger
}

// NewSetup checks and completes the shared configuration fields: exactly
// one of token and tokenFunc, an absolute base URL without user information
// (defaultBase when base is empty), and a logger.
func NewSetup(token string, tokenFunc func(context.Context) (string, error), base, defaultBase string, log *slog.Logger) (Setup, error) {
	tok, err := TokenSource(token, tokenFunc)
	if err != nil {
		return Setup{}, err
	}
	if base == "" {
		base = defaultBase
	}
	api, err := ParseBaseURL(base)
	if err != nil {
		return Setup{}, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return Setup{Token: tok, Base: base, API: api, Log: log}, nil
}

// RemoteOn reads a clone URL (see ParseRemote) and checks that it is on one
// of hosts, so that a project pointed at the wrong host fails clearly
// instead of opening a pull request somewhere else. service names the host
// in the error, as "GitHub".
func RemoteOn(raw, service string, hosts []string) (Remote, error) {
	r, err := ParseRemote(raw)
	if err != nil {
		return Remote{}, err
	}
	if !HostMatches(r.Host, hosts) {
		return Remote{}, fmt.Errorf("the repository %q is on %s, not on this %s (%s)", Redact(raw), r.Host, service, strings.Join(hosts, ", "))
	}
	return r, nil
}
