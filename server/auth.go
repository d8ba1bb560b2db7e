package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// apiKind says which family an endpoint belongs to, which decides its rate
// limit bucket.
type apiKind int

const (
	agentAPI     apiKind = iota
	analyticsAPI         // analytics reads
	ingestAPI            // page views sent to POST /v1/analytics/{projectId}/views
	apiKinds
)

// caller is an authenticated request: the key that signed it and the
// project it addresses.
type caller struct {
	key     store.APIKey
	project store.Project
}

// api wraps an endpoint of the contract: authentication, then admit's
// checks of the key against the request, then the declared size of a POST
// body. None of these refusals reads the body, so each closes the
// connection (see closeUnreadBodies).
func (s *Server) api(kind apiKind, scope store.Scope, h func(http.ResponseWriter, *http.Request, caller)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, status, msg := s.authenticate(r)
		if status != 0 {
			if status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="docsapi"`)
			}
			writeError(w, status, msg)
			return
		}
		c, no := s.admit(r, key, r.PathValue("projectId"), kind, scope)
		if no != nil {
			if no.retryAfter > 0 {
				w.Header().Set("Retry-After", retryAfterSeconds(no.retryAfter))
			}
			writeError(w, no.status, no.message)
			return
		}
		// A body declared too large is refused before a byte of it is
		// read; the handlers' own bound catches chunked bodies. GET and
		// archive ignore bodies, whose contracts have no 413.
		if r.Method == http.MethodPost && r.ContentLength > s.cfg.MaxBodyBytes && !strings.HasSuffix(r.Pattern, "/archive") {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than %d bytes", s.cfg.MaxBodyBytes))
			return
		}
		h(w, r, c)
	})
}

// refusal is why admit turned a request away: the status and message to
// answer, and for 429 how long until the key's budget allows one.
type refusal struct {
	status     int
	message    string
	retryAfter time.Duration
}

// admit checks that key may make a request of kind needing scope on the
// project projectID: the key's project, its scope, the project's
// existence and the key's rate budget, in that order, so that no answer
// tells a caller about a project its key may not see. The API and the
// dashboard both go through it.
func (s *Server) admit(r *http.Request, key store.APIKey, projectID string, kind apiKind, scope store.Scope) (caller, *refusal) {
	// The same 403 whether or not the project exists: a key must not be
	// able to probe for other teams' project IDs.
	if !slices.Contains(key.Projects, projectID) {
		return caller{}, &refusal{status: http.StatusForbidden, message: "this API key is not allowed to use project " + quote(projectID)}
	}
	if !hasScope(key.Scopes, scope) {
		return caller{}, &refusal{status: http.StatusForbidden, message: "this API key lacks the " + string(scope) + " scope"}
	}
	project, err := s.project(r, projectID)
	if err != nil {
		status, msg := s.storeAnswer(r, err, "project "+quote(projectID), "loading project")
		return caller{}, &refusal{status: status, message: msg}
	}
	if wait, limited := s.limiter.take(kind, key.ID, s.cfg.Now()); limited {
		return caller{}, &refusal{status: http.StatusTooManyRequests, message: "rate limit exceeded for this API key", retryAfter: wait}
	}
	return caller{key: key, project: project}, nil
}

// authenticate checks the bearer key. It returns a status and message when
// the request must be refused.
func (s *Server) authenticate(r *http.Request) (store.APIKey, int, string) {
	header := r.Header.Get("Authorization")
	scheme, secret, ok := strings.Cut(header, " ")
	switch {
	case header == "":
		return store.APIKey{}, http.StatusUnauthorized, "missing API key: send the header Authorization: Bearer <key>"
	case !ok || !strings.EqualFold(scheme, "Bearer"):
		return store.APIKey{}, http.StatusUnauthorized, "the Authorization header must be: Bearer <key>"
	}
	return s.verifySecret(r.Context(), strings.TrimSpace(secret))
}

// verifySecret checks a key as its holder gives it: in a header, or in
// the dashboard's sign-in form.
func (s *Server) verifySecret(ctx context.Context, secret string) (store.APIKey, int, string) {
	for _, other := range [...]string{"mint_dsc_", "mint_us_"} {
		if strings.HasPrefix(secret, other) {
			return store.APIKey{}, http.StatusUnauthorized, "a " + other + " key is not an admin API key"
		}
	}
	if !strings.HasPrefix(secret, s.cfg.KeyPrefix) {
		return store.APIKey{}, http.StatusUnauthorized, "invalid API key"
	}
	return s.verifyKey(ctx, hashKey(secret))
}

// The refusals of a key that exists but no longer works, which the
// dashboard tells apart when they end a session.
const (
	msgKeyRevoked = "this API key was revoked"
	msgKeyExpired = "this API key has expired"
)

// verifyKey checks the key whose secret hashes to hash, from the cache
// while fresh: it must exist, unrevoked and unexpired. A dashboard session,
// which holds the hash and not the key, is checked with it on every
// request.
func (s *Server) verifyKey(ctx context.Context, hash [32]byte) (store.APIKey, int, string) {
	now := s.cfg.Now()
	key, cached := s.auth.key(hash, now)
	if !cached {
		gen := s.auth.generation()
		var err error
		key, err = s.cfg.Store.KeyByHash(ctx, hash[:])
		if errors.Is(err, store.ErrNotFound) {
			return store.APIKey{}, http.StatusUnauthorized, "invalid API key"
		}
		if err != nil {
			s.cfg.Logger.ErrorContext(ctx, "server: loading API key", slog.Any("error", err))
			return store.APIKey{}, http.StatusInternalServerError, "internal error (request id " + requestIDFrom(ctx) + ")"
		}
		// The lookup is by hash, so its timing reveals nothing about the
		// key; the constant-time comparison guards against a store that
		// matches loosely (say, by prefix).
		if subtle.ConstantTimeCompare(key.Hash, hash[:]) != 1 {
			return store.APIKey{}, http.StatusUnauthorized, "invalid API key"
		}
		if key.RevokedAt.IsZero() {
			s.auth.putKey(gen, hash, key, now)
		}
	}
	switch {
	case !key.RevokedAt.IsZero():
		return store.APIKey{}, http.StatusUnauthorized, msgKeyRevoked
	case !key.ExpiresAt.IsZero() && !now.Before(key.ExpiresAt):
		return store.APIKey{}, http.StatusUnauthorized, msgKeyExpired
	}
	return key, 0, ""
}

// project returns the project id, from the cache while fresh.
func (s *Server) project(r *http.Request, id string) (store.Project, error) {
	now := s.cfg.Now()
	if p, ok := s.auth.project(id, now); ok {
		return p, nil
	}
	gen := s.auth.generation()
	p, err := s.cfg.Store.Project(r.Context(), id)
	if err != nil {
		return store.Project{}, err
	}
	s.auth.putProject(gen, p, now)
	return p, nil
}

// hasScope applies the hosted service's rule: write implies read.
func hasScope(scopes []store.Scope, need store.Scope) bool {
	return slices.Contains(scopes, need) || (need == store.ScopeRead && slices.Contains(scopes, store.ScopeWrite))
}

// hashKey is what the store keeps of a key. Keys carry over 200 bits of
// entropy, so a fast hash is enough: no dictionary can reach them, and a slow
// password hash would only tax every request.
func hashKey(secret string) [32]byte {
	return sha256.Sum256([]byte(secret))
}

func validKeyPrefix(p string) bool {
	body, ok := strings.CutSuffix(p, "_")
	if !ok || len(body) == 0 || len(body) > 16 {
		return false
	}
	for _, c := range body {
		if !isAlnum(c) {
			return false
		}
	}
	return true
}

func isAlnum(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func quote(s string) string {
	const max = 100
	if len(s) > max {
		s = s[:max] + "…"
	}
	return `"` + strings.ToValidUTF8(s, "?") + `"`
}
