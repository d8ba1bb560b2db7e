// Package keyauth authenticates API keys and admits them to a project: the
// bearer header, the key's hash looked up in the store (through a short
// cache), revocation and expiry, the key's projects and scopes, the
// project's existence, and the key's rate budget for the kind of request.
// The API's endpoints and the dashboard's pages both go through it, so a
// page allows what the API allows.
package keyauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/ratelimit"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/store"
)

// Kind says which family a request belongs to, which decides its rate
// budget.
type Kind int

// The kinds of requests.
const (
	Agent     Kind = iota // agent jobs
	Analytics             // analytics reads
	Ingest                // page views sent to POST /v1/analytics/{projectId}/views
	Kinds                 // the number of kinds
)

// The refusals of a key that exists but no longer works, which the
// dashboard tells apart when they end a session.
const (
	MsgKeyRevoked = "this API key was revoked"
	MsgKeyExpired = "this API key has expired"
)

// Config configures an Authenticator.
type Config struct {
	Store     store.Store
	Logger    *slog.Logger
	Now       func() time.Time
	KeyPrefix string // what every key starts with
	// CacheTTL is how long a verified key, and a project, are trusted
	// without reading the store again; 0: not at all.
	CacheTTL time.Duration
	// Limits are each kind's budget per key; a zero Limit is none.
	Limits [Kinds]ratelimit.Limit
}

// Authenticator checks API keys. It is safe for concurrent use.
type Authenticator struct {
	cfg     Config
	cache   *Cache[store.APIKey]
	limiter *keyLimiter
}

// New returns the Authenticator of cfg.
func New(cfg Config) *Authenticator {
	return &Authenticator{cfg: cfg, cache: NewCache[store.APIKey](cfg.CacheTTL), limiter: newKeyLimiter(cfg.Limits)}
}

// Caller is an admitted request: the key that signed it and the project it
// addresses.
type Caller struct {
	Key     store.APIKey
	Project store.Project
}

// Refusal is why Admit turned a request away: the status and message to
// answer, and for 429 how long until the key's budget allows one.
type Refusal struct {
	Status     int
	Message    string
	RetryAfter time.Duration
}

// Admit checks that key may make a request of kind needing scope on the
// project projectID: the key's project, its scope, the project's
// existence and the key's rate budget, in that order, so that no answer
// tells a caller about a project its key may not see.
func (a *Authenticator) Admit(r *http.Request, key store.APIKey, projectID string, kind Kind, scope store.Scope) (Caller, *Refusal) {
	// The same 403 whether or not the project exists: a key must not be
	// able to probe for other teams' project IDs.
	if !slices.Contains(key.Projects, projectID) {
		return Caller{}, &Refusal{Status: http.StatusForbidden, Message: "this API key is not allowed to use project " + respond.Quote(projectID)}
	}
	if !HasScope(key.Scopes, scope) {
		return Caller{}, &Refusal{Status: http.StatusForbidden, Message: "this API key lacks the " + string(scope) + " scope"}
	}
	project, err := a.project(r, projectID)
	if err != nil {
		status, msg := respond.StoreAnswer(r, a.cfg.Logger, err, "project "+respond.Quote(projectID), "loading project")
		return Caller{}, &Refusal{Status: status, Message: msg}
	}
	if wait, limited := a.limiter.take(kind, key.ID, a.cfg.Now()); limited {
		return Caller{}, &Refusal{Status: http.StatusTooManyRequests, Message: "rate limit exceeded for this API key", RetryAfter: wait}
	}
	return Caller{Key: key, Project: project}, nil
}

// Authenticate checks r's bearer key. It returns a status and message when
// the request must be refused.
func (a *Authenticator) Authenticate(r *http.Request) (store.APIKey, int, string) {
	header := r.Header.Get("Authorization")
	scheme, secret, ok := strings.Cut(header, " ")
	switch {
	case header == "":
		return store.APIKey{}, http.StatusUnauthorized, "missing API key: send the header Authorization: Bearer <key>"
	case !ok || !strings.EqualFold(scheme, "Bearer"):
		return store.APIKey{}, http.StatusUnauthorized, "the Authorization header must be: Bearer <key>"
	}
	return a.VerifySecret(r.Context(), strings.TrimSpace(secret))
}

