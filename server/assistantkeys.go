package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/assistantauth"
	"github.com/docsapi/docsapi-go/server/internal/base62"
	"github.com/docsapi/docsapi-go/server/internal/ratelimit"
	"github.com/docsapi/docsapi-go/server/site"
	"github.com/docsapi/docsapi-go/server/store"
)

// AssistantKeyPrefix starts every assistant key, as it does the hosted
// platform's: the SDK, and secret scanners, tell one from an admin key by
// it. It is not Config.KeyPrefix, which admin keys alone follow.
const AssistantKeyPrefix = assistantauth.Prefix

// DefaultAssistantPerAddress returns the budget of one client address on
// the /discovery endpoints: a reader's search box sends a few requests a
// second at most while they type, and an office or a school may share an
// address.
func DefaultAssistantPerAddress() Limit { return Limit{Requests: 120, Per: time.Minute} }

// DefaultAssistantPerProject returns the budget of one project's assistant
// keys together: the hosted service's, 10,000 requests an hour per
// organisation.
func DefaultAssistantPerProject() Limit { return Limit{Requests: 10_000, Per: time.Hour} }

// AssistantConfig bounds the /discovery endpoints, which take assistant
// keys. As for SiteConfig, its zero value is the defaults: these
// endpoints are open to anyone who has a page's key.
type AssistantConfig struct {
	// PerAddress is the budget of one client address (an IPv6 client's
	// /64), preflights included; past it, 429 with Retry-After.
	// DefaultAssistantPerAddress() by default.
	PerAddress Limit
	// PerProject is the budget of one project, all its assistant keys
	// together; past it, 429 with Retry-After.
	// DefaultAssistantPerProject() by default.
	PerProject Limit
	// MaxAddresses bounds the addresses whose budgets are remembered at
	// once. Site.MaxAddresses (DefaultSiteMaxAddresses) by default.
	MaxAddresses int

	// The bounds of the assistant's answers, POST
	// /discovery/v2/assistant/{domain}/message (see package assistant);
	// zero takes the default named.

	// AskPerAddress is the answers' budget of one client address, on top
	// of PerAddress: an answer costs a model call (429 past it).
	// assistant.DefaultPerAddress() by default.
	AskPerAddress Limit
	// MaxAskBodyBytes bounds a question's request body (413 past it),
	// which AI SDK clients send with the thread's earlier messages:
	// assistant.DefaultMaxBodyBytes.
	MaxAskBodyBytes int64
	// MaxQuestionLength bounds a question, in characters (400 past it):
	// assistant.DefaultMaxQuestionChars.
	MaxQuestionLength int
	// MaxContextItems and MaxContextLength bound a question's context,
	// its items and each one's characters (400 past them):
	// assistant.DefaultMaxContextItems and DefaultMaxContextChars.
	MaxContextItems  int
	MaxContextLength int
	// MaxThreadExchanges caps the questions of one thread (400 past it):
	// assistant.DefaultThreadCap.
	MaxThreadExchanges int
	// MaxExchangesPerDay caps the questions a project's assistant answers
	// in a UTC day (429 with Retry-After past it): assistant.DefaultDailyCap.
	MaxExchangesPerDay int
	// DailyTokens is a project's budget of model tokens per UTC day,
	// unless its model names its own (429 with Retry-After once spent):
	// assistant.DefaultDailyTokens.
	DailyTokens int64
	// MaxAnswerTokens bounds one answer, in tokens, unless the project's
	// model names its own: assistant.DefaultMaxAnswerTokens.
	MaxAnswerTokens int
}

// WithDefaults checks c and returns it with its zero fields set to their
// defaults (MaxAddresses to maxAddresses), as New uses it.
func (c AssistantConfig) WithDefaults(maxAddresses int) (AssistantConfig, error) {
	if c.PerAddress == (Limit{}) {
		c.PerAddress = DefaultAssistantPerAddress()
	}
	if c.PerProject == (Limit{}) {
		c.PerProject = DefaultAssistantPerProject()
	}
	for _, l := range []struct {
		name string
		Limit
	}{{"PerAddress", c.PerAddress}, {"PerProject", c.PerProject}} {
		if l.Requests <= 0 || l.Per <= 0 {
			return c, fmt.Errorf("server: Config.Assistant.%s needs positive Requests and Per, got %d per %s", l.name, l.Requests, l.Per)
		}
	}
	if err := orDefault("Assistant.MaxAddresses", &c.MaxAddresses, maxAddresses); err != nil {
		return c, err
	}
	if err := c.answerDefaults(); err != nil {
		return c, err
	}
	return c, nil
}

// newAssistantGate returns the gate of the /discovery endpoints of cfg, a
// resolved Config.
func newAssistantGate(cfg Config, s *Server) *assistantauth.Gate {
	return assistantauth.New(assistantauth.Config{
		Store: cfg.Store, Logger: cfg.Logger, Now: cfg.Now, Proxies: s.proxies, CacheTTL: cfg.KeyCacheTTL,
		PerAddress: ratelimit.Limit(cfg.Assistant.PerAddress), PerProject: ratelimit.Limit(cfg.Assistant.PerProject),
		MaxAddresses: cfg.Assistant.MaxAddresses,
	})
}

// AssistantKeyParams describes a new assistant key.
type AssistantKeyParams struct {
	// Project is the project whose /discovery endpoints the key may call,
	// by the project's domain identifier, which it must have.
	Project string
	// Name says what the key is for (the site, the backend).
	Name string
	// Origins are the web origins whose pages may use the key, such as
	// https://docs.example.com: a scheme (http or https), a host and an
	// optional port, nothing else. A request from a browser of another
	// origin is refused (by the browser too, CORS). None: a key for
	// servers only, which every browser request is refused.
	Origins []string
}

// NewAssistantKey is an assistant key just created. Secret is shown this
// once: the store keeps only its hash.
type NewAssistantKey struct {
	Secret string
	Key    store.AssistantKey
}

// CreateAssistantKey makes an assistant key (mint_dsc_...) for a project
// with a domain identifier: what the /discovery endpoints (search, page
// content) take. Pages may hold it; a backend that proxies the requests
// keeps it secret. To rotate it, create another, deploy it, and revoke the
// first.
func (s *Server) CreateAssistantKey(ctx context.Context, p AssistantKeyParams) (NewAssistantKey, error) {
	origins := make([]string, len(p.Origins))
	for i, o := range p.Origins {
		n, err := site.NormalizeOrigin(o)
		if err != nil {
			return NewAssistantKey{}, fmt.Errorf("server: origin %q: %w", o, err)
		}
		origins[i] = n
	}
	project, err := s.cfg.Store.Project(ctx, p.Project)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return NewAssistantKey{}, fmt.Errorf("server: no project %q", p.Project)
	case err != nil:
		return NewAssistantKey{}, fmt.Errorf("server: checking project %q: %w", p.Project, err)
	case project.Domain == "":
		// The endpoints address a project by its domain alone: a key of a
		// project without one would be refused everywhere.
		return NewAssistantKey{}, fmt.Errorf("server: project %q has no domain identifier, by which the /discovery endpoints address it: give it one (\"domain\" in serve's configuration file) first", p.Project)
	}
	secret := AssistantKeyPrefix + base62.Random(assistantauth.SecretLength)
	hash := assistantauth.Hash(secret)
	key := store.AssistantKey{
		ID:        "akey_" + base62.Random(16),
		Hash:      hash[:],
		Hint:      secret[:len(AssistantKeyPrefix)+4] + "…",
		ProjectID: p.Project,
		Name:      strings.TrimSpace(p.Name),
		Origins:   sortedUnique(origins),
		CreatedAt: s.cfg.Now().UTC().Truncate(time.Microsecond),
	}
	if err := s.cfg.Store.CreateAssistantKey(ctx, key); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return NewAssistantKey{}, fmt.Errorf("server: no project %q", p.Project)
		}
		return NewAssistantKey{}, fmt.Errorf("server: storing assistant key: %w", err)
	}
	return NewAssistantKey{Secret: secret, Key: key}, nil
}

// AssistantKeys lists the assistant keys of a project ("" for every
// project's), oldest first, revoked ones included. Secrets are not kept,
// so none is shown.
func (s *Server) AssistantKeys(ctx context.Context, project string) ([]store.AssistantKey, error) {
	return s.cfg.Store.AssistantKeys(ctx, project)
}

// RevokeAssistantKey stops an assistant key from working: at once on this
// Server, and within their Config.KeyCacheTTL on other Servers sharing the
// Store.
func (s *Server) RevokeAssistantKey(ctx context.Context, id string) error {
	err := s.cfg.Store.RevokeAssistantKey(ctx, id, s.cfg.Now().UTC().Truncate(time.Microsecond))
	// After the store, so that no request can cache the key again.
	s.assistant.Forget()
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("server: no assistant key %q", id)
	}
	return err
}