// VerifySecret checks a key as its holder gives it: in a header, or in
// the dashboard's sign-in form.
func (a *Authenticator) VerifySecret(ctx context.Context, secret string) (store.APIKey, int, string) {
	for _, other := range [...]string{"mint_dsc_", "mint_us_"} {
		if strings.HasPrefix(secret, other) {
			return store.APIKey{}, http.StatusUnauthorized, "a " + other + " key is not an admin API key"
		}
	}
	if !strings.HasPrefix(secret, a.cfg.KeyPrefix) {
		return store.APIKey{}, http.StatusUnauthorized, "invalid API key"
	}
	return a.VerifyKey(ctx, Hash(secret))
}

// VerifyKey checks the key whose secret hashes to hash, from the cache
// while fresh: it must exist, unrevoked and unexpired. A dashboard session,
// which holds the hash and not the key, is checked with it on every
// request.
func (a *Authenticator) VerifyKey(ctx context.Context, hash [32]byte) (store.APIKey, int, string) {
	now := a.cfg.Now()
	key, cached := a.cache.Key(hash, now)
	if !cached {
		gen := a.cache.Generation()
		var err error
		key, err = a.cfg.Store.KeyByHash(ctx, hash[:])
		if errors.Is(err, store.ErrNotFound) {
			return store.APIKey{}, http.StatusUnauthorized, "invalid API key"
		}
		if err != nil {
			a.cfg.Logger.ErrorContext(ctx, "server: loading API key", slog.Any("error", err))
			return store.APIKey{}, http.StatusInternalServerError, respond.InternalMessage(respond.RequestIDFrom(ctx))
		}
		// The lookup is by hash, so its timing reveals nothing about the
		// key; the constant-time comparison guards against a store that
		// matches loosely (say, by prefix).
		if subtle.ConstantTimeCompare(key.Hash, hash[:]) != 1 {
			return store.APIKey{}, http.StatusUnauthorized, "invalid API key"
		}
		if key.RevokedAt.IsZero() {
			a.cache.PutKey(gen, hash, key, now)
		}
	}
	switch {
	case !key.RevokedAt.IsZero():
		return store.APIKey{}, http.StatusUnauthorized, MsgKeyRevoked
	case !key.ExpiresAt.IsZero() && !now.Before(key.ExpiresAt):
		return store.APIKey{}, http.StatusUnauthorized, MsgKeyExpired
	}
	return key, 0, ""
}

// Forget drops every key and project cached, for a change made through
// this process (a key revoked): it then takes effect at once here, not a
// TTL later.
func (a *Authenticator) Forget() { a.cache.Forget() }

// project returns the project id, from the cache while fresh.
func (a *Authenticator) project(r *http.Request, id string) (store.Project, error) {
	now := a.cfg.Now()
	if p, ok := a.cache.Project(id, now); ok {
		return p, nil
	}
	gen := a.cache.Generation()
	p, err := a.cfg.Store.Project(r.Context(), id)
	if err != nil {
		return store.Project{}, err
	}
	a.cache.PutProject(gen, p, now)
	return p, nil
}

// HasScope applies the hosted service's rule: write implies read.
func HasScope(scopes []store.Scope, need store.Scope) bool {
	return slices.Contains(scopes, need) || (need == store.ScopeRead && slices.Contains(scopes, store.ScopeWrite))
}

// Hash is what the store keeps of a key. Keys carry over 200 bits of
// entropy, so a fast hash is enough: no dictionary can reach them, and a
// slow password hash would only tax every request.
func Hash(secret string) [32]byte {
	return sha256.Sum256([]byte(secret))
}
